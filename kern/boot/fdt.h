// Reading the flattened device tree that the firmware passes in a1 at boot.
#pragma once

#include "lib/types.h"

// End of the RAM region that contains the kernel (base + size of the /memory node's first
// range), or 0 if the tree cannot be read.
u64 fdt_memory_end(u64 dtb);

// The kernel command line (/chosen/bootargs, set with QEMU's -append), or "" if none.
const char *fdt_bootargs(u64 dtb);

// A range of physical memory [start, end).
struct PhysRange {
  u64 start = 0;
  u64 end = 0;
};

// Where QEMU's -initrd put its file: /chosen's linux,initrd-start and linux,initrd-end (each
// a value of one or two 32-bit cells; QEMU 7.2 writes one). {0, 0} if there is no initrd or
// the properties cannot be read.
PhysRange fdt_initrd(u64 dtb);
