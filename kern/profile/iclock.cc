// The instruction clock: a sample every N retired instructions instead of every T
// microseconds (`profile event instructions N`, PROF_CLOCK in kern/abi/profile.h).
//
// The timer samples a process at moments of time; how many instructions it ran between two
// samples depends on the machine, and even under QEMU's -icount on when the timer interrupt
// happens to be taken. A counter of retired instructions that interrupts when it overflows
// gives samples at moments of the program itself: under -icount two runs of a program give
// the same samples, one for one. This is perf's `-e instructions`.
//
// The hardware: the Sscofpmf extension gives each programmable counter an overflow flag and
// the hart a local counter-overflow interrupt (scause 13), which the firmware delegates to
// S-mode. The counters themselves belong to M-mode: S-mode configures, starts and stops them
// through the SBI's PMU extension. So a counter is set to -N (it counts up and overflows
// after N instructions), and after each overflow it is stopped and started again at -N: two
// ecalls a sample, which is what this clock costs above the timer's.
//
// Where it exists: QEMU 7.2 has Sscofpmf off by default; the Makefile turns it on (`-cpu
// rv64,sscofpmf=true`). iclock_init() decides once, on the boot hart, before the others
// start: the interrupt is ours only if sie's counter-overflow enable bit can be set (it is
// read-only zero unless the firmware delegated the interrupt), the SBI has the PMU
// extension, and a counter can be configured to count retired instructions. The boot
// banner says which (`tern: instruction clock: sscofpmf` or `tern: instruction clock:
// none`); without it PROF_CLOCK refuses every N and the timer stays the only clock.
//
// Counters are per hart, and a hart can only program its own. So PROF_CLOCK only records
// the wanted period; each hart compares it with what its own counter does on each of its
// timer interrupts (iclock_sync(), called by the sampler's tick), and starts or stops its
// counter there. While the instruction clock is on, the timer takes no samples.

#include "abi/param.h"
#include "arch/riscv/riscv.h"
#include "arch/riscv/sbi.h"
#include "lib/printf.h"
#include "proc/proc.h"
#include "profile/profiler.h"

namespace prof {

namespace {

constinit bool available = false;  // decided by iclock_init() before other harts start

constexpr long FIRST_PROGRAMMABLE = 3;  // counters 0..2 are cycle, time and instret

// A hart's counter. Each hart touches only its own entry, and only in its traps (interrupts
// off), so the entries need no lock.
constexpr long UNCONFIGURED = -1;  // not asked for yet
constexpr long REFUSED = -2;       // the SBI found no counter: this hart keeps the timer
struct HartCounter {
  long index = UNCONFIGURED;  // the SBI's counter index, once configured
  u64 running = 0;            // the period it counts, 0 while stopped
};
constinit HartCounter harts[NCPU];

// Configures, on this hart, a programmable counter (index 3 and up: 0..2 are the fixed
// cycle, time and instret counters, which have no overflow interrupt) to count retired
// instructions: its index, or a negative SBI error.
long configure() {
  long n = sbi::pmu::num_counters() - FIRST_PROGRAMMABLE;
  if (n <= 0) return -1;
  u64 mask = n >= 64 ? ~0ull : (1ull << n) - 1;
  return sbi::pmu::config_matching(FIRST_PROGRAMMABLE, mask,
                                   sbi::pmu::CFG_CLEAR_VALUE | sbi::pmu::CFG_SET_MINH,
                                   sbi::pmu::HW_INSTRUCTIONS);
}

// Counts `period` instructions from now on this hart's counter, stopped before.
void start(HartCounter &h, u64 period) {
  h.running = sbi::pmu::start(h.index, -period) == 0 ? period : 0;
  if (h.running != 0) __atomic_fetch_add(&clock_counting, 1, __ATOMIC_RELAXED);
}

void stop(HartCounter &h) {
  if (h.running == 0) return;
  // An error here can only mean the counter was not running, which is what is wanted.
  (void)sbi::pmu::stop(h.index);
  h.running = 0;
  __atomic_fetch_sub(&clock_counting, 1, __ATOMIC_RELAXED);
}

}  // namespace

constinit volatile u64 clock_every = 0;
constinit volatile int clock_counting = 0;

void iclock_init() {
  CSR_SET(sie, riscv::SIE_LCOFIE);
  bool delegated = (CSR_READ(sie) & riscv::SIE_LCOFIE) != 0;
  CSR_CLEAR(sie, riscv::SIE_LCOFIE);
  // Counters are configured only when the clock is first used, each hart its own; a hart
  // where that fails keeps the timer (iclock_sync).
  available = delegated && sbi::base::probe_extension(sbi::pmu::EID) &&
              sbi::pmu::num_counters() > FIRST_PROGRAMMABLE;
  kprintf("tern: instruction clock: %s\n", available ? "sscofpmf" : "none");
}

void iclock_init_hart() {
  if (available) CSR_SET(sie, riscv::SIE_LCOFIE);
}

int set_clock(int instructions) {
  if (instructions == 0) {
    clock_every = 0;
    return 0;
  }
  if (!available || instructions < PROF_MIN_INSNS || instructions > PROF_MAX_INSNS) return -1;
  clock_every = static_cast<u64>(instructions);
  return 0;
}

// Starts, restarts or stops this hart's counter as PROF_CLOCK last said (a period of 0:
// stopped). True if the counter now counts that period.
bool follow(HartCounter &h, u64 want) {
  stop(h);
  if (want == 0 || h.index == REFUSED) return false;
  if (h.index == UNCONFIGURED) {
    long index = configure();
    h.index = index >= 0 ? index : REFUSED;
    if (h.index == REFUSED) return false;
  }
  start(h, want);
  if (h.running == 0) h.index = REFUSED;  // the SBI would not start it: keep the timer
  return h.running != 0;
}

bool iclock_sync() {
  u64 want = active() ? clock_every : 0;
  HartCounter &h = harts[cpuid()];
  if (h.running != want) follow(h, want);
  // A hart whose counter could not be set up or started keeps sampling with the timer.
  return clock_every != 0 && h.index != REFUSED;
}

void counter_overflow(KernelFrame *kf) {
  u64 began = riscv::r_instret();  // what a sample costs counts from here (take)
  // The counter has no deadline in time: a sample of this clock says only whether its
  // interrupt had been held off (read in every overflow trap, so that none goes stale).
  bool irqoff = mycpu()->held_off(riscv::SIP_LCOFIP);
  // The pending bit first, then the restart below (which also clears the counter's
  // overflow flag): the next overflow then raises the interrupt afresh.
  CSR_CLEAR(sip, riscv::SIP_LCOFIP);
  HartCounter &h = harts[cpuid()];
  // The clock may have been switched off, or to another period, since the counter started:
  // restart it only as PROF_CLOCK says now, and sample only if it still runs.
  if (!follow(h, active() ? clock_every : 0)) return;
  Proc *p = mycpu()->proc;
  if (p != nullptr && (p->prof.profiled || all_mode))
    take(p, kf, riscv::r_time(), began, irqoff ? LATE_IRQOFF : 0);
}

}  // namespace prof
