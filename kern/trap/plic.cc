// The RISC-V platform-level interrupt controller (PLIC) on QEMU's virt machine.
//
// Devices raise numbered interrupt sources (UART0 = 10, virtio disks = 1 and 2). Each has a
// priority; each hart's supervisor-mode "context" has an enable bit per source and a
// priority threshold. When an enabled source is pending the PLIC raises the hart's external
// interrupt (scause 9); the handler claims the source number, services the device and
// completes it. On virt, hart h's S-mode context is number 2h+1 (2h is its M-mode one).

#include "trap/plic.h"

#include "arch/riscv/memlayout.h"
#include "proc/proc.h"

namespace {

volatile u32 &word(u64 offset) { return *reinterpret_cast<volatile u32 *>(mem::PLIC + offset); }

u64 scontext(u64 hart) { return 2 * hart + 1; }
u64 priority(u64 irq) { return 4 * irq; }
u64 senable(u64 hart) { return 0x2000 + scontext(hart) * 0x80; }
u64 sthreshold(u64 hart) { return 0x200000 + scontext(hart) * 0x1000; }
u64 sclaim(u64 hart) { return 0x200004 + scontext(hart) * 0x1000; }

}  // namespace

void plicinit() {
  word(priority(mem::UART0_IRQ)) = 1;
  word(priority(mem::VIRTIO0_IRQ)) = 1;
  word(priority(mem::VIRTIO1_IRQ)) = 1;
}

void plicinithart() {
  u64 hart = cpuid();
  word(senable(hart)) =
      (1u << mem::UART0_IRQ) | (1u << mem::VIRTIO0_IRQ) | (1u << mem::VIRTIO1_IRQ);
  word(sthreshold(hart)) = 0;
}

int plic_claim() { return static_cast<int>(word(sclaim(cpuid()))); }

void plic_complete(int irq) { word(sclaim(cpuid())) = static_cast<u32>(irq); }
