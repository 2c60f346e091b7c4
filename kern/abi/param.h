// Limits shared by the kernel, user programs and mkfs.
//
// The first group is part of the xv6 ABI: user programs can observe them, so they keep
// xv6's values. The second group sizes kernel tables.
#pragma once

// Seen by user programs.
#define NPROC 64     // maximum number of processes
#define NOFILE 16    // open files per process
#define NFILE 100    // open files per system
#define MAXARG 32    // max exec arguments
#define MAXPATH 128  // maximum file path name

// Kernel-internal sizing.
#define NCPU 8                     // maximum number of harts
#define NINODE 50                  // maximum number of active in-memory inodes
#define NDEV 10                    // maximum major device number
#define ROOTDEV 1                  // device number of file system root disk
#define MAXOPBLOCKS 10             // max # of blocks any FS op writes
#define LOGSIZE (MAXOPBLOCKS * 3)  // max data blocks in on-disk log
// NBUF > LOGSIZE: a full transaction pins LOGSIZE buffers in the cache.
#define NBUF 64      // size of disk block cache
#define FSSIZE 2000  // size of file system in blocks (mkfs default)
#define NINODES 200  // number of inodes mkfs creates
