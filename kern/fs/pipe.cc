// Pipes: a one-way byte stream between processes.
//
// pipe() makes two Files that share one Pipe: a read end and a write end. The Pipe is a
// ring buffer. Bytes written go in at the back; reads take them from the front.
//
//   data: [ ... free ... | buffered bytes ....... | ... free ... ]
//                         ^ head                   ^ (head + count) % SIZE
//
// A writer that finds the buffer full sleeps until a reader makes room; a reader that
// finds it empty sleeps until a writer adds bytes. Closing an end changes what waiting
// means: with no readers left a write fails (-1), since nobody could ever read the bytes;
// with no writers left, an empty pipe reads as end of file (0). A process that is killed
// while it waits gives up with -1.
//
// Each Pipe occupies one page from kalloc: the bookkeeping at the start, the buffer in
// the rest. The page is freed when both ends are closed.
//
// The pipe's spinlock protects all of its state. Bytes are copied between the buffer and
// user memory with the lock held; copyin/copyout walk page tables but never sleep, so
// that is allowed.
//
// LAB speed/pipe BEGIN
// wakeup() visits every process slot and takes each one's lock: thousands of instructions.
// Most reads and writes of a busy pipe find nobody asleep on the other side, so each side
// counts its sleepers (under the pipe's lock, raised before sleep() lets the lock go) and a
// read or write calls wakeup() only for a side whose count is not zero. No wakeup is lost:
// a sleeper is counted before it gives up the lock, and the waker reads the count holding it.
// LAB speed/pipe STARTER
// LAB speed/pipe END

#include "fs/pipe.h"

#include "arch/riscv/riscv.h"
#include "fs/file.h"
#include "lib/spinlock.h"
#include "mm/kalloc.h"
#include "mm/vm.h"
#include "proc/proc.h"

// Placement new: construct an object in memory we already have (here, a kalloc'd page).
// <new> would declare it, but the freestanding soft-float build has no usable <new>.
inline void *operator new(size_t, void *where) noexcept { return where; }

namespace {

constexpr u32 PIPE_HEADER = 64;  // room for the fields before `data`
constexpr u32 PIPE_SIZE = riscv::PGSIZE - PIPE_HEADER;

}  // namespace

struct Pipe {
  Spinlock lock{"pipe"};
  u32 head = 0;            // index in data of the oldest unread byte
  u32 count = 0;           // bytes waiting to be read
  bool read_open = true;   // is the read end still open?
  bool write_open = true;  // is the write end still open?
  // LAB speed/pipe BEGIN
  u32 sleeping_readers = 0;  // processes asleep in piperead
  u32 sleeping_writers = 0;  // processes asleep in pipewrite
  // LAB speed/pipe STARTER
  // LAB speed/pipe END
  char data[PIPE_SIZE];

  // Readers wait on one channel and writers on another, so that waking one kind does not
  // wake the other for nothing.
  void *readers() { return &head; }
  void *writers() { return &count; }
};
static_assert(sizeof(Pipe) <= riscv::PGSIZE, "a Pipe must fit in its page");
static_assert(__builtin_offsetof(Pipe, data) <= PIPE_HEADER);
static_assert(PIPE_SIZE >= 512, "the xv6 ABI promises pipes of at least 512 bytes");

int pipealloc(File **f0, File **f1) {
  *f0 = filealloc();
  *f1 = filealloc();
  void *page = kalloc_nozero();
  if (*f0 == nullptr || *f1 == nullptr || page == nullptr) {
    if (page != nullptr) kfree(page);
    if (*f0 != nullptr) fileclose(*f0);  // still of Type::None, so closing just frees it
    if (*f1 != nullptr) fileclose(*f1);
    *f0 = *f1 = nullptr;
    return -1;
  }
  Pipe *pi = new (page) Pipe();

  (*f0)->type = File::Type::Pipe;
  (*f0)->readable = true;
  (*f0)->writable = false;
  (*f0)->pipe = pi;
  (*f1)->type = File::Type::Pipe;
  (*f1)->readable = false;
  (*f1)->writable = true;
  (*f1)->pipe = pi;
  return 0;
}

void pipeclose(Pipe *pi, bool writable) {
  bool last;
  {
    SpinGuard g(pi->lock);
    if (writable) {
      pi->write_open = false;
      wakeup(pi->readers());  // they will now see end of file
    } else {
      pi->read_open = false;
      wakeup(pi->writers());  // they will now fail
    }
    last = !pi->read_open && !pi->write_open;
  }
  // Free the page only after the guard has released the lock that lives in it.
  if (last) {
    pi->~Pipe();
    kfree(pi);
  }
}

int pipewrite(Pipe *pi, UserAddr addr, int n) {
  Proc *p = myproc();
  int done = 0;
  bool fault = false;
  SpinGuard g(pi->lock);
  while (done < n) {
    if (!pi->read_open || killed(p)) return -1;
    if (pi->count == PIPE_SIZE) {
      // LAB speed/pipe BEGIN
      if (pi->sleeping_readers > 0) wakeup(pi->readers());  // let them drain the full buffer
      pi->sleeping_writers++;
      sleep(pi->writers(), pi->lock);
      pi->sleeping_writers--;
      // LAB speed/pipe STARTER
      // wakeup(pi->readers());  // let them drain the full buffer
      // sleep(pi->writers(), pi->lock);
      // LAB speed/pipe END
      continue;
    }
    // Copy as much as fits in the free run that starts at the tail, without wrapping.
    u32 tail = (pi->head + pi->count) % PIPE_SIZE;
    u32 run = tail >= pi->head ? PIPE_SIZE - tail : pi->head - tail;
    u32 m = static_cast<u32>(n - done);
    if (m > run) m = run;
    if (copyin(p->pagetable, &pi->data[tail], addr + u64(done), m) != 0) {
      fault = true;
      break;
    }
    pi->count += m;
    done += static_cast<int>(m);
  }
  // LAB speed/pipe BEGIN
  if (pi->sleeping_readers > 0) wakeup(pi->readers());
  // LAB speed/pipe STARTER
  // wakeup(pi->readers());
  // LAB speed/pipe END
  return (fault && done == 0) ? -1 : done;
}

int piperead(Pipe *pi, UserAddr addr, int n) {
  Proc *p = myproc();
  SpinGuard g(pi->lock);
  while (pi->count == 0 && pi->write_open) {
    if (killed(p)) return -1;
    // LAB speed/pipe BEGIN
    pi->sleeping_readers++;
    sleep(pi->readers(), pi->lock);
    pi->sleeping_readers--;
    // LAB speed/pipe STARTER
    // sleep(pi->readers(), pi->lock);
    // LAB speed/pipe END
  }

  int done = 0;
  bool fault = false;
  while (done < n && pi->count > 0) {
    // Copy the buffered run that starts at head, without wrapping.
    u32 run = pi->head + pi->count <= PIPE_SIZE ? pi->count : PIPE_SIZE - pi->head;
    u32 m = static_cast<u32>(n - done);
    if (m > run) m = run;
    if (copyout(p->pagetable, addr + u64(done), &pi->data[pi->head], m) != 0) {
      fault = true;  // the bytes stay in the pipe for the next reader
      break;
    }
    pi->head = (pi->head + m) % PIPE_SIZE;
    pi->count -= m;
    done += static_cast<int>(m);
  }
  // LAB speed/pipe BEGIN
  if (pi->sleeping_writers > 0) wakeup(pi->writers());
  // LAB speed/pipe STARTER
  // wakeup(pi->writers());
  // LAB speed/pipe END
  return (fault && done == 0) ? -1 : done;
}
