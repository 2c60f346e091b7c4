// Formatted console output for the kernel, and panic.
//
// kprintf writes straight to the UART with polling (uart_putc_sync), so it works from any
// context: early boot, interrupt handlers, with locks held. A spinlock keeps lines from
// different harts from interleaving; a panicking hart stops taking it so it can always
// print.

#include "lib/printf.h"

#include <stdarg.h>

#include "arch/riscv/riscv.h"
#include "arch/riscv/sbi.h"
#include "dev/uart.h"
#include "lib/backtrace.h"
#include "lib/ksyms.h"
#include "lib/spinlock.h"

volatile bool panicked = false;

namespace {

constinit Spinlock print_lock("printf");
constinit volatile bool locking = true;

void put(char c) { uart_putc_sync(c); }

void put_str(const char *s) {
  if (s == nullptr) s = "(null)";
  while (*s) put(*s++);
}

void put_num(u64 x, int base, bool is_signed, int width, char pad) {
  constexpr char digits[] = "0123456789abcdef";
  char buf[24];
  bool neg = is_signed && static_cast<i64>(x) < 0;
  if (neg) x = -x;
  int i = 0;
  do {
    buf[i++] = digits[x % base];
    x /= base;
  } while (x != 0);
  if (neg && pad == '0') {
    put('-');
    width--;
  } else if (neg) {
    buf[i++] = '-';
  }
  for (int w = i; w < width; w++) put(pad);
  while (--i >= 0) put(buf[i]);
}

void vformat(const char *fmt, va_list ap) {
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') {
      put(*p);
      continue;
    }
    p++;
    char pad = ' ';
    int width = 0;
    if (*p == '0') {
      pad = '0';
      p++;
    }
    while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
    bool is_long = false;
    while (*p == 'l') {
      is_long = true;
      p++;
    }
    switch (*p) {
      case 'd': put_num(is_long ? va_arg(ap, i64) : va_arg(ap, int), 10, true, width, pad); break;
      case 'u':
        put_num(is_long ? va_arg(ap, u64) : va_arg(ap, unsigned), 10, false, width, pad);
        break;
      case 'x':
        put_num(is_long ? va_arg(ap, u64) : va_arg(ap, unsigned), 16, false, width, pad);
        break;
      case 'p':
        put_str("0x");
        put_num(reinterpret_cast<u64>(va_arg(ap, void *)), 16, false, 16, '0');
        break;
      case 's': put_str(va_arg(ap, const char *)); break;
      case 'c': put(static_cast<char>(va_arg(ap, int))); break;
      case '%': put('%'); break;
      case 0: return;
      default:
        put('%');
        put(*p);
        break;
    }
  }
}

}  // namespace

void kprintf(const char *fmt, ...) {
  bool lock = locking;
  if (lock) print_lock.acquire();
  va_list ap;
  va_start(ap, fmt);
  vformat(fmt, ap);
  va_end(ap);
  if (lock) print_lock.release();
}

void print_backtrace(u64 fp) {
  KernelStackWalker walk(fp);
  for (int depth = 0; depth < 32; depth++) {
    u64 ra;
    if (!walk.next(&ra)) break;
    u64 off;
    const char *name = ksym_lookup(ra - 1, &off);
    kprintf("  #%d %p %s+%lu\n", depth, reinterpret_cast<void *>(ra), name ? name : "?", off + 1);
  }
}

void panic(const char *fmt, ...) {
  riscv::intr_off();
  locking = false;
  panicked = true;
  put_str("panic: ");
  va_list ap;
  va_start(ap, fmt);
  vformat(fmt, ap);
  va_end(ap);
  put_str("\nbacktrace (most recent call first):\n");
  print_backtrace(riscv::r_fp());
  for (;;) riscv::wfi();
}
