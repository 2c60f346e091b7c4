// Processes and harts.
//
// Each process has a user address space (its own page table), a kernel stack, a trapframe
// page that the trampoline saves user registers into, and a saved kernel Context that the
// scheduler switches to. Each hart runs its own scheduler loop (scheduler() in proc.cc),
// which picks a Runnable process, switches to it, and gets control back when the process
// calls sched() (through yield, sleep or exit).
//
// Locking: a Proc's `lock` protects state, chan, killed, xstate, pid and the profiler's
// `prof.profiled` flag. `parent` is protected by the global wait lock (see proc.cc). The
// remaining fields are private to the process itself (or to whoever holds it in Unused/Used
// state during setup).
#pragma once

#include "arch/riscv/riscv.h"
#include "lib/spinlock.h"
#include "profile/profstate.h"
#include "lib/types.h"
#include "abi/param.h"

struct File;
struct Inode;
struct Trapframe;  // arch/riscv/trapframe.h

// Callee-saved registers for kernel context switches (switch.S).
struct Context {
  u64 ra;
  u64 sp;
  u64 s[12];  // s0..s11
};
static_assert(sizeof(Context) == 14 * 8);
// Save the running registers in *old and resume from *next (switch.S).
extern "C" void swtch(Context *old, Context *next);

// Per-hart state.
struct Cpu {
  struct Proc *proc = nullptr;  // The process running on this hart, or null.
  Context context{};            // swtch() here to enter the scheduler.
  int noff = 0;                 // Depth of push_off() nesting.
  bool intena = false;          // Were interrupts enabled before push_off()?
  // The interrupts pending (sip) when this hart last turned interrupts back on: in
  // pop_off(), in usertrap() for a system call, at the end of a kernel trap (kerneltrap()
  // before its sret), or at the return to user mode (userret notes them in the trapframe,
  // usertrap() copies them here). One pending then is taken
  // at once, at that very place, late: it had been held off. The profiler marks such
  // samples (kern/profile/profiler.h, Sample::late).
  u64 held = 0;

  // In the trap of the interrupt whose sip bit is `pending`, with interrupts off: had it
  // been held off? Forgets the mark, so that a later trap for the same interrupt, taken on
  // time, is not taken for a late one. (A read of sip, rather than a flag set before
  // intr_on() and cleared after it, needs one store, and no care for a process that
  // moves to another hart between the two.)
  bool held_off(u64 pending) {
    bool was = (held & pending) != 0;
    held &= ~pending;
    return was;
  }
  u64 hartid = 0;
  bool started = false;
  // Timer bookkeeping (kern/trap/timer.cc).
  u64 next_quantum = 0;  // time CSR value at which the running process is preempted
  u64 next_sample = 0;   // time CSR value of the next profiling sample (0 = none)
  // Idle bookkeeping (scheduler(), /proc/cpustat): instret counted from the scan that found
  // nothing to run to the one that found a process, interrupts handled meanwhile included.
  // Under QEMU's -icount that is virtual time the hart spent waiting, for the disk or a
  // timer, which a benchmark subtracts to count only the work.
  u64 idle = 0;
  u64 idle_since = 0;  // instret when the hart went idle, 0 while it is not
};

extern Cpu cpus[NCPU];

enum class ProcState { Unused, Used, Sleeping, Runnable, Running, Zombie };

struct Proc {
  Spinlock lock{"proc"};

  // p->lock must be held when using these:
  ProcState state = ProcState::Unused;
  void *chan = nullptr;  // If non-null, sleeping on chan
  bool killed = false;
  int xstate = 0;  // Exit status to be returned to parent's wait
  int pid = 0;

  // wait_lock must be held when using this:
  Proc *parent = nullptr;

  // These are private to the process, so p->lock need not be held.
  u64 kstack = 0;                   // Virtual address of the bottom of the kernel stack
  u64 sz = 0;                       // Size of process memory (bytes)
  pagetable_t pagetable = nullptr;  // User page table
  Trapframe *trapframe = nullptr;   // data page for trampoline.S
  Context context{};                // swtch() here to run process
  File *ofile[NOFILE] = {};         // Open files
  Inode *cwd = nullptr;             // Current directory
  char name[16] = {};               // Process name (for debugging and profiles)
  Inode *exe = nullptr;             // The executable it runs (for the profiler; written under lock)
  u64 text_end = 0;                 // End of its executable segments (for frame walks)

  // The profiler's state (kern/profile/profstate.h says which lock guards each part).
  ProfState prof;
};

extern Proc procs[NPROC];

// The current hart and process. mycpu() needs interrupts off; myproc() does not.
inline int cpuid() { return static_cast<int>(riscv::r_tp()); }  // tp holds the hart id
inline Cpu *mycpu() { return &cpus[riscv::r_tp()]; }
Proc *myproc();

void procinit();
void userinit();  // create the first process, which will exec /init
[[noreturn]] void scheduler();
void sched();  // give up the CPU; caller holds p->lock and has changed p->state
void yield();
// Atomically release lk and sleep on chan; reacquires lk when woken.
void sleep(void *chan, Spinlock &lk);
void wakeup(void *chan);

int fork();
[[noreturn]] void exit(int status);
int wait(UserAddr status);
int kill(int pid);
void setkilled(Proc *p);
// A plain atomic load, inline: the flag only ever goes from false to true (under p->lock, in
// kill/setkilled), and every trap checks it, so taking the lock here would cost every trap a
// lock round trip for nothing.
inline bool killed(Proc *p) { return __atomic_load_n(&p->killed, __ATOMIC_ACQUIRE); }
int growproc(i64 n);
void procdump();  // ^P: list processes on the console

// Copy to or from either a user address (of the current process) or a kernel address.
int either_copyout(bool user_dst, u64 dst, const void *src, u64 len);
int either_copyin(void *dst, bool user_src, u64 src, u64 len);

pagetable_t proc_pagetable(Proc *p);
void proc_freepagetable(pagetable_t pt, u64 sz);

int exec(const char *path, char **argv);
