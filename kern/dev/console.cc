// The console device: what a process reads and writes through /console (major 1).
//
// Input arrives one byte at a time from the UART interrupt. The console keeps an edit
// buffer and implements the classic line discipline: bytes are echoed, backspace (or DEL)
// erases one, ^U erases the line, and a completed line (newline) or ^D becomes readable as a
// whole. read() sleeps until a line is complete, so a reader never sees a half-edited one.
// ^D on an empty line makes read() return 0: end of file. ^P lists processes (procdump).
//
//   buf:  [ ...consumed... | readable lines | line being edited | free ... ]
//                          r                w                    e
// r, w and e only grow; indexes wrap modulo the buffer size.
//
// Output goes to the UART's transmit buffer (uart.cc). Each write() is one unit: a
// sleeplock held for the whole call keeps two processes' writes from interleaving byte by
// byte, so a line printed with one write (printf buffers a line) arrives whole even when
// several processes print at once.

#include "dev/console.h"

#include "abi/majors.h"
#include "dev/uart.h"
#include "fs/file.h"
#include "lib/sleeplock.h"
#include "lib/spinlock.h"
#include "proc/proc.h"

namespace {

constexpr int ctrl(char c) { return c - '@'; }
constexpr int BACKSPACE = 0x100;  // pseudo character: erase the last echoed one

constexpr u32 INPUT_BUF = 1024;  // room for long command lines typed (or pasted) at once
struct Input {
  Spinlock lock{"console"};
  char buf[INPUT_BUF] = {};
  u32 r = 0;  // read index
  u32 w = 0;  // write index: end of the complete lines
  u32 e = 0;  // edit index
};
constinit Input in;

constinit Sleeplock out_lock("console out");  // held by one write() at a time

void echo(int c) {
  if (c == BACKSPACE) {
    uart_putc_sync('\b');
    uart_putc_sync(' ');
    uart_putc_sync('\b');
  } else {
    uart_putc_sync(c);
  }
}

}  // namespace

// The console's device functions (devsw[CONSOLE_MAJOR]); console_read is also where
// tools/boottime sets its breakpoint: the shell has printed its prompt and waits.
int console_write(int, bool user_src, u64 src, u32, int n) {
  SleepGuard g(out_lock);
  char chunk[64];
  int done = 0;
  while (done < n) {
    int m = n - done < 64 ? n - done : 64;
    if (either_copyin(chunk, user_src, src + done, m) == -1) return done > 0 ? done : -1;
    for (int i = 0; i < m; i++) uart_putc(chunk[i]);
    done += m;
  }
  return done;
}

int console_read(int, bool user_dst, u64 dst, u32, int n, u64 &) {
  int target = n;
  SpinGuard g(in.lock);
  while (n > 0) {
    while (in.r == in.w) {
      if (killed(myproc())) return -1;
      sleep(&in.r, in.lock);
    }
    int c = in.buf[in.r++ % INPUT_BUF];
    if (c == ctrl('D')) {
      // End of file. If some bytes were already read, leave ^D for the next read so that
      // it returns 0 then.
      if (n < target) in.r--;
      break;
    }
    char cbuf = static_cast<char>(c);
    if (either_copyout(user_dst, dst, &cbuf, 1) == -1) break;
    dst++;
    n--;
    if (c == '\n') break;  // a whole line has arrived: return it
  }
  return target - n;
}

void console_intr(int c) {
  bool dump = false;
  {
    SpinGuard g(in.lock);
    switch (c) {
      case ctrl('P'):
        dump = true;  // print outside the lock: procdump takes process locks
        break;
      case ctrl('U'):
        while (in.e != in.w && in.buf[(in.e - 1) % INPUT_BUF] != '\n') {
          in.e--;
          echo(BACKSPACE);
        }
        break;
      case ctrl('H'):
      case '\x7f':
        if (in.e != in.w) {
          in.e--;
          echo(BACKSPACE);
        }
        break;
      default:
        if (c != 0 && in.e - in.r < INPUT_BUF) {
          c = (c == '\r') ? '\n' : c;
          if (c != ctrl('D')) echo(c);
          in.buf[in.e++ % INPUT_BUF] = static_cast<char>(c);
          if (c == '\n' || c == ctrl('D') || in.e - in.r == INPUT_BUF) {
            in.w = in.e;
            wakeup(&in.r);
          }
        }
        break;
    }
  }
  if (dump) procdump();
}

void console_init() {
  uart_init();
  devsw[CONSOLE_MAJOR].read = console_read;
  devsw[CONSOLE_MAJOR].write = console_write;
}
