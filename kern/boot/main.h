// What the boot hart learns from the device tree before anything else runs
// (kern/boot/main.cc).
#pragma once

#include "lib/types.h"

extern u64 phys_end;  // the end of RAM
