// Sleep locks (see sleeplock.h): a flag protected by a spinlock, with sleep/wakeup on the
// lock itself while it is taken.
//
// wakeup() visits every process slot, taking each one's lock, which costs thousands of
// instructions; most releases have nobody waiting (the file system takes and releases a
// buffer's or an inode's lock many times per system call). So waiters count themselves,
// under the spinlock, and release() calls wakeup() only when the count is not zero. The
// count cannot miss a sleeper: it is raised before sleep() gives up the spinlock, and
// release() reads it holding that spinlock.

#include "lib/sleeplock.h"

#include "proc/proc.h"

void Sleeplock::acquire() {
  SpinGuard g(m_lk);
  while (m_locked) {
    m_waiters++;
    sleep(this, m_lk);
    m_waiters--;
  }
  m_locked = true;
  m_pid = myproc()->pid;
}

void Sleeplock::release() {
  SpinGuard g(m_lk);
  m_locked = false;
  m_pid = 0;
  if (m_waiters > 0) wakeup(this);
}

bool Sleeplock::holding() {
  SpinGuard g(m_lk);
  return m_locked && m_pid == myproc()->pid;
}
