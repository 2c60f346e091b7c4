// Directories: files that map names to inode numbers.
//
// A directory is an inode of type T_DIR whose contents are an array of 16-byte
// fsfmt::DirEntry records: a 2-byte inode number and a 14-byte name. An entry with inode
// number 0 is an empty slot, left behind by unlink and reused by the next dirlink. A name
// shorter than DIRSIZ is padded with NULs; a name of exactly DIRSIZ bytes has no NUL at
// all, so names are always compared and copied with a length limit of DIRSIZ.
//
// Every directory holds "." (itself) and ".." (its parent; the root's ".." is the root).
// The link count of a directory counts the entry in its parent and the ".." entries of its
// subdirectories, but not its own "." (which would keep it alive forever).
//
// The directory's inode lock protects its entries: every function here expects the caller
// to hold it.
//
// Absent is not the same as unreachable. dirfind() answers from the entries alone, so its
// "not there" (0) is always true. dirlookup() also needs a slot in the in-memory inode
// table, and returns nullptr both when the name is absent and when the table is full; a
// caller that acts on absence (creating, linking) must ask dirfind() instead.

#include "fs/fs.h"

#include "lib/printf.h"
#include "lib/string.h"

namespace {

using fsfmt::DirEntry;

// Read the entry at byte offset off of directory dp.
DirEntry read_entry(Inode *dp, u32 off) {
  DirEntry de;
  if (readi(dp, false, reinterpret_cast<u64>(&de), off, sizeof(de)) != sizeof(de)) {
    panic("directory %u: cannot read the entry at offset %u", dp->inum, off);
  }
  return de;
}

}  // namespace

int namecmp(const char *s, const char *t) { return strncmp(s, t, fsfmt::DIRSIZ); }

u32 dirfind(Inode *dp, const char *name, u32 *poff) {
  if (dp->type != fsfmt::T_DIR) panic("dirfind: inode %u is not a directory", dp->inum);

  for (u32 off = 0; off + sizeof(DirEntry) <= dp->size; off += sizeof(DirEntry)) {
    DirEntry de = read_entry(dp, off);
    if (de.inum == 0 || namecmp(name, de.name) != 0) continue;
    if (poff != nullptr) *poff = off;
    return de.inum;
  }
  return 0;
}

Inode *dirlookup(Inode *dp, const char *name, u32 *poff) {
  u32 inum = dirfind(dp, name, poff);
  return inum == 0 ? nullptr : iget(dp->dev, inum);
}

int dirlink(Inode *dp, const char *name, u32 inum) {
  // Names are unique within a directory. Asked of the directory's entries alone: looking
  // the name up as an inode could fail for want of an in-memory inode, and that must not
  // pass for "no such name".
  if (dirfind(dp, name, nullptr) != 0) return -1;

  // Reuse the first empty slot, or append at the end.
  u32 off = 0;
  for (; off + sizeof(DirEntry) <= dp->size; off += sizeof(DirEntry)) {
    if (read_entry(dp, off).inum == 0) break;
  }

  DirEntry de{};
  strncpy(de.name, name, fsfmt::DIRSIZ);  // NUL-padded; no NUL when the name fills it
  de.inum = static_cast<u16>(inum);
  // Appending fails when the directory has reached the largest file size or the disk is
  // full; the caller then undoes its other changes.
  if (writei(dp, false, reinterpret_cast<u64>(&de), off, sizeof(de)) != sizeof(de)) return -1;
  return 0;
}

bool dir_is_empty(Inode *dp) {
  // Skip the first two entries, "." and "..".
  for (u32 off = 2 * sizeof(DirEntry); off + sizeof(DirEntry) <= dp->size;
       off += sizeof(DirEntry)) {
    if (read_entry(dp, off).inum != 0) return false;
  }
  return true;
}
