// The buffer cache: the bottom layer of the file system.
//
// Every disk block the file system reads or writes passes through one of NBUF in-memory
// buffers. The cache does two jobs:
//
//  - It keeps recently used blocks in memory, so the inode blocks, bitmap blocks and
//    directories that are touched over and over are read from the disk once.
//
//  - It makes each block a unit of mutual exclusion. There is at most one buffer for a
//    given block, and bread() returns it locked (a sleeplock, since the holder may wait for
//    the disk), so two processes never see different copies of one block or change it at
//    the same time. brelse() gives it back.
//
// Locking has two levels. The cache's spinlock protects the identity of every buffer
// (dev, blockno), its reference count and the recency list; it is held only for short
// scans. A buffer's sleeplock protects its contents (data, valid). A buffer with refcnt > 0
// is in use or about to be and keeps its identity; one with refcnt == 0 may be recycled
// for another block.
//
// Recycling picks the least recently released buffer. The buffers sit on a circular list
// through a sentinel: brelse() moves a buffer whose last reference it dropped to the front,
// so the back of the list holds the buffers nobody has wanted for longest.
//
// The log (log.cc) pins the buffers of a transaction (bpin) so they stay cached, with their
// changes, until the transaction has been written home.

#include "fs/buf.h"

#include "dev/ramdisk.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "proc/proc.h"

namespace {

struct BufferCache {
  Spinlock lock{"bcache"};
  Buf bufs[NBUF] = {};
  // Sentinel of the recency list: recent.next is the most recently released buffer,
  // recent.prev the least. Protected by lock.
  Buf recent = {};
  // Processes sleeping until some buffer can be recycled. Protected by lock. Releases wake
  // them only when there are any: wakeup() visits every process slot, too much to pay on
  // every brelse().
  int waiters = 0;
};
constinit BufferCache cache;

// Unlink b from the recency list. Caller holds cache.lock.
void unlink(Buf *b) {
  b->prev->next = b->next;
  b->next->prev = b->prev;
}

// Insert b right after the sentinel, as the most recently used. Caller holds cache.lock.
void push_front(Buf *b) {
  b->next = cache.recent.next;
  b->prev = &cache.recent;
  cache.recent.next->prev = b;
  cache.recent.next = b;
}

// The buffer for (dev, blockno), locked, with refcnt counting the caller. Its data is valid
// only if b->valid; otherwise the caller must read it from the disk.
Buf *get(u32 dev, u32 blockno) {
  Buf *found = nullptr;
  {
    SpinGuard g(cache.lock);
    for (;;) {
      // Already cached? Then everyone must share this one buffer.
      for (Buf *b = cache.recent.next; b != &cache.recent; b = b->next) {
        // (An unreferenced buffer keeps its block's data until it is recycled.)
        if (b->dev == dev && b->blockno == blockno) {
          found = b;
          break;
        }
      }
      if (found != nullptr) break;

      // Not cached: recycle the least recently used unreferenced buffer.
      for (Buf *b = cache.recent.prev; b != &cache.recent; b = b->prev) {
        if (b->refcnt == 0) {
          b->dev = dev;
          b->blockno = blockno;
          b->valid = false;
          found = b;
          break;
        }
      }
      if (found != nullptr) break;

      // Every buffer is in use. Others will release theirs soon (a buffer is held only for
      // the length of one block operation), so wait rather than fail.
      cache.waiters++;
      sleep(&cache, cache.lock);
      cache.waiters--;
    }
    found->refcnt++;
  }
  // Lock the contents outside the cache lock: we may have to wait for another process
  // that is in the middle of disk I/O on this block.
  found->lock.acquire();
  return found;
}

}  // namespace

void binit() {
  SpinGuard g(cache.lock);
  cache.recent.next = &cache.recent;
  cache.recent.prev = &cache.recent;
  for (Buf &b : cache.bufs) push_front(&b);
}

Buf *bread(u32 dev, u32 blockno) {
  Buf *b = get(dev, blockno);
  if (!b->valid) {
    disk_rw(b, false);
    b->valid = true;
  }
  return b;
}

void bwrite(Buf *b) {
  if (!b->lock.holding()) panic("bwrite: buffer of block %u not locked", b->blockno);
  disk_rw(b, true);
}

void brelse(Buf *b) {
  if (!b->lock.holding()) panic("brelse: buffer of block %u not locked", b->blockno);
  b->lock.release();

  SpinGuard g(cache.lock);
  if (b->refcnt == 0) panic("brelse: block %u released too often", b->blockno);
  b->refcnt--;
  if (b->refcnt == 0) {
    unlink(b);
    push_front(b);
    if (cache.waiters > 0) wakeup(&cache);  // a buffer to recycle
  }
}

void bpin(Buf *b) {
  SpinGuard g(cache.lock);
  b->refcnt++;
}

void bunpin(Buf *b) {
  SpinGuard g(cache.lock);
  if (b->refcnt == 0) panic("bunpin: block %u not pinned", b->blockno);
  b->refcnt--;
  if (b->refcnt == 0) {
    unlink(b);
    push_front(b);
    if (cache.waiters > 0) wakeup(&cache);
  }
}
