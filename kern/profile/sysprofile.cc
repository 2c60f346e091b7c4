// The profile(2) system call, and the profiler's hooks into process life.
//
// Sampling is switched on per process (Proc::profiled) or for every process (all_mode).
// The trap side reads those flags without a lock; they are written here under the
// profiler's sleep lock, which also serialises clearing against readers of /proc/profile.
//
// A process being profiled can exit at any moment. Its samples stay in the array, and its
// executable stays in the image table (images.cc), so /proc/profile still names its
// functions; on_exit() just stops sampling it. A profiled process that execs keeps being
// profiled, and its new executable is registered so later samples resolve against it.

#include "lib/sleeplock.h"
#include "proc/proc.h"
#include "profile/profiler.h"
#include "syscall/syscall.h"

namespace prof {

void report_reset();

namespace {

constinit Sleeplock prof_lock("profile");
constexpr u64 ERR = static_cast<u64>(-1);

// Stop sampling p. False if it was not being sampled.
bool stop(Proc *p) {
  if (!__atomic_exchange_n(&p->profiled, 0, __ATOMIC_SEQ_CST)) return false;
  __atomic_fetch_sub(&nprofiled, 1, __ATOMIC_SEQ_CST);
  return true;
}
// LAB profile/syscall BEGIN

// The live (not exited) process with this pid, or nullptr.
Proc *find_live(int pid) {
  for (Proc &p : procs) {
    SpinGuard g(p.lock);
    if (p.pid == pid && p.state != ProcState::Unused && p.state != ProcState::Zombie &&
        !p.killed)
      return &p;
  }
  return nullptr;
}

void start(Proc *p) {
  if (__atomic_exchange_n(&p->profiled, 1, __ATOMIC_SEQ_CST)) return;
  __atomic_fetch_add(&nprofiled, 1, __ATOMIC_SEQ_CST);
}

// Register the executables of every process that is being sampled now.
void attach_live_images() {
  for (Proc &p : procs) {
    ProcState st;
    {
      SpinGuard g(p.lock);
      st = p.state;
    }
    if (st != ProcState::Unused && st != ProcState::Zombie && (all_mode || p.profiled))
      attach_image(&p);
  }
}
// LAB profile/syscall STARTER
// LAB profile/syscall END

}  // namespace

void lock() { prof_lock.acquire(); }
void unlock() { prof_lock.release(); }

void on_exec(Proc *p) {
  // exec has set p->prof_image to NO_IMAGE (under p->lock); a profile(2) call that starts
  // sampling p from now on registers the new program itself.
  if (!(all_mode || p->profiled)) return;
  SleepGuard g(prof_lock);
  attach_image(p);
}

void on_fork(Proc *parent, Proc *child) {
  child->profiled = 0;
  child->prof_image = parent->prof_image;
}

void on_exit(Proc *p) { stop(p); }

}  // namespace prof

using namespace prof;

// int profile(int pid, int cmd, int arg): see kern/abi/profile.h.
extern "C" u64 sys_profile() {
  // LAB profile/syscall BEGIN: implement profile(2), see labs/profile/README.md, task 1
  int pid = argint(0);
  int cmd = argint(1);
  int arg = argint(2);

  SleepGuard g(prof_lock);
  switch (cmd) {
    case PROF_ON:
      if (pid == PROF_ALL_PIDS) {
        all_mode = true;
        attach_live_images();
        return 0;
      } else {
        Proc *p = find_live(pid);
        if (p == nullptr) return ERR;
        start(p);
        attach_image(p);
        return 0;
      }
    case PROF_OFF:
      if (pid == PROF_ALL_PIDS) {
        if (!all_mode) return ERR;
        all_mode = false;
        return 0;
      } else {
        Proc *p = find_live(pid);
        if (p == nullptr || !stop(p)) return ERR;
        return 0;
      }
    case PROF_RATE:
      if (arg < PROF_MIN_HZ || arg > PROF_MAX_HZ) return ERR;
      set_rate(static_cast<u32>(arg));
      return 0;
    case PROF_CLEAR:
      clear_samples();
      release_images();
      symbolize_reset();
      report_reset();
      attach_live_images();
      return 0;
    default:
      return ERR;
  }
  // LAB profile/syscall STARTER
  // return ERR;
  // LAB profile/syscall END
}
