// The ns16550a UART at mem::UART0 (kern/dev/uart.cc).
#pragma once

void uart_init();
// Queue a byte for interrupt-driven transmission; sleeps while the queue is full.
void uart_putc(int c);
// Transmit a byte by polling, with interrupts off: for kprintf and echo.
void uart_putc_sync(int c);
// The UART's interrupt handler: drain received bytes into the console, send queued ones.
void uart_intr();
