// pbadfp: runs with a corrupt frame pointer, to show that the profiler's stack walk survives
// whatever a user program leaves in s0.
//
//   pbadfp KIND [SECONDS]   KIND as below; 2 s default, tenths allowed (0.5)
//
// The profiler finds a sample's callers by following the frame-pointer chain that starts at
// the user's s0. A program is free to put anything in s0 (it is an ordinary callee-saved
// register when code is built without frame pointers), so the walk must check every step.
// This program spends almost all its time in spin_with_fp(), whose loop runs with s0 set to:
//
//   kernel      0x80201000, inside the kernel's code: a user walk must never read it
//   unmapped    0x3000000000, a valid user address that has no page behind it
//   self        a frame record whose saved frame pointer is the record itself: a walker
//               without a "frames must move up the stack" rule would loop forever
//   misaligned  an address in the stack, plus 3
//   guard       inside the guard page under the stack: mapped, but not for user access
//   hole        a page the program had and gave back (sbrk down): its page table is there,
//               the entry says "not mapped"
//   trapframe   inside the trapframe page, at the saved t3 and t4, which the loop sets to a
//               frame pointer and a return address: a walk that read kernel-only pages
//               would find a plausible record there
//   trampoline  inside the trampoline page (kernel code, mapped without user access)
//   descend     a record whose caller's frame pointer lies below it, pointing at a second
//               record that looks right: a walk must go only up the stack
//   shrink      a record in a heap page that the program gives back and takes again
//               between loops, so some samples find it and some find the page gone
//
// Every sample taken in the loop should have a short user chain (the pc, and for `self`,
// `descend` and a mapped `shrink` the one return address the first record holds) and no
// kernel address among its user frames. The
// kernel must not panic, and must not kill this program: it makes no bad access itself.
//
// A walk that gave up at once would pass all that. So the kinds whose s0 leads straight out
// of user memory (all but self, descend and shrink) take turns with a second loop,
// spin_one_up(), whose s0 points at a good record (in this program's data, holding a
// return address in record_target) with the bad frame pointer as its caller's: there the
// chain is the pc and record_target, the good part of the chain before the corruption.
//
// The corrupt s0 exists only inside one asm statement, which saves the real s0 in another
// register, spins, and restores it. The compiler uses s0 as the frame pointer, so no
// compiled code may run while it is wrong; in particular the loop cannot call anything.
#include "lib/user.h"

namespace {

constexpr unsigned long PAGE_SIZE = 4096;
constexpr unsigned long ITERATIONS_PER_CALL = 2000000;   // about 10-50 ms of emulated time
constexpr unsigned long MAXVA = 1UL << 38;               // kern/arch/riscv/riscv.h
constexpr unsigned long TRAMPOLINE = MAXVA - PAGE_SIZE;  // kern/arch/riscv/memlayout.h
constexpr unsigned long TRAPFRAME = TRAMPOLINE - PAGE_SIZE;
constexpr unsigned long TF_T5 = 272;  // the trapframe's t5: t3 and t4 are the 16 bytes below

// The `self` record: two words, [caller's fp, return address], and s0 points just above
// them. Its caller's-fp word is its own s0.
alignas(16) unsigned long self_record[2];
// The `descend` records: the first (at [2], [3]) names the second (at [0], [1]) as its caller.
alignas(16) unsigned long descend_records[4];
// spin_one_up's record: [the bad frame pointer, a return address in record_target].
alignas(16) unsigned long one_up_record[2];

}  // namespace

extern "C" {

// A function whose address serves as the self record's return address: any address inside
// the program's code passes the walker's "is this text?" check.
__attribute__((noinline)) void record_target() { asm volatile(""); }

// Spins `iterations` times with s0 = bad_fp, then puts s0 back. Meanwhile t3 and t4 hold
// `t3` and `t4`: what a timer trap saves of them in the trapframe is a frame record.
[[gnu::always_inline]] inline void spin_in_asm(unsigned long bad_fp, unsigned long iterations,
                                               unsigned long t3, unsigned long t4) {
  unsigned long saved;
  asm volatile(
      "mv %0, s0\n"
      "mv s0, %2\n"
      "mv t3, %3\n"
      "mv t4, %4\n"
      "1:\n"
      "addi %1, %1, -1\n"
      "bnez %1, 1b\n"
      "mv s0, %0\n"
      : "=&r"(saved), "+r"(iterations)
      : "r"(bad_fp), "r"(t3), "r"(t4)
      : "t3", "t4", "memory");
}

__attribute__((noinline)) void spin_with_fp(unsigned long bad_fp, unsigned long iterations,
                                            unsigned long t3, unsigned long t4) {
  spin_in_asm(bad_fp, iterations, t3, t4);
}

// The same loop with s0 at a good record one step below the bad frame pointer.
__attribute__((noinline)) void spin_one_up(unsigned long good_fp, unsigned long iterations,
                                           unsigned long t3, unsigned long t4) {
  spin_in_asm(good_fp, iterations, t3, t4);
}

}  // extern "C"

namespace {

unsigned long target() { return reinterpret_cast<unsigned long>(&record_target) + 2; }

// A page that was mapped and is not any more: taken from sbrk, then given back.
unsigned long hole() {
  char *page = sbrk(static_cast<int>(PAGE_SIZE));
  char *const failed = reinterpret_cast<char *>(-1);
  if (page == failed || sbrk(-static_cast<int>(PAGE_SIZE)) == failed) return 0;
  return reinterpret_cast<unsigned long>(page) + PAGE_SIZE / 2;
}

// The bad frame pointer for KIND, or 0 for an unknown kind.
unsigned long bad_fp_for(const char *kind) {
  volatile unsigned long local = 0;
  unsigned long stack = reinterpret_cast<unsigned long>(&local);
  if (strcmp(kind, "hole") == 0) return hole();
  if (strcmp(kind, "trapframe") == 0) return TRAPFRAME + TF_T5;
  if (strcmp(kind, "trampoline") == 0) return TRAMPOLINE + 16;
  if (strcmp(kind, "descend") == 0) {
    unsigned long lower = reinterpret_cast<unsigned long>(&descend_records[2]);
    descend_records[0] = 0;
    descend_records[1] = target();
    descend_records[2] = lower;     // fp - 16 of the first record: a caller below it
    descend_records[3] = target();  // fp - 8
    return reinterpret_cast<unsigned long>(&descend_records[4]);
  }
  if (strcmp(kind, "shrink") == 0) return 1;  // main() makes its records itself
  if (strcmp(kind, "kernel") == 0) return 0x80201000UL;
  if (strcmp(kind, "unmapped") == 0) return 0x3000000000UL;
  if (strcmp(kind, "misaligned") == 0) return (stack & ~7UL) + 3;
  if (strcmp(kind, "guard") == 0) return (stack & ~(PAGE_SIZE - 1)) - PAGE_SIZE / 2;
  if (strcmp(kind, "self") == 0) {
    unsigned long fp = reinterpret_cast<unsigned long>(&self_record[2]);
    self_record[0] = fp;        // fp - 16: the "caller's" frame pointer is this record again
    self_record[1] = target();  // fp - 8
    return fp;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  unsigned long bad = argc > 1 ? bad_fp_for(argv[1]) : 0;
  int ticks = argc > 2 ? tenths(argv[2]) : 20;  // uptime counts 100 ms ticks
  if (argc < 2 || argc > 3 || bad == 0 || ticks < 0)
    usage_exit(
        "pbadfp kernel|unmapped|self|misaligned|guard|hole|trapframe|trampoline|descend|shrink "
        "[SECONDS]\n");
  bool shrink = strcmp(argv[1], "shrink") == 0;
  bool one_up = !shrink && strcmp(argv[1], "self") != 0 && strcmp(argv[1], "descend") != 0;
  one_up_record[0] = bad;  // fp - 16: the caller's frame pointer, the corrupt one
  one_up_record[1] = target();
  unsigned long good = reinterpret_cast<unsigned long>(&one_up_record[2]);
  int deadline = uptime() + ticks;
  while (uptime() < deadline) {
    if (!shrink) {
      spin_with_fp(bad, ITERATIONS_PER_CALL, bad, target());
      if (one_up) spin_one_up(good, ITERATIONS_PER_CALL, bad, target());
      continue;
    }
    // A record at the start of a fresh heap page, spun on while the page is there and
    // again once it is gone.
    unsigned long *page = reinterpret_cast<unsigned long *>(sbrk(static_cast<int>(PAGE_SIZE)));
    if (page == reinterpret_cast<unsigned long *>(-1)) {
      fprintf(2, "pbadfp: sbrk failed\n");
      return 1;
    }
    page[0] = 0;
    page[1] = target();
    unsigned long fp = reinterpret_cast<unsigned long>(&page[2]);
    spin_with_fp(fp, ITERATIONS_PER_CALL / 4, fp, target());
    sbrk(-static_cast<int>(PAGE_SIZE));
    spin_with_fp(fp, ITERATIONS_PER_CALL / 4, fp, target());
  }
  printf("pbadfp %s: done\n", argv[1]);
  return 0;
}
