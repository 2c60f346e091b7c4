// pstall: late timer ticks made inside the guest, for the sampling clock's tests.
//
//   pstall N US [GAP_US]   profile this process, then N times: spin in user mode for GAP_US
//                          microseconds (2000 by default), then have the kernel keep
//                          interrupts off for US microseconds (profile(2)'s PROF_STALL)
//
// A sampling deadline that passes during a stall is taken late, at the end of the stall,
// in the kernel, with this process still on its hart. The sampling clock must then take
// one sample and count the periods it skipped as missed (kern/profile/sampler.cc, tick),
// not take one sample per skipped period in a burst. Under QEMU's -icount shift=0 every
// stall is exactly US * 1000 instructions, so the test is the same on every run whatever
// the host is doing. The stalls are kept well short of a time slice (10 ms), so the late
// tick nearly always finds this process still on its hart rather than in the scheduler.
//
// Prints `pstall: done` at the end, with profiling switched off again.
#include "abi/profile.h"
#include "lib/user.h"

namespace {

volatile unsigned long sink;

}  // namespace

extern "C" {

// Spins in user mode until the `time` clock reaches `until`.
__attribute__((noinline, noclone)) void spin_to(unsigned long until) {
  unsigned long x = 88172645463325252UL;
  while (rdtime() < until) {
    for (int i = 0; i < 100; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    sink = x;
  }
}

}  // extern "C"

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : -1;
  int us = argc > 2 ? atoi(argv[2]) : -1;
  int gap = argc > 3 ? atoi(argv[3]) : 2000;
  if (argc < 3 || argc > 4 || n < 1 || us < 0 || us > PROF_STALL_MAX_US || gap < 0)
    usage_exit("pstall N US [GAP_US]   (0 <= US <= %d)\n", PROF_STALL_MAX_US);
  int me = getpid();
  if (profile(me, PROF_ON, 0) < 0) {
    fprintf(2, "pstall: profile on failed\n");
    exit(1);
  }
  for (int i = 0; i < n; i++) {
    spin_to(rdtime() + static_cast<unsigned long>(gap) * TIME_TICKS_PER_MS / 1000);
    if (profile(0, PROF_STALL, us) < 0) {
      fprintf(2, "pstall: the kernel refused a stall of %d us\n", us);
      exit(1);
    }
  }
  profile(me, PROF_OFF, 0);
  printf("pstall: done\n");
  return 0;
}
