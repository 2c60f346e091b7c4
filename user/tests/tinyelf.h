// Tiny RISC-V executables, written by test programs that need many distinct programs or
// exact control over the instructions at an address (texhaust, tprofimg).
//
// The file is one ELF header, one program header and the code: a single PT_LOAD segment
// from file offset 0 mapped at address 0, read and execute, with the entry point at
// TINY_ELF_CODE, right after the headers. No section headers, so no symbol table: the
// profiler names its addresses "??".
#pragma once

#include "lib/user.h"

inline constexpr unsigned long TINY_ELF_CODE = 120;  // address (and offset) of code[0]

// Instruction encodings the tests use.
namespace rv {
inline constexpr unsigned ECALL = 0x00000073;
inline constexpr unsigned NOP = 0x00000013;
// addi rd, x0, imm (li rd, imm) for -2048 <= imm < 2048
constexpr unsigned li(unsigned rd, int imm) {
  return (static_cast<unsigned>(imm) << 20) | (rd << 7) | 0x13;
}
// addi rd, rd, imm
constexpr unsigned addi(unsigned rd, int imm) {
  return (static_cast<unsigned>(imm) << 20) | (rd << 15) | (rd << 7) | 0x13;
}
// lui rd, imm20 (rd = imm20 << 12)
constexpr unsigned lui(unsigned rd, unsigned imm20) { return (imm20 << 12) | (rd << 7) | 0x37; }
// bne rs, x0, offset (offset even, -4096 < offset < 4096)
constexpr unsigned bnez(unsigned rs, int offset) {
  unsigned o = static_cast<unsigned>(offset);
  return ((o >> 12 & 1) << 31) | ((o >> 5 & 0x3f) << 25) | (rs << 15) | (1 << 12) |
         ((o >> 1 & 0xf) << 8) | ((o >> 11 & 1) << 7) | 0x63;
}
inline constexpr unsigned RA = 1, T0 = 5, A0 = 10, A7 = 17;
}  // namespace rv

// Write the program made of `n` instructions to path (created or truncated). `tag` is
// stored after the code, so that programs with the same code still differ in content.
inline bool write_tiny_elf(const char *path, const unsigned *code, int n, unsigned tag) {
  constexpr int MAX_CODE = 32;
  if (n > MAX_CODE) return false;
  unsigned char elf[TINY_ELF_CODE + 4 * MAX_CODE + 4] = {};
  int size = static_cast<int>(TINY_ELF_CODE) + 4 * n + 4;
  auto put = [&elf](int off, unsigned long v, int bytes) {
    for (int i = 0; i < bytes; i++) elf[off + i] = static_cast<unsigned char>(v >> (8 * i));
  };
  put(0, 0x464c457f, 4);  // "\x7fELF"
  elf[4] = 2;             // 64-bit
  elf[5] = 1;             // little endian
  elf[6] = 1;             // ELF version
  put(16, 2, 2);          // ET_EXEC
  put(18, 243, 2);        // EM_RISCV
  put(20, 1, 4);
  put(24, TINY_ELF_CODE, 8);                      // entry
  put(32, 64, 8);                                 // program headers right after this header
  put(52, 64, 2);                                 // ehsize
  put(54, 56, 2);                                 // phentsize
  put(56, 1, 2);                                  // phnum
  put(64, 1, 4);                                  // PT_LOAD
  put(68, 5, 4);                                  // R|X
  put(96, static_cast<unsigned long>(size), 8);   // filesz (offset and vaddr stay 0)
  put(104, static_cast<unsigned long>(size), 8);  // memsz
  put(112, 4096, 8);                              // align
  for (int i = 0; i < n; i++) put(static_cast<int>(TINY_ELF_CODE) + 4 * i, code[i], 4);
  put(static_cast<int>(TINY_ELF_CODE) + 4 * n, tag, 4);
  int fd = open(path, O_CREATE | O_RDWR | O_TRUNC);
  if (fd < 0) return false;
  bool ok = write(fd, elf, size) == size;
  close(fd);
  return ok;
}

// The smallest useful program: exit(0).
inline bool write_exit_elf(const char *path, unsigned tag) {
  const unsigned code[] = {rv::li(rv::A0, 0), rv::li(rv::A7, 2 /* SYS_exit */), rv::ECALL};
  return write_tiny_elf(path, code, 3, tag);
}
