// struct stat as fstat(2) fills it: 24 bytes, the xv6 layout.
#pragma once

#include "fs_format.h"

// The types of file that `type` reports are the inode types of the disk format.
using fsfmt::T_DEVICE;
using fsfmt::T_DIR;
using fsfmt::T_FILE;

struct stat {
  int dev;             // File system's disk device
  unsigned int ino;    // Inode number
  short type;          // Type of file: T_DIR, T_FILE or T_DEVICE
  short nlink;         // Number of links to file
  unsigned long size;  // Size of file in bytes
};

static_assert(sizeof(struct stat) == 24, "struct stat is part of the xv6 ABI");
