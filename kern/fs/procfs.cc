// /proc: files whose contents the kernel generates when they are read.
//
// A /proc file is a device inode of major PROCFS_MAJOR; its minor number says which file it
// is (abi/procfs.h). init creates the inodes with mknod, so any file-system image gets them.
// Reading one comes here through devsw[PROCFS_MAJOR].read with the open file's offset.
//
// The contents are text rendered afresh on each read: the file's render function writes
// the whole text into a scratch page, and the read copies out the part of it the caller
// asked for, the window [off, off + n). Because every read re-renders and then honours the
// offset, any read size works: reading 1 byte at a time, 7, or 4096 gives the same bytes,
// and a read at or past the end returns 0 (end of file). Values may change between two
// reads of one file; a reader that wants a consistent snapshot reads it in one go.
//
// To add a file: write a function that renders it into a ProcText, and register it at
// boot with procfs_register(minor, render). A file too big for one page registers a reader
// instead (procfs_register_reader), which builds its own buffer and serves the window,
// usually with procfs_copy_window. A reader also gets the open file's dev_state, zero when
// the file is opened, to keep what it needs per opening: /proc/profile fixes there, at the
// first read, which samples its document holds, so that one opening reads one document
// while samples keep arriving (kern/profile/report.cc).
//
// /proc files cannot be written.

#include "fs/procfs.h"

#include "abi/procfs.h"
#include "arch/riscv/riscv.h"
#include "fs/file.h"
#include "lib/printf.h"
#include "mm/kalloc.h"
#include "proc/proc.h"

namespace {

constexpr int NPROCFILES = 16;

// Render functions by minor number. Filled at boot, before any process can read them,
// and never changed afterwards, so reads need no lock.
constinit ProcRender renderers[NPROCFILES] = {};
constinit ProcReader readers[NPROCFILES] = {};

void render_meminfo(ProcText &out) {
  out.str("free pages: ").num(kfree_count()).ch('\n');
  out.str("total pages: ").num(ktotal_pages()).ch('\n');
}

// One line a started hart: "hart H idle N", N the instret count it spent with nothing to run
// (Cpu::idle), up to the last time it found a process.
void render_cpustat(ProcText &out) {
  for (int i = 0; i < NCPU; i++) {
    if (!cpus[i].started) continue;
    out.str("hart ").num(i).str(" idle ").num(cpus[i].idle).ch('\n');
  }
}

int procfs_read(int minor, bool user, u64 addr, u32 off, int n, u64 &state) {
  if (minor < 0 || minor >= NPROCFILES || n < 0) return -1;
  if (readers[minor] != nullptr) return readers[minor](user, addr, off, n, state);
  if (renderers[minor] == nullptr) return -1;
  char *page = static_cast<char *>(kalloc_nozero());
  if (page == nullptr) return -1;
  ProcText text(page, static_cast<u32>(riscv::PGSIZE));
  renderers[minor](text);
  int r = procfs_copy_window(text.data(), text.size(), user, addr, off, n);
  kfree(page);
  return r;
}

int procfs_write(int, bool, u64, u32, int) { return -1; }

}  // namespace

ProcText &ProcText::ch(char c) {
  if (m_len < m_cap) {
    m_buf[m_len++] = c;
  } else {
    m_overflow = true;
  }
  return *this;
}

ProcText &ProcText::str(const char *s) {
  while (*s != '\0') ch(*s++);
  return *this;
}

ProcText &ProcText::num(u64 v) {
  char digits[20];  // 2^64 - 1 has 20 decimal digits
  int k = 0;
  do {
    digits[k++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (k > 0) ch(digits[--k]);
  return *this;
}

ProcText &ProcText::hex(u64 v) {
  char digits[16];
  int k = 0;
  do {
    digits[k++] = "0123456789abcdef"[v % 16];
    v /= 16;
  } while (v != 0);
  while (k > 0) ch(digits[--k]);
  return *this;
}

int procfs_copy_window(const char *text, u32 len, bool user, u64 addr, u32 off, int n) {
  if (n < 0) return -1;
  if (off >= len) return 0;  // end of file
  u32 m = len - off;
  if (static_cast<u32>(n) < m) m = static_cast<u32>(n);
  if (either_copyout(user, addr, text + off, m) < 0) return -1;
  return static_cast<int>(m);
}

void procfs_register(int minor, ProcRender render) {
  if (minor < 0 || minor >= NPROCFILES) panic("procfs_register: minor %d out of range", minor);
  if (renderers[minor] != nullptr || readers[minor] != nullptr)
    panic("procfs_register: minor %d registered twice", minor);
  renderers[minor] = render;
}

void procfs_register_reader(int minor, ProcReader read) {
  if (minor < 0 || minor >= NPROCFILES) panic("procfs_register: minor %d out of range", minor);
  if (renderers[minor] != nullptr || readers[minor] != nullptr)
    panic("procfs_register: minor %d registered twice", minor);
  readers[minor] = read;
}

void procfsinit() {
  devsw[PROCFS_MAJOR].read = procfs_read;
  devsw[PROCFS_MAJOR].write = procfs_write;
  procfs_register(PROC_MEMINFO, render_meminfo);
  procfs_register(PROC_CPUSTAT, render_cpustat);
}
