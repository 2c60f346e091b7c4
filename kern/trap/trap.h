// Traps: system calls, exceptions and interrupts (kern/trap/trap.cc), the supervisor timer
// (kern/trap/timer.cc) and the interrupt controller (kern/trap/plic.cc).
#pragma once

#include "arch/riscv/kernelframe.h"
#include "lib/spinlock.h"
#include "lib/types.h"

void trapinithart();
extern "C" void usertrap();  // uservec jumps here, through the trapframe's kernel_trap
extern "C" void kerneltrap(KernelFrame *kf);  // kernelvec calls it
extern "C" [[noreturn]] void usertrapret();
extern "C" void forkret();
// The assembly entry points: kernelvec (kernelvec.S), and uservec and userret in the
// trampoline page (trampoline.S).
extern "C" void kernelvec();
extern "C" char uservec[], userret[];

// Timer (timer.cc).
inline constexpr u64 TIMEBASE_HZ = 10'000'000;  // the `time` CSR's rate on QEMU virt
inline constexpr u64 TICK_HZ = 10;              // sleep()/uptime() ticks per second (xv6 ABI)
inline constexpr u64 QUANTUM_US = 10'000;       // scheduling time slice
extern volatile u64 ticks;
extern Spinlock tickslock;
// Decide, on the boot hart before any other starts, how every hart arms its timer
// (Sstc or SBI TIME), and print it.
void timer_init();
void timer_init_hart();  // arm this hart's timer and enable its interrupt
void timer_start_quantum();  // the scheduler is about to run a process on this hart
// Handle a timer interrupt. Returns true if the running process should yield.
// `kf` is the kernel frame when the trap came from supervisor mode, else nullptr.
bool timer_interrupt(KernelFrame *kf);
void timer_rearm();  // program this hart's timer for its next event
// True if timer_init() found Sstc: the timer is armed through stimecmp.
bool timer_has_sstc();
// Whether a trap with cause scause was timer_init()'s probe of stimecmp faulting.
bool timer_probe_fault(u64 scause);

// The platform-level interrupt controller (plic.cc).
void plicinit();
void plicinithart();
int plic_claim();
void plic_complete(int irq);
