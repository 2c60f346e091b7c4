// /dev/export (kern/dev/export.cc): the export disk as a device file of major EXPORT_MAJOR.
#pragma once

// Register the device's read and write functions in devsw.
void exportinit();
