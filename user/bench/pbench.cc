// pbench: a fixed amount of CPU work at a chosen stack depth, timed with the `time` counter.
//
//   pbench DEPTH [UNITS]
//
// Recurses DEPTH frames deep, then does UNITS (default 200) units of arithmetic at the
// bottom, and prints `pbench: depth D units U ticks T`, where T is the number of `time`
// ticks (10 MHz) the work took. Under QEMU's -icount shift=0 one tick is exactly 100 guest
// instructions, so running it with and without the profiler gives the profiler's overhead as
// a ratio, and the cost of each sample.
#include "lib/user.h"

namespace {

volatile unsigned long sink;

__attribute__((noinline)) unsigned long work(unsigned long units) {
  unsigned long x = 88172645463325252ul;
  for (unsigned long u = 0; u < units; u++) x = spin_rounds(x, 10000);
  return x;
}

__attribute__((noinline)) unsigned long descend(int depth, unsigned long units) {
  if (depth <= 2) return work(units);  // main and work are frames too
  unsigned long r = descend(depth - 1, units);
  sink = r;  // keeps the call from being a tail call
  return r + 1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || atoi(argv[1]) < 2)
    usage_exit("pbench DEPTH [UNITS]   (DEPTH >= 2)\n");
  int depth = atoi(argv[1]);
  unsigned long units = argc == 3 ? static_cast<unsigned long>(atoi(argv[2])) : 200;
  unsigned long start = rdtime();
  sink = descend(depth, units);
  unsigned long ticks = rdtime() - start;
  printf("pbench: depth %d units %lu ticks %lu\n", depth, units, ticks);
  return 0;
}
