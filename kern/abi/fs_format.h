// The on-disk file system format, shared by the kernel (kern/fs) and mkfs (mkfs/).
//
// This is xv6's format, so images made by either side work on the other:
//
//   [ boot | super | log header + log blocks | inode blocks | free bitmap | data blocks ]
//     0      1       sb.logstart               sb.inodestart  sb.bmapstart
//
// Blocks are BSIZE bytes. Every integer on disk is little-endian, which is what both the
// RISC-V kernel and an x86-64 host use natively, so the structs below are read and written
// directly. The static_asserts pin every layout.
#pragma once

#include <stdint.h>

#include "param.h"

namespace fsfmt {

inline constexpr uint32_t ROOTINO = 1;   // root i-number
inline constexpr uint32_t BSIZE = 1024;  // block size
inline constexpr uint32_t FSMAGIC = 0x10203040;

struct SuperBlock {
  uint32_t magic;       // Must be FSMAGIC
  uint32_t size;        // Size of file system image (blocks)
  uint32_t nblocks;     // Number of data blocks
  uint32_t ninodes;     // Number of inodes.
  uint32_t nlog;        // Number of log blocks
  uint32_t logstart;    // Block number of first log block
  uint32_t inodestart;  // Block number of first inode block
  uint32_t bmapstart;   // Block number of first free map block
};
static_assert(sizeof(SuperBlock) == 32);

inline constexpr uint32_t NDIRECT = 12;
inline constexpr uint32_t NINDIRECT = BSIZE / sizeof(uint32_t);
inline constexpr uint32_t MAXFILE = NDIRECT + NINDIRECT;  // in blocks

// Inode types (stat.h gives user programs the last three by the same names).
inline constexpr int16_t T_FREE = 0;
inline constexpr int16_t T_DIR = 1;
inline constexpr int16_t T_FILE = 2;
inline constexpr int16_t T_DEVICE = 3;

// On-disk inode structure.
struct DiskInode {
  int16_t type;                 // File type (0 = free)
  int16_t major;                // Major device number (T_DEVICE only)
  int16_t minor;                // Minor device number (T_DEVICE only)
  int16_t nlink;                // Number of links to inode in file system
  uint32_t size;                // Size of file (bytes)
  uint32_t addrs[NDIRECT + 1];  // Data block addresses; the last is the indirect block
};
static_assert(sizeof(DiskInode) == 64);

inline constexpr uint32_t IPB = BSIZE / sizeof(DiskInode);  // inodes per block
inline constexpr uint32_t BPB = BSIZE * 8;                  // bitmap bits per block

// Block containing inode i.
constexpr uint32_t inode_block(uint32_t inum, const SuperBlock &sb) {
  return inum / IPB + sb.inodestart;
}
// Block of free map containing bit for block b.
constexpr uint32_t bitmap_block(uint32_t b, const SuperBlock &sb) { return b / BPB + sb.bmapstart; }

// Directory is a file containing a sequence of DirEntry structures.
inline constexpr uint32_t DIRSIZ = 14;

struct DirEntry {
  uint16_t inum;      // 0 = free slot
  char name[DIRSIZ];  // not NUL-terminated when all 14 bytes are used
};
static_assert(sizeof(DirEntry) == 16);

// The first log block: how many blocks the committed transaction holds and where each goes.
struct LogHeader {
  int32_t n;
  int32_t block[LOGSIZE];
};
static_assert(sizeof(LogHeader) <= BSIZE);

}  // namespace fsfmt
