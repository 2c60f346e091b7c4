# The first instructions the kernel runs, on every hart.
#
# OpenSBI enters the boot hart at _entry and each other hart (started later through SBI HSM
# by kmain) at _secondary_entry, in S-mode with paging off, a0 = hart id and, for the boot
# hart, a1 = the device-tree address. All we need before C++ can run is a stack: each hart
# takes its own slice of boot_stacks. tp holds the hart id from here on (cpuid() in
# kern/proc/proc.h).
# sstatus.FS arrives Dirty: the kernel does not use floating point, so turn the FPU off.

#include "arch/riscv/bootstack.h"

#
# OpenSBI 1.1 has a race in hart_start: it marks a hart as starting before it stores the
# start address, so a hart we start can occasionally wake up at the cold-boot address,
# _entry, instead of _secondary_entry. So _entry lets exactly one hart through to kmain,
# the first to swap boot_claimed from 0 to 1; any later arrival is a started hart and takes
# the secondary path. (a1 is then the opaque value, not a device tree; it is not used.)

.section .text.entry
.global _entry
_entry:
        la      t0, boot_claimed
        li      t1, 1
        amoswap.w.aqrl t1, t1, (t0)
        bnez    t1, _secondary_entry
        call    setup_hart
        call    kmain                   # kmain(hartid, dtb), never returns
1:      wfi
        j       1b

.global _secondary_entry
_secondary_entry:
        call    setup_hart
        call    kmain_secondary         # kmain_secondary(hartid), never returns
1:      wfi
        j       1b

# Give hart a0 its boot stack and tp; harts beyond NCPU park here forever.
setup_hart:
        li      t0, NCPU
        bgeu    a0, t0, park
        la      sp, boot_stacks
        li      t0, BOOT_STACK_SIZE
        addi    t1, a0, 1
        mul     t0, t0, t1
        add     sp, sp, t0
        mv      tp, a0
        li      t0, 0x6000              # sstatus.FS: floating point off
        csrc    sstatus, t0
        csrw    sie, zero
        mv      s0, zero                # end of the frame-pointer chain
        ret
park:
        wfi
        j       park

.section .data
.balign 4
boot_claimed:
        .word   0

.section .bootstack, "aw", @nobits
.balign 16
.global boot_stacks
boot_stacks:
        .space  BOOT_STACK_SIZE * NCPU
