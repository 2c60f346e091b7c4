// Major device numbers: which driver serves a device file's reads and writes (the kernel's
// devsw table, kern/fs/file.h). init makes the device files with these numbers.
#pragma once

#define CONSOLE_MAJOR 1  // the console (xv6 ABI)
#define PROCFS_MAJOR 2   // the files under /proc; the minor says which (procfs.h)
#define EXPORT_MAJOR 3   // /dev/export, the export disk (export.h)
