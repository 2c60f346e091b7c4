// The console: line editing over the UART (kern/dev/console.cc).
#pragma once

#include "lib/types.h"

void console_init();
// Called by the UART interrupt for each received byte.
void console_intr(int c);
int console_read(int minor, bool user_dst, u64 dst, u32 off, int n);
int console_write(int minor, bool user_src, u64 src, u32 off, int n);
