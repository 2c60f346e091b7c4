// The RAM disk: the root file system kept in memory that QEMU loaded with -initrd
// (kern/dev/ramdisk.cc).
#pragma once

#include "abi/fs_format.h"
#include "lib/types.h"

struct Buf;

// Why the memory [start, end) cannot be the root file system's disk, or nullptr if it can.
// [ram_start, ram_end) is the RAM the kernel may use, and the device tree at `dtb` must not
// start inside the disk (its length is not checked: a tree that starts below the disk and
// runs into it passes). The disk must be a whole number of blocks, and its superblock
// (block 1) must carry the file system's magic number and claim no more blocks than there
// are. Only the superblock is read, and only once the range is known to be inside RAM and
// long enough to hold it.
inline const char *ramdisk_problem(u64 start, u64 end, u64 ram_start, u64 ram_end, u64 dtb) {
  using namespace fsfmt;
  if (end <= start) return "it is empty";
  if (start < ram_start || end > ram_end) return "it lies outside the kernel's free RAM";
  if (dtb >= start && dtb < end) return "the device tree lies inside it";
  u64 bytes = end - start;
  if (bytes % BSIZE != 0) return "its length is not a whole number of blocks";
  if (bytes < 2 * BSIZE) return "it is too short to hold a superblock";
  const auto *sb = reinterpret_cast<const SuperBlock *>(start + BSIZE);
  if (sb->magic != FSMAGIC) return "it has no file-system superblock";
  if (sb->size > bytes / BSIZE) return "it is smaller than its superblock says";
  return nullptr;
}

// Decide, once at boot before kinit(), whether the initrd [start, end) ({0, 0}: none) is the
// root disk, and say which disk the kernel uses in one `tern: disk:` line.
void ramdisk_init(u64 start, u64 end, u64 ram_start, u64 ram_end, u64 dtb);
// The RAM disk's memory, to be kept out of the page allocator; {0, 0} when there is none.
u64 ramdisk_start();
u64 ramdisk_end();

// Move one block of b->dev between the disk and b->data: the RAM disk for the root device
// when there is one, else the virtio driver. The buffer cache and the log call this.
void disk_rw(Buf *b, bool write);
