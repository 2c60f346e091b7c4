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

inline constexpr int CONSOLE = 1;  // console major device number (xv6 ABI)
inline constexpr int PROCFS = 2;   // files under /proc; the minor selects which

void fileinit();
File *filealloc();
File *filedup(File *f);
void fileclose(File *f);
int filestat(File *f, UserAddr st);
int fileread(File *f, UserAddr addr, int n);
int filewrite(File *f, UserAddr addr, int n);

// The files under /proc (kern/fs/procfs.cc): device files of major PROCFS whose contents
// are generated text. procfsinit() registers the major in devsw and /proc/meminfo.
void procfsinit();
void exportinit();  // /dev/export (kern/dev/export.cc)

// Text built up in a kernel buffer, for a /proc file. Appends past the end of the buffer
// are dropped (and remembered in overflowed()).
class ProcText {
 public:
  constexpr ProcText(char *buf, u32 cap) : m_buf(buf), m_cap(cap) {}
  ProcText &str(const char *s);
  ProcText &ch(char c);
  ProcText &num(u64 v);  // decimal
  ProcText &hex(u64 v);  // lower-case hexadecimal, no prefix
  const char *data() const { return m_buf; }
  u32 size() const { return m_len; }
  bool overflowed() const { return m_overflow; }

 private:
  char *m_buf;
  u32 m_cap;
  u32 m_len = 0;
  bool m_overflow = false;
};

// Copy bytes [off, off+n) of text (len bytes long) to addr, clipped at the end of the text.
// Returns the bytes copied (0 at or past the end), or -1 if the copy failed. Any sequence of
// reads that advances off by what each returned sees the same bytes, whatever n is.
int procfs_copy_window(const char *text, u32 len, bool user, u64 addr, u32 off, int n);

// A generated /proc file: render writes the whole file's text, up to one page. procfs
// renders it afresh on every read and serves the requested window.
using ProcRender = void (*)(ProcText &out);
// Make minor number `minor` of major PROCFS read as `render`'s text.
void procfs_register(int minor, ProcRender render);

// A /proc file too large to render into one page serves reads itself: `read` gets the
// window [off, off+n) like a device read, and must give the same bytes for any read size.
// `state` is the open file's, zero at open: what the reader keeps per opening.
using ProcReader = int (*)(bool user, u64 addr, u32 off, int n, u64 &state);
void procfs_register_reader(int minor, ProcReader read);
