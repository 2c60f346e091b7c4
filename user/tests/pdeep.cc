// pdeep: a deep call stack for the profiler to walk.
//
//   pdeep N [SECONDS]    recurse N frames deep, then spin at the bottom (2 seconds by default,
//                        tenths allowed: 0.3)
//
// main calls descend(N), which calls descend(N-1), and so on down to descend(1), which
// calls bottom(); bottom does the work. So nearly every sample of this program should show
// the chain bottom, descend x N, main (and _start under main). A walker that stops at a
// fixed depth shows how many of those frames it keeps: the kernel records at most 32 per
// sample, so `pdeep 64` is cut short, and `pdeep 8` or `pdeep 16` fits whole.
//
// descend does some work after its call returns (it adds its depth to the result), so the
// call cannot be turned into a jump even without -fno-optimize-sibling-calls, and each level
// keeps a real frame of its own.
#include "lib/user.h"

namespace {

constexpr int MAX_DEPTH = 100;  // 32 bytes a frame: 100 of them fit in the one stack page
volatile unsigned long sink;

}  // namespace

// C linkage keeps the names in the profile plain: `bottom`, `descend`.
extern "C" {

// Spins until the uptime clock reaches `deadline` (in 100 ms ticks).
__attribute__((noinline, noclone)) unsigned long bottom(int deadline) {
  return spin_until(deadline, 100000, 88172645463325252UL);
}

__attribute__((noinline, noclone)) unsigned long descend(int depth, int deadline) {
  unsigned long r = depth > 1 ? descend(depth - 1, deadline) : bottom(deadline);
  return r + static_cast<unsigned long>(depth);
}

}  // extern "C"

int main(int argc, char **argv) {
  int depth = argc > 1 ? atoi(argv[1]) : 0;
  int ticks = argc > 2 ? tenths(argv[2]) : 20;  // uptime counts 100 ms ticks
  if (argc < 2 || argc > 3 || depth < 1 || depth > MAX_DEPTH || ticks < 0)
    usage_exit("pdeep N [SECONDS]   (1 <= N <= %d)\n", MAX_DEPTH);
  sink = descend(depth, uptime() + ticks);
  printf("pdeep: done\n");
  return 0;
}
