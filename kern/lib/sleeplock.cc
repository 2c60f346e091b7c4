// Sleep locks (see sleeplock.h): a flag protected by a spinlock, with sleep/wakeup on the
// lock itself while it is taken.

#include "lib/sleeplock.h"

#include "proc/proc.h"

void Sleeplock::acquire() {
  SpinGuard g(m_lk);
  while (m_locked) sleep(this, m_lk);
  m_locked = true;
  m_pid = myproc()->pid;
}

void Sleeplock::release() {
  SpinGuard g(m_lk);
  m_locked = false;
  m_pid = 0;
  wakeup(this);
}

bool Sleeplock::holding() {
  SpinGuard g(m_lk);
  return m_locked && m_pid == myproc()->pid;
}
