// The trapframe: the page in which the trampoline (trampoline.S) saves a process's user
// registers on a trap from user mode, and finds the kernel values it needs to enter the
// kernel (its page table, the process's kernel stack, the hart id, usertrap's address).
//
// Each process has one, mapped in its own page table at TRAPFRAME, just below the
// trampoline, so that uservec can reach it before it has switched to the kernel's page
// table, with one free register: it parks a0 in sscratch, loads TRAPFRAME into a0, and
// stores every other register at its offset. userret loads them back the same way.
//
// The layout is written once, as a list (trapframe.def): this header makes struct Trapframe
// and a static_assert per field from it, and trampoline.S the offsets TF(name) it stores
// and loads at, so the C++ struct and the assembly cannot disagree. The header is included
// by both; the assembler sees only the part it can read.
#pragma once

// The trapframe's virtual address, mem::TRAPFRAME (memlayout.h) written as a number for the
// assembler; checked below.
#define TRAPFRAME_VA 0x3fffffe000

#ifdef __ASSEMBLER__

// TF(name) is the offset of field `name`, as in `sd ra, TF(ra)(a0)`. The symbols behind it
// start with .L, so the assembler keeps them out of the kernel's symbol table.
// (Formatting is off here: the assembler needs the space in `.equ .L`.)
// clang-format off
#define TRAPFRAME_FIELD(name, offset) .equ .LTF_##name, offset;
// clang-format on
#include "arch/riscv/trapframe.def"
#undef TRAPFRAME_FIELD
#define TF(name) .LTF_##name

#else

#include "arch/riscv/memlayout.h"
#include "lib/types.h"

struct Trapframe {
#define TRAPFRAME_FIELD(name, offset) u64 name;
#include "arch/riscv/trapframe.def"
#undef TRAPFRAME_FIELD
};

#define TRAPFRAME_FIELD(name, offset)                          \
  static_assert(__builtin_offsetof(Trapframe, name) == offset, \
                "Trapframe::" #name " is not where trapframe.def puts it");
#include "arch/riscv/trapframe.def"
#undef TRAPFRAME_FIELD

static_assert(sizeof(Trapframe) <= riscv::PGSIZE, "a Trapframe must fit in its page");
static_assert(mem::TRAPFRAME == TRAPFRAME_VA);

#endif
