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
# TF(name) is the offset of field `name` of struct Trapframe (kern/arch/riscv/trapframe.h).

#include "arch/riscv/trapframe.h"

.section trampsec
.globl trampoline
.globl uservec
.balign 4
uservec:
        csrw    sscratch, a0            # park user a0; a0 becomes the trapframe pointer
        li      a0, TRAPFRAME_VA

        sd      ra, TF(ra)(a0)
        sd      sp, TF(sp)(a0)
        sd      gp, TF(gp)(a0)
        sd      tp, TF(tp)(a0)
        sd      t0, TF(t0)(a0)
        sd      t1, TF(t1)(a0)
        sd      t2, TF(t2)(a0)
        sd      s0, TF(s0)(a0)
        sd      s1, TF(s1)(a0)
        sd      a1, TF(a1)(a0)
        sd      a2, TF(a2)(a0)
        sd      a3, TF(a3)(a0)
        sd      a4, TF(a4)(a0)
        sd      a5, TF(a5)(a0)
        sd      a6, TF(a6)(a0)
        sd      a7, TF(a7)(a0)
        sd      s2, TF(s2)(a0)
        sd      s3, TF(s3)(a0)
        sd      s4, TF(s4)(a0)
        sd      s5, TF(s5)(a0)
        sd      s6, TF(s6)(a0)
        sd      s7, TF(s7)(a0)
        sd      s8, TF(s8)(a0)
        sd      s9, TF(s9)(a0)
        sd      s10, TF(s10)(a0)
        sd      s11, TF(s11)(a0)
        sd      t3, TF(t3)(a0)
        sd      t4, TF(t4)(a0)
        sd      t5, TF(t5)(a0)
        sd      t6, TF(t6)(a0)
        csrr    t0, sscratch
        sd      t0, TF(a0)(a0)

        ld      sp, TF(kernel_sp)(a0)
        ld      tp, TF(kernel_hartid)(a0)
        ld      t0, TF(kernel_trap)(a0)
        ld      t1, TF(kernel_satp)(a0)
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
        ld      ra, TF(ra)(a0)
        ld      sp, TF(sp)(a0)
        ld      gp, TF(gp)(a0)
        ld      tp, TF(tp)(a0)
        ld      t0, TF(t0)(a0)
        ld      t1, TF(t1)(a0)
        ld      t2, TF(t2)(a0)
        ld      s0, TF(s0)(a0)
        ld      s1, TF(s1)(a0)
        ld      a1, TF(a1)(a0)
        ld      a2, TF(a2)(a0)
        ld      a3, TF(a3)(a0)
        ld      a4, TF(a4)(a0)
        ld      a5, TF(a5)(a0)
        ld      a6, TF(a6)(a0)
        ld      a7, TF(a7)(a0)
        ld      s2, TF(s2)(a0)
        ld      s3, TF(s3)(a0)
        ld      s4, TF(s4)(a0)
        ld      s5, TF(s5)(a0)
        ld      s6, TF(s6)(a0)
        ld      s7, TF(s7)(a0)
        ld      s8, TF(s8)(a0)
        ld      s9, TF(s9)(a0)
        ld      s10, TF(s10)(a0)
        ld      s11, TF(s11)(a0)
        ld      t3, TF(t3)(a0)
        ld      t4, TF(t4)(a0)
        ld      t5, TF(t5)(a0)
        ld      t6, TF(t6)(a0)
        # The interrupts pending now are taken at the first user instruction, held off
        # since usertrapret turned interrupts off: note them for usertrap (Cpu::held).
        # sscratch is free until uservec parks a0 in it.
        csrw    sscratch, t0
        csrr    t0, sip
        sd      t0, TF(held)(a0)
        csrr    t0, sscratch
        ld      a0, TF(a0)(a0)
        sret
