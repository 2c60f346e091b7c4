// The export disk: a second virtio block device for copying large files (profiles) out of
// the running system to the host quickly.
//
// QEMU is given a second raw drive (virtio-mmio slot 1). The kernel exposes it as the device
// file /dev/export (major EXPORT_MAJOR, minor 0): reading or writing it at byte offset `off`
// reads or writes the drive's bytes at `off`, with no file system. Without the drive, every
// read and write fails with -1.
//
// The container format used by expcopy (user/bin/expcopy.cc) and tools/profget
// (little-endian):
//   bytes [0, 4096): header: magic "TERNEXP1", u64 length, u32 crc32 (IEEE, of the data),
//                    u32 reserved, char name[64] (NUL-terminated)
//   bytes [4096, 4096 + length): the data
#pragma once

#include "majors.h"

#define EXPORT_HEADER_SIZE 4096
#define EXPORT_MAGIC "TERNEXP1"
