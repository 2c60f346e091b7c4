# Traps taken while in supervisor mode (stvec points here whenever the kernel runs).
#
# An interrupt can arrive between any two kernel instructions, so every caller-saved
# register is saved on the current kernel stack in a struct KernelFrame and restored
# afterwards; callee-saved registers are preserved by kerneltrap() itself. KF(name) is the
# offset of field `name` of the frame (kern/arch/riscv/kernelframe.h).
#
# The frame doubles as a frame record: fp-8 holds the interrupted pc (sepc) and fp-16 the
# interrupted s0, exactly where a normal function keeps ra and the caller's fp. So a
# frame-pointer walk that starts inside kerneltrap() (a panic backtrace, the profiler)
# continues into the interrupted function as if it had called kerneltrap.
#
# tp is not restored: if kerneltrap() yielded, this code may resume on another hart, and tp
# must keep naming the hart it now runs on.

#include "arch/riscv/kernelframe.h"

.text
.globl kernelvec
.balign 4
kernelvec:
        addi    sp, sp, -KF_SIZE
        sd      ra, KF(ra)(sp)
        sd      gp, KF(gp)(sp)
        sd      t0, KF(t0)(sp)
        sd      t1, KF(t1)(sp)
        sd      t2, KF(t2)(sp)
        sd      s0, KF(s0)(sp)
        sd      a0, KF(a0)(sp)
        sd      a1, KF(a1)(sp)
        sd      a2, KF(a2)(sp)
        sd      a3, KF(a3)(sp)
        sd      a4, KF(a4)(sp)
        sd      a5, KF(a5)(sp)
        sd      a6, KF(a6)(sp)
        sd      a7, KF(a7)(sp)
        sd      t3, KF(t3)(sp)
        sd      t4, KF(t4)(sp)
        sd      t5, KF(t5)(sp)
        sd      t6, KF(t6)(sp)
        addi    t0, sp, KF_SIZE
        sd      t0, KF(sp)(sp)          # the interrupted sp
        csrr    t1, sepc
        sd      t1, KF(record_ra)(sp)   # frame record: "return address" = sepc
        sd      s0, KF(record_fp)(sp)   #               previous fp = interrupted s0
        mv      s0, t0                  # fp for this frame

        mv      a0, sp
        call    kerneltrap              # kerneltrap(KernelFrame*)

        ld      ra, KF(ra)(sp)
        ld      gp, KF(gp)(sp)
        ld      t0, KF(t0)(sp)
        ld      t1, KF(t1)(sp)
        ld      t2, KF(t2)(sp)
        ld      s0, KF(s0)(sp)
        ld      a0, KF(a0)(sp)
        ld      a1, KF(a1)(sp)
        ld      a2, KF(a2)(sp)
        ld      a3, KF(a3)(sp)
        ld      a4, KF(a4)(sp)
        ld      a5, KF(a5)(sp)
        ld      a6, KF(a6)(sp)
        ld      a7, KF(a7)(sp)
        ld      t3, KF(t3)(sp)
        ld      t4, KF(t4)(sp)
        ld      t5, KF(t5)(sp)
        ld      t6, KF(t6)(sp)
        addi    sp, sp, KF_SIZE
        sret
