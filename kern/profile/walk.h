// The frame-pointer walker used by the sampler, as pure rules over an abstract memory.
//
// Compiled with frame pointers, a RISC-V function that calls others keeps a two-word frame
// record just below its frame pointer (s0, "fp"):
//
//        higher addresses
//   fp ->  +------------------+
//          | return address   |  fp - 8    where this function returns to (in its caller)
//          | caller's fp      |  fp - 16   the caller's own frame record
//          | locals ...       |
//   sp ->  +------------------+
//
// A walk starts from the interrupted pc and fp and follows caller's-fp links, collecting
// return addresses. Three complications:
//
//  * GCC's leaf functions save only the caller's fp, and put it at fp-8, where a return
//    address would be; their return address is still in the ra register. So in the first
//    frame only, if the word at fp-8 looks like a frame pointer (aligned, above fp, inside
//    the stack) we treat the function as a leaf: the caller is `ra`, and the next fp is
//    that word.
//  * A function that keeps no frame at all (a system-call stub: `li a7, N; ecall; ret`)
//    leaves fp pointing at its caller's record, so the caller itself would be skipped.
//    When the caller knows the pc is in such a function (Registers::frameless) the walk
//    takes `ra` as the first return address and then reads records from fp as usual.
//    The sampler does not know it (finding out means reading instructions, too slow for a
//    trap), so it records `ra` beside the chain; symbolization decides later, with
//    in_syscall_stub() on the program's bytes, and inserts the caller then.
//  * The stack may be corrupt or malicious (a user program can put anything in s0). Every
//    step is checked: fp 8-byte aligned, strictly increasing, inside the stack's bounds; each
//    word readable (the Reader decides what that means: mapped and user-accessible for user
//    stacks); each return address non-zero and inside text; at most `max` frames. A failed
//    check ends the walk early with what it has; it never faults.
//
// The Reader is any type with `bool read_pair(uint64_t addr, uint64_t *at, uint64_t *at8)`
// (the words at addr and addr + 8, false if either is unreadable; addr is always 8-byte
// aligned, because the walk checks fp's alignment first); the text check is
// any callable `bool(uint64_t pc)`. The kernel instantiates it over a process's page table
// and over a kernel stack; the host unit tests over synthetic stacks.
#pragma once

#include <stdint.h>

namespace profwalk {

struct Registers {
  uint64_t pc;             // the sampled pc (sepc)
  uint64_t fp;             // s0 at the sample
  uint64_t ra;             // ra at the sample (used by the leaf and frameless rules)
  bool frameless = false;  // pc is in a function that saved nothing (see above)
};

struct Bounds {
  uint64_t lo;  // fp and every record word must lie in [lo, hi]
  uint64_t hi;
};

// Does `w` look like the frame pointer of a caller of the frame at `fp`?
inline bool looks_like_fp(uint64_t w, uint64_t fp, const Bounds &b) {
  return (w & 7) == 0 && w > fp && w <= b.hi;
}

// Fill out[0..max) with pc, then the return addresses of the callers, innermost first.
// Returns the number of entries written (0 only if max == 0).
template <typename Reader, typename IsText>
[[gnu::always_inline]] inline int walk(Reader &mem, const Registers &regs, const Bounds &b,
                                       IsText &&is_text, uint64_t *out, int max) {
  // LAB sample/walk BEGIN: the checked walk, see labs/sample/README.md, task 2
  if (max <= 0) return 0;
  uint64_t *o = out;
  uint64_t *const end = out + max;
  *o++ = regs.pc;

  uint64_t fp = regs.fp;
  bool first = true;
  if (regs.frameless) {
    if (regs.ra == 0 || !is_text(regs.ra) || o == end) return int(o - out);
    *o++ = regs.ra;
    first = false;  // fp is the caller's: an ordinary record, never a leaf's
  }
  if ((fp & 7) != 0 || fp < b.lo + 16 || fp > b.hi) return int(o - out);

  // The first record, where the leaf rule applies.
  uint64_t w16, w8;  // the words at fp-16 and fp-8
  if (o == end || !mem.read_pair(fp - 16, &w16, &w8)) return int(o - out);
  uint64_t ret = w8, next = w16;
  if (first && looks_like_fp(w8, fp, b)) {
    ret = regs.ra;  // a leaf: its return address never left the register
    next = w8;
  }
  if (ret == 0 || !is_text(ret)) return int(o - out);
  *o++ = ret;

  // Every further record. fp only rises from here, so it stays above b.lo.
  while (o != end && next > fp && next <= b.hi && (next & 7) == 0) {
    fp = next;
    if (!mem.read_pair(fp - 16, &w16, &w8) || w8 == 0 || !is_text(w8)) break;
    *o++ = w8;
    next = w16;
  }
  return int(o - out);
  // LAB sample/walk STARTER
  // (void)mem, (void)b, (void)is_text;
  // if (max <= 0) return 0;
  // out[0] = regs.pc;  // the pc alone: no callers
  // return 1;
  // LAB sample/walk END
}

// Given the 12 bytes of code at [pc - 4, pc + 8), is pc inside a system-call stub
// (`li a7, N; ecall; ret`)? The pc is then on the li (the ecall follows it 2 or 4 bytes on),
// on the ecall, or on the ret (the ecall just before it; during a system call the saved pc
// already points past the ecall). An ecall is the 32-bit word 0x00000073.
inline bool in_syscall_stub(const uint8_t (&code)[12]) {
  auto ecall_at = [&code](int i) {
    return code[i] == 0x73 && code[i + 1] == 0 && code[i + 2] == 0 && code[i + 3] == 0;
  };
  return ecall_at(0) || ecall_at(4) || ecall_at(6) || ecall_at(8);
}

// The 12 bytes from pc - 4 as far as in_syscall_stub() looks at them, rebuilt from the sorted
// addresses of a program's ecall instructions alone (the profiler keeps those, not the code):
// each ecall's bytes where it overlaps the window, zeros elsewhere. Zeros are no ecall, so
// in_syscall_stub() gives the same answer on this window as on the real bytes.
inline void ecall_window(const uint64_t *ecalls, uint32_t n, uint64_t pc, uint8_t (&code)[12]) {
  for (uint8_t &b : code) b = 0;
  if (pc < 4) return;
  uint64_t from = pc - 4;
  // The first ecall that ends inside the window or after it, by binary search; the ones
  // from there on that start inside it are the only ones that overlap it.
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ecalls[mid] + 4 <= from)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (uint32_t i = lo; i < n && ecalls[i] < from + sizeof(code); i++) {
    uint64_t a = ecalls[i];
    const uint8_t ecall[4] = {0x73, 0, 0, 0};
    for (uint32_t k = 0; k < 4; k++)
      if (a + k >= from && a + k < from + sizeof(code)) code[a + k - from] = ecall[k];
  }
}

}  // namespace profwalk
