// Processes: creation, exit and wait, kill, sleep and wakeup, and per-hart scheduling.
//
// A process slot moves through these states:
//
//   Unused --allocproc--> Used --(fork/userinit ready)--> Runnable <--> Running
//                                                            ^   yield     |
//                                                  wakeup    |             | sleep
//                                                            +-- Sleeping <+
//   Running --exit--> Zombie --parent's wait--> Unused
//
// Each hart runs scheduler(): it scans the table for a Runnable process, marks it Running
// and swtch()es to it. The process returns to the scheduler by calling sched() with its own
// lock held (yield, sleep and exit do this); the scheduler releases that lock. Holding
// p->lock across the switch is what makes "change state, then switch" atomic with respect
// to other harts.
//
// sleep(chan, lk) and wakeup(chan) are the only way to wait for an event. A sleeper takes
// p->lock before releasing lk, and wakeup takes p->lock of each sleeper, so a wakeup
// between the sleeper's check of its condition and its sleep cannot be lost.
//
// Parent links are protected by wait_lock, taken before any p->lock.
//
// A process whose parent exits first is an orphan: it is handed to init, and only init's
// wait() frees its slot once it has exited. Orphans that exit in quick succession can fill
// the table with zombies faster than init, one process on one hart (which the host may not
// be running), reaps them. A fork that finds the table full while such zombies exist does not
// fail at once: those slots are about to come free, so it sleeps until init reaps one
// (orphan_reaped) and tries again. It fails when no zombie orphan is left to wait for, or if
// the forking process is killed. init itself never waits so: it is the one that reaps.

#include "proc/proc.h"

#include "arch/riscv/memlayout.h"
#include "arch/riscv/trapframe.h"
#include "fs/file.h"
#include "fs/fs.h"
#include "fs/log.h"
#include "lib/linker.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/kalloc.h"
#include "mm/vm.h"
#include "profile/profiler.h"
#include "trap/timer.h"
#include "trap/trap.h"

constinit Cpu cpus[NCPU];
constinit Proc procs[NPROC];

namespace {

constinit Proc *initproc = nullptr;
constinit Spinlock pid_lock("nextpid");
constinit int nextpid = 1;
// Protects every p->parent, and orders wakeups of waiting parents (see wait()).
constinit Spinlock wait_lock("wait_lock");
// The channel a fork sleeps on while the table is full of zombie orphans (see the top).
constinit char orphan_reaped;

int allocpid() {
  SpinGuard g(pid_lock);
  return nextpid++;
}

void freeproc(Proc *p);

// Find an Unused slot and give it a pid, a trapframe page, a page table and a fresh kernel
// context that starts in forkret(). Returns with p->lock held, or nullptr.
Proc *allocproc() {
  Proc *p = procs;
  for (; p < &procs[NPROC]; p++) {
    p->lock.acquire();
    if (p->state == ProcState::Unused) break;
    p->lock.release();
  }
  if (p == &procs[NPROC]) return nullptr;

  p->pid = allocpid();
  p->state = ProcState::Used;
  p->trapframe = static_cast<Trapframe *>(kalloc());
  if (p->trapframe == nullptr) {
    freeproc(p);
    p->lock.release();
    return nullptr;
  }
  p->pagetable = proc_pagetable(p);
  if (p->pagetable == nullptr) {
    freeproc(p);
    p->lock.release();
    return nullptr;
  }
  memset(&p->context, 0, sizeof(p->context));
  p->context.ra = reinterpret_cast<u64>(forkret);
  p->context.sp = p->kstack + mem::KSTACK_PAGES * riscv::PGSIZE;
  return p;
}

// Release everything a process slot owns except its kernel stack. Caller holds p->lock.
void freeproc(Proc *p) {
  // exit() stops sampling as the process becomes a Zombie, and profile(2) starts it only
  // for a live process (kern/profile/sysprofile.cc), so a slot being freed is not profiled.
  // A profile(2) that broke that rule (a lab solution that accepts a zombie) must not leave
  // the flag, and the count with it, on a free slot: stop it here too (stop_locked is a no-op
  // for an unprofiled process).
  prof::on_exit(p);
  if (p->trapframe) kfree(p->trapframe);
  p->trapframe = nullptr;
  if (p->pagetable) proc_freepagetable(p->pagetable, p->sz);
  p->pagetable = nullptr;
  p->sz = 0;
  p->pid = 0;
  p->parent = nullptr;
  p->name[0] = 0;
  p->chan = nullptr;
  p->killed = false;
  p->xstate = 0;
  p->exe = nullptr;  // released by exit(), or never taken (a failed fork)
  p->text_end = 0;
  p->prof.reset();
  p->state = ProcState::Unused;
}

// Is there a zombie that only init's wait() will free? Caller holds wait_lock.
bool orphans_to_reap() {
  for (Proc &pp : procs) {
    if (pp.parent != initproc) continue;
    SpinGuard g(pp.lock);
    if (pp.state == ProcState::Zombie) return true;
  }
  return false;
}

// allocproc() for fork: when the table is full of zombie orphans, wait for init to reap one.
Proc *allocproc_for_fork(Proc *parent) {
  for (;;) {
    Proc *np = allocproc();
    if (np != nullptr || parent == initproc) return np;
    SpinGuard g(wait_lock);
    if (killed(parent) || !orphans_to_reap()) return nullptr;
    sleep(&orphan_reaped, wait_lock);
  }
}

// Give p's children to init. Caller holds wait_lock.
void reparent(Proc *p) {
  for (Proc &pp : procs) {
    if (pp.parent == p) {
      pp.parent = initproc;
      wakeup(initproc);
    }
  }
}

}  // namespace

Proc *myproc() {
  InterruptGuard g;
  return mycpu()->proc;
}

void procinit() {
  for (int i = 0; i < NPROC; i++) procs[i].kstack = mem::kstack(i);
}

pagetable_t proc_pagetable(Proc *p) {
  pagetable_t pt = uvmcreate();
  if (pt == nullptr) return nullptr;
  // The trampoline and the trapframe: at the top, not accessible to user mode.
  if (mappages(pt, mem::TRAMPOLINE, riscv::PGSIZE, reinterpret_cast<u64>(trampoline),
               riscv::PTE_R | riscv::PTE_X) != 0) {
    uvmfree(pt, 0);
    return nullptr;
  }
  if (mappages(pt, mem::TRAPFRAME, riscv::PGSIZE, reinterpret_cast<u64>(p->trapframe),
               riscv::PTE_R | riscv::PTE_W) != 0) {
    uvmunmap(pt, mem::TRAMPOLINE, 1, false);
    uvmfree(pt, 0);
    return nullptr;
  }
  return pt;
}

void proc_freepagetable(pagetable_t pt, u64 sz) {
  uvmunmap(pt, mem::TRAMPOLINE, 1, false);
  uvmunmap(pt, mem::TRAPFRAME, 1, false);
  uvmfree(pt, sz);
}

// The first process. Instead of copying in a tiny hand-made program, it starts in the
// kernel: forkret() sees that it is the first, mounts the root file system (which needs a
// process context, because disk reads sleep) and execs /init from there.
void userinit() {
  Proc *p = allocproc();
  if (p == nullptr) panic("userinit: no process slot");
  initproc = p;
  safestrcpy(p->name, "init", sizeof(p->name));
  p->state = ProcState::Runnable;
  p->lock.release();
}

// A new process's first scheduling lands here, still holding p->lock from scheduler().
extern "C" void forkret() {
  static constinit bool first = true;
  Proc *p = myproc();
  p->lock.release();
  if (first) {
    first = false;
    fsinit(ROOTDEV);
    p->cwd = namei("/");
    char arg0[] = "/init";
    char *argv[] = {arg0, nullptr};
    if (exec("/init", argv) < 0) panic("forkret: cannot exec /init");
    __sync_synchronize();
  }
  usertrapret();
}

int growproc(i64 n) {
  Proc *p = myproc();
  u64 sz = p->sz;
  if (n > 0) {
    if (sz + n > mem::TRAPFRAME || sz + n < sz) return -1;
    sz = uvmalloc(p->pagetable, sz, sz + n, riscv::PTE_W);
    if (sz == 0) return -1;
  } else if (n < 0) {
    if (static_cast<u64>(-n) > sz) return -1;
    sz = uvmdealloc(p->pagetable, sz, sz + n);
  }
  p->sz = sz;
  return 0;
}

int fork() {
  Proc *p = myproc();
  Proc *np = allocproc_for_fork(p);
  if (np == nullptr) return -1;
  if (uvmcopy(p->pagetable, np->pagetable, p->sz) < 0) {
    freeproc(np);
    np->lock.release();
    return -1;
  }
  np->sz = p->sz;
  *np->trapframe = *p->trapframe;
  np->trapframe->a0 = 0;  // fork returns 0 in the child
  for (int i = 0; i < NOFILE; i++)
    if (p->ofile[i]) np->ofile[i] = filedup(p->ofile[i]);
  np->cwd = idup(p->cwd);
  if (p->exe) np->exe = idup(p->exe);
  np->text_end = p->text_end;
  prof::on_fork(p, np);
  safestrcpy(np->name, p->name, sizeof(np->name));
  int pid = np->pid;
  np->lock.release();
  prof::after_fork(np);

  {
    SpinGuard g(wait_lock);
    np->parent = p;
  }
  {
    SpinGuard g(np->lock);
    np->state = ProcState::Runnable;
  }
  return pid;
}

void exit(int status) {
  Proc *p = myproc();
  if (p == initproc) panic("init exiting");

  for (File *&f : p->ofile) {
    if (f) {
      fileclose(f);
      f = nullptr;
    }
  }
  begin_op();
  iput(p->cwd);
  end_op();
  p->cwd = nullptr;
  Inode *exe;
  {
    SpinGuard g(p->lock);  // the profiler reads another process's exe under its lock
    exe = p->exe;
    p->exe = nullptr;
  }
  if (exe) {
    begin_op();
    iput(exe);
    end_op();
  }

  wait_lock.acquire();
  reparent(p);
  wakeup(p->parent);  // the parent might be sleeping in wait()
  p->lock.acquire();
  prof::on_exit(p);  // stop sampling under the lock, and in the step, that makes p a Zombie
  p->xstate = status;
  p->state = ProcState::Zombie;
  wait_lock.release();

  sched();
  panic("zombie exit");
}

int wait(UserAddr status) {
  Proc *p = myproc();
  SpinGuard g(wait_lock);
  for (;;) {
    bool havekids = false;
    for (Proc &pp : procs) {
      if (pp.parent != p) continue;
      havekids = true;
      int pid;
      {
        SpinGuard cg(pp.lock);
        if (pp.state != ProcState::Zombie) continue;
        pid = pp.pid;
        if (!status.is_null() && copyout(p->pagetable, status, pp.xstate) < 0) return -1;
        freeproc(&pp);
      }
      if (p == initproc) wakeup(&orphan_reaped);  // a fork may be waiting for this slot
      return pid;
    }
    if (!havekids || killed(p)) return -1;
    sleep(p, wait_lock);
  }
}

void scheduler() {
  Cpu *c = mycpu();
  c->proc = nullptr;
  // The scheduler runs with interrupts off, and takes them at one point only: after the wfi
  // of a scan that found nothing to run. An interrupt that arrives while the hart switches
  // processes or scans is taken in the next process it runs, where that process turns
  // interrupts on (a sample due then shows that place: skid, kern/profile/profiler.h); if
  // nothing is runnable, it is taken after the wfi, where one that arrives during the wait
  // is too. So a process's wait for the disk costs its hart the same busy work whenever the
  // host finishes the request (the bench's busy-instruction counts are exact because of it).
  // With interrupts off, a wakeup by this hart's own interrupt handlers cannot slip in
  // between a scan and its wfi, and a pending interrupt makes the wfi return at once; a
  // process woken on another hart is found at this hart's next time-slice timer at the latest.
  riscv::intr_off();
  for (;;) {
    bool found = false;
    for (Proc &p : procs) {
      SpinGuard g(p.lock);
      if (p.state != ProcState::Runnable) continue;
      p.state = ProcState::Running;
      c->proc = &p;
      timer_start_quantum();
      // The hart was idle until now. The idle time ends after the time slice is armed:
      // which deadline is armed depends on where in the timer's grid the wait ended.
      if (c->idle_since != 0) {
        c->idle += riscv::r_instret() - c->idle_since;
        c->idle_since = 0;
      }
      // intena belongs to each kernel thread (see sched()): the scheduler's says interrupts
      // are off, and releasing p.lock must not turn them on with the process's.
      bool intena = c->intena;
      swtch(&c->context, &p.context);
      c->intena = intena;
      // The process is done running for now; it changed its state before coming back.
      c->proc = nullptr;
      found = true;
    }
    if (!found) {  // nothing to run: sleep until an interrupt is pending, then take it
      if (c->idle_since == 0) c->idle_since = riscv::r_instret();
      riscv::wfi();
      riscv::intr_on();
      riscv::intr_off();
    }
  }
}

void sched() {
  Proc *p = myproc();
  if (!p->lock.holding()) panic("sched: p->lock not held");
  if (mycpu()->noff != 1) panic("sched: other locks held");
  if (p->state == ProcState::Running) panic("sched: still running");
  if (riscv::intr_get()) panic("sched: interruptible");
  // intena belongs to this kernel thread, not to the hart: save and restore it.
  bool intena = mycpu()->intena;
  swtch(&p->context, &mycpu()->context);
  mycpu()->intena = intena;
}

void yield() {
  Proc *p = myproc();
  SpinGuard g(p->lock);
  p->state = ProcState::Runnable;
  sched();
}

void sleep(void *chan, Spinlock &lk) {
  Proc *p = myproc();
  // Take p->lock before letting go of lk: wakeup(chan) needs p->lock, so it cannot run
  // between here and sched().
  p->lock.acquire();
  lk.release();
  p->chan = chan;
  p->state = ProcState::Sleeping;
  sched();
  p->chan = nullptr;
  p->lock.release();
  lk.acquire();
}

void wakeup(void *chan) {
  Proc *me = myproc();
  for (Proc &p : procs) {
    if (&p == me) continue;
    SpinGuard g(p.lock);
    if (p.state == ProcState::Sleeping && p.chan == chan) p.state = ProcState::Runnable;
  }
}

int kill(int pid) {
  for (Proc &p : procs) {
    SpinGuard g(p.lock);
    if (p.pid == pid && p.state != ProcState::Unused) {
      p.killed = true;
      if (p.state == ProcState::Sleeping) p.state = ProcState::Runnable;
      return 0;
    }
  }
  return -1;
}

void setkilled(Proc *p) {
  SpinGuard g(p->lock);
  p->killed = true;
}

int either_copyout(bool user_dst, u64 dst, const void *src, u64 len) {
  if (user_dst) return copyout(myproc()->pagetable, UserAddr(dst), src, len);
  memmove(reinterpret_cast<void *>(dst), src, len);
  return 0;
}

int either_copyin(void *dst, bool user_src, u64 src, u64 len) {
  if (user_src) return copyin(myproc()->pagetable, dst, UserAddr(src), len);
  memmove(dst, reinterpret_cast<const void *>(src), len);
  return 0;
}

void procdump() {
  static constexpr const char *names[] = {"unused", "used", "sleep ", "runble", "run   ", "zombie"};
  kprintf("\n");
  for (Proc &p : procs) {
    if (p.state == ProcState::Unused) continue;
    kprintf("%d %s %s\n", p.pid, names[static_cast<int>(p.state)], p.name);
  }
}
