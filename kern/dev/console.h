// The console: line editing over the UART (kern/dev/console.cc).
#pragma once

void console_init();
// Called by the UART interrupt for each received byte.
void console_intr(int c);
