# Traps taken while in supervisor mode (stvec points here whenever the kernel runs).
#
# An interrupt can arrive between any two kernel instructions, so every caller-saved
# register is saved on the current kernel stack in a struct KernelFrame (kern/trap/trap.h)
# and restored afterwards; callee-saved registers are preserved by kerneltrap() itself.
#
# The frame doubles as a frame record: fp-8 holds the interrupted pc (sepc) and fp-16 the
# interrupted s0, exactly where a normal function keeps ra and the caller's fp. So a
# frame-pointer walk that starts inside kerneltrap() (a panic backtrace, the profiler)
# continues into the interrupted function as if it had called kerneltrap.
#
# tp is not restored: if kerneltrap() yielded, this code may resume on another hart, and tp
# must keep naming the hart it now runs on.

#define KF_SIZE 272

.text
.globl kernelvec
.balign 4
kernelvec:
        addi    sp, sp, -KF_SIZE
        sd      ra, 0(sp)
        sd      gp, 16(sp)
        sd      t0, 32(sp)
        sd      t1, 40(sp)
        sd      t2, 48(sp)
        sd      s0, 56(sp)
        sd      a0, 64(sp)
        sd      a1, 72(sp)
        sd      a2, 80(sp)
        sd      a3, 88(sp)
        sd      a4, 96(sp)
        sd      a5, 104(sp)
        sd      a6, 112(sp)
        sd      a7, 120(sp)
        sd      t3, 128(sp)
        sd      t4, 136(sp)
        sd      t5, 144(sp)
        sd      t6, 152(sp)
        addi    t0, sp, KF_SIZE
        sd      t0, 8(sp)               # the interrupted sp
        csrr    t1, sepc
        sd      t1, KF_SIZE-8(sp)       # frame record: "return address" = sepc
        sd      s0, KF_SIZE-16(sp)      #               previous fp = interrupted s0
        mv      s0, t0                  # fp for this frame

        mv      a0, sp
        call    kerneltrap              # kerneltrap(KernelFrame*)

        ld      ra, 0(sp)
        ld      gp, 16(sp)
        ld      t0, 32(sp)
        ld      t1, 40(sp)
        ld      t2, 48(sp)
        ld      s0, 56(sp)
        ld      a0, 64(sp)
        ld      a1, 72(sp)
        ld      a2, 80(sp)
        ld      a3, 88(sp)
        ld      a4, 96(sp)
        ld      a5, 104(sp)
        ld      a6, 112(sp)
        ld      a7, 120(sp)
        ld      t3, 128(sp)
        ld      t4, 136(sp)
        ld      t5, 144(sp)
        ld      t6, 152(sp)
        addi    sp, sp, KF_SIZE
        sret
