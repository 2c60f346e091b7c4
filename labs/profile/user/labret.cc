// labret: a call that is the last instruction of its function, for the profiler to name.
//
//   labret [SECONDS]     spin for SECONDS (1 by default, tenths allowed: 0.3) inside finish(),
//                        then exit
//
// main calls ends_in_call(), which calls finish(), which spins and then exits. Neither
// finish() nor exit() returns, so the compiler ends ends_in_call() with the call itself:
// there is no instruction after it. The return address that call leaves behind is the first
// byte after ends_in_call(), which is the first byte of whatever function the linker put
// next (here after_the_call(), defined right below it).
//
//   ends_in_call:   ...
//                   call finish        <- the last instruction
//   after_the_call: addi sp, sp, -16   <- the return address points here
//
// A profiler that looks a return address up as it is names after_the_call, a function that
// was never running. Looked up at address - 1, the address falls inside the call instruction
// and names ends_in_call. Nearly every sample of this program should read
// finish <- ends_in_call <- main.
#include "lib/user.h"

namespace {

volatile unsigned long sink;

}  // namespace

// C linkage keeps the names in the profile plain.
extern "C" {

__attribute__((noinline, noreturn)) void finish(int deadline) {
  spin_until(deadline, 100000, 88172645463325252UL);
  printf("labret: done\n");
  exit(0);
}

__attribute__((noinline, noreturn)) void ends_in_call(int deadline) {
  sink = sink + 1;  // some work of its own, so that it has a body before the call
  finish(deadline);
}

// Runs once, so that it is a real function with callers; only its address matters.
__attribute__((noinline)) unsigned long after_the_call(unsigned long x) { return x * 3 + sink; }

}  // extern "C"

int main(int argc, char **argv) {
  int ticks = argc > 1 ? tenths(argv[1]) : 10;  // uptime counts 100 ms ticks
  if (argc > 2 || ticks < 0) usage_exit("labret [SECONDS]   (such as 1 or 0.3)\n");
  sink = after_the_call(static_cast<unsigned long>(ticks));
  ends_in_call(uptime() + ticks);
}
