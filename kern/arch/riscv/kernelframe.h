// The kernel frame: the registers that kernelvec (kernelvec.S) saves on the kernel stack
// when a trap is taken in supervisor mode, and that kerneltrap() gets a pointer to.
//
// The frame is KF_SIZE bytes below the interrupted sp. Its last two words are a frame
// record, so that a frame-pointer walk starting in kerneltrap() (a panic backtrace, the
// profiler) continues into the interrupted function; kernelvec.S says how.
//
// The layout is written once, as a list (kernelframe.def): this header makes struct
// KernelFrame and a static_assert per field from it, and kernelvec.S the offsets KF(name)
// it stores and loads at. The header is included by both; the assembler sees only the part
// it can read.
#pragma once

#define KF_SIZE 272  // bytes: a multiple of 16, as the stack pointer must stay

#ifdef __ASSEMBLER__

// KF(name) is the offset of field `name`, as in `sd ra, KF(ra)(sp)`. The symbols behind it
// start with .L, so the assembler keeps them out of the kernel's symbol table.
// (Formatting is off here: the assembler needs the space in `.equ .L`.)
// clang-format off
#define KERNELFRAME_FIELD(name, offset) .equ .LKF_##name, offset;
// clang-format on
#define KERNELFRAME_GAP(name, words, offset)
#include "arch/riscv/kernelframe.def"
#undef KERNELFRAME_FIELD
#undef KERNELFRAME_GAP
#define KF(name) .LKF_##name

#else

#include "lib/types.h"

struct KernelFrame {
#define KERNELFRAME_FIELD(name, offset) u64 name;
#define KERNELFRAME_GAP(name, words, offset) u64 name[words];
#include "arch/riscv/kernelframe.def"
#undef KERNELFRAME_FIELD
#undef KERNELFRAME_GAP
};

#define KERNELFRAME_FIELD(name, offset)                          \
  static_assert(__builtin_offsetof(KernelFrame, name) == offset, \
                "KernelFrame::" #name " is not where kernelframe.def puts it");
#define KERNELFRAME_GAP(name, words, offset) KERNELFRAME_FIELD(name, offset)
#include "arch/riscv/kernelframe.def"
#undef KERNELFRAME_FIELD
#undef KERNELFRAME_GAP

static_assert(sizeof(KernelFrame) == KF_SIZE && KF_SIZE % 16 == 0);
// The frame record sits where a function's prologue would put it: fp-16 and fp-8, with fp
// the interrupted sp.
static_assert(__builtin_offsetof(KernelFrame, record_fp) == KF_SIZE - 16);
static_assert(__builtin_offsetof(KernelFrame, record_ra) == KF_SIZE - 8);

#endif
