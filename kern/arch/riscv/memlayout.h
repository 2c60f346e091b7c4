// The physical memory map of QEMU's virt machine and the kernel's virtual layout.
//
// Physical (from QEMU's hw/riscv/virt.c, and OpenSBI's placement):
//   0x00100000  sifive test device (write to power off with a status)
//   0x0c000000  PLIC
//   0x10000000  UART0 (ns16550)
//   0x10001000  virtio-mmio slot 0 (our disk)
//   0x10002000  virtio-mmio slot 1 (the export disk, optional)
//   0x80000000  OpenSBI (PMP-protected from S-mode)
//   0x80200000  the kernel: text, rodata, data, bss, symbol table, then free pages
//   PHYSTOP     end of RAM (from the device tree, 128 MiB by default, MIN_MEMORY_MIB at least)
//
// The kernel's page table maps devices and RAM at their physical addresses (a direct map),
// so kernel code can use physical addresses as pointers. At the very top of every address
// space sits the trampoline page; below it, in the kernel's, each process's kernel stack
// with an unmapped guard page beneath.
//
// A user address space, from 0: text and data, a guard page, the stack page, the heap;
// at the top, the trampoline (not user-accessible) and below it the trapframe page.
#pragma once

#include "arch/riscv/riscv.h"

namespace mem {

inline constexpr u64 TEST_DEVICE = 0x00100000;
inline constexpr u64 UART0 = 0x10000000;
inline constexpr u64 UART0_IRQ = 10;
inline constexpr u64 VIRTIO0 = 0x10001000;
inline constexpr u64 VIRTIO0_IRQ = 1;
inline constexpr u64 VIRTIO1 = 0x10002000;  // virtio-mmio slot 1: the export disk, if any
inline constexpr u64 VIRTIO1_IRQ = 2;
inline constexpr u64 PLIC = 0x0c000000;
inline constexpr u64 PLIC_SIZE = 0x400000;

inline constexpr u64 KERNBASE = 0x80200000;
inline constexpr u64 RAMBASE = 0x80000000;
inline constexpr u64 DEFAULT_PHYSTOP = RAMBASE + 128 * 1024 * 1024;
// The least RAM tern boots in. The kernel image takes about 21 MiB (mostly the profiler's
// sample array), OpenSBI's fw_jump puts the device tree at RAMBASE + 34 MiB, and usertests
// must find enough to run out of it on purpose. kmain() refuses anything smaller.
inline constexpr u64 MIN_MEMORY_MIB = 64;

inline constexpr u64 TRAMPOLINE = riscv::MAXVA - riscv::PGSIZE;
inline constexpr u64 TRAPFRAME = TRAMPOLINE - riscv::PGSIZE;

// Kernel stack pages for process slot p, each with a guard page below it.
inline constexpr u64 KSTACK_PAGES = 2;
constexpr u64 kstack(int p) {
  return TRAMPOLINE - (u64(p) + 1) * (KSTACK_PAGES + 1) * riscv::PGSIZE;
}

}  // namespace mem
