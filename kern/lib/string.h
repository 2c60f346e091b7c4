// Freestanding string and memory helpers. GCC emits calls to memcpy/memset/memmove/memcmp
// on its own, so those have C linkage.
#pragma once

#include "lib/types.h"

extern "C" {
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
}

int strncmp(const char *p, const char *q, size_t n);
size_t strlen(const char *s);
// Copy at most n-1 bytes and always NUL-terminate (when n > 0).
char *safestrcpy(char *dst, const char *src, size_t n);
// Copy up to n bytes, padding with NULs, like strncpy(3).
char *strncpy(char *dst, const char *src, size_t n);
