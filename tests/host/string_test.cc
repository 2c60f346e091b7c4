// The kernel's memory copy (kern/lib/string.cc), compiled here under other names so that it
// does not take the place of the host's own memmove and memcpy.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

// No loop of the kernel's may become a call to the host's memmove: the copy under test is ours.
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#define memset tern_memset
#define memcpy tern_memcpy
#define memmove tern_memmove
#define memcmp tern_memcmp
#define strncmp tern_strncmp
#define strlen tern_strlen
#define safestrcpy tern_safestrcpy
#define strncpy tern_strncpy
#include "lib/string.cc"
#undef memset
#undef memcpy
#undef memmove
#undef memcmp
#undef strncmp
#undef strlen
#undef safestrcpy
#undef strncpy

namespace {

unsigned seed_from_env() {
  const char *given = std::getenv("STRING_SEED");
  return given ? static_cast<unsigned>(std::strtoul(given, nullptr, 10)) : std::random_device{}();
}

// Property: for any length and any two places in one buffer, overlapping or not, in either
// order and at any alignment, memmove and memcpy leave the buffer as std::memmove does.
TEST(String, MoveMatchesTheHostsAtAnyAlignmentAndOverlap) {
  unsigned seed = seed_from_env();
  std::mt19937_64 rng(seed);
  constexpr int kCases = 200000;
  std::printf("STRING_SEED=%u, %d cases\n", seed, kCases);
  constexpr size_t kBuf = 512;
  alignas(8) unsigned char buf[kBuf], want[kBuf];
  for (int k = 0; k < kCases; k++) {
    for (size_t i = 0; i < kBuf; i++) buf[i] = static_cast<unsigned char>(rng());
    std::memcpy(want, buf, kBuf);
    size_t n = rng() % 3 == 0 ? rng() % 24 : rng() % 200;
    size_t from = rng() % (kBuf - n + 1), to = rng() % (kBuf - n + 1);
    if (k % 4 == 0) {  // close by, to overlap often
      size_t near = from + rng() % 17;
      to = near <= kBuf - n ? near : from;
    }
    std::memmove(want + to, want + from, n);
    void *got =
        k % 2 ? tern_memmove(buf + to, buf + from, n) : tern_memcpy(buf + to, buf + from, n);
    ASSERT_EQ(got, buf + to) << "seed " << seed << " case " << k;
    ASSERT_EQ(std::memcmp(buf, want, kBuf), 0)
        << "seed " << seed << " case " << k << ": " << n << " bytes from " << from << " to " << to;
  }
}

// Property: a copy may read whole aligned words around its bytes, but never a byte on a page
// that holds none of them. The source sits at either end of a page fenced by unmapped pages,
// at every alignment and for every short length: a read past the fence would crash the test.
TEST(String, MoveReadsNoPageButItsOwn) {
  long page = sysconf(_SC_PAGESIZE);
  auto *area = static_cast<unsigned char *>(
      mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(area, MAP_FAILED);
  ASSERT_EQ(mprotect(area, page, PROT_NONE), 0);
  ASSERT_EQ(mprotect(area + 2 * page, page, PROT_NONE), 0);
  unsigned char *mid = area + page;
  for (long i = 0; i < page; i++) mid[i] = static_cast<unsigned char>(i * 7 + 3);
  alignas(8) unsigned char out[160];
  int cases = 0;
  for (size_t n = 0; n <= 80; n++) {
    for (size_t skew = 0; skew < 8; skew++) {
      for (size_t dskew = 0; dskew < 8; dskew++, cases++) {
        const unsigned char *first = mid + skew;            // at the start of the page
        const unsigned char *last = mid + page - n - skew;  // at its end
        for (const unsigned char *src : {first, last}) {
          tern_memmove(out + dskew, src, n);
          ASSERT_EQ(std::memcmp(out + dskew, src, n), 0) << n << " bytes, skew " << skew;
        }
      }
    }
  }
  std::printf("page fence: %d cases\n", cases);
  munmap(area, 3 * page);
}

}  // namespace
