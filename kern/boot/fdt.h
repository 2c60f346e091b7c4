// Reading the flattened device tree that the firmware passes in a1 at boot.
#pragma once

#include "lib/types.h"

// End of the RAM region that contains the kernel (base + size of the /memory node's first
// range), or 0 if the tree cannot be read.
u64 fdt_memory_end(u64 dtb);

// The kernel command line (/chosen/bootargs, set with QEMU's -append), or "" if none.
const char *fdt_bootargs(u64 dtb);
