// The files under /proc: device files of major PROCFS_MAJOR (majors.h), one minor each.
// init creates any that are missing at boot, so an xv6-made image gets them too.
#pragma once

#include "majors.h"

#define PROC_MEMINFO 0  // /proc/meminfo: "free pages: N" and "total pages: N"
// /proc/cpustat: "hart H idle N" a line, N the instret count H spent with nothing to run,
// up to the last time it found a process (a stretch still going on is not in it yet). The
// bench subtracts it at CPUS=1, where the reader's own hart is the only one.
#define PROC_CPUSTAT 3
