// Traps: system calls, exceptions and interrupts (kern/trap/trap.cc), and the assembly that
// enters and leaves them.
#pragma once

#include "arch/riscv/kernelframe.h"
#include "lib/types.h"

void trapinithart();
extern "C" void usertrap();  // uservec jumps here, through the trapframe's kernel_trap
extern "C" void kerneltrap(KernelFrame *kf);  // kernelvec calls it
extern "C" [[noreturn]] void usertrapret();
extern "C" void forkret();
// The assembly entry points: kernelvec (kernelvec.S), and uservec and userret in the
// trampoline page (trampoline.S).
extern "C" void kernelvec();
extern "C" char uservec[], userret[];
