// The disk driver (kern/dev/virtio_blk.cc): virtio block devices in the first two
// virtio-mmio slots.
#pragma once

#include "lib/types.h"

struct Buf;

// Device numbers of the disks: the root file system is ROOTDEV (abi/param.h, slot 0); the
// optional export disk (kern/dev/export.cc) is EXPORTDEV, in slot 1.
inline constexpr u32 EXPORTDEV = 2;

void virtio_disk_init();
// Move one block between b->data and the disk; sleeps until the device is done.
void virtio_disk_rw(Buf *b, bool write);
// Blocks [blockno, blockno + nblocks) of dev to or from `data`, in one request and without
// the buffer cache. The device is given `data` as it stands, so it must be physically
// contiguous and direct-mapped: a static kernel array (or one kalloc page), not a stack.
void virtio_disk_rw_blocks(u32 dev, u32 blockno, void *data, u32 nblocks, bool write);
void virtio_disk_intr(int slot);  // slot 0: IRQ VIRTIO0_IRQ, slot 1: VIRTIO1_IRQ
u64 virtio_disk_blocks(u32 dev);  // size of a disk in blocks, 0 if absent
