// Sizes shared by entry.S and C++ code. Plain macros, because the assembler includes it.
#pragma once

#include "abi/param.h"  // NCPU: one boot stack per hart

#define BOOT_STACK_SIZE 16384  // bytes of stack per hart for kmain and the scheduler

#ifndef __ASSEMBLER__
// What entry.S defines: the boot stacks, BOOT_STACK_SIZE bytes per hart, and the entry of
// every hart but the boot hart.
extern "C" char boot_stacks[];
extern "C" char _secondary_entry[];
#endif
