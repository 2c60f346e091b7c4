# The trampoline: the page of code that switches between user and kernel address spaces.
#
# It is mapped at the same virtual address (TRAMPOLINE, the top page) in the kernel's page
# table and in every process's, so it keeps running when satp changes under it. User mode
# cannot touch it (no PTE_U). stvec points at uservec while a process runs in user mode.
#
# uservec: a trap from user mode lands here with every user register still live. It saves
# them into the process's trapframe (mapped at TRAPFRAME in the user page table), loads the
# kernel's stack pointer, hart id and page table from that same trapframe, and jumps to
# usertrap() in kern/trap/trap.cc.
#
# userret(satp): the way back. usertrapret() calls it with the user page table; it switches
# to it, restores every user register from the trapframe, and sret's to sepc in user mode.
#
# Offsets are those of struct Trapframe in kern/proc/proc.h.

#include "arch/riscv/trapframe_offsets.h"

.section trampsec
.globl trampoline
.globl uservec
.balign 4
uservec:
        csrw    sscratch, a0            # park user a0; a0 becomes the trapframe pointer
        li      a0, TRAPFRAME_VA

        sd      ra, TF_RA(a0)
        sd      sp, TF_SP(a0)
        sd      gp, TF_GP(a0)
        sd      tp, TF_TP(a0)
        sd      t0, TF_T0(a0)
        sd      t1, TF_T1(a0)
        sd      t2, TF_T2(a0)
        sd      s0, TF_S0(a0)
        sd      s1, TF_S1(a0)
        sd      a1, TF_A1(a0)
        sd      a2, TF_A2(a0)
        sd      a3, TF_A3(a0)
        sd      a4, TF_A4(a0)
        sd      a5, TF_A5(a0)
        sd      a6, TF_A6(a0)
        sd      a7, TF_A7(a0)
        sd      s2, TF_S2(a0)
        sd      s3, TF_S3(a0)
        sd      s4, TF_S4(a0)
        sd      s5, TF_S5(a0)
        sd      s6, TF_S6(a0)
        sd      s7, TF_S7(a0)
        sd      s8, TF_S8(a0)
        sd      s9, TF_S9(a0)
        sd      s10, TF_S10(a0)
        sd      s11, TF_S11(a0)
        sd      t3, TF_T3(a0)
        sd      t4, TF_T4(a0)
        sd      t5, TF_T5(a0)
        sd      t6, TF_T6(a0)
        csrr    t0, sscratch
        sd      t0, TF_A0(a0)

        ld      sp, TF_KERNEL_SP(a0)
        ld      tp, TF_KERNEL_HARTID(a0)
        ld      t0, TF_KERNEL_TRAP(a0)
        ld      t1, TF_KERNEL_SATP(a0)
        mv      s0, zero                # the kernel's frame chain starts here

        sfence.vma zero, zero           # finish user-memory accesses under the old table
        csrw    satp, t1
        sfence.vma zero, zero
        jr      t0                      # usertrap(), which does not return

.globl userret
userret:
        sfence.vma zero, zero
        csrw    satp, a0
        sfence.vma zero, zero

        li      a0, TRAPFRAME_VA
        ld      ra, TF_RA(a0)
        ld      sp, TF_SP(a0)
        ld      gp, TF_GP(a0)
        ld      tp, TF_TP(a0)
        ld      t0, TF_T0(a0)
        ld      t1, TF_T1(a0)
        ld      t2, TF_T2(a0)
        ld      s0, TF_S0(a0)
        ld      s1, TF_S1(a0)
        ld      a1, TF_A1(a0)
        ld      a2, TF_A2(a0)
        ld      a3, TF_A3(a0)
        ld      a4, TF_A4(a0)
        ld      a5, TF_A5(a0)
        ld      a6, TF_A6(a0)
        ld      a7, TF_A7(a0)
        ld      s2, TF_S2(a0)
        ld      s3, TF_S3(a0)
        ld      s4, TF_S4(a0)
        ld      s5, TF_S5(a0)
        ld      s6, TF_S6(a0)
        ld      s7, TF_S7(a0)
        ld      s8, TF_S8(a0)
        ld      s9, TF_S9(a0)
        ld      s10, TF_S10(a0)
        ld      s11, TF_S11(a0)
        ld      t3, TF_T3(a0)
        ld      t4, TF_T4(a0)
        ld      t5, TF_T5(a0)
        ld      t6, TF_T6(a0)
        ld      a0, TF_A0(a0)
        sret
