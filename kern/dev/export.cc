// The export disk: /dev/export, a window onto a second, raw virtio disk.
//
// Profiles can be megabytes, and the console moves about 70 KB a second. To get a file out
// of the running system quickly, QEMU is given a second drive backed by a host file
// (tools/profget does this) and a program writes the file's bytes to /dev/export
// (user/bin/expcopy.cc). The host then reads them straight from its file. kern/abi/export.h
// describes the little container format the two sides agree on; the kernel knows nothing of
// it: reading or writing /dev/export at offset `off` reads or writes the disk's bytes at
// `off`, without the file system or its log. Without the drive every access fails.
//
// Speed is the point of this device, and what a disk transfer costs under QEMU is mostly a
// fixed price per request: the doorbell traps into QEMU, the host does the I/O, an interrupt
// comes back and the waiting process is woken, a few milliseconds in all on a busy host.
// One request per 1 KiB block moved about 1 MB a second. So a read or write here is cut
// into rounds of up to STAGE_BYTES, and each round is one disk request of up to
// STAGE_BLOCKS blocks through a staging buffer:
//
//   write:  copy the caller's bytes into the staging buffer, then write its blocks;
//   read:   read the blocks into the staging buffer, then copy the caller's bytes out.
//
// The staging buffer is a static array, so it is physically contiguous (the kernel maps RAM
// at its physical addresses) and the device can be handed it whole. A write that covers
// only part of its first or last block reads that block in first, so the bytes around the
// write survive (read-modify-write); everything in between is overwritten and never read.
//
// With 256 KiB rounds a 5 MB file is 20 requests, and writing it takes about a tenth of a
// second; rendering /proc/profile for expcopy to read takes longer than that.
//
// These blocks do not go through the buffer cache: the export disk holds no file system,
// nothing else reads it, and a cached copy could only go stale behind the staging buffer's
// back. The staging buffer's sleeplock makes each round, read-modify-write included, one
// indivisible step, as the buffer cache's per-block locks did before.

#include "dev/export.h"

#include "abi/export.h"
#include "abi/fs_format.h"
#include "dev/virtio_blk.h"
#include "fs/file.h"
#include "lib/sleeplock.h"
#include "proc/proc.h"

namespace {

constexpr u32 STAGE_BLOCKS = 256;
constexpr u32 STAGE_BYTES = STAGE_BLOCKS * fsfmt::BSIZE;  // 256 KiB

// Two objects, so that the buffer, all zeros, stays in .bss rather than adding 256 KiB to
// the kernel image beside the lock's name.
constinit Sleeplock staging_lock("export");
u8 staging_data[STAGE_BYTES];  // protected by staging_lock

// Move n bytes between the disk at byte offset off and the caller's buffer. Returns bytes
// moved, or -1 if nothing could be (no disk, or a bad address at once).
int transfer(bool write, bool user, u64 addr, u32 off, int n) {
  u64 size = virtio_disk_blocks(EXPORTDEV) * fsfmt::BSIZE;
  if (size > (u64(1) << 32) - STAGE_BYTES) size = (u64(1) << 32) - STAGE_BYTES;  // offsets are u32
  if (size == 0 || n < 0) return -1;
  if (off >= size) return write ? -1 : 0;
  if (static_cast<u64>(off) + static_cast<u64>(n) > size) n = static_cast<int>(size - off);

  SleepGuard g(staging_lock);
  int done = 0;
  while (done < n) {
    u32 pos = off + static_cast<u32>(done);
    u32 first = pos / fsfmt::BSIZE;  // the round's first block
    u32 skip = pos % fsfmt::BSIZE;   // bytes of that block before pos
    u32 m = STAGE_BYTES - skip;      // bytes this round
    if (m > static_cast<u32>(n - done)) m = static_cast<u32>(n - done);
    u32 nblocks = (skip + m + fsfmt::BSIZE - 1) / fsfmt::BSIZE;
    u8 *at = staging_data + skip;
    int r;
    if (write) {
      u32 last = nblocks - 1;
      bool partial_last = (skip + m) % fsfmt::BSIZE != 0;
      // Read in the blocks the write covers only in part (once, if that is one block).
      if (skip != 0) virtio_disk_rw_blocks(EXPORTDEV, first, staging_data, 1, false);
      if (partial_last && !(last == 0 && skip != 0)) {
        virtio_disk_rw_blocks(EXPORTDEV, first + last, staging_data + last * fsfmt::BSIZE, 1,
                              false);
      }
      r = either_copyin(at, user, addr + static_cast<u64>(done), m);
      if (r == 0) virtio_disk_rw_blocks(EXPORTDEV, first, staging_data, nblocks, true);
    } else {
      virtio_disk_rw_blocks(EXPORTDEV, first, staging_data, nblocks, false);
      r = either_copyout(user, addr + static_cast<u64>(done), at, m);
    }
    if (r < 0) return done > 0 ? done : -1;
    done += static_cast<int>(m);
  }
  return done;
}

int export_read(int, bool user, u64 addr, u32 off, int n, u64 &) {
  return transfer(false, user, addr, off, n);
}
int export_write(int, bool user, u64 addr, u32 off, int n) {
  return transfer(true, user, addr, off, n);
}

}  // namespace

void exportinit() {
  devsw[EXPORT_MAJOR].read = export_read;
  devsw[EXPORT_MAJOR].write = export_write;
}
