// Prologues and epilogues: where a function's frame pointer is not yet, or no longer, its own.
//
// A function compiled with frame pointers sets s0 a few instructions after its entry and
// puts the caller's s0 back a few before its return (GCC 12, -O2):
//
//   entry:  addi sp, sp, -32        <- pc here ... s0 is still the caller's
//           sd   ra, 24(sp)
//           sd   s0, 16(sp)
//           addi s0, sp, 32         <- ... and here (not yet executed)
//           ...                        s0 is this function's own frame pointer
//           ld   ra, 24(sp)
//           ld   s0, 16(sp)         <- here s0 is still its own
//           addi sp, sp, 32         <- from here ...
//           ret                     <- ... to here, s0 is the caller's again
//
// A sample whose pc lies in one of those two windows walks from the caller's frame record
// and so skips the caller: `f <- caller's caller`. The caller is in `ra` there (the entry has
// not saved it yet; the exit has restored it), which is what the sampler records beside the
// chain for system-call stubs (walk.h), so the same repair applies: symbolization inserts ra
// as the caller when the pc is in a window.
//
// frame_windows() finds the windows of one function from its code: the prologue from its
// first byte to the `addi s0, sp, N` that sets the frame pointer (only a function that has
// one gets this window), and for each `ld s0, N(sp)` the stretch after it up to the next
// `ret`. Both the 32-bit and the compressed encodings count. It reads only the bytes it is
// given, decoding instruction lengths from the start, and never fails: code it does not
// recognise gets no window. Pure, so the host unit tests check it (prologue_test.cc).
#pragma once

#include <stdint.h>

namespace profwalk {

// Kept for every function of every program the profiler names, so kept small: user code
// lies far below 4 GiB (tern's programs start at 0), and a function above gets no windows.
struct Window {
  uint32_t from, to;  // pcs from `from` to `to`, both included
};

namespace detail {

inline uint32_t insn_at(const uint8_t *code, uint32_t i, uint32_t size, uint32_t *len) {
  uint32_t lo = code[i] | (uint32_t(code[i + 1]) << 8);
  if ((lo & 3) != 3) {
    *len = 2;
    return lo;
  }
  if (i + 4 > size) {
    *len = 0;
    return 0;
  }
  *len = 4;
  return lo | (uint32_t(code[i + 2]) << 16) | (uint32_t(code[i + 3]) << 24);
}

// addi s0, sp, imm (imm != 0), or c.addi4spn s0, sp, imm.
inline bool sets_fp(uint32_t insn, uint32_t len) {
  if (len == 4) return (insn & 0xfffff) == 0x10413 && (insn >> 20) != 0;
  return (insn & 0xe01f) == 0x0000 && ((insn >> 5) & 0xff) != 0;
}

// ld s0, imm(sp), or c.ldsp s0, imm(sp).
inline bool restores_fp(uint32_t insn, uint32_t len) {
  if (len == 4) return (insn & 0xfffff) == 0x13403;
  return (insn & 0xef83) == 0x6402;
}

// ret: jalr x0, 0(ra), or c.jr ra.
inline bool is_ret(uint32_t insn, uint32_t len) {
  return len == 4 ? insn == 0x00008067 : insn == 0x8082;
}

}  // namespace detail

// The windows of the function whose `size` bytes of code are at `code`, loaded at `start`:
// at most `max` of them, in address order. Returns how many.
inline int frame_windows(const uint8_t *code, uint64_t start, uint32_t size, Window *out, int max) {
  using namespace detail;
  if (start + size > UINT32_MAX) return 0;
  int n = 0;
  bool fp_set = false;
  uint64_t restored = 0;  // pc after the last `ld s0`, while no ret has followed it
  for (uint32_t i = 0, len = 0; i + 2 <= size && n < max; i += len) {
    uint32_t insn = insn_at(code, i, size, &len);
    if (len == 0) break;
    uint64_t pc = start + i;
    if (!fp_set && sets_fp(insn, len)) {
      fp_set = true;
      out[n++] = Window{uint32_t(start), uint32_t(pc)};
    } else if (fp_set && restores_fp(insn, len)) {
      restored = pc + len;
    } else if (restored != 0 && is_ret(insn, len)) {
      out[n++] = Window{uint32_t(restored), uint32_t(pc)};
      restored = 0;
    }
  }
  return n;
}

// Is pc inside one of `n` windows sorted by address (and not overlapping)?
inline bool in_window(const Window *w, uint32_t n, uint64_t pc) {
  if (pc > UINT32_MAX) return false;
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (w[mid].to < pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && w[lo].from <= pc;
}

}  // namespace profwalk
