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
void bpin(Buf *b);  // keep in cache (the log holds it until commit)
void bunpin(Buf *b);
