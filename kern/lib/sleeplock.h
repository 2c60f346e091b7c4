// Sleep locks: long-term locks (a buffer during disk I/O, an inode during a file operation)
// that give up the CPU while waiting instead of spinning. They may only be taken in process
// context, never in an interrupt handler.
#pragma once

#include "lib/spinlock.h"

class Sleeplock {
 public:
  constexpr explicit Sleeplock(const char *name) : m_lk("sleeplock"), m_name(name) {}
  Sleeplock() : Sleeplock("sleeplock") {}
  void acquire();
  void release();
  // Is the current process holding this lock?
  bool holding();

 private:
  Spinlock m_lk;  // protects the fields below
  bool m_locked = false;
  const char *m_name;
  int m_pid = 0;  // the holder
  // LAB speed/sleeplock BEGIN
  int m_waiters = 0;  // processes sleeping in acquire()
  // LAB speed/sleeplock STARTER
  // LAB speed/sleeplock END
};

class [[nodiscard]] SleepGuard {
 public:
  explicit SleepGuard(Sleeplock &l) : m_lock(l) { m_lock.acquire(); }
  ~SleepGuard() { m_lock.release(); }
  SleepGuard(const SleepGuard &) = delete;
  SleepGuard &operator=(const SleepGuard &) = delete;

 private:
  Sleeplock &m_lock;
};
