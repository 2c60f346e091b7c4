// Traps: how control enters the kernel.
//
// Three things trap into supervisor mode: a system call (`ecall` from user mode), an
// exception (a page fault, an illegal instruction), and an interrupt (the timer, or a device
// through the PLIC). Where the trap lands depends on where it came from:
//
//   from user mode:        stvec = uservec in the trampoline (trampoline.S)
//                            -> saves user registers in the trapframe -> usertrap()
//   from supervisor mode:  stvec = kernelvec (kernelvec.S)
//                            -> saves registers on the kernel stack -> kerneltrap()
//
// scause says what happened, sepc where, stval the faulting address for memory faults.
// usertrapret() is the way back to user mode for every process, including a new one.
//
// A user process that faults is killed (exit status -1) with a one-line message; the same in
// the kernel is a bug, so kerneltrap() panics with a backtrace.

#include "trap/trap.h"

#include "arch/riscv/memlayout.h"
#include "arch/riscv/riscv.h"
#include "arch/riscv/trapframe.h"
#include "dev/uart.h"
#include "dev/virtio_blk.h"
#include "lib/linker.h"
#include "lib/printf.h"
#include "mm/vm.h"
#include "profile/profiler.h"
#include "proc/proc.h"
#include "syscall/syscall.h"
#include "trap/plic.h"
#include "trap/timer.h"

using riscv::Cause;

namespace {

enum class Intr { NotDevice, Handled, Preempt };

// Inlined into both traps: a timer interrupt from user mode then costs no call of its own.
[[gnu::always_inline]] inline Intr devintr(u64 scause, KernelFrame *kf) {
  if (scause == static_cast<u64>(Cause::ExternalInterrupt)) {
    int irq = plic_claim();
    if (irq == static_cast<int>(mem::UART0_IRQ))
      uart_intr();
    else if (irq == static_cast<int>(mem::VIRTIO0_IRQ))
      virtio_disk_intr(0);
    else if (irq == static_cast<int>(mem::VIRTIO1_IRQ))
      virtio_disk_intr(1);
    else if (irq != 0)
      kprintf("unexpected interrupt irq=%d\n", irq);
    if (irq != 0) plic_complete(irq);
    return Intr::Handled;
  }
  if (scause == static_cast<u64>(Cause::TimerInterrupt))
    return timer_interrupt(kf) ? Intr::Preempt : Intr::Handled;
  if (scause == static_cast<u64>(Cause::CounterOverflowInterrupt)) {
    prof::counter_overflow(kf);
    return Intr::Handled;
  }
  return Intr::NotDevice;
}

const char *cause_name(u64 scause) {
  switch (static_cast<Cause>(scause)) {
    case Cause::InsnMisaligned: return "misaligned instruction";
    case Cause::InsnAccessFault: return "instruction access fault";
    case Cause::IllegalInsn: return "illegal instruction";
    case Cause::Breakpoint: return "breakpoint";
    case Cause::LoadMisaligned: return "misaligned load";
    case Cause::LoadAccessFault: return "load access fault";
    case Cause::StoreMisaligned: return "misaligned store";
    case Cause::StoreAccessFault: return "store access fault";
    case Cause::InsnPageFault: return "instruction page fault";
    case Cause::LoadPageFault: return "load page fault";
    case Cause::StorePageFault: return "store page fault";
    default: return "unexpected trap";
  }
}

[[noreturn]] void freeze() {
  for (;;) riscv::wfi();
}

}  // namespace

void trapinithart() {
  CSR_WRITE(stvec, reinterpret_cast<u64>(kernelvec));
  CSR_SET(sie, riscv::SIE_SEIE);
}

extern "C" void usertrap() {
  if (CSR_READ(sstatus) & riscv::SSTATUS_SPP) panic("usertrap: not from user mode");
  // We are in the kernel now: kernel traps go to kernelvec.
  CSR_WRITE(stvec, reinterpret_cast<u64>(kernelvec));
  if (panicked) freeze();

  Cpu *c = mycpu();  // interrupts are off: this hart cannot change under us
  Proc *p = c->proc;
  c->held = p->trapframe->held;  // an interrupt taken at once on return to user was held off
  p->trapframe->epc = CSR_READ(sepc);
  u64 scause = CSR_READ(scause);
  Intr what = Intr::Handled;

  if (scause == static_cast<u64>(Cause::UserEcall)) {
    if (killed(p)) exit(-1);
    p->trapframe->epc += 4;  // return to the instruction after ecall
    // Interrupts were turned off by the trap; system calls may take long, so turn them on
    // now that sepc/sstatus/scause are saved. One pending since the ecall was held off
    // (Cpu::held).
    c->held = CSR_READ(sip);
    riscv::intr_on();
    syscall();
  } else {
    what = devintr(scause, nullptr);
    if (what == Intr::NotDevice) {
      kprintf("killed pid %d (%s): %s at address %p, pc %p\n", p->pid, p->name, cause_name(scause),
              reinterpret_cast<void *>(CSR_READ(stval)),
              reinterpret_cast<void *>(p->trapframe->epc));
      setkilled(p);
    }
  }

  if (killed(p)) exit(-1);
  if (what == Intr::Preempt) yield();
  usertrapret();
}

extern "C" void usertrapret() {
  riscv::intr_off();
  Proc *p = mycpu()->proc;
  // From here until sret, a trap would go to the wrong place: interrupts are off (above).
  u64 trampoline_uservec = mem::TRAMPOLINE + (uservec - trampoline);
  CSR_WRITE(stvec, trampoline_uservec);

  Trapframe *tf = p->trapframe;
  tf->kernel_satp = CSR_READ(satp);  // the kernel page table, which this hart runs on
  tf->kernel_sp = p->kstack + mem::KSTACK_PAGES * riscv::PGSIZE;
  tf->kernel_trap = reinterpret_cast<u64>(usertrap);
  tf->kernel_hartid = riscv::r_tp();

  // sret returns to user mode (SPP = 0) with interrupts on (SPIE = 1), FPU off.
  u64 s = CSR_READ(sstatus);
  s &= ~(riscv::SSTATUS_SPP | riscv::SSTATUS_FS);
  s |= riscv::SSTATUS_SPIE;
  CSR_WRITE(sstatus, s);
  CSR_WRITE(sepc, tf->epc);

  u64 satp = riscv::make_satp(p->pagetable);
  u64 fn = mem::TRAMPOLINE + (userret - trampoline);
  reinterpret_cast<void (*)(u64)>(fn)(satp);
  __builtin_unreachable();
}

extern "C" void kerneltrap(KernelFrame *kf) {
  u64 sepc = CSR_READ(sepc);
  u64 sstatus = CSR_READ(sstatus);
  u64 scause = CSR_READ(scause);
  if (panicked) freeze();
  if ((sstatus & riscv::SSTATUS_SPP) == 0) panic("kerneltrap: not from supervisor mode");
  if (riscv::intr_get()) panic("kerneltrap: interrupts enabled");

  if (timer_probe_fault(scause)) {
    CSR_WRITE(sepc, sepc + 4);
    return;
  }
  Intr what = devintr(scause, kf);
  if (what == Intr::NotDevice)
    panic("kerneltrap: %s (scause %p) at pc %p, stval %p", cause_name(scause),
          reinterpret_cast<void *>(scause), reinterpret_cast<void *>(sepc),
          reinterpret_cast<void *>(CSR_READ(stval)));
  if (what == Intr::Preempt) {
    Proc *p = myproc();
    if (p != nullptr && p->state == ProcState::Running) yield();
  }
  // yield() may have let other traps run and change these.
  CSR_WRITE(sepc, sepc);
  CSR_WRITE(sstatus, sstatus);
  // sret turns interrupts back on: one that came due during this trap is taken at once,
  // held off (Cpu::held).
  mycpu()->held = CSR_READ(sip);
}
