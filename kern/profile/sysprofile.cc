// The profile(2) system call, and the profiler's hooks into process life.
//
// Sampling is switched on per process (ProfState::profiled) or for every process (all_mode).
// The sampler stays on while all_mode is set or prof::nprofiled, the number of processes
// whose flag is set, is above zero; so the count must never drift from the flags.
//
// Who guards what:
//
//   - ProfState::profiled, with nprofiled, changes only while holding that process's p->lock, and
//     only together: the flag goes 0 -> 1 with one increment, 1 -> 0 with one decrement.
//   - It is set by PROF_ON, on a process found live (not Unused, not Zombie, not killed)
//     under the same hold of p->lock; and by fork() (on_fork), on the new child of a process
//     that follows, under the child's p->lock, which fork holds from allocproc() until the
//     child is complete: no one else can have seen the child yet. exit() clears it
//     (on_exit) in the critical section in which the process becomes a Zombie. So a Zombie,
//     and a freed slot, never has the flag, and fork() finds the new child's flag clear.
//     freeproc() calls on_exit() as well, so that a profile(2) breaking the rule (a lab
//     solution accepting a zombie) costs a wrong answer, not a free slot that keeps the
//     sampler on.
//   - ProfState::follow is set by PROF_FOLLOW, on a process found live and sampled under
//     one hold of its p->lock, and by fork() on the child of a process that follows
//     (on_fork, as `profiled` is); it is cleared with `profiled` (stop_locked): a process
//     that is not sampled never follows.
//   - Every other change of who is profiled, and every image attach, happens with prof_lock
//     (a sleep lock) held; exec's on_exec() takes it too before it reads the flags. One
//     profile(2) call is therefore wholly before or wholly after an exec's check. (fork()
//     cannot take a sleep lock under the child's p->lock, and needs none there: no exec of
//     the child can begin before the child runs. It takes prof_lock afterwards, in
//     after_fork(), for a child that will be sampled; so in all mode every fork waits for
//     it, behind a reader of /proc/profile if one holds it.)
//   - The timer trap reads the flags without a lock, for the process running on its own hart;
//     a value a moment old costs one sample at most.
//
// PROF_ON registers the process's executable (images.cc) before it sets the flag, so every
// sample of a process switched on by pid names its program. A profiled process that execs
// stays profiled, and on_exec() registers its new executable; samples taken between the
// commit of the new image and that registration carry no image (their user frames are `??`).
// A process being profiled can exit at any moment: its samples stay in the array, and its
// executable in the image table, so /proc/profile still names its functions.
//
// Following children (PROF_FOLLOW), as `perf record` does: a fork of a process whose
// `profiled` and `follow` are set makes a child with both set, so the child is sampled from
// its first instruction, and so are its own forks. The child gets its parent's image
// (on_fork), so its samples name the program it runs, and an exec registers the new one
// as for any sampled process. The races:
//
//   - fork() reads the parent's flags without the parent's lock: the parent is the process
//     calling fork, and only another hart's PROF_OFF or PROF_FOLLOW can change them
//     meanwhile. Such a call is ordered wholly before the fork (the child is not followed)
//     or after it (the child is followed). Either way the child's own flag is set under its
//     own lock with one increment, and cleared by its own exit with one decrement, so
//     nprofiled cannot drift: PROF_OFF on the parent stops the parent alone, and a child
//     already followed stays sampled until it exits or is switched off by pid.
//   - A parent that exits leaves its followed children sampled; they go to init as orphans
//     and stop being sampled at their own exit.
//   - All mode follows nothing: it samples every process while it lasts, and a child is
//     followed only through its parent's flags, which all mode neither sets nor reads.
//   - A `profile clear` empties the image table and registers the sampled processes again,
//     so an image index copied by on_fork may be one from before the clear. A child that
//     will be sampled (followed, or in all mode) therefore registers its program itself in
//     after_fork(), under prof_lock, before it can run: wholly before a clear, which then
//     registers it again with the others, or wholly after.
//
// Who forked whom, for PROF_FOLLOWED: each followed fork is recorded as (parent, child) in a
// ring of the last PROF_FOLLOW_LOG, under follow_lock, a spinlock fork takes inside the
// child's p->lock. Pids are never reused, so an entry stays true however old it is.

#include "abi/param.h"
#include "arch/riscv/riscv.h"
#include "lib/printf.h"
#include "lib/sleeplock.h"
#include "lib/spinlock.h"  // InterruptGuard
#include "proc/proc.h"
#include "profile/profiler.h"
#include "syscall/syscall.h"
#include "trap/timer.h"

namespace prof {

namespace {

constinit Sleeplock prof_lock("profile");

struct Forked {
  int parent = 0;
  int child = 0;  // 0: an empty entry (no process has pid 0)
};
constinit Spinlock follow_lock("proffollow");
constinit Forked forked[PROF_FOLLOW_LOG];
constinit u32 nforked = 0;  // entries ever recorded: the next goes to nforked % the size
static_assert((PROF_FOLLOW_LOG & (PROF_FOLLOW_LOG - 1)) == 0, "so that nforked may wrap");

// PROF_FOLLOW: follow (arg 1) or stop following (0) the live, sampled process pid.
// Caller holds prof_lock.
int set_follow(int pid, int arg) {
  if (pid <= 0 || (arg != 0 && arg != 1)) return -1;
  for (Proc &p : procs) {
    SpinGuard g(p.lock);
    if (p.pid != pid || p.state == ProcState::Unused) continue;
    if (p.state == ProcState::Zombie || p.killed || !p.prof.profiled) return -1;
    p.prof.follow = arg;
    return 0;
  }
  return -1;
}

// PROF_FOLLOWED: the parent recorded for a followed child, or -1.
int followed_from(int pid) {
  if (pid <= 0) return -1;
  SpinGuard g(follow_lock);
  for (const Forked &f : forked)
    if (f.child == pid) return f.parent;
  return -1;
}

// Stop sampling p. False if it was not being sampled. Caller holds p->lock.
bool stop_locked(Proc *p) {
  if (!p->lock.holding()) panic("prof stop_locked: p->lock not held");
  p->prof.follow = 0;
  if (!p->prof.profiled) return false;
  p->prof.profiled = 0;
  __atomic_fetch_sub(&nprofiled, 1, __ATOMIC_SEQ_CST);
  return true;
}
// LAB profile/syscall BEGIN

// Is p the live (not exited, not killed) process with this pid? Caller holds p->lock.
bool live_locked(const Proc &p, int pid) {
  return p.pid == pid && p.state != ProcState::Unused && p.state != ProcState::Zombie && !p.killed;
}

// The live process with this pid, or nullptr. By the time the caller looks, it may have
// exited: check again under its lock before changing it.
Proc *find_live(int pid) {
  for (Proc &p : procs) {
    SpinGuard g(p.lock);
    if (live_locked(p, pid)) return &p;
  }
  return nullptr;
}

// Start sampling p (nothing changes if it already is). Caller holds p->lock.
void start_locked(Proc *p) {
  if (p->prof.profiled) return;
  p->prof.profiled = 1;
  __atomic_fetch_add(&nprofiled, 1, __ATOMIC_SEQ_CST);
}

// Register the executables of the live processes that are sampled (or, with everyone, of
// all of them). With only_missing, only those that have no image yet.
void attach_live_images(bool everyone, bool only_missing) {
  for (Proc &p : procs) {
    bool want;
    {
      SpinGuard g(p.lock);
      want = p.state != ProcState::Unused && p.state != ProcState::Zombie &&
             (everyone || all_mode || p.prof.profiled) &&
             (!only_missing || p.prof.image == NO_IMAGE);
    }
    if (want) attach_image(&p);
  }
}

int profile_on(int pid) {
  if (pid == PROF_ALL_PIDS) {
    // Register everyone's program first, then switch on; a process forked or exec'd in
    // between has no image yet, and the second pass catches it.
    attach_live_images(true, false);
    all_mode = true;
    attach_live_images(true, true);
    return 0;
  }
  Proc *p = find_live(pid);
  if (p == nullptr) return -1;
  attach_image(p);  // before the flag, so that every sample names the program
  SpinGuard g(p->lock);
  if (!live_locked(*p, pid)) return -1;  // it exited or was killed meanwhile
  start_locked(p);
  return 0;
}

int profile_off(int pid) {
  if (pid == PROF_ALL_PIDS) {
    if (!all_mode) return -1;
    all_mode = false;  // processes switched on by pid stay on
    return 0;
  }
  for (Proc &p : procs) {
    SpinGuard g(p.lock);
    if (live_locked(p, pid)) return stop_locked(&p) ? 0 : -1;
  }
  return -1;
}
// LAB profile/syscall STARTER
// LAB profile/syscall END

}  // namespace

void lock() { prof_lock.acquire(); }
void unlock() { prof_lock.release(); }
bool holding_lock() { return prof_lock.holding(); }

void on_exec(Proc *p) {
  // exec has set p->prof.image to NO_IMAGE (under p->lock). Holding prof_lock, no
  // profile(2) call is half done: one that came before has set the flags read here, and
  // one that comes after registers the new program itself.
  SleepGuard g(prof_lock);
  if (all_mode || p->prof.profiled) attach_image(p);
}

void on_fork(Proc *parent, Proc *child) {
  // The child's flag is clear (see the top of this file); it runs the parent's program.
  if (!child->lock.holding()) panic("prof on_fork: child->lock not held");
  child->prof.image = parent->prof.image;
  if (!parent->prof.profiled || !parent->prof.follow) return;
  child->prof.profiled = 1;
  child->prof.follow = 1;
  __atomic_fetch_add(&nprofiled, 1, __ATOMIC_SEQ_CST);
  SpinGuard g(follow_lock);
  forked[nforked % PROF_FOLLOW_LOG] = Forked{parent->pid, child->pid};
  nforked++;
}

void after_fork(Proc *child) {
  if (!child->prof.profiled && !all_mode) return;
  SleepGuard g(prof_lock);
  attach_image(child);
}

void on_exit(Proc *p) { stop_locked(p); }

}  // namespace prof

using namespace prof;

namespace {

// PROF_STALL: spin with interrupts off for `us` microseconds of the `time` clock, as a
// kernel that held a spinlock that long would. Whatever comes due meanwhile (the sampling
// clock, the time slice) is taken at the pop_off() that ends it. No lock is held, so other
// harts go on; the bound keeps one call within a time slice, and the budget keeps a hart's
// stalls within PROF_STALL_BUDGET_US a second, however often a program asks. The budget is
// per hart, kept with interrupts off, which also keeps the caller on its hart.
static_assert(PROF_STALL_MAX_US <= QUANTUM_US);
constinit u64 stall_second[NCPU];  // when the hart's current second began (`time`)
constinit u64 stall_spent[NCPU];   // microseconds it stalled in that second
u64 stall(int us) {
  if (us < 0 || us > PROF_STALL_MAX_US) return ERR;
  InterruptGuard off;
  int hart = cpuid();
  u64 now = riscv::r_time();
  if (now - stall_second[hart] >= TIMEBASE_HZ) {
    stall_second[hart] = now;
    stall_spent[hart] = 0;
  }
  if (stall_spent[hart] + static_cast<u64>(us) > PROF_STALL_BUDGET_US) return ERR;
  stall_spent[hart] += static_cast<u64>(us);
  u64 end = now + static_cast<u64>(us) * (TIMEBASE_HZ / 1'000'000);
  while (riscv::r_time() < end) {
  }
  return 0;
}

}  // namespace

// int profile(int pid, int cmd, int arg): see kern/abi/profile.h.
extern "C" u64 sys_profile() {
  // The instruction clock is no part of the profile lab: it is served before the lab's code.
  if (argint(1) == PROF_CLOCK) {
    SleepGuard g(prof_lock);
    return set_clock(argint(2)) == 0 ? 0 : ERR;
  }
  // The stall is a test facility beside the profiler, the same in every lab's tree.
  if (argint(1) == PROF_STALL) return stall(argint(2));
  // Following children is served here too, so that the lab's `profile run` can rely on it.
  if (argint(1) == PROF_FOLLOW) {
    SleepGuard g(prof_lock);
    return set_follow(argint(0), argint(2)) == 0 ? 0 : ERR;
  }
  if (argint(1) == PROF_FOLLOWED) {
    int parent = followed_from(argint(0));
    return parent < 0 ? ERR : static_cast<u64>(parent);
  }
  // LAB profile/syscall BEGIN: implement profile(2), see labs/profile/README.md, task 1
  int pid = argint(0);
  int cmd = argint(1);
  int arg = argint(2);

  SleepGuard g(prof_lock);
  switch (cmd) {
    case PROF_ON: return profile_on(pid) == 0 ? 0 : ERR;
    case PROF_OFF: return profile_off(pid) == 0 ? 0 : ERR;
    case PROF_RATE:
      if (arg < PROF_MIN_HZ || arg > PROF_MAX_HZ) return ERR;
      set_rate(static_cast<u32>(arg));
      return 0;
    case PROF_CLEAR:
      clear_samples();
      release_images();
      symbolize_reset();
      report_reset();
      attach_live_images(false, false);
      return 0;
    default: return ERR;
  }
  // LAB profile/syscall STARTER
  // return ERR;
  // LAB profile/syscall END
}
