// Kernel frame-pointer walks (see backtrace.h).

#include "lib/backtrace.h"

#include "arch/riscv/bootstack.h"
#include "abi/param.h"
#include "arch/riscv/memlayout.h"
#include "lib/linker.h"

bool in_kernel_text(u64 pc) {
  return pc >= reinterpret_cast<u64>(kernel_start) && pc < reinterpret_cast<u64>(etext);
}

bool kernel_stack_bounds(u64 addr, u64 *lo, u64 *hi) {
  u64 boot = reinterpret_cast<u64>(boot_stacks);
  if (addr >= boot && addr < boot + u64(BOOT_STACK_SIZE) * NCPU) {
    *lo = boot + (addr - boot) / BOOT_STACK_SIZE * BOOT_STACK_SIZE;
    *hi = *lo + BOOT_STACK_SIZE;
    return true;
  }
  // Process kernel stacks sit below the trampoline, each KSTACK_PAGES pages over a guard page.
  constexpr u64 SLOT_BYTES = (mem::KSTACK_PAGES + 1) * riscv::PGSIZE;
  u64 lowest = mem::kstack(NPROC - 1);
  if (addr >= lowest && addr < mem::TRAMPOLINE) {
    u64 index = (mem::TRAMPOLINE - 1 - addr) / SLOT_BYTES;  // slot counted from the top
    u64 base = mem::kstack(static_cast<int>(index));
    if (addr >= base + mem::KSTACK_PAGES * riscv::PGSIZE) return false;  // unmapped gap
    *lo = base;
    *hi = base + mem::KSTACK_PAGES * riscv::PGSIZE;
    return true;
  }
  return false;
}

bool KernelStackWalker::next(u64 *ra) {
  if (!m_valid) return false;
  u64 fp = m_fp;
  if ((fp & 7) != 0 || fp < m_lo + 16 || fp > m_hi) return false;
  u64 r = reinterpret_cast<const u64 *>(fp)[-1];
  u64 prev = reinterpret_cast<const u64 *>(fp)[-2];
  if (!in_kernel_text(r)) return false;
  *ra = r;
  // The next record must be strictly higher on the same stack; otherwise this was the last.
  if (prev <= fp || prev > m_hi) m_valid = false;
  m_fp = prev;
  return true;
}
