// The supervisor timer (kern/trap/timer.cc): time slices, the xv6 tick, profiling samples.
#pragma once

#include "lib/spinlock.h"
#include "lib/types.h"

struct KernelFrame;

inline constexpr u64 TIMEBASE_HZ = 10'000'000;  // the `time` CSR's rate on QEMU virt
inline constexpr u64 TICK_HZ = 10;              // sleep()/uptime() ticks per second (xv6 ABI)
inline constexpr u64 QUANTUM_US = 10'000;       // scheduling time slice
extern volatile u64 ticks;
extern Spinlock tickslock;
// Decide, on the boot hart before any other starts, how every hart arms its timer
// (Sstc or SBI TIME), and print it.
void timer_init();
void timer_init_hart();      // arm this hart's timer and enable its interrupt
void timer_start_quantum();  // the scheduler is about to run a process on this hart
// Handle a timer interrupt. Returns true if the running process should yield.
// `kf` is the kernel frame when the trap came from supervisor mode, else nullptr.
bool timer_interrupt(KernelFrame *kf);
// True if timer_init() found Sstc: the timer is armed through stimecmp.
bool timer_has_sstc();
// Whether a trap with cause scause was timer_init()'s probe of stimecmp faulting.
bool timer_probe_fault(u64 scause);
