// The sampler: what runs in the timer trap.
//
// Every hart's timer also serves a sampling deadline (Cpu::next_sample) while anything is
// being profiled. When it passes, and the process this hart is running is profiled, record()
// stores one Sample in the static array:
//
// LAB sample/record BEGIN
//   - the slot: an atomic fetch-and-add on the cursor hands out slots in order, so harts
//     never share one and no lock is taken. When the cursor passes CAPACITY the sample is
//     dropped and counted: old samples are never overwritten.
//   - the frames: from a trap in supervisor mode (the process was in a system call or
//     handling a fault), first the kernel chain from the registers kernelvec saved, then
//     in every case the user chain from the trapframe's pc, s0 and ra. Kernel words are
//     read only inside the current kernel stack; user words only through the process's page
//     table, if mapped, user-accessible and aligned (walk.h has the rules).
//   - the commit: `seq` is stored last, with release ordering; readers take a slot only if
//     its seq matches (generation, index).
//
// clear_samples() starts a new generation. It raises `clearing`, waits until no hart is
// inside record() (each hart flags itself while it is), resets the cursor and lowers it.
//   - a wait sample (p asleep, kf null; see below): mode Wait, the kernel chain from the
//     process's saved context (walk_sleeping), then the user chain as always.
// LAB sample/record STARTER
// //   - the slot: no two harts may ever write the same slot, and no lock may be taken (a
// //     hart in a timer trap must never wait for another). A full array drops the new
// //     sample and counts it: old samples are never overwritten.
// //   - the frames: from a trap in supervisor mode, the kernel chain first, then in every
// //     case the user chain. Kernel words may be read only inside the current kernel stack;
// //     user words only through the process's page table (walk.h has the rules).
// //   - the commit: a reader takes a slot only if its `seq` matches (generation, index), so
// //     `seq` must become visible after everything else in the slot.
// //
// // clear_samples() starts a new generation, and must not return while a sample of the old
// // one is still being written on another hart.
// //   - a wait sample (p asleep, kf null, from sweep_waits below): mode Wait, the kernel
// //     chain from walk_sleeping(), then the user chain (labs/sample/README.md, task 3).
// LAB sample/record END
//
// Off-CPU time. A process asleep (on the disk, a pipe, sleep(), wait(), the console, a sleep
// lock) is on no hart, so the per-hart clock above never samples it. Once a period, whichever
// hart first passes a global wait deadline (claimed with a compare-and-swap, so one hart a
// period) sweeps the process table: each profiled process that is Sleeping gets a wait
// sample through the same record(), its kernel chain walked from the context swtch() saved
// (ra and s0, inside its own kernel stack), its user chain from its trapframe. What it waits
// for is decided when the sample is rendered, from that kernel chain (report.cc).
//
// The sweep takes p->lock, so that p stays asleep, its context and stacks unchanged, while
// they are read: a process that just set Sleeping is still in swtch() until the scheduler on
// its hart lets its lock go. Taking a spinlock in the timer trap cannot deadlock here: a hart
// holding any spinlock has interrupts off (acquire() calls push_off() first, and only
// pop_off() of the outermost lock, the scheduler after the wfi of a scan that found nothing,
// and usertrap() for a system call, where no lock is held, turn them on again), so the timer
// trap never arrives on a hart that holds one, and the sweep holds this one lock only, waiting
// for nothing while it does.
//
// Each sample also says how late it was taken (Sample::late, profiler.h): tick() notes the
// deadline before the clock moves it on, and timer_interrupt() says whether the interrupt
// had waited for interrupts to come back on (Cpu::held_off(): pop_off(), usertrap(), the
// end of kerneltrap() and the return to user mode each leave sip in Cpu::held just before
// they turn them on).

#include "profile/profiler.h"

#include "abi/param.h"
#include "arch/riscv/kernelframe.h"
#include "arch/riscv/memlayout.h"
#include "arch/riscv/trapframe.h"
#include "lib/backtrace.h"
#include "mm/vm.h"
#include "proc/proc.h"
#include "profile/walk.h"
#include "trap/timer.h"

namespace prof {

__attribute__((section(".profsamples"))) Sample samples[CAPACITY];

volatile bool all_mode = false;
volatile int nprofiled = 0;

namespace {

constinit volatile u32 cursor = 0;
constinit volatile u64 dropped = 0;
constinit volatile u64 missed = 0;
constinit volatile u64 cost_insns = 0;    // instret counts of tick() with a sample, ...
constinit volatile u64 cost_samples = 0;  // ... over this many samples
constinit volatile u64 wait_insns = 0;    // instret counts of wait samples in the sweep, ...
constinit volatile u64 wait_samples = 0;  // ... over this many: calls of record() for sleepers
constinit volatile u64 wait_next = 0;     // `time` of the next sweep (0: none yet)
constinit volatile u32 generation = 1;
constinit volatile bool clearing = false;
constinit volatile bool inside[NCPU] = {};
constinit volatile u64 period = TIMEBASE_HZ / PROF_DEFAULT_HZ;
constinit volatile u32 hz = PROF_DEFAULT_HZ;

constexpr u64 tag(u32 gen, u32 index) { return (u64(gen) << 32) | (u64(index) + 1); }

// Sample::late for a sample taken `ticks` of the `time` clock after its deadline (a clock
// that sampled before it would show as LATE_MAX_US), with `held` (LATE_IRQOFF or 0).
// (u64 throughout: a narrower argument would cost an extension in the trap.)
constexpr u64 late_mark(u64 ticks, u64 held) {
  u64 us = ticks / (TIMEBASE_HZ / 1'000'000);
  return (us < LATE_MAX_US ? us : LATE_MAX_US) | held;
}
static_assert(late_mark(25, 0) == 2 && late_mark(~0ull, LATE_IRQOFF) == 0xffff);

// LAB sample/walk BEGIN: read user words through the page table, labs/sample/README.md task 2
// Reads a process's user memory through its page table: a word is readable only if its
// page is mapped valid, readable and user-accessible. The translation is done here, inline,
// and remembered twice over: within a walk, the last page (a walk usually stays on one stack
// page, and then a read is a compare and two loads); across samples, in the process, the
// address of the page-table entry of that page (ProfState::walk_pte), so that the next
// sample's first read costs one load of that entry instead of a three-level walk.
class UserReader {
 public:
  explicit UserReader(Proc *p) : m_proc(p) {}

  // The words at va and va + 8; va is 8-byte aligned (the walker checks fp first).
  bool read_pair(u64 va, u64 *lo, u64 *hi) {
    if (va - m_page > riscv::PGSIZE - 16) [[unlikely]] {  // not both words in the remembered page
      if ((va & (riscv::PGSIZE - 1)) > riscv::PGSIZE - 16) return false;  // straddles: give up
      if (!translate(va)) return false;
    }
    const u64 *p = reinterpret_cast<const u64 *>(va + m_delta);
    *lo = p[0];
    *hi = p[1];
    return true;
  }

 private:
  // Remember the page holding va if the user may read it.
  [[gnu::always_inline]] bool translate(u64 va) {
    u64 page = riscv::pg_round_down(va);
    pte_t *leaf = m_proc->prof.walk_pte;
    if (page != m_proc->prof.walk_page) {
      leaf = find_leaf(m_proc->pagetable, va);
      if (leaf == nullptr) return false;
      m_proc->prof.walk_page = page;
      m_proc->prof.walk_pte = leaf;
    }
    pte_t pte = *leaf;
    constexpr u64 NEED = riscv::PTE_V | riscv::PTE_U | riscv::PTE_R;
    if ((pte & NEED) != NEED) return false;
    m_page = page;
    m_delta = riscv::pte_to_pa(pte) - page;
    return true;
  }

  // The level-0 entry for va, or nullptr if a level above is missing (or a superpage).
  static pte_t *find_leaf(pagetable_t pt, u64 va) {
    if (va >= riscv::MAXVA) return nullptr;
    for (int level = 2; level > 0; level--) {
      pte_t pte = pt[riscv::px(level, va)];
      if ((pte & (riscv::PTE_V | riscv::PTE_R | riscv::PTE_W | riscv::PTE_X)) != riscv::PTE_V)
        return nullptr;
      pt = reinterpret_cast<pagetable_t>(riscv::pte_to_pa(pte));
    }
    return &pt[riscv::px(0, va)];
  }

  Proc *m_proc;
  u64 m_page = ~0ull - riscv::PGSIZE;  // no page remembered (va - m_page is then too big)
  u64 m_delta = 0;                     // physical minus virtual address within that page
};

// LAB sample/walk STARTER
// // Reads a process's user memory through its page table (see labs/sample/README.md).
// class UserReader {
//  public:
//   explicit UserReader(Proc *p) : m_proc(p) {}
//
//   // The words at va and va + 8; va is 8-byte aligned (the walker checks fp first).
//   bool read_pair(u64 va, u64 *lo, u64 *hi) {
//     (void)m_proc, (void)va, (void)lo, (void)hi;
//     return false;
//   }
//
//  private:
//   Proc *m_proc;
// };
//
// LAB sample/walk END
// Reads the current kernel stack; the walker's bounds keep it inside [lo, hi].
struct KernelReader {
  bool read_pair(u64 va, u64 *lo, u64 *hi) {
    *lo = reinterpret_cast<const u64 *>(va)[0];
    *hi = reinterpret_cast<const u64 *>(va)[1];
    return true;
  }
};

// The kernel chain of a trap taken in supervisor mode, from the registers kernelvec saved,
// within the kernel stack the trap frame is on. Kept out of line: most samples come from user
// mode and should not pay for its registers. (Maybe unused: the sample lab's starter has no
// record() to call it yet.)
[[maybe_unused]] __attribute__((noinline)) int walk_kernel(KernelFrame *kf, u64 *out) {
  // LAB sample/walk BEGIN: the kernel chain, within this kernel stack; README.md task 2
  u64 lo, hi;
  if (!kernel_stack_bounds(reinterpret_cast<u64>(kf), &lo, &hi)) return 0;
  KernelReader kr;
  profwalk::Registers regs{kf->record_ra, kf->s0, kf->ra};
  return profwalk::walk(kr, regs, profwalk::Bounds{lo, hi}, in_kernel_text, out, MAX_FRAMES);
  // LAB sample/walk STARTER
  // (void)kf, (void)out;
  // return 0;
  // LAB sample/walk END
}

// The kernel chain of a sleeping process, from the context swtch() saved: ra is the return
// into sched(), s0 sched()'s frame pointer. Bounded by that process's own kernel stack.
// frames[0] is that return address, which the reader looks up as a pc (as it does the
// first frame of every sample): right, since sched() has code after its call of swtch().
// Caller holds p->lock, so the process stays asleep. (Maybe unused: the sample lab's starter
// has no record() to call it yet.)
[[maybe_unused]] __attribute__((noinline)) int walk_sleeping(Proc *p, u64 *out) {
  u64 lo, hi;
  if (!kernel_stack_bounds(p->kstack, &lo, &hi)) return 0;
  KernelReader kr;
  profwalk::Registers regs{p->context.ra, p->context.s[0], p->context.ra};
  return profwalk::walk(kr, regs, profwalk::Bounds{lo, hi}, in_kernel_text, out, MAX_FRAMES);
}

}  // namespace

bool active() { return all_mode || nprofiled > 0; }

// LAB sample/record BEGIN
namespace {

// The user chain, then the commit: the last part of every sample. Inlined into both callers
// below, so the common case (a trap from user mode) runs in record() without another call,
// and the kernel chain's registers are paid for only by traps from supervisor mode.
[[gnu::always_inline]] inline void finish(Sample &s, Proc *p, int n, u64 seq, int hart) {
  // The user context: live registers from the trapframe (saved on entry to the kernel).
  const Trapframe *tf = p->trapframe;
  const u64 text_end = p->text_end;
  UserReader ur(p);
  profwalk::Registers uregs{tf->epc, tf->s0, tf->ra};
  s.user_ra = tf->ra;  // the caller, if the pc turns out to be in a frameless stub
  n += profwalk::walk(
      ur, uregs, profwalk::Bounds{0, mem::TRAPFRAME}, [text_end](u64 pc) { return pc < text_end; },
      s.frames + n, MAX_FRAMES - n);
  s.nframes = static_cast<u8>(n);

  __atomic_store_n(&s.seq, seq, __ATOMIC_RELEASE);
  __atomic_store_n(&inside[hart], false, __ATOMIC_RELEASE);
}

// A trap from supervisor mode: the kernel chain first.
[[gnu::noinline]] void finish_kernel(Sample &s, Proc *p, KernelFrame *kf, u64 seq, int hart) {
  int n = walk_kernel(kf, s.frames);
  s.nkernel = static_cast<u8>(n);
  finish(s, p, n, seq, hart);
}

// A sleeping process (the sweep holds p->lock): the kernel chain from its saved context.
[[gnu::noinline]] void finish_wait(Sample &s, Proc *p, u64 seq, int hart) {
  int n = walk_sleeping(p, s.frames);
  s.nkernel = static_cast<u8>(n);
  finish(s, p, n, seq, hart);
}

}  // namespace
// LAB sample/record END

void record(Proc *p, KernelFrame *kf, u64 now, u64 late) {
  // LAB sample/record BEGIN: claim a slot, fill it, commit it; labs/sample/README.md task 3
  int hart = cpuid();
  inside[hart] = true;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (clearing) {
    inside[hart] = false;
    return;
  }
  u32 gen = generation;
  u32 index = __atomic_fetch_add(&cursor, 1u, __ATOMIC_RELAXED);
  if (index >= CAPACITY) {
    __atomic_store_n(&cursor, CAPACITY, __ATOMIC_RELAXED);  // keep it from wrapping
    __atomic_fetch_add(&dropped, 1ull, __ATOMIC_RELAXED);
    inside[hart] = false;
    return;
  }

  Sample &s = samples[index];
  s.pid = static_cast<u32>(p->pid);
  s.image = p->prof.image;
  s.time = now;  // converted to microseconds when rendered
  s.hart = static_cast<u16>(hart);
  s.late = static_cast<u16>(late);
  if (kf != nullptr) {
    s.mode = Mode::Kernel;
    finish_kernel(s, p, kf, tag(gen, index), hart);
  } else if (p->state == ProcState::Sleeping) {
    s.mode = Mode::Wait;
    finish_wait(s, p, tag(gen, index), hart);
  } else {
    s.mode = Mode::User;
    s.nkernel = 0;
    finish(s, p, 0, tag(gen, index), hart);
  }
  // LAB sample/record STARTER
  // (void)p, (void)kf, (void)now, (void)late;
  // LAB sample/record END
}

void tick(KernelFrame *kf, u64 now, u64 held) {
  // What a sample costs, for /proc/profstat: the instructions from here to the end of
  // record(), so that everything the lab's regions do for a sample (the clock above record(),
  // the record and the walks in it) is inside the measured stretch. Under QEMU's -icount the
  // instret counter counts instructions exactly.
  u64 start = riscv::r_instret();
  if (iclock_involved() && iclock_sync()) {  // the instruction clock takes the samples
    mycpu()->next_sample = 0;
    return;
  }
  Cpu *c = mycpu();
  u64 deadline = c->next_sample;  // before the clock below moves it on: how late is this?
  Proc *p = c->proc;
  bool wanted = p != nullptr && (p->prof.profiled || all_mode);  // is p to be sampled?
  // LAB sample/clock BEGIN: the sampling deadline, labs/sample/README.md task 1
  if (!active()) {
    c->next_sample = 0;
    return;
  }
  if (c->next_sample == 0) {
    c->next_sample = now + period;
    return;
  }
  if (now < c->next_sample) return;
  c->next_sample += period;
  bool sampled = wanted;
  if (c->next_sample <= now) {
    // The timer fired late (interrupts were off, or the host was busy): the periods in
    // between are skipped rather than sampled in a burst, and counted when they cost a
    // profiled process its samples.
    if (sampled) __atomic_fetch_add(&missed, (now - c->next_sample) / period + 1, __ATOMIC_RELAXED);
    c->next_sample = now + period;
  }
  // LAB sample/clock STARTER
  // c->next_sample = 0;  // no deadline: timer_rearm() arms the timer for the others only
  // (void)wanted;
  // bool sampled = false;
  // LAB sample/clock END
  if (sampled) take(p, kf, now, start, late_mark(now - deadline, held));
  // After take(): an on-CPU sample's measured cost does not include the sweep.
  sweep_waits(now, p);
}

namespace {
void sweep(u64 now, bool all, u64 late);
}  // namespace

void sweep_waits(u64 now, Proc *running) {
  // If the one profiled process is the one running here, no profiled process is asleep:
  // the common case of profiling one program, decided before the shared deadline is touched.
  bool all = all_mode;
  if (!all && nprofiled == 1 && running != nullptr && running->prof.profiled) return;
  u64 due = __atomic_load_n(&wait_next, __ATOMIC_RELAXED);
  if (now < due) return;
  // One period on from the deadline, even if that is already past: the harts' deadlines
  // are not in step with this one, so the tick that finds it due comes anything up to a
  // period (and the interrupt's delay) after it, and skipping ahead there would lose a
  // period now and then. Each tick sweeps at most once, so a late sweep is caught up by the
  // next ticks, not in a burst. Only the first sweep, or one more than two periods behind
  // (profiling started again, the only profiled process ran for a while, or no hart
  // ticked: QEMU was not running), starts afresh, and is late by nothing.
  bool fresh = due == 0 || now - due >= 2 * period;
  u64 next = fresh ? now + period : due + period;
  if (!__atomic_compare_exchange_n(&wait_next, &due, next, false, __ATOMIC_RELAXED,
                                   __ATOMIC_RELAXED))
    return;  // another hart took this period's sweep
  // A wait sample is late by the sweep's delay past its deadline.
  sweep(now, all, late_mark(fresh ? 0 : now - due, 0));
}

namespace {

// The scan of a sweep, out of line: sweep_waits() returns early on most ticks, and should not
// pay for the registers of this loop.
[[gnu::noinline]] void sweep(u64 now, bool all, u64 late) {
  // Outside all mode the scan ends at the last profiled process: the sweep then costs the
  // running process's trap a few instructions a slot up to there, not the whole table.
  int left = all ? NPROC : nprofiled;
  for (Proc &p : procs) {
    if (left <= 0) break;
    if (!all && !p.prof.profiled) continue;
    left--;
    // An unlocked look first, so that only sleepers cost a lock.
    if (p.state != ProcState::Sleeping) continue;
    u64 start = riscv::r_instret();
    SpinGuard g(p.lock);
    if (p.state != ProcState::Sleeping || !(all || p.prof.profiled)) continue;
    record(&p, nullptr, now, late);
    u64 spent = riscv::r_instret() - start;
    __atomic_fetch_add(&wait_insns, spent, __ATOMIC_RELAXED);
    __atomic_fetch_add(&wait_samples, 1ull, __ATOMIC_RELAXED);
  }
}

}  // namespace

void take(Proc *p, KernelFrame *kf, u64 now, u64 start, u64 late) {
  record(p, kf, now, late);
  u64 spent = riscv::r_instret() - start;
  __atomic_fetch_add(&cost_insns, spent, __ATOMIC_RELAXED);
  __atomic_fetch_add(&cost_samples, 1ull, __ATOMIC_RELAXED);
}

Counters counters() {
  Counters c;
  c.generation = generation;
  u32 n = __atomic_load_n(&cursor, __ATOMIC_ACQUIRE);
  if (n > CAPACITY) n = CAPACITY;
  // Only the committed prefix counts: a slot still being written ends it. Within a
  // generation the prefix only grows, so the scan resumes where the last one stopped.
  // The hint is shared, unlocked state: that is safe because counters() has two callers,
  // profile_read() and render_profstat() (report.cc), and both call it holding prof::lock(),
  // the sleep lock of sysprofile.cc, so no two scans run at once. A new caller must hold it
  // too. (A sleep lock leaves interrupts on: the timer trap never calls counters().)
  static constinit u32 hint_generation = 0, hint = 0;
  u32 i = hint_generation == c.generation && hint <= n ? hint : 0;
  while (i < n && __atomic_load_n(&samples[i].seq, __ATOMIC_ACQUIRE) == tag(c.generation, i)) i++;
  hint_generation = c.generation;
  hint = i;
  c.recorded = i;
  c.dropped = dropped;
  c.missed = missed;
  c.cost_ns = cost_samples ? cost_insns / cost_samples : 0;
  c.waits = wait_samples;
  c.wait_cost = wait_samples ? wait_insns / wait_samples : 0;
  c.taken = cost_samples + c.waits;
  return c;
}

const Sample *sample(u32 index) {
  if (index >= CAPACITY) return nullptr;
  const Sample &s = samples[index];
  if (__atomic_load_n(&s.seq, __ATOMIC_ACQUIRE) != tag(generation, index)) return nullptr;
  return &s;
}

void set_rate(u32 new_hz) {
  hz = new_hz;
  period = TIMEBASE_HZ / new_hz;
}

u32 rate() { return hz; }

void clear_samples() {
  // LAB sample/record BEGIN: wait for samples in flight; labs/sample/README.md task 3
  clearing = true;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  for (int h = 0; h < NCPU; h++)
    while (inside[h]) {
    }
  // LAB sample/record STARTER
  // LAB sample/record END
  generation = generation + 1;
  cursor = 0;
  dropped = 0;
  missed = 0;
  cost_insns = 0;
  cost_samples = 0;
  wait_insns = 0;
  wait_samples = 0;
  // LAB sample/record BEGIN
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  clearing = false;
  // LAB sample/record STARTER
  // LAB sample/record END
}

}  // namespace prof
