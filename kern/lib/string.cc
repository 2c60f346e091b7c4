// Memory and string helpers for a freestanding kernel (see string.h).

#include "lib/string.h"

extern "C" void *memset(void *dst, int c, size_t n) {
  u8 *d = static_cast<u8 *>(dst);
  // Word stores once aligned: kalloc zeroes whole pages through here.
  while (n > 0 && (reinterpret_cast<u64>(d) & 7) != 0) {
    *d++ = static_cast<u8>(c);
    n--;
  }
  u64 word = 0x0101010101010101ull * static_cast<u8>(c);
  for (; n >= 8; n -= 8, d += 8) *reinterpret_cast<u64 *>(d) = word;
  while (n-- > 0) *d++ = static_cast<u8>(c);
  return dst;
}

namespace {

// memmove's work, written once and compiled into memmove and memcpy both (memcpy accepts
// overlapping buffers too), so that neither pays for a call to the other.
[[gnu::always_inline]] inline void *move(void *dst, const void *src, size_t n) {
  u8 *d = static_cast<u8 *>(dst);
  const u8 *s = static_cast<const u8 *>(src);
  if (s < d && s + n > d) {
    // Overlap with the source first: copy backwards.
    while (n-- > 0) d[n] = s[n];
    return dst;
  }
  // LAB speed/copy BEGIN
  if (n >= 16) {
    // Forwards a word at a time: bytes first, until d is aligned. If s is then aligned too,
    // words move whole. If not, each word of d is put together from the two aligned words
    // of s it straddles (little-endian: later bytes in higher bits). Those loads also read
    // a few bytes before s[0] and after the last byte copied, but only in aligned words
    // that hold bytes being copied: never on another page.
    while ((reinterpret_cast<u64>(d) & 7) != 0) {
      *d++ = *s++;
      n--;
    }
    u64 shift = (reinterpret_cast<u64>(s) & 7) * 8;
    if (shift == 0) {
      for (; n >= 8; n -= 8, d += 8, s += 8)
        *reinterpret_cast<u64 *>(d) = *reinterpret_cast<const u64 *>(s);
    } else {
      const u64 *w = reinterpret_cast<const u64 *>(s - shift / 8);
      u64 lo = *w++;
      for (; n >= 8; n -= 8, d += 8, s += 8) {
        u64 hi = *w++;
        *reinterpret_cast<u64 *>(d) = lo >> shift | hi << (64 - shift);
        lo = hi;
      }
    }
  }
  // LAB speed/copy STARTER
  // LAB speed/copy END
  while (n-- > 0) *d++ = *s++;
  return dst;
}

}  // namespace

extern "C" void *memmove(void *dst, const void *src, size_t n) { return move(dst, src, n); }

extern "C" void *memcpy(void *dst, const void *src, size_t n) { return move(dst, src, n); }

extern "C" int memcmp(const void *a, const void *b, size_t n) {
  const u8 *p = static_cast<const u8 *>(a);
  const u8 *q = static_cast<const u8 *>(b);
  for (size_t i = 0; i < n; i++)
    if (p[i] != q[i]) return p[i] - q[i];
  return 0;
}

int strncmp(const char *p, const char *q, size_t n) {
  for (; n > 0 && *p && *p == *q; n--, p++, q++) {
  }
  if (n == 0) return 0;
  return static_cast<u8>(*p) - static_cast<u8>(*q);
}

size_t strlen(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}

char *safestrcpy(char *dst, const char *src, size_t n) {
  if (n == 0) return dst;
  size_t i = 0;
  for (; i + 1 < n && src[i]; i++) dst[i] = src[i];
  dst[i] = 0;
  return dst;
}

char *strncpy(char *dst, const char *src, size_t n) {
  size_t i = 0;
  for (; i < n && src[i]; i++) dst[i] = src[i];
  for (; i < n; i++) dst[i] = 0;
  return dst;
}
