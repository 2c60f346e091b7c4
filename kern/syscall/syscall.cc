// System-call dispatch.
//
// A user program puts the call number in a7 and arguments in a0..a5, then executes
// `ecall`; the trampoline saves them in the trapframe and usertrap() calls syscall(). The
// handler's result goes back in a0. The table of handlers is built at compile time from the
// single list in kern/abi/syscalls.def, so a number can never be out of step with its
// handler or with the user-space stub.

#include "syscall/syscall.h"

#include "arch/riscv/trapframe.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/vm.h"
#include "proc/proc.h"

namespace {

using Handler = u64 (*)();

struct SyscallTable {
  static constexpr int SIZE = 64;
  Handler handler[SIZE] = {};
  const char *name[SIZE] = {};
};

constexpr SyscallTable make_table() {
  SyscallTable t;
#define SYSCALL(n, num)                               \
  static_assert(num > 0 && num < SyscallTable::SIZE); \
  t.handler[num] = sys_##n;                           \
  t.name[num] = #n;
#include "abi/syscalls.def"
#undef SYSCALL
  return t;
}

constexpr SyscallTable table = make_table();

}  // namespace

u64 argraw(int n) {
  Trapframe *tf = myproc()->trapframe;
  switch (n) {
    case 0: return tf->a0;
    case 1: return tf->a1;
    case 2: return tf->a2;
    case 3: return tf->a3;
    case 4: return tf->a4;
    case 5: return tf->a5;
  }
  panic("argraw: argument %d", n);
}

int argint(int n) { return static_cast<int>(argraw(n)); }

UserAddr argaddr(int n) { return UserAddr(argraw(n)); }

int fetchaddr(UserAddr addr, u64 *ip) { return copyin(myproc()->pagetable, *ip, addr); }

int fetchstr(UserAddr addr, char *buf, int max) {
  if (copyinstr(myproc()->pagetable, buf, addr, max) < 0) return -1;
  return static_cast<int>(strlen(buf));
}

int argstr(int n, char *buf, int max) { return fetchstr(argaddr(n), buf, max); }

void syscall() {
  Proc *p = myproc();
  u64 num = p->trapframe->a7;
  if (num < SyscallTable::SIZE && table.handler[num] != nullptr) {
    p->trapframe->a0 = table.handler[num]();
  } else {
    kprintf("pid %d (%s): unknown system call %lu\n", p->pid, p->name, num);
    p->trapframe->a0 = ERR;
  }
}
