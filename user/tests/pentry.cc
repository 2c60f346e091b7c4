// pentry: spends its time entering and leaving a function, for the profiler's prologue rule.
//
//   pentry [SECONDS]    call tiny() from caller() over and over (2 seconds by default)
//
// main calls caller(), which calls tiny() in a loop. tiny() does almost nothing, so a good
// share of the samples land in its prologue (before it has set its frame pointer) or its
// epilogue (after it has put the caller's back). There s0 is caller()'s frame pointer, and a
// walk that trusts it skips caller(): `tiny <- main`. The profiler repairs that when it names
// the frames (kern/profile/prologue.h): every sample in tiny should read `tiny <- caller <-
// main`.
#include "lib/user.h"

namespace {

volatile unsigned long sink;

}  // namespace

// C linkage keeps the names in the profile plain.
extern "C" {

// A frame of its own and a little work: the prologue and epilogue are most of it.
__attribute__((noinline, noclone)) unsigned long tiny(unsigned long x) {
  sink = x;
  return x * 3 + 1;
}

__attribute__((noinline, noclone)) unsigned long caller(int deadline) {
  unsigned long x = 1;
  while (uptime() < deadline)
    for (int i = 0; i < 10000; i++) x = tiny(x);
  return x;
}

}  // extern "C"

int main(int argc, char **argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 2;
  if (argc > 2 || seconds < 0) usage_exit("pentry [SECONDS]\n");
  sink = caller(uptime() + 10 * seconds);
  printf("pentry: done\n");
  return 0;
}
