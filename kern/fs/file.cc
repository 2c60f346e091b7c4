// Open files: what a file descriptor refers to.
//
// A process's file descriptors are indexes into its ofile[] array, whose entries point
// into one system-wide table of NFILE File structs. A File is one "opening" of something:
// an inode (a regular file or directory, with a current offset), a device (an inode of
// type T_DEVICE, whose reads and writes go to the driver registered in devsw[major]), or
// one end of a pipe. Several descriptors, in one process (dup) or several (fork), can
// share one File, and with it the offset; `ref` counts them, and the File is closed when
// the last one goes.
//
// The read and write paths below only choose where a request goes. Inode reads and writes
// lock the inode, which also keeps the offset consistent between processes sharing the
// File. Writes to an inode run inside log transactions, and one transaction may only
// write MAXOPBLOCKS blocks, so a large write is split into several transactions. That
// makes a large write not atomic as a whole if the machine crashes, but each piece is.
//
// Locking: the table's spinlock protects every File's ref and, for a File with ref == 0,
// the rest. Once allocated, a File's type and flags never change until it is freed, so
// they are read without a lock.

#include "fs/file.h"

#include "abi/stat.h"
#include "fs/fs.h"
#include "fs/log.h"
#include "fs/pipe.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/vm.h"
#include "proc/proc.h"

DevSw devsw[NDEV];

namespace {

struct FileTable {
  Spinlock lock{"ftable"};
  File files[NFILE] = {};
};
constinit FileTable ftable;

// The largest write that fits in one transaction. Writing k whole blocks' worth of bytes
// at an unaligned offset touches k + 1 data blocks; each may be newly allocated, which
// also writes a bitmap block. Add the inode block and the indirect block:
//   2 * (k + 1) + 2 <= MAXOPBLOCKS.
constexpr int WRITE_CHUNK_BLOCKS = (MAXOPBLOCKS - 2) / 2 - 1;
constexpr int WRITE_CHUNK = WRITE_CHUNK_BLOCKS * static_cast<int>(fsfmt::BSIZE);
static_assert(WRITE_CHUNK_BLOCKS >= 1, "MAXOPBLOCKS too small for any file write");

// The device switch entry for a device File, or nullptr for a bad major number.
const DevSw *device_of(const File *f) {
  if (f->major < 0 || f->major >= NDEV) return nullptr;
  return &devsw[f->major];
}

int write_inode(File *f, UserAddr addr, int n) {
  int done = 0;
  while (done < n) {
    int m = n - done < WRITE_CHUNK ? n - done : WRITE_CHUNK;
    begin_op();
    ilock(f->ip);
    int r = writei(f->ip, true, (addr + u64(done)).va, f->off, static_cast<u32>(m));
    if (r > 0) f->off += static_cast<u32>(r);
    iunlock(f->ip);
    end_op();
    if (r != m) break;  // the file reached its size limit, the disk is full, or a bad pointer
    done += m;
  }
  // Like xv6, report a write that could not be completed as a failure.
  return done == n ? n : -1;
}

}  // namespace

void fileinit() {
  // The table and devsw are initialised statically; drivers fill devsw as they start.
}

File *filealloc() {
  SpinGuard g(ftable.lock);
  for (File &f : ftable.files) {
    if (f.ref == 0) {
      f = File{};
      f.ref = 1;
      return &f;
    }
  }
  return nullptr;
}

File *filedup(File *f) {
  SpinGuard g(ftable.lock);
  if (f->ref < 1) panic("filedup: file is not open");
  f->ref++;
  return f;
}

void fileclose(File *f) {
  File closing;
  {
    SpinGuard g(ftable.lock);
    if (f->ref < 1) panic("fileclose: file is not open");
    if (--f->ref > 0) return;
    // Last reference: take a copy and free the slot, then release what it pointed to
    // without the spinlock (which may sleep).
    closing = *f;
    *f = File{};
  }

  switch (closing.type) {
    case File::Type::Pipe: pipeclose(closing.pipe, closing.writable); break;
    case File::Type::Inode:
    case File::Type::Device:
      // Dropping the reference may free the inode, which writes to the disk.
      begin_op();
      iput(closing.ip);
      end_op();
      break;
    case File::Type::None: break;  // allocated but never set up (a failed open)
  }
}

int filestat(File *f, UserAddr addr) {
  if (f->type != File::Type::Inode && f->type != File::Type::Device) return -1;
  struct stat st;
  memset(&st, 0, sizeof(st));  // the padding after nlink must not leak kernel bytes
  ilock(f->ip);
  stati(f->ip, &st);
  iunlock(f->ip);
  return copyout(myproc()->pagetable, addr, st);
}

int fileread(File *f, UserAddr addr, int n) {
  if (!f->readable || n < 0) return -1;

  switch (f->type) {
    case File::Type::Pipe: return piperead(f->pipe, addr, n);
    case File::Type::Device: {
      const DevSw *dev = device_of(f);
      if (dev == nullptr || dev->read == nullptr) return -1;
      int r = dev->read(f->minor, true, addr.va, f->off, n, f->dev_state);
      if (r > 0) f->off += static_cast<u32>(r);
      return r;
    }
    case File::Type::Inode: {
      ilock(f->ip);
      int r = readi(f->ip, true, addr.va, f->off, static_cast<u32>(n));
      if (r > 0) f->off += static_cast<u32>(r);
      iunlock(f->ip);
      return r;
    }
    case File::Type::None: break;
  }
  panic("fileread: file of no type");
}

int filewrite(File *f, UserAddr addr, int n) {
  if (!f->writable || n < 0) return -1;

  switch (f->type) {
    case File::Type::Pipe: return pipewrite(f->pipe, addr, n);
    case File::Type::Device: {
      const DevSw *dev = device_of(f);
      if (dev == nullptr || dev->write == nullptr) return -1;
      int r = dev->write(f->minor, true, addr.va, f->off, n);
      if (r > 0) f->off += static_cast<u32>(r);
      return r;
    }
    case File::Type::Inode: return write_inode(f, addr, n);
    case File::Type::None: break;
  }
  panic("filewrite: file of no type");
}
