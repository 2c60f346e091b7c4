// The files under /proc: device files of major PROCFS (2), one minor each. init creates any
// that are missing at boot, so an xv6-made image gets them too.
#pragma once

#define PROCFS_MAJOR 2
#define PROC_MEMINFO 0   // /proc/meminfo: "free pages: N" and "total pages: N"
