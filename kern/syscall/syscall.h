// System-call dispatch and argument fetching (kern/syscall/syscall.cc).
//
// Handlers are `extern "C" u64 sys_NAME()` functions that fetch their arguments from the
// saved user registers with the helpers below. Argument helpers never fail by themselves:
// a bad pointer is caught when it is used (copyin/copyout return -1).
#pragma once

#include "lib/types.h"

void syscall();

// What a failed system call returns: -1 (the xv6 ABI), as the u64 that travels back in a0.
inline constexpr u64 ERR = static_cast<u64>(-1);

int argint(int n);
u64 argraw(int n);
UserAddr argaddr(int n);
// Fetch the nth argument as a NUL-terminated string into buf; length, or -1.
int argstr(int n, char *buf, int max);
// Fetch a word / string at a user address of the current process; 0 or -1.
int fetchaddr(UserAddr addr, u64 *ip);
int fetchstr(UserAddr addr, char *buf, int max);

// One prototype per system call, from the single list.
#define SYSCALL(name, num) extern "C" u64 sys_##name();
#include "abi/syscalls.def"
#undef SYSCALL
