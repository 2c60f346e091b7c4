// Open files: the objects that file descriptors point to (kern/fs/file.cc), and the device
// switch.
#pragma once

#include "lib/types.h"
#include "abi/param.h"

struct Inode;
struct Pipe;

struct File {
  enum class Type { None, Pipe, Inode, Device };
  Type type = Type::None;
  int ref = 0;  // reference count
  bool readable = false;
  bool writable = false;
  Pipe *pipe = nullptr;  // Type::Pipe
  Inode *ip = nullptr;   // Type::Inode and Type::Device
  u32 off = 0;           // Type::Inode
  i16 major = 0;         // Type::Device
  i16 minor = 0;         // Type::Device: which device of that major (copied at open)
  // Type::Device: what the driver keeps between reads of this opening; zero when opened
  // (/proc/profile keeps the samples its document holds: kern/profile/report.cc).
  u64 dev_state = 0;
};

// Map major device number to device functions. `user` says whether addr is a user address
// of the current process. `off` is the open file's offset, which fileread/filewrite advance
// by the count returned: the console ignores it, the files under /proc (kern/fs/procfs.cc)
// use it to serve any read size. A read also gets the open file's dev_state, which the
// driver may use to remember something per opening. Return bytes moved, or -1.
struct DevSw {
  int (*read)(int minor, bool user, u64 addr, u32 off, int n, u64 &state) = nullptr;
  int (*write)(int minor, bool user, u64 addr, u32 off, int n) = nullptr;
};
extern DevSw devsw[NDEV];

void fileinit();
File *filealloc();
File *filedup(File *f);
void fileclose(File *f);
int filestat(File *f, UserAddr st);
int fileread(File *f, UserAddr addr, int n);
int filewrite(File *f, UserAddr addr, int n);
