// Walking the kernel's frame-pointer chain.
//
// With -fno-omit-frame-pointer, every non-leaf kernel function keeps a frame record just
// below its frame pointer: the return address at fp-8 and the caller's fp at fp-16. A walk
// follows fp from record to record. It must never fault, even on a corrupt stack, so each
// step checks that the record lies inside the one kernel stack the walk started on, that fp
// is 8-byte aligned and strictly increasing (stacks grow down, so callers' frames are
// higher), and that the return address is inside kernel text.
#pragma once

#include "lib/types.h"

// The kernel stack containing addr: a process's kernel stack or a hart's boot stack.
// Returns false if addr is in neither.
bool kernel_stack_bounds(u64 addr, u64 *lo, u64 *hi);

// True if pc is inside the kernel's text.
bool in_kernel_text(u64 pc);

class KernelStackWalker {
 public:
  explicit KernelStackWalker(u64 fp) : m_fp(fp) {
    m_valid = kernel_stack_bounds(fp - 1, &m_lo, &m_hi);
  }
  // The next return address, or false at the end of the chain.
  bool next(u64 *ra);

 private:
  u64 m_fp;
  u64 m_lo = 0, m_hi = 0;
  bool m_valid;
};
