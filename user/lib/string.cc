// Memory and string primitives.
//
// GCC may emit calls to memset, memcpy, memmove and memcmp on its own (to clear a large local
// array, or to copy a struct), so these four must exist with C linkage in every program,
// whether or not the program calls them. The rest are the small string helpers that xv6
// programs expect.
//
// The loops below are exactly the pattern GCC's loop-distribution pass recognises and
// replaces with a call to memset or memcpy, which here would be a call to the very function
// being defined: endless recursion. The optimize attribute turns that one pass off for this
// file's functions.
#include "user.h"

#define NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))

extern "C" {

NO_LIBCALLS void *memset(void *dst, int c, unsigned long n) {
  unsigned char *d = static_cast<unsigned char *>(dst);
  for (unsigned long i = 0; i < n; i++) d[i] = static_cast<unsigned char>(c);
  return dst;
}

NO_LIBCALLS void *memcpy(void *dst, const void *src, unsigned long n) {
  unsigned char *d = static_cast<unsigned char *>(dst);
  const unsigned char *s = static_cast<const unsigned char *>(src);
  for (unsigned long i = 0; i < n; i++) d[i] = s[i];
  return dst;
}

// Unlike memcpy, the two ranges may overlap. When the destination lies above the source,
// copying front to back would overwrite source bytes before they are read, so copy back to
// front instead.
NO_LIBCALLS void *memmove(void *dst, const void *src, unsigned long n) {
  unsigned char *d = static_cast<unsigned char *>(dst);
  const unsigned char *s = static_cast<const unsigned char *>(src);
  if (d > s && d < s + n) {
    while (n > 0) {
      n--;
      d[n] = s[n];
    }
  } else {
    for (unsigned long i = 0; i < n; i++) d[i] = s[i];
  }
  return dst;
}

int memcmp(const void *a, const void *b, unsigned long n) {
  const unsigned char *p = static_cast<const unsigned char *>(a);
  const unsigned char *q = static_cast<const unsigned char *>(b);
  for (unsigned long i = 0; i < n; i++) {
    if (p[i] != q[i]) return p[i] - q[i];
  }
  return 0;
}

NO_LIBCALLS char *strcpy(char *dst, const char *src) {
  char *d = dst;
  while ((*d++ = *src++) != '\0') {
  }
  return dst;
}

// Characters compare as unsigned, as in C, so that "\xff" sorts after "a".
int strcmp(const char *a, const char *b) {
  while (*a != '\0' && *a == *b) {
    a++;
    b++;
  }
  return static_cast<unsigned char>(*a) - static_cast<unsigned char>(*b);
}

int strncmp(const char *a, const char *b, uint n) {
  for (; n > 0; n--, a++, b++) {
    if (*a != *b || *a == '\0')
      return static_cast<unsigned char>(*a) - static_cast<unsigned char>(*b);
  }
  return 0;
}

uint strlen(const char *s) {
  uint n = 0;
  while (s[n] != '\0') n++;
  return n;
}

char *strchr(const char *s, int c) {
  for (; *s != '\0'; s++) {
    if (*s == static_cast<char>(c)) return const_cast<char *>(s);
  }
  return nullptr;
}

}  // extern "C"
