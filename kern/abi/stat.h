// struct stat as fstat(2) fills it: 24 bytes, the xv6 layout.
#pragma once

#define T_DIR 1     // Directory
#define T_FILE 2    // File
#define T_DEVICE 3  // Device

struct stat {
  int dev;               // File system's disk device
  unsigned int ino;      // Inode number
  short type;            // Type of file
  short nlink;           // Number of links to file
  unsigned long size;    // Size of file in bytes
};

#ifdef __cplusplus
static_assert(sizeof(struct stat) == 24, "struct stat is part of the xv6 ABI");
#endif
