// Kernel console output and panic.
//
// kprintf understands %d %u %ld %lu %x %lx %p %s %c %%, plus a width and '0' flag for
// numbers (for example %016lx). Output from different harts is serialised line-by-line by
// a lock, except during a panic.
#pragma once

#include "lib/types.h"

void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Print the message, a symbolized backtrace of this hart's kernel stack, and stop every
// hart. For broken invariants only: user errors return -1 instead.
[[noreturn]] void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Print the kernel frame-pointer chain starting at frame pointer `fp`, one symbolized
// line a frame.
void print_backtrace(u64 fp);

// Set by panic so that other harts freeze in their trap handlers and printf stops locking.
extern volatile bool panicked;

#define KASSERT(cond)                                                              \
  do {                                                                             \
    if (!(cond)) panic("assertion failed: %s (%s:%d)", #cond, __FILE__, __LINE__); \
  } while (0)
