// Files on disk: inodes, directories and path names (kern/fs/fs.cc).
#pragma once

#include "abi/fs_format.h"
#include "lib/sleeplock.h"

struct stat;

// In-memory copy of an inode.
struct Inode {
  u32 dev = 0;              // Device number
  u32 inum = 0;             // Inode number
  int ref = 0;              // Reference count (protected by the inode table's lock)
  Sleeplock lock{"inode"};  // protects everything below here
  bool valid = false;       // inode has been read from disk?

  i16 type = 0;  // copy of disk inode
  i16 major = 0;
  i16 minor = 0;
  i16 nlink = 0;
  u32 size = 0;
  u32 addrs[fsfmt::NDIRECT + 1] = {};
};

extern fsfmt::SuperBlock sb;

void fsinit(u32 dev);  // read superblock, replay the log; needs a process context
Inode *ialloc(u32 dev, i16 type);
Inode *idup(Inode *ip);
void iinit();
void ilock(Inode *ip);
void iunlock(Inode *ip);
void iput(Inode *ip);
void iunlockput(Inode *ip);
void iupdate(Inode *ip);
void itrunc(Inode *ip);
// Read/write n bytes at offset off; user_dst/user_src says whether dst/src is a user address
// of the current process. Return bytes moved, or -1.
int readi(Inode *ip, bool user_dst, u64 dst, u32 off, u32 n);
int writei(Inode *ip, bool user_src, u64 src, u32 off, u32 n);
void stati(Inode *ip, struct stat *st);

int namecmp(const char *s, const char *t);
// The inode number of name's entry in directory dp (locked), with the entry's offset in
// *poff; 0 when dp holds no such name. Needs no in-memory inode, so it never fails.
u32 dirfind(Inode *dp, const char *name, u32 *poff);
// The inode named name in dp (locked), referenced and unlocked; nullptr when dp holds no
// such name or when the inode table is full (use dirfind to tell the two apart).
Inode *dirlookup(Inode *dp, const char *name, u32 *poff);
int dirlink(Inode *dp, const char *name, u32 inum);
Inode *namei(const char *path);
Inode *nameiparent(const char *path, char *name);

// Used between the files of the file system (additions for kern/fs/*.cc).
// The in-memory inode for (dev, inum), unlocked and not read from disk; nullptr when the
// inode table is full.
Inode *iget(u32 dev, u32 inum);
// The free-block bitmap (kern/fs/fs.cc). Both must be called inside a transaction.
u32 balloc(u32 dev);  // a zeroed data block, or 0 when the disk is full
void bfree(u32 dev, u32 blockno);
// Does directory dp (locked) hold nothing but "." and ".."?
bool dir_is_empty(Inode *dp);
