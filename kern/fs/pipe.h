// Pipes (kern/fs/pipe.cc): a one-way byte stream between two open Files.
#pragma once

#include "lib/types.h"

struct File;
struct Pipe;

// A new pipe: *f0 its read end, *f1 its write end. 0, or -1 when no page or File is free.
int pipealloc(File **f0, File **f1);
// Close one end; the last close frees the pipe.
void pipeclose(Pipe *pi, bool writable);
// Bytes moved to or from user memory at addr, or -1.
int pipewrite(Pipe *pi, UserAddr addr, int n);
int piperead(Pipe *pi, UserAddr addr, int n);
