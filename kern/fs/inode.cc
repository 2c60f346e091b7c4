// Inodes: files as the disk knows them.
//
// An inode describes one file, directory or device without naming it (names live in
// directories, dir.cc). On disk it is a 64-byte fsfmt::DiskInode in the inode area, found
// by its number: type, link count, size, and the block numbers that hold its bytes.
// Twelve are direct; the thirteenth names an indirect block of 256 more, so a file can
// span MAXFILE = 268 blocks:
//
//   addrs[0..11]  ->  data blocks 0..11
//   addrs[12]     ->  indirect block: [ data block 12, data block 13, ... data block 267 ]
//
// In memory the kernel keeps a table of NINODE Inode structs, one for each inode that is
// in use by the kernel (an open file, a current directory, a path being looked up). Two
// counts must not be confused:
//
//   ref    how many kernel pointers refer to the in-memory Inode (iget/idup add one, iput
//          drops one). When it reaches 0 the table slot can be reused for another inode.
//   nlink  how many directory entries name the inode on disk. When both nlink and ref
//          reach 0 the file is gone: iput frees its blocks and marks the inode free.
//          (An unlinked file that is still open stays readable until its last close.)
//
// The life of an in-memory inode:  ip = iget()  ->  ilock(ip)  ... use ... iunlock(ip)
// -> iput(ip). iget only reserves the slot; ilock takes the inode's sleeplock and reads the
// disk inode on first use. Keeping the two apart lets a path lookup hold a reference to a
// directory for a long time while locking it only briefly, which avoids deadlocks.
//
// Locking: the table's spinlock protects every slot's dev, inum and ref; each inode's
// sleeplock protects its valid flag and its copy of the disk inode, and serialises
// reads and writes of the file's contents. Everything that writes (ialloc, iupdate,
// itrunc, writei, and iput when it frees) must run inside a log transaction.

#include "abi/stat.h"
#include "fs/buf.h"
#include "fs/fs.h"
#include "fs/log.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "proc/proc.h"

namespace {

using fsfmt::BSIZE;
using fsfmt::NDIRECT;
using fsfmt::NINDIRECT;

struct InodeTable {
  Spinlock lock{"itable"};
  Inode inodes[NINODE] = {};
};
constinit InodeTable itable;

// The disk inode inum inside b, the buffer of its inode block.
fsfmt::DiskInode *disk_inode(Buf *b, u32 inum) {
  return reinterpret_cast<fsfmt::DiskInode *>(b->data) + inum % fsfmt::IPB;
}

u32 min(u32 a, u32 b) { return a < b ? a : b; }

// The disk block holding block `bn` of ip's contents. With `grow`, a missing block is
// allocated and recorded in the inode or in the indirect block (the caller must then
// iupdate ip, and be inside a transaction). Returns 0 for a block that does not exist
// (without `grow`) or could not be allocated (the disk is full). Caller holds ip->lock.
u32 block_of(Inode *ip, u32 bn, bool grow) {
  if (bn < NDIRECT) {
    if (ip->addrs[bn] == 0 && grow) ip->addrs[bn] = balloc(ip->dev);
    return ip->addrs[bn];
  }
  bn -= NDIRECT;
  if (bn >= NINDIRECT) panic("block_of: block %u is beyond the largest file", bn + NDIRECT);

  u32 &indirect = ip->addrs[NDIRECT];
  if (indirect == 0) {
    if (!grow) return 0;
    indirect = balloc(ip->dev);
    if (indirect == 0) return 0;
  }
  Buf *b = bread(ip->dev, indirect);
  u32 *slots = reinterpret_cast<u32 *>(b->data);
  u32 addr = slots[bn];
  if (addr == 0 && grow) {
    addr = balloc(ip->dev);
    if (addr != 0) {
      slots[bn] = addr;
      log_write(b);
    }
  }
  brelse(b);
  return addr;
}

// What a block the file never wrote reads as. Files made by write() have no such holes,
// but a file system from elsewhere might.
constexpr u8 zero_block[BSIZE] = {};

}  // namespace

void iinit() {
  // The table is initialised statically (constinit above); nothing is left to do at boot.
}

Inode *iget(u32 dev, u32 inum) {
  SpinGuard g(itable.lock);
  Inode *unused = nullptr;
  for (Inode &ip : itable.inodes) {
    if (ip.ref > 0 && ip.dev == dev && ip.inum == inum) {
      ip.ref++;
      return &ip;
    }
    if (unused == nullptr && ip.ref == 0) unused = &ip;
  }
  if (unused == nullptr) return nullptr;  // every slot is in use: the caller fails with -1
  unused->dev = dev;
  unused->inum = inum;
  unused->ref = 1;
  unused->valid = false;
  return unused;
}

Inode *ialloc(u32 dev, i16 type) {
  for (u32 inum = 1; inum < sb.ninodes; inum++) {
    Buf *b = bread(dev, fsfmt::inode_block(inum, sb));
    fsfmt::DiskInode *dip = disk_inode(b, inum);
    if (dip->type == fsfmt::T_FREE) {
      // Take the in-memory slot first, so that a full table leaves the disk untouched.
      Inode *ip = iget(dev, inum);
      if (ip != nullptr) {
        memset(dip, 0, sizeof(*dip));
        dip->type = type;
        log_write(b);  // marks it allocated
      }
      brelse(b);
      return ip;
    }
    brelse(b);
  }
  return nullptr;  // no free inodes
}

Inode *idup(Inode *ip) {
  SpinGuard g(itable.lock);
  ip->ref++;
  return ip;
}

void ilock(Inode *ip) {
  if (ip == nullptr || ip->ref < 1) panic("ilock: inode is not referenced");
  ip->lock.acquire();
  if (ip->valid) return;

  Buf *b = bread(ip->dev, fsfmt::inode_block(ip->inum, sb));
  const fsfmt::DiskInode *dip = disk_inode(b, ip->inum);
  ip->type = dip->type;
  ip->major = dip->major;
  ip->minor = dip->minor;
  ip->nlink = dip->nlink;
  ip->size = dip->size;
  memmove(ip->addrs, dip->addrs, sizeof(ip->addrs));
  brelse(b);
  ip->valid = true;
  if (ip->type == fsfmt::T_FREE) panic("ilock: inode %u is free on disk", ip->inum);
}

void iunlock(Inode *ip) {
  if (ip == nullptr || ip->ref < 1 || !ip->lock.holding()) panic("iunlock: inode not locked");
  ip->lock.release();
}

void iupdate(Inode *ip) {
  Buf *b = bread(ip->dev, fsfmt::inode_block(ip->inum, sb));
  fsfmt::DiskInode *dip = disk_inode(b, ip->inum);
  dip->type = ip->type;
  dip->major = ip->major;
  dip->minor = ip->minor;
  dip->nlink = ip->nlink;
  dip->size = ip->size;
  memmove(dip->addrs, ip->addrs, sizeof(ip->addrs));
  log_write(b);
  brelse(b);
}

void iput(Inode *ip) {
  {
    SpinGuard g(itable.lock);
    // Free the file only when this is the last reference and no directory names it. If
    // so, no other process can reach ip: no path leads to it, and nobody else holds a
    // pointer. So its sleeplock is free and the work below can be done without the
    // table's spinlock (it sleeps on the disk).
    bool last = ip->ref == 1 && ip->valid && ip->nlink == 0;
    if (!last) {
      if (ip->ref < 1) panic("iput: inode %u has no references", ip->inum);
      ip->ref--;
      return;
    }
  }

  ip->lock.acquire();
  itrunc(ip);
  ip->type = fsfmt::T_FREE;
  iupdate(ip);
  ip->valid = false;
  ip->lock.release();

  SpinGuard g(itable.lock);
  ip->ref--;
}

void iunlockput(Inode *ip) {
  iunlock(ip);
  iput(ip);
}

void itrunc(Inode *ip) {
  for (u32 i = 0; i < NDIRECT; i++) {
    if (ip->addrs[i] != 0) {
      bfree(ip->dev, ip->addrs[i]);
      ip->addrs[i] = 0;
    }
  }
  if (ip->addrs[NDIRECT] != 0) {
    Buf *b = bread(ip->dev, ip->addrs[NDIRECT]);
    const u32 *slots = reinterpret_cast<const u32 *>(b->data);
    for (u32 i = 0; i < NINDIRECT; i++) {
      if (slots[i] != 0) bfree(ip->dev, slots[i]);
    }
    brelse(b);
    bfree(ip->dev, ip->addrs[NDIRECT]);
    ip->addrs[NDIRECT] = 0;
  }
  ip->size = 0;
  iupdate(ip);
}

void stati(Inode *ip, struct stat *st) {
  st->dev = static_cast<int>(ip->dev);
  st->ino = ip->inum;
  st->type = ip->type;
  st->nlink = ip->nlink;
  st->size = ip->size;
}

int readi(Inode *ip, bool user_dst, u64 dst, u32 off, u32 n) {
  if (off > ip->size || off + n < off) return 0;
  n = min(n, ip->size - off);

  u32 done = 0;
  while (done < n) {
    u32 in_block = off % BSIZE;
    u32 m = min(n - done, BSIZE - in_block);
    u32 blockno = block_of(ip, off / BSIZE, false);
    int r;
    if (blockno == 0) {
      r = either_copyout(user_dst, dst, zero_block + in_block, m);
    } else {
      Buf *b = bread(ip->dev, blockno);
      r = either_copyout(user_dst, dst, b->data + in_block, m);
      brelse(b);
    }
    if (r < 0) return -1;
    done += m;
    off += m;
    dst += m;
  }
  return static_cast<int>(done);
}

int writei(Inode *ip, bool user_src, u64 src, u32 off, u32 n) {
  constexpr u32 MAX_SIZE = fsfmt::MAXFILE * BSIZE;
  // Writing may extend the file, but not leave a gap after its end.
  if (off > ip->size || off + n < off) return -1;
  if (n == 0) return 0;
  if (off >= MAX_SIZE) return -1;
  n = min(n, MAX_SIZE - off);  // a write that would cross the size limit stops at it

  u32 done = 0;
  while (done < n) {
    u32 in_block = off % BSIZE;
    u32 m = min(n - done, BSIZE - in_block);
    u32 blockno = block_of(ip, off / BSIZE, true);
    if (blockno == 0) break;  // the disk is full
    Buf *b = bread(ip->dev, blockno);
    int r = either_copyin(b->data + in_block, user_src, src, m);
    // Even a failed copy may have changed part of the buffer; logging it keeps the cache
    // and the disk in agreement.
    log_write(b);
    brelse(b);
    if (r < 0) break;
    done += m;
    off += m;
    src += m;
  }

  if (off > ip->size) ip->size = off;
  // Written even when the size did not change: block_of may have added blocks to addrs.
  iupdate(ip);
  return static_cast<int>(done);
}
