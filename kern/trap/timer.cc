// The supervisor timer: one per hart, driving time-slicing, the tick count that sleep() and
// uptime() use, and the profiler's samples.
//
// Each hart has a compare register: when the `time` CSR (10 MHz on QEMU virt) reaches it,
// the hart takes a supervisor timer interrupt. With the Sstc extension the kernel writes the
// compare register (`stimecmp`) itself; without it (QEMU before 7.1, or `-cpu
// rv64,sstc=off`), it asks the firmware through the SBI TIME extension, which costs an ecall
// into M-mode each time. The boot hart decides which, once, in timer_init(), before it starts
// any other hart: it writes stimecmp, which raises an illegal-instruction trap when Sstc is
// absent, and kerneltrap() asks timer_probe_fault() whether that was the probe. The boot
// banner says what was decided (`tern: timer: sstc` or `tern: timer: sbi`). Every hart then
// arms its timer the same way, whichever hart booted and in whatever order the others
// arrive: the harts of one machine are alike, and a hart that wrote stimecmp without Sstc
// would take that trap outside the probe, and panic.
//
// A hart's timer serves several deadlines at once; timer_rearm() programs the earliest:
//   - the end of the running process's time slice (QUANTUM_US), which also serves as an
//     idle hart's heartbeat, so it notices processes that became runnable elsewhere;
//   - the next 100 ms tick, on the boot hart only: `ticks` is the xv6 clock (10 Hz). Ticks
//     fall where `time` is a whole multiple of 100 ms, not 100 ms after whenever the boot
//     reached timer_init_hart(), so a program can tell from `time` alone when the last
//     tick was (bsys, user/bench/bsys.cc, settles on it);
//   - the next profiling sample (Cpu::next_sample), while anything is being profiled
//     (kern/profile/sampler.cc). Its rate is independent of the tick's.

#include "trap/timer.h"

#include "arch/riscv/riscv.h"
#include "arch/riscv/sbi.h"
#include "lib/printf.h"
#include "proc/proc.h"
#include "profile/profiler.h"

volatile u64 ticks = 0;
constinit Spinlock tickslock("time");

namespace {

constexpr u64 TICK_INTERVAL = TIMEBASE_HZ / TICK_HZ;
constexpr u64 QUANTUM = TIMEBASE_HZ / 1'000'000 * QUANTUM_US;

constinit bool decided = false;  // set once by timer_init(), before other harts start
constinit bool sstc = false;
constinit volatile bool probing = false;
constinit int tick_hart = -1;
constinit u64 next_tick = 0;

void set_compare(u64 when) {
  if (sstc)
    CSR_WRITE(0x14d, when);  // stimecmp
  else
    sbi::timer::set_timer(when);
}

// Program hart c's timer for the earliest of its deadlines. Inline: the timer interrupt
// re-arms at its end, and should not pay for a call.
[[gnu::always_inline]] inline void timer_rearm(Cpu *c) {
  u64 when = c->next_quantum;
  if (cpuid() == tick_hart && next_tick < when) when = next_tick;
  // LAB sample/clock BEGIN: arm the timer for the sampling deadline too; README.md task 1
  if (c->next_sample != 0 && c->next_sample < when) when = c->next_sample;
  // LAB sample/clock STARTER
  // LAB sample/clock END
  set_compare(when);
}

}  // namespace

// Called by kerneltrap() for an exception: true if it was the Sstc probe faulting, in which
// case the caller skips the 4-byte probe instruction.
bool timer_probe_fault(u64 scause) {
  if (!probing || scause != static_cast<u64>(riscv::Cause::IllegalInsn)) return false;
  sstc = false;
  return true;
}

bool timer_has_sstc() { return sstc; }

void timer_init() {
  sstc = true;
  probing = true;
  // The "memory" clobber keeps both stores on their side of the probe: the trap handler
  // writes sstc while the csrw runs, and a store of true moved after it would undo that.
  asm volatile("csrw 0x14d, %0" : : "r"(~0ull) : "memory");  // traps without Sstc
  probing = false;
  tick_hart = cpuid();
  decided = true;
  __sync_synchronize();  // seen by every hart started after this
  kprintf("tern: timer: %s\n", sstc ? "sstc" : "sbi");
}

void timer_init_hart() {
  if (!decided) panic("timer_init_hart: timer_init() has not run");
  if (cpuid() == tick_hart) next_tick = (riscv::r_time() / TICK_INTERVAL + 1) * TICK_INTERVAL;
  mycpu()->next_quantum = riscv::r_time() + QUANTUM;
  timer_rearm(mycpu());
  CSR_SET(sie, riscv::SIE_STIE);
}

void timer_start_quantum() {
  mycpu()->next_quantum = riscv::r_time() + QUANTUM;
  timer_rearm(mycpu());
}

bool timer_interrupt(KernelFrame *kf) {
  u64 now = riscv::r_time();
  Cpu *c = mycpu();
  // Taken late, where interrupts came back on? The sampler marks its sample so.
  u64 held = c->held_off(riscv::SIP_STIP) ? prof::LATE_IRQOFF : 0;
  if (cpuid() == tick_hart && now >= next_tick) {
    SpinGuard g(tickslock);
    while (now >= next_tick) {
      ticks = ticks + 1;
      next_tick += TICK_INTERVAL;
    }
    wakeup(const_cast<u64 *>(&ticks));
  }
  prof::tick(kf, now, held);
  bool preempt = false;
  if (now >= c->next_quantum) {
    c->next_quantum = now + QUANTUM;
    preempt = c->proc != nullptr;
  }
  timer_rearm(c);
  return preempt;
}
