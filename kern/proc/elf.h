// The parts of the ELF64 format that exec needs (from the System V ABI specification).
#pragma once

#include "lib/types.h"

namespace elf {

inline constexpr u32 MAGIC = 0x464C457FU;  // "\x7FELF" in little endian
inline constexpr u16 EM_RISCV = 243;

struct Header {
  u32 magic;
  u8 elf[12];  // class, data, version, OS ABI, padding
  u16 type;
  u16 machine;
  u32 version;
  u64 entry;
  u64 phoff;
  u64 shoff;
  u32 flags;
  u16 ehsize;
  u16 phentsize;
  u16 phnum;
  u16 shentsize;
  u16 shnum;
  u16 shstrndx;
};
static_assert(sizeof(Header) == 64);

inline constexpr u32 PT_LOAD = 1;
inline constexpr u32 PF_X = 1;
inline constexpr u32 PF_W = 2;
inline constexpr u32 PF_R = 4;

struct ProgramHeader {
  u32 type;
  u32 flags;
  u64 off;
  u64 vaddr;
  u64 paddr;
  u64 filesz;
  u64 memsz;
  u64 align;
};
static_assert(sizeof(ProgramHeader) == 56);

}  // namespace elf
