// The write-ahead log that makes file-system updates crash-safe (kern/fs/log.cc).
//
// Every system call that modifies the file system brackets its work in begin_op()/end_op()
// and writes blocks through log_write() instead of bwrite().
#pragma once

#include "fs/buf.h"

void initlog(u32 dev, const fsfmt::SuperBlock &sb);
void begin_op();
void end_op();
void log_write(Buf *b);
