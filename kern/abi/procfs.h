// The files under /proc: device files of major PROCFS_MAJOR (majors.h), one minor each.
// init creates any that are missing at boot, so an xv6-made image gets them too.
#pragma once

#include "majors.h"

#define PROC_MEMINFO 0  // /proc/meminfo: "free pages: N" and "total pages: N"
// /proc/cpustat: "hart H idle N" a line, N the instret count H spent with nothing to run
#define PROC_CPUSTAT 3
