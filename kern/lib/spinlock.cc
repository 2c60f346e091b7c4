// Spinlocks and per-hart interrupt nesting (see spinlock.h).
//
// acquire() disables interrupts before spinning: if an interrupt handler on this hart took a
// lock this hart already holds, it would spin forever. The atomic swap gives mutual
// exclusion; the acquire/release orderings keep the critical section's loads and stores
// inside it.

#include "lib/spinlock.h"

#include "arch/riscv/riscv.h"
#include "lib/printf.h"
#include "proc/proc.h"

void Spinlock::acquire() {
  push_off();
  if (holding()) panic("acquire: already holding %s", m_name);
  while (__atomic_exchange_n(&m_locked, 1u, __ATOMIC_ACQUIRE) != 0) {
  }
  m_cpu = mycpu();
}

void Spinlock::release() {
  if (!holding()) panic("release: not holding %s", m_name);
  m_cpu = nullptr;
  __atomic_store_n(&m_locked, 0u, __ATOMIC_RELEASE);
  pop_off();
}

bool Spinlock::holding() const {
  return __atomic_load_n(&m_locked, __ATOMIC_RELAXED) != 0 && m_cpu == mycpu();
}

void push_off() {
  bool old = riscv::intr_get();
  riscv::intr_off();
  Cpu *c = mycpu();
  if (c->noff == 0) c->intena = old;
  c->noff++;
}

void pop_off() {
  Cpu *c = mycpu();
  if (riscv::intr_get()) panic("pop_off: interruptible");
  if (c->noff < 1) panic("pop_off: unbalanced");
  c->noff--;
  if (c->noff == 0 && c->intena) {
    // An interrupt pending now came due while interrupts were off and is taken right at
    // intr_on(), late: say so to the profiler (Cpu::held). A CSR read and a store.
    c->held = CSR_READ(sip);
    riscv::intr_on();
  }
}
