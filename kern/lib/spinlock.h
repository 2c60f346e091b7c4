// Spinlocks: mutual exclusion between harts for short critical sections.
//
// Holding a spinlock disables interrupts on this hart (push_off/pop_off nest, so a hart may
// hold several). That prevents deadlock with an interrupt handler that wants the same lock,
// and means code holding a spinlock must never sleep.
//
// Prefer the RAII guard: `SpinGuard g(lock);` releases on every path out of the scope.
#pragma once

#include "lib/types.h"

struct Cpu;

class Spinlock {
 public:
  constexpr explicit Spinlock(const char *name) : m_name(name) {}
  Spinlock(const Spinlock &) = delete;
  Spinlock &operator=(const Spinlock &) = delete;

  void acquire();
  void release();
  // Is this hart holding the lock? Interrupts must be off.
  bool holding() const;
  const char *name() const { return m_name; }

 private:
  u32 m_locked = 0;
  const char *m_name;
  Cpu *m_cpu = nullptr;  // the hart holding the lock, for debugging
};

class [[nodiscard]] SpinGuard {
 public:
  explicit SpinGuard(Spinlock &l) : m_lock(l) { m_lock.acquire(); }
  ~SpinGuard() { m_lock.release(); }
  SpinGuard(const SpinGuard &) = delete;
  SpinGuard &operator=(const SpinGuard &) = delete;

 private:
  Spinlock &m_lock;
};

// Interrupt-disable nesting for this hart. push_off records whether interrupts were on at
// the outermost level; the matching pop_off restores that.
void push_off();
void pop_off();

class [[nodiscard]] InterruptGuard {
 public:
  InterruptGuard() { push_off(); }
  ~InterruptGuard() { pop_off(); }
  InterruptGuard(const InterruptGuard &) = delete;
  InterruptGuard &operator=(const InterruptGuard &) = delete;
};
