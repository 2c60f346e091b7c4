// Sleep locks (see sleeplock.h): a flag protected by a spinlock, with sleep/wakeup on the
// lock itself while it is taken.
//
// LAB speed/sleeplock BEGIN
// wakeup() visits every process slot, taking each one's lock, which costs thousands of
// instructions; most releases have nobody waiting (the file system takes and releases a
// buffer's or an inode's lock many times per system call). So waiters count themselves,
// under the spinlock, and release() calls wakeup() only when the count is not zero. The
// count cannot miss a sleeper: it is raised before sleep() gives up the spinlock, and
// release() reads it holding that spinlock.
// LAB speed/sleeplock STARTER
// // release() wakes every process sleeping on the lock; the first to run takes it, and the
// // others find it taken and sleep again.
// LAB speed/sleeplock END

#include "lib/sleeplock.h"

#include "proc/proc.h"

void Sleeplock::acquire() {
  SpinGuard g(m_lk);
  // LAB speed/sleeplock BEGIN
  while (m_locked) {
    m_waiters++;
    sleep(this, m_lk);
    m_waiters--;
  }
  // LAB speed/sleeplock STARTER
  // while (m_locked) sleep(this, m_lk);
  // LAB speed/sleeplock END
  m_locked = true;
  m_pid = myproc()->pid;
}

void Sleeplock::release() {
  SpinGuard g(m_lk);
  m_locked = false;
  m_pid = 0;
  // LAB speed/sleeplock BEGIN
  if (m_waiters > 0) wakeup(this);
  // LAB speed/sleeplock STARTER
  // wakeup(this);
  // LAB speed/sleeplock END
}

bool Sleeplock::holding() {
  SpinGuard g(m_lk);
  return m_locked && m_pid == myproc()->pid;
}
