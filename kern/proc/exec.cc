// exec: replace the current process's memory with a program loaded from an ELF file.
//
// The new image is built in a fresh page table while the old one stays intact, so any
// failure (no such file, not ELF, a bad segment, out of memory, arguments that don't fit)
// returns -1 to the old program. Only when everything is ready does the process switch
// page tables and free the old memory; from then on exec cannot fail.
//
// The layout follows the xv6 ABI: the PT_LOAD segments at their (page-aligned) addresses
// from 0, text without write permission; then a guard page without user access; then one
// stack page holding the argument strings and the argv array; sp 16-byte aligned at its top.
//
// Which files are programs is decided rule by rule in exec() (the ELF header, room for the
// guard and stack pages) and load_image() (the program headers); the docstring of
// tests/qemu/test_exec_fuzz.py states the same rules with their reasons, and its model of
// them is checked against this code on seeded corruptions of a small program.

#include "abi/param.h"
#include "arch/riscv/memlayout.h"
#include "arch/riscv/trapframe.h"
#include "fs/fs.h"
#include "fs/log.h"
#include "lib/string.h"
#include "mm/vm.h"
#include "proc/elf.h"
#include "proc/proc.h"
#include "profile/profiler.h"

using namespace riscv;

namespace {

u64 segment_perm(u32 flags) {
  u64 perm = 0;
  if (flags & elf::PF_X) perm |= PTE_X;
  if (flags & elf::PF_W) perm |= PTE_W;
  return perm;
}

// Read sz bytes of the file at offset into user memory at va, which is page-aligned and
// already mapped. Returns 0 or -1.
int loadseg(pagetable_t pt, u64 va, Inode *ip, u32 offset, u64 sz) {
  for (u64 i = 0; i < sz; i += PGSIZE) {
    u64 pa = walkaddr(pt, va + i);
    if (pa == 0) return -1;
    u32 n = static_cast<u32>(sz - i < PGSIZE ? sz - i : PGSIZE);
    if (readi(ip, false, pa, offset + static_cast<u32>(i), n) != static_cast<int>(n)) return -1;
  }
  return 0;
}

// Load every PT_LOAD segment of ip into pt. Returns false if the file is not a loadable
// program. Either way *sz is how far pt's user memory now reaches (so that a failure can be
// undone) and *text_end where its executable segments end.
bool load_image(pagetable_t pt, Inode *ip, const elf::Header &eh, u64 *sz, u64 *text_end) {
  *sz = 0;
  *text_end = 0;
  // The program headers lie wholly in the file. e_phoff has 64 bits, a file offset 32: one
  // of 2^32 or more must not be read as its low half.
  if (eh.phoff > ip->size || eh.phnum * sizeof(elf::ProgramHeader) > ip->size - eh.phoff)
    return false;
  for (u32 i = 0, off = static_cast<u32>(eh.phoff); i < eh.phnum;
       i++, off += sizeof(elf::ProgramHeader)) {
    elf::ProgramHeader ph;
    if (readi(ip, false, reinterpret_cast<u64>(&ph), off, sizeof(ph)) != sizeof(ph)) return false;
    if (ph.type != elf::PT_LOAD) continue;
    if (ph.memsz < ph.filesz || ph.vaddr + ph.memsz < ph.vaddr) return false;
    if (ph.vaddr % PGSIZE != 0 || ph.vaddr < *sz || ph.vaddr + ph.memsz > mem::TRAPFRAME)
      return false;
    // The segment's file bytes [off, off + filesz) lie in the file, so both fit a file
    // offset's 32 bits and no read of them comes up short. A segment with no file bytes (all
    // bss) reads nothing, and its offset may be anything, as xv6 allows: linkers and strip
    // tools leave such offsets past the end of the file.
    if (ph.filesz != 0 && (ph.off > ip->size || ph.filesz > ip->size - ph.off)) return false;
    // uvmalloc() maps [*sz, vaddr + memsz), the gap before the segment too. An empty segment
    // right at *sz maps nothing, and is no failure: its new size, 0 at address 0, would look
    // like one.
    if (ph.vaddr + ph.memsz > *sz) {
      u64 newsz = uvmalloc(pt, *sz, ph.vaddr + ph.memsz, segment_perm(ph.flags));
      if (newsz == 0) return false;
      *sz = newsz;
    }
    if (loadseg(pt, ph.vaddr, ip, static_cast<u32>(ph.off), ph.filesz) < 0) return false;
    if ((ph.flags & elf::PF_X) && ph.vaddr + ph.memsz > *text_end) *text_end = ph.vaddr + ph.memsz;
  }
  return *sz != 0;  // a program with nothing to load is not one
}

// Copy argv's strings and the argv array onto the stack page [stackbase, sp). Returns the
// new sp (which is also the user's argv), or 0 if they don't fit.
u64 push_args(pagetable_t pt, u64 sp, u64 stackbase, char **argv, int *argc_out) {
  u64 ustack[MAXARG + 1];
  int argc = 0;
  for (; argv[argc]; argc++) {
    if (argc >= MAXARG) return 0;
    u64 len = strlen(argv[argc]) + 1;
    if (sp - stackbase < len + 16) return 0;
    sp -= len;
    sp -= sp % 16;  // riscv sp must be 16-byte aligned
    if (copyout(pt, UserAddr(sp), argv[argc], len) < 0) return 0;
    ustack[argc] = sp;
  }
  ustack[argc] = 0;
  u64 bytes = (argc + 1) * sizeof(u64);
  if (sp - stackbase < bytes + 16) return 0;
  sp -= bytes;
  sp -= sp % 16;
  if (copyout(pt, UserAddr(sp), ustack, bytes) < 0) return 0;
  *argc_out = argc;
  return sp;
}

}  // namespace

int exec(const char *path, char **argv) {
  Proc *p = myproc();
  pagetable_t pt = nullptr;
  u64 sz = 0, text_end = 0;

  begin_op();
  Inode *ip = namei(path);
  if (ip == nullptr) {
    end_op();
    return -1;
  }
  ilock(ip);
  elf::Header eh;
  bool ok = readi(ip, false, reinterpret_cast<u64>(&eh), 0, sizeof(eh)) == sizeof(eh) &&
            eh.magic == elf::MAGIC && eh.elf[0] == 2 /* 64-bit */ && eh.machine == elf::EM_RISCV;
  if (ok) {
    pt = proc_pagetable(p);
    ok = pt != nullptr && load_image(pt, ip, eh, &sz, &text_end);
  }
  // Keep a reference to the executable: the profiler symbolizes samples from it later.
  Inode *exe = ok ? idup(ip) : nullptr;
  iunlockput(ip);
  end_op();

  // One guard page, then the stack page.
  u64 sp = 0, stackbase = 0;
  int argc = 0;
  if (ok) {
    sz = pg_round_up(sz);
    u64 newsz = uvmalloc(pt, sz, sz + 2 * PGSIZE, PTE_W);
    ok = newsz != 0;
    if (ok) {
      sz = newsz;
      uvmclear(pt, sz - 2 * PGSIZE);
      stackbase = sz - PGSIZE;
      sp = push_args(pt, sz, stackbase, argv, &argc);
      ok = sp != 0;
    }
  }
  if (!ok) {
    if (pt) proc_freepagetable(pt, sz);
    if (exe) {
      begin_op();
      iput(exe);
      end_op();
    }
    return -1;
  }

  // Commit to the new image.
  const char *last = path;
  for (const char *s = path; *s; s++)
    if (*s == '/') last = s + 1;

  // The timer's sampler reads the page table, the registers, text_end and the image
  // index of the process it interrupts: switch them all with interrupts off, so that no
  // sample sees half of the old program and half of the new. Until prof::on_exec()
  // registers the new executable, samples carry no image (their user frames print as
  // unknown rather than under the wrong program's names).
  pagetable_t oldpt = p->pagetable;
  u64 oldsz = p->sz;
  Inode *oldexe = p->exe;
  {
    SpinGuard g(p->lock);  // interrupts off, and exe/name/prof.image as the profiler reads them
    safestrcpy(p->name, last, sizeof(p->name));
    p->pagetable = pt;
    p->sz = sz;
    p->exe = exe;
    p->text_end = text_end;
    p->prof.reset();
    // Start with every user register zero, so s0 = ra = 0 ends frame-pointer walks cleanly.
    Trapframe *tf = p->trapframe;
    memset(&tf->ra, 0, sizeof(Trapframe) - __builtin_offsetof(Trapframe, ra));
    tf->epc = eh.entry;
    tf->sp = sp;
    tf->a0 = static_cast<u64>(argc);
    tf->a1 = sp;
  }
  proc_freepagetable(oldpt, oldsz);
  if (oldexe) {
    begin_op();
    iput(oldexe);
    end_op();
  }
  prof::on_exec(p);
  return argc;  // becomes a0, argc, for main(argc, argv)
}
