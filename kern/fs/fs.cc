// The file system: how the pieces fit, the superblock, and the free-block bitmap.
//
// The file system is built in layers, each using only the one below it:
//
//   names       path.cc     "/a/b/c" -> an inode, by looking up one element at a time
//   directories dir.cc      a directory is a file of fixed-size (inum, name) entries
//   inodes      inode.cc    a file: its type, size and the list of blocks holding its bytes
//   log         log.cc      groups the block writes of a system call into one crash-safe unit
//   buffers     bio.cc      a cache of disk blocks, one locked copy per block
//   disk        dev/virtio_blk.cc
//
// On top sit open files (file.cc), pipes (pipe.cc) and the system calls (sysfile.cc).
//
// The disk is an array of BSIZE-byte blocks laid out as fs_format.h describes: the
// superblock (block 1) records where each region starts, and is read once at boot by
// fsinit(). The free-block bitmap has one bit per block of the disk, set when the block
// is in use; mkfs sets the bits of all the metadata blocks, so only data blocks are ever
// found free. Allocation and freeing change bitmap blocks through the log, like every
// other change, so a crash cannot leave a block both free and in use.
//
// fsinit() also sweeps up after a crash: once the log is replayed, it frees the files that
// were unlinked but still open when the machine stopped.

#include "fs/fs.h"

#include "fs/buf.h"
#include "fs/log.h"
#include "lib/printf.h"
#include "lib/string.h"

// The superblock of the root device. Written once by fsinit, read-only afterwards, so it
// needs no lock.
fsfmt::SuperBlock sb;

// Free the inodes that are allocated but named by no directory. A file that is unlinked
// while still open lives on until its last close (see inode.cc); if the machine stops
// before that, the inode and its blocks would stay allocated forever, since nothing refers
// to them any more. At boot no file is open, so every such inode is garbage.
static void reclaim_orphans(u32 dev) {
  int freed = 0;
  for (u32 inum = 1; inum < sb.ninodes; inum++) {
    Buf *b = bread(dev, fsfmt::inode_block(inum, sb));
    const auto *dip = reinterpret_cast<const fsfmt::DiskInode *>(b->data) + inum % fsfmt::IPB;
    bool orphan = dip->type != fsfmt::T_FREE && dip->nlink == 0;
    brelse(b);
    if (!orphan) continue;

    begin_op();
    if (Inode *ip = iget(dev, inum)) {
      ilock(ip);  // read it in: iput frees only an inode it knows to have no links
      iunlock(ip);
      iput(ip);
      freed++;
    }
    end_op();
  }
  if (freed > 0) kprintf("fs: freed %d orphaned inodes\n", freed);
}

void fsinit(u32 dev) {
  Buf *b = bread(dev, 1);
  memmove(&sb, b->data, sizeof(sb));
  brelse(b);
  if (sb.magic != fsfmt::FSMAGIC) {
    panic("fsinit: bad superblock magic %x (expected %x): not a file system image", sb.magic,
          fsfmt::FSMAGIC);
  }
  initlog(dev, sb);
  reclaim_orphans(dev);
}

// Fill block blockno with zeros, through the log.
static void zero_block(u32 dev, u32 blockno) {
  Buf *b = bread(dev, blockno);
  memset(b->data, 0, sizeof(b->data));
  log_write(b);
  brelse(b);
}

u32 balloc(u32 dev) {
  for (u32 base = 0; base < sb.size; base += fsfmt::BPB) {
    Buf *b = bread(dev, fsfmt::bitmap_block(base, sb));
    for (u32 bit = 0; bit < fsfmt::BPB && base + bit < sb.size; bit++) {
      u8 &byte = b->data[bit / 8];
      if (byte == 0xff) {
        bit += 7;  // all eight blocks of this byte are taken
        continue;
      }
      u8 mask = static_cast<u8>(1u << (bit % 8));
      if ((byte & mask) == 0) {
        byte |= mask;
        log_write(b);
        brelse(b);
        // A new block must not show the old contents of whatever file last used it.
        zero_block(dev, base + bit);
        return base + bit;
      }
    }
    brelse(b);
  }
  return 0;  // the disk is full: the caller reports the failure
}

void bfree(u32 dev, u32 blockno) {
  if (blockno == 0 || blockno >= sb.size) panic("bfree: block %u outside the disk", blockno);
  Buf *b = bread(dev, fsfmt::bitmap_block(blockno, sb));
  u32 bit = blockno % fsfmt::BPB;
  u8 mask = static_cast<u8>(1u << (bit % 8));
  if ((b->data[bit / 8] & mask) == 0) panic("bfree: block %u is already free", blockno);
  b->data[bit / 8] &= static_cast<u8>(~mask);
  log_write(b);
  brelse(b);
}
