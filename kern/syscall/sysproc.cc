// System calls about processes and time.

#include "arch/riscv/sbi.h"
#include "proc/proc.h"
#include "syscall/syscall.h"
#include "trap/timer.h"

extern "C" u64 sys_exit() { exit(argint(0)); }

extern "C" u64 sys_getpid() { return myproc()->pid; }

extern "C" u64 sys_fork() { return static_cast<u64>(fork()); }

extern "C" u64 sys_wait() { return static_cast<u64>(wait(argaddr(0))); }

extern "C" u64 sys_sbrk() {
  int n = argint(0);
  u64 addr = myproc()->sz;
  if (growproc(n) < 0) return ERR;
  return addr;
}

extern "C" u64 sys_sleep() {
  int n = argint(0);
  if (n < 0) n = 0;
  SpinGuard g(tickslock);
  u64 start = ticks;
  while (ticks - start < static_cast<u64>(n)) {
    if (killed(myproc())) return ERR;
    sleep(const_cast<u64 *>(&ticks), tickslock);
  }
  return 0;
}

extern "C" u64 sys_kill() { return static_cast<u64>(kill(argint(0))); }

extern "C" u64 sys_uptime() {
  SpinGuard g(tickslock);
  return ticks;
}

// Power the machine off through the SBI system-reset extension.
extern "C" u64 sys_halt() { sbi::srst::shutdown(); }
