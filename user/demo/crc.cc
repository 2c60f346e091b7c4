// crc: a fixed amount of CPU work that says how long it took: the CRC-32 of pseudo-random
// data, computed one bit at a time.
//
//   crc [MIB]     the amount of data in MiB (8 by default, at most 1024)
//
//   crc: 8 MiB, crc c2f0798d, in 382 ms
//
// The data comes from a fixed generator, so the CRC is the same on every run: only the time
// changes. That makes crc a yardstick for sharing the processor. Run it alone and note the
// time; run it beside another busy program on one hart (`crc & primes naive 2000000`, with
// `make qemu CPUS=1`) and it takes about twice as long for the same work, because the
// scheduler gives each of them the hart in turn. With the profiler on for every process,
// the timeline shows the turns, and the table shows crc32 beside the other program's hot
// function.
//
// The CRC is the one zip and Ethernet use (reflected polynomial 0xedb88320). Doing it bit
// by bit, eight shifts and tests per byte, is slow on purpose: almost every sample of this
// program lands in `crc32`.
#include "lib/user.h"

namespace {

constexpr int BLOCK = 4096;
constexpr int MAX_MIB = 1024;

unsigned char block[BLOCK];  // static: the user stack is only one page

}  // namespace

// C linkage keeps the names in a profile plain.
extern "C" {

// The next block of data, from a xorshift generator whose state is *seed.
__attribute__((noinline, noclone)) void fill(unsigned long *seed) {
  unsigned long x = *seed;
  for (int i = 0; i < BLOCK; i++) {
    x = xorshift(x);
    block[i] = static_cast<unsigned char>(x);
  }
  *seed = x;
}

// Feeds n bytes into a CRC whose running value (inverted, as the algorithm keeps it) is crc.
__attribute__((noinline, noclone)) unsigned int crc32(unsigned int crc, const unsigned char *p,
                                                      int n) {
  for (int i = 0; i < n; i++) {
    crc ^= p[i];
    for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
  }
  return crc;
}

}  // extern "C"

int main(int argc, char **argv) {
  int mib = argc > 1 ? atoi(argv[1]) : 8;
  if (argc > 2 || mib < 1 || mib > MAX_MIB) usage_exit("crc [MIB]   (1 <= MIB <= %d)\n", MAX_MIB);
  unsigned long start = now_ms();
  unsigned long seed = 88172645463325252ul;
  unsigned int crc = 0xffffffffu;
  for (int blocks = mib * (1024 * 1024 / BLOCK); blocks > 0; blocks--) {
    fill(&seed);
    crc = crc32(crc, block, BLOCK);
  }
  printf("crc: %d MiB, crc %08x, in %lu ms\n", mib, ~crc, now_ms() - start);
  return 0;
}
