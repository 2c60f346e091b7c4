// labstart: a program whose first milliseconds are spent in a function of their own.
//
//   labstart [SECONDS]    spin for 40 ms in first_steps(), then SECONDS (1 by default,
//                         tenths allowed: 0.2) in the_rest(), then exit
//
// `profile run labstart` must see first_steps(): sampling is switched on before the
// command's first instruction, so the samples of its first 40 ms are in the profile. A
// `profile run` that lets the child exec before sampling is on loses them, and with them
// first_steps(), which runs at no other time. Both phases are timed with the `time` CSR
// (rdtime), not by an amount of work, so that a slow host gets as many samples as a fast
// one; but only time spent running counts: a step of the loop that saw more than a
// millisecond go by was not running for most of it (the host did not run the guest's hart,
// or another process had it), and the sampler took no samples of it either.
#include "lib/user.h"

namespace {

volatile unsigned long sink;

// Scramble x until it has run for `ticks` of the `time` CSR since `start`, leaving out
// steps longer than a millisecond (see the top). Inlined, so that the samples name its
// callers.
[[gnu::always_inline]] inline unsigned long busy_until(unsigned long start, unsigned long ticks,
                                                       unsigned long x) {
  unsigned long ran = 0, last = start;
  while (ran < ticks) {
    x = spin_rounds(x, 1000);
    sink = x;
    unsigned long now = rdtime();
    if (now - last < TIME_TICKS_PER_MS) ran += now - last;
    last = now;
  }
  return x;
}

}  // namespace

// C linkage keeps the names in the profile plain.
extern "C" {

__attribute__((noinline)) unsigned long first_steps(unsigned long start) {
  return busy_until(start, 40 * TIME_TICKS_PER_MS, start | 1);
}

__attribute__((noinline)) unsigned long the_rest(unsigned long x, int deciseconds) {
  return busy_until(rdtime(), static_cast<unsigned long>(deciseconds) * 100 * TIME_TICKS_PER_MS, x);
}

}  // extern "C"

int main(int argc, char **argv) {
  unsigned long start = rdtime();
  int ticks = argc > 1 ? tenths(argv[1]) : 10;
  if (argc > 2 || ticks < 0 || ticks > 600)
    usage_exit("labstart [SECONDS]   (0 to 60, such as 0.2)\n");
  sink = the_rest(first_steps(start), ticks);
  printf("labstart: done\n");
  return 0;
}
