// The buffer cache: in-memory copies of disk blocks (kern/fs/bio.cc).
#pragma once

#include "abi/fs_format.h"
#include "lib/sleeplock.h"

struct Buf {
  bool valid = false;  // has data been read from disk?
  bool disk = false;   // does disk "own" buf? (set by the driver while I/O is in flight)
  u32 dev = 0;
  u32 blockno = 0;
  Sleeplock lock{"buffer"};
  u32 refcnt = 0;
  Buf *prev = nullptr;  // LRU cache list
  Buf *next = nullptr;
  alignas(8) u8 data[fsfmt::BSIZE];
};

void binit();
// A locked buffer holding block `blockno` of `dev`.
Buf *bread(u32 dev, u32 blockno);
void bwrite(Buf *b);  // caller holds b->lock
void brelse(Buf *b);
void bpin(Buf *b);    // keep in cache (the log holds it until commit)
void bunpin(Buf *b);

// The disk driver (kern/dev/virtio_blk.cc).
// Device numbers of the disks: the root file system, and the optional export disk.
inline constexpr u32 EXPORTDEV = 2;
void virtio_disk_init();
void virtio_disk_rw(Buf *b, bool write);
// Blocks [blockno, blockno + nblocks) of dev to or from `data`, in one request and without
// the buffer cache. The device is given `data` as it stands, so it must be physically
// contiguous and direct-mapped: a static kernel array (or one kalloc page), not a stack.
void virtio_disk_rw_blocks(u32 dev, u32 blockno, void *data, u32 nblocks, bool write);
void virtio_disk_intr(int slot);  // slot 0: IRQ VIRTIO0_IRQ, slot 1: VIRTIO1_IRQ
u64 virtio_disk_blocks(u32 dev);  // size of a disk in blocks, 0 if absent
