// spin: burns CPU time in a known call chain, for trying out the profiler.
//
//   spin       runs until killed
//   spin N     stops after about N seconds (tenths allowed: `spin 0.3`)
//
// The work is split over main -> outer -> middle -> hot, each a real function (never
// inlined) that does some arithmetic of its own, so a sampling profiler should find all four
// on its stacks, and find `hot` at the top of most of them: it does far more work per call
// than its callers. The arithmetic feeds a volatile variable, so the compiler cannot prove
// it useless and delete it.
#include "lib/user.h"

namespace {

volatile unsigned long sink;

}  // namespace

// C linkage keeps the symbol names plain (`hot`, not a mangled name), which is what a
// profile report should show. Per pass of main's loop the shares of the work are about
// main 5%, outer 10%, middle 15% and hot 70%.
extern "C" {

__attribute__((noinline, noclone)) unsigned long hot(unsigned long seed) {
  unsigned long x = seed | 1;
  for (int i = 0; i < 9000; i++) x = xorshift(x);
  return x;
}

__attribute__((noinline, noclone)) unsigned long middle(unsigned long seed) {
  unsigned long x = seed;
  for (int i = 0; i < 7500; i++) x = xorshift(x + i);
  for (int i = 0; i < 4; i++) x ^= hot(x + i);
  return x;
}

__attribute__((noinline, noclone)) unsigned long outer(unsigned long seed) {
  unsigned long x = seed;
  for (int i = 0; i < 10000; i++) x = xorshift(x + i);
  for (int i = 0; i < 2; i++) x ^= middle(x + i);
  return x;
}

}  // extern "C"

int main(int argc, char **argv) {
  bool forever = argc < 2;
  int ticks = forever ? 0 : tenths(argv[1]);  // uptime counts 100 ms ticks
  if (argc > 2 || ticks < 0) usage_exit("spin [SECONDS]   (such as 2 or 0.3)\n");
  int deadline = uptime() + ticks;

  unsigned long x = getpid();
  while (forever || uptime() < deadline) {
    // Several passes per look at the clock: a system call is costly next to this work,
    // and time spent in it would blur the profile.
    for (int pass = 0; pass < 16; pass++) {
      for (int i = 0; i < 5000; i++) x = xorshift(x + i);
      x ^= outer(x);
      sink = x;
    }
  }
  printf("spin: done\n");
  return 0;
}
