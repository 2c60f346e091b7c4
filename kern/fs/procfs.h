// /proc (kern/fs/procfs.cc): device files of major PROCFS_MAJOR whose contents the kernel
// generates when they are read.
#pragma once

#include "abi/majors.h"
#include "lib/types.h"

// Register the major in devsw, and /proc/meminfo.
void procfsinit();

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
// Make minor number `minor` of major PROCFS_MAJOR read as `render`'s text.
void procfs_register(int minor, ProcRender render);

// A /proc file too large to render into one page serves reads itself: `read` gets the
// window [off, off+n) like a device read, and must give the same bytes for any read size.
// `state` is the open file's, zero at open: what the reader keeps per opening.
using ProcReader = int (*)(bool user, u64 addr, u32 off, int n, u64 &state);
void procfs_register_reader(int minor, ProcReader read);
