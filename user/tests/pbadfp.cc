// pbadfp: runs with a corrupt frame pointer, to show that the profiler's stack walk survives
// whatever a user program leaves in s0.
//
//   pbadfp KIND [SECONDS]   KIND is kernel, unmapped, self, misaligned or guard; 2 s default
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
//
// Every sample taken in the loop should have a short user chain (the pc, and for `self` the
// one return address the record holds) and no kernel address among its user frames. The
// kernel must not panic, and must not kill this program: it makes no bad access itself.
//
// The corrupt s0 exists only inside one asm statement, which saves the real s0 in another
// register, spins, and restores it. The compiler uses s0 as the frame pointer, so no
// compiled code may run while it is wrong; in particular the loop cannot call anything.
#include "lib/user.h"

namespace {

constexpr unsigned long PAGE_SIZE = 4096;
constexpr unsigned long ITERATIONS_PER_CALL = 2000000;  // about 10-50 ms of emulated time

// The `self` record: two words, [caller's fp, return address], and s0 points just above
// them. Its caller's-fp word is its own s0.
alignas(16) unsigned long self_record[2];

}  // namespace

extern "C" {

// A function whose address serves as the self record's return address: any address inside
// the program's code passes the walker's "is this text?" check.
__attribute__((noinline)) void record_target() { asm volatile(""); }

// Spins `iterations` times with s0 = bad_fp, then puts s0 back.
__attribute__((noinline)) void spin_with_fp(unsigned long bad_fp, unsigned long iterations) {
  unsigned long saved;
  asm volatile(
      "mv %0, s0\n"
      "mv s0, %2\n"
      "1:\n"
      "addi %1, %1, -1\n"
      "bnez %1, 1b\n"
      "mv s0, %0\n"
      : "=&r"(saved), "+r"(iterations)
      : "r"(bad_fp)
      : "memory");
}

}  // extern "C"

namespace {

// The bad frame pointer for KIND, or 0 for an unknown kind.
unsigned long bad_fp_for(const char *kind) {
  volatile unsigned long local = 0;
  unsigned long stack = reinterpret_cast<unsigned long>(&local);
  if (strcmp(kind, "kernel") == 0) return 0x80201000UL;
  if (strcmp(kind, "unmapped") == 0) return 0x3000000000UL;
  if (strcmp(kind, "misaligned") == 0) return (stack & ~7UL) + 3;
  if (strcmp(kind, "guard") == 0) return (stack & ~(PAGE_SIZE - 1)) - PAGE_SIZE / 2;
  if (strcmp(kind, "self") == 0) {
    unsigned long fp = reinterpret_cast<unsigned long>(&self_record[2]);
    self_record[0] = fp;  // fp - 16: the "caller's" frame pointer is this record again
    self_record[1] = reinterpret_cast<unsigned long>(&record_target) + 2;  // fp - 8
    return fp;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  unsigned long bad = argc > 1 ? bad_fp_for(argv[1]) : 0;
  int seconds = argc > 2 ? atoi(argv[2]) : 2;
  if (argc < 2 || argc > 3 || bad == 0 || seconds < 0)
    usage_exit("pbadfp kernel|unmapped|self|misaligned|guard [SECONDS]\n");
  int deadline = uptime() + 10 * seconds;
  while (uptime() < deadline) spin_with_fp(bad, ITERATIONS_PER_CALL);
  printf("pbadfp %s: done\n", argv[1]);
  return 0;
}
