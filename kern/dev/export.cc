// The export disk: /dev/export, a window onto a second, raw virtio disk.
//
// Profiles can be megabytes, and the console moves about 70 KB a second. To get a file out
// of the running system quickly, QEMU is given a second drive backed by a host file
// (tools/profget does this) and a program writes the file's bytes to /dev/export
// (user/expcopy.cc). The host then reads them straight from its file. kern/abi/export.h
// describes the little container format the two sides agree on; the kernel knows nothing of
// it: reading or writing /dev/export at offset `off` reads or writes the disk's bytes at
// `off`, through the buffer cache, without the file system or its log. Without the drive
// every access fails.

#include "abi/export.h"
#include "fs/buf.h"
#include "fs/file.h"
#include "proc/proc.h"

namespace {

// Move n bytes between the disk at byte offset off and the caller's buffer, one block at a
// time (read-modify-write for a partial block). Returns bytes moved or -1.
int transfer(bool write, bool user, u64 addr, u32 off, int n) {
  u64 size = virtio_disk_blocks(EXPORTDEV) * fsfmt::BSIZE;
  if (size == 0 || n < 0) return -1;
  if (off >= size) return write ? -1 : 0;
  if (static_cast<u64>(off) + static_cast<u64>(n) > size) n = static_cast<int>(size - off);
  int done = 0;
  while (done < n) {
    u32 pos = off + static_cast<u32>(done);
    u32 in_block = pos % fsfmt::BSIZE;
    u32 m = fsfmt::BSIZE - in_block;
    if (m > static_cast<u32>(n - done)) m = static_cast<u32>(n - done);
    // A whole block that is about to be overwritten need not be read first.
    bool whole = write && in_block == 0 && m == fsfmt::BSIZE;
    Buf *b = whole ? bget_overwrite(EXPORTDEV, pos / fsfmt::BSIZE) : bread(EXPORTDEV, pos / fsfmt::BSIZE);
    int r = write ? either_copyin(b->data + in_block, user, addr + done, m)
                  : either_copyout(user, addr + done, b->data + in_block, m);
    if (r == 0 && write) bwrite(b);
    if (r < 0 && whole) b->valid = false;  // half-filled: the cache must not keep it
    brelse(b);
    if (r < 0) return done > 0 ? done : -1;
    done += static_cast<int>(m);
  }
  return done;
}

int export_read(int, bool user, u64 addr, u32 off, int n) { return transfer(false, user, addr, off, n); }
int export_write(int, bool user, u64 addr, u32 off, int n) { return transfer(true, user, addr, off, n); }

}  // namespace

void exportinit() {
  devsw[EXPORT_MAJOR].read = export_read;
  devsw[EXPORT_MAJOR].write = export_write;
}
