// The write-ahead log: what makes file-system updates survive a crash.
//
// Most file-system operations change several blocks. Creating a file, for instance, marks
// an inode allocated, writes the inode, and adds a directory entry. If the machine stopped
// half way, the disk would be left inconsistent: an allocated inode no directory names, or
// worse, an entry naming a free inode. The log makes each operation all-or-nothing.
//
// A system call that changes the file system brackets its work in begin_op() / end_op().
// Inside, it changes blocks in the buffer cache and calls log_write(b) instead of
// bwrite(b). log_write only records the block number; the buffer is pinned in the cache so
// the change cannot be lost before it is committed. Nothing reaches the disk yet.
//
// When the last operation in progress calls end_op(), everything recorded is committed:
//
//   1. each recorded block is copied to the log area of the disk  (logstart+1, +2, ...)
//   2. the log header, listing the blocks' home addresses, is written with n > 0
//   3. each block is written to its home location
//   4. the header is written again with n = 0
//
// Step 2 is the moment of commit. (The header's contents fit in the first 512-byte
// sector of its block, and a disk writes a sector entirely or not at all, so the header
// cannot be torn.) A crash before it leaves the home locations untouched: the operation
// never happened. A crash after it leaves a header naming a complete copy of every block,
// which recovery at the next boot copies home again: the operation happened. Copying home
// twice does no harm.
//
// Several processes may be inside operations at once; their changes go into the same
// transaction, and are committed together when the last of them finishes ("group commit").
// That is why begin_op must reserve room: the log holds a limited number of blocks, so
// begin_op lets a new operation start only while every operation in progress could still
// write its maximum (MAXOPBLOCKS distinct blocks) without overflowing it. An operation
// that writes the same block twice uses one slot ("absorption").
//
// The log's own blocks are never in the buffer cache. Commit moves them through a private
// buffer, so committing needs no cache buffers beyond the pinned ones it is writing.
//
// On-disk format (xv6's): block sb.logstart holds fsfmt::LogHeader {n, block[]}; the
// logged copies follow in order at sb.logstart+1 ... sb.logstart+n.

#include "fs/log.h"

#include "dev/ramdisk.h"
#include "fs/buf.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "proc/proc.h"

namespace {

struct Log {
  Spinlock lock{"log"};
  // Fixed at initlog.
  u32 dev = 0;
  u32 start = 0;        // block number of the header
  u32 capacity = 0;     // how many blocks one transaction may hold
  u32 disk_blocks = 0;  // size of the file system, to check a recovered header
  // Protected by lock. While `committing` is set, commit() has `header` to itself: no
  // operation is in progress, and none can start.
  int outstanding = 0;           // operations between begin_op and end_op
  bool committing = false;       // commit() is running; no new operations may start
  fsfmt::LogHeader header = {};  // the transaction so far: home block numbers, in order
};
constinit Log log;
// A disk writes a 512-byte sector entirely or not at all; the commit point relies on it.
static_assert(sizeof(fsfmt::LogHeader) <= 512, "the log header must fit in one sector");

// The buffer through which log blocks move to and from the disk. Only one commit (or the
// recovery at boot) runs at a time, so one buffer suffices.
constinit Buf staging = {};

void read_log_block(u32 blockno) {
  staging.dev = log.dev;
  staging.blockno = blockno;
  disk_rw(&staging, false);
}

void write_log_block(u32 blockno) {
  staging.dev = log.dev;
  staging.blockno = blockno;
  disk_rw(&staging, true);
}

// Write the in-memory header to disk. With n > 0 this is the commit point.
void write_header() {
  memset(staging.data, 0, sizeof(staging.data));
  memmove(staging.data, &log.header, sizeof(log.header));
  write_log_block(log.start);
}

// Copy each block of the transaction from its (pinned) cache buffer into the log area.
void write_body() {
  for (int i = 0; i < log.header.n; i++) {
    Buf *home = bread(log.dev, log.header.block[i]);  // pinned, so always a cache hit
    memmove(staging.data, home->data, sizeof(staging.data));
    brelse(home);
    write_log_block(log.start + 1 + i);
  }
}

// Write each block of the committed transaction to its home location and unpin it. The
// cached buffer still holds exactly what was logged: no operation can run during commit.
void install_from_cache() {
  for (int i = 0; i < log.header.n; i++) {
    Buf *home = bread(log.dev, log.header.block[i]);
    bwrite(home);
    bunpin(home);
    brelse(home);
  }
}

void commit() {
  if (log.header.n == 0) return;
  write_body();
  write_header();  // the commit point
  install_from_cache();
  log.header.n = 0;
  write_header();  // the transaction is home: forget it
}

// At boot: if the disk holds a committed transaction, copy its blocks home.
void recover() {
  read_log_block(log.start);
  memmove(&log.header, staging.data, sizeof(log.header));
  int n = log.header.n;
  if (n < 0 || u32(n) > log.capacity) panic("initlog: corrupt log header (n = %d)", n);
  if (n == 0) return;

  for (int i = 0; i < n; i++) {
    u32 home_blockno = static_cast<u32>(log.header.block[i]);
    if (home_blockno <= log.start || home_blockno >= log.disk_blocks) {
      panic("initlog: log names block %u, outside the file system", home_blockno);
    }
    read_log_block(log.start + 1 + i);
    // Write home through the cache, so that no stale cached copy can outlive recovery.
    Buf *home = bread(log.dev, home_blockno);
    memmove(home->data, staging.data, sizeof(home->data));
    bwrite(home);
    brelse(home);
  }
  log.header.n = 0;
  write_header();
  kprintf("fs: replayed %d logged blocks\n", n);
}

}  // namespace

void initlog(u32 dev, const fsfmt::SuperBlock &super) {
  // The header takes one block of the log area; the rest holds the logged copies.
  u32 capacity = super.nlog > 0 ? super.nlog - 1 : 0;
  if (capacity > LOGSIZE) capacity = LOGSIZE;
  if (capacity < MAXOPBLOCKS) {
    panic("initlog: log of %u blocks cannot hold one operation (%d blocks)", super.nlog,
          MAXOPBLOCKS);
  }
  log.dev = dev;
  log.start = super.logstart;
  log.capacity = capacity;
  log.disk_blocks = super.size;
  // Recovery runs before any operation can start, so it needs no lock.
  recover();
}

void begin_op() {
  SpinGuard g(log.lock);
  for (;;) {
    if (log.committing) {
      sleep(&log, log.lock);
      continue;
    }
    // Could every operation in progress, and this one, still write its maximum?
    u32 worst = u32(log.header.n) + u32(log.outstanding + 1) * MAXOPBLOCKS;
    if (worst > log.capacity) {
      sleep(&log, log.lock);
      continue;
    }
    log.outstanding++;
    return;
  }
}

void end_op() {
  bool do_commit = false;
  {
    SpinGuard g(log.lock);
    if (log.outstanding <= 0) panic("end_op: no operation in progress");
    if (log.committing) panic("end_op: operation ended during a commit");
    log.outstanding--;
    if (log.outstanding == 0) {
      do_commit = true;
      log.committing = true;
    } else {
      // This operation's reservation is returned; a waiting begin_op may now fit.
      wakeup(&log);
    }
  }
  if (!do_commit) return;

  // Commit without the spinlock: it sleeps on disk I/O. `committing` keeps everyone else
  // out of the log meanwhile.
  commit();
  SpinGuard g(log.lock);
  log.committing = false;
  wakeup(&log);
}

void log_write(Buf *b) {
  SpinGuard g(log.lock);
  if (log.outstanding < 1) panic("log_write: block %u written outside a transaction", b->blockno);
  for (int i = 0; i < log.header.n; i++) {
    if (u32(log.header.block[i]) == b->blockno) return;  // already in this transaction
  }
  if (u32(log.header.n) >= log.capacity) panic("log_write: transaction too big");
  log.header.block[log.header.n++] = static_cast<i32>(b->blockno);
  bpin(b);  // keep the changed buffer cached until commit writes it home
}
