// Driver for the 16550a-compatible UART that QEMU's virt machine provides.
//
// Registers are bytes at mem::UART0 + offset (the 16550 data sheet's names). Reception is
// interrupt-driven: each received byte goes to console_intr(). Transmission by processes
// goes through a small ring buffer: a byte goes to the hardware at once if the transmitter
// has room, and otherwise waits in the ring for the transmit-holding-register-empty
// interrupt, while its writer sleeps if the ring is full. That interrupt is enabled only
// while bytes wait: QEMU's transmitter is idle again as soon as a byte is written, and an
// interrupt for every write would cost a trap a byte. kprintf bypasses the buffer and polls.

#include "dev/uart.h"

#include "arch/riscv/memlayout.h"
#include "dev/console.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "proc/proc.h"

namespace {

enum Reg : u64 {
  RHR = 0,  // receive holding register (read)
  THR = 0,  // transmit holding register (write)
  IER = 1,  // interrupt enable register
  FCR = 2,  // FIFO control register (write)
  ISR = 2,  // interrupt status register (read)
  LCR = 3,  // line control register
  LSR = 5,  // line status register
  DLL = 0,  // divisor latch, low byte (while LCR_BAUD_LATCH is set)
  DLM = 1,  // divisor latch, high byte
};
constexpr u8 IER_RX_ENABLE = 1 << 0;
constexpr u8 IER_TX_ENABLE = 1 << 1;
constexpr u8 FCR_FIFO_ENABLE = 1 << 0;
constexpr u8 FCR_FIFO_CLEAR = 3 << 1;
constexpr u8 LCR_EIGHT_BITS = 3 << 0;
constexpr u8 LCR_BAUD_LATCH = 1 << 7;
constexpr u8 LSR_RX_READY = 1 << 0;
constexpr u8 LSR_TX_IDLE = 1 << 5;

volatile u8 &reg(Reg r) { return *reinterpret_cast<volatile u8 *>(mem::UART0 + r); }

constexpr int TX_BUF_SIZE = 256;
constexpr int UART_FIFO = 16;  // the 16550's transmit FIFO
constinit Spinlock tx_lock("uart");
constinit char tx_buf[TX_BUF_SIZE];
constinit u64 tx_w = 0;  // next slot to write (tx_buf[tx_w % TX_BUF_SIZE])
constinit u64 tx_r = 0;  // next slot to send

constinit bool tx_intr = false;  // whether IER_TX_ENABLE is set

// Move queued bytes to the hardware while it has room. When the transmitter reports empty,
// its 16-byte FIFO is empty too, so up to 16 bytes go at a time rather than one. Then ask
// for the transmitter-empty interrupt if, and only if, bytes are left waiting.
// Caller holds tx_lock.
void uart_start() {
  bool was_full = tx_w - tx_r == TX_BUF_SIZE;  // only then can a writer be asleep
  while (tx_w != tx_r && (reg(LSR) & LSR_TX_IDLE) != 0) {
    for (int burst = 0; burst < UART_FIFO && tx_w != tx_r; burst++) {
      reg(THR) = static_cast<u8>(tx_buf[tx_r % TX_BUF_SIZE]);
      tx_r++;
    }
  }
  if (bool waiting = tx_w != tx_r; waiting != tx_intr) {
    reg(IER) = IER_RX_ENABLE | (waiting ? IER_TX_ENABLE : 0);
    tx_intr = waiting;
  }
  // wakeup() scans the whole process table: skip it when nobody can be waiting.
  if (was_full && tx_w != tx_r + TX_BUF_SIZE) wakeup(&tx_r);
}

}  // namespace

void uart_init() {
  reg(IER) = 0x00;
  reg(LCR) = LCR_BAUD_LATCH;  // set the baud rate divisor: 38.4K
  reg(DLL) = 0x01;
  reg(DLM) = 0x00;
  reg(LCR) = LCR_EIGHT_BITS;  // 8 data bits, no parity, divisor latch off
  reg(FCR) = FCR_FIFO_ENABLE | FCR_FIFO_CLEAR;
  reg(IER) = IER_RX_ENABLE;  // uart_start() enables IER_TX_ENABLE while bytes wait
}

void uart_putc(int c) {
  SpinGuard g(tx_lock);
  while (panicked) continue;  // freeze: the panicking hart owns the console
  while (tx_w == tx_r + TX_BUF_SIZE) sleep(&tx_r, tx_lock);
  tx_buf[tx_w % TX_BUF_SIZE] = static_cast<char>(c);
  tx_w++;
  uart_start();
}

void uart_putc_sync(int c) {
  InterruptGuard g;
  while ((reg(LSR) & LSR_TX_IDLE) == 0) {
  }
  reg(THR) = static_cast<u8>(c);
}

void uart_intr() {
  while (reg(LSR) & LSR_RX_READY) console_intr(reg(RHR));
  SpinGuard g(tx_lock);
  uart_start();
}
