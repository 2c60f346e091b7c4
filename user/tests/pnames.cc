// pnames: a deep call stack of functions with long non-ASCII names, for the profiler.
//
//   pnames N [SECONDS]    recurse N frames deep, then spin at the bottom (2 seconds by default,
//                         tenths allowed: 0.3)
//
// Like pdeep, but the two functions have long UTF-8 names, and /proc/profile escapes every
// byte of them that is not ASCII as six bytes (\u00XX):
//
//   - the recursive one, descenso_ followed by 80 n-tildes, is 169 bytes long: longer than
//     the kernel's name buffer (prof::NAME_MAX, kern/profile/profiler.h), so the profile
//     shows it cut, ending in "...";
//   - the one at the bottom, fondo_ followed by 70 e-acutes, is 146 bytes: it fits whole.
//
// So `pnames 40` gives samples of 32 frames (the kernel's limit) whose names escape to
// nearly a kilobyte each: the largest sample a program built in this tree can produce. The
// bottom also calls uptime(), so some samples are taken in the kernel, with kernel frames on
// top of the 32, and sleeps a third of the time, so that some are wait samples.
// tests/qemu/test_profile.py also rewrites these names in a copy of the program into arbitrary
// bytes (its .symtab.sorted), which no compiler would produce.
#include "lib/user.h"

namespace {

constexpr int MAX_DEPTH = 100;  // 32 bytes a frame: 100 of them fit in the one stack page
volatile unsigned long sink;

}  // namespace

// C linkage: the names in the symbol table are exactly these.
extern "C" {

// Spins until the uptime clock reaches `deadline` (in 100 ms ticks).
__attribute__((noinline, noclone)) unsigned long
fondo_éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé(int deadline) {
  // Two ticks spinning (short spins: much time in uptime()), then one asleep, so that some
  // samples are wait samples of the whole deep chain.
  unsigned long r = 0;
  for (int now = uptime(); now < deadline; now = uptime()) {
    r += spin_until(now + 2 < deadline ? now + 2 : deadline, 300, 88172645463325252UL);
    if (uptime() < deadline) sleep(1);
  }
  return r;
}

__attribute__((noinline, noclone)) unsigned long
descenso_ññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññ(
    int depth, int deadline) {
  unsigned long r =
      depth > 1
          ? descenso_ññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññ(
                depth - 1, deadline)
          : fondo_éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé(deadline);
  return r + static_cast<unsigned long>(depth);
}

}  // extern "C"

int main(int argc, char **argv) {
  int depth = argc > 1 ? atoi(argv[1]) : 0;
  int ticks = argc > 2 ? tenths(argv[2]) : 20;  // uptime counts 100 ms ticks
  if (argc < 2 || argc > 3 || depth < 1 || depth > MAX_DEPTH || ticks < 0)
    usage_exit("pnames N [SECONDS]   (1 <= N <= %d)\n", MAX_DEPTH);
  sink = descenso_ññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññññ(
      depth, uptime() + ticks);
  printf("pnames: done\n");
  return 0;
}
