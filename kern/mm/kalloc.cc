// The physical page allocator.
//
// Free pages come from two places. Pages that have been freed form a singly linked list
// threaded through the pages themselves: the first word of a free page points at the next.
// Pages never handed out yet are not on it: they are the untouched range [fresh, hi), given
// out in address order once the list is empty, so early allocations come from low memory
// and a page of RAM is first written when it is first allocated. kinit() writes nothing,
// and is done at once however large the memory. Under QEMU that matters: a guest page never
// written costs the host nothing, so a machine that uses a few MiB of 512 makes QEMU hold a
// few MiB, not 512, and its host need not supply the rest. The one exception is the RAM disk's
// memory (kern/dev/ramdisk.cc), which holds the root file system and is never handed out:
// the untouched range skips it. Pages are zeroed when allocated (kalloc), not when freed,
// and only if the caller wants that.
//
// One spinlock protects the list and the range; allocation and free are a handful of
// instructions under it, so contention between harts is short.

#include "mm/kalloc.h"

#include "arch/riscv/memlayout.h"
#include "lib/linker.h"
#include "lib/printf.h"
#include "lib/spinlock.h"
#include "lib/string.h"

namespace {

struct FreePage {
  FreePage *next;
};

struct Allocator {
  Spinlock lock{"kalloc"};
  FreePage *free = nullptr;          // pages freed since, last freed first
  u64 fresh = 0;                     // the next page never handed out; hi when there is none
  u64 keep_start = 0, keep_end = 0;  // the RAM disk's pages, never handed out
  u64 nfree = 0;
  u64 total = 0;
  u64 lo = 0, hi = 0;  // managed range [lo, hi)
};
constinit Allocator kmem;

// `pa`, or the first page after the kept range if `pa` falls inside it.
u64 past_kept(u64 pa) { return pa >= kmem.keep_start && pa < kmem.keep_end ? kmem.keep_end : pa; }

}  // namespace

void kinit(u64 phys_end, u64 keep_start, u64 keep_end) {
  kmem.keep_start = riscv::pg_round_down(keep_start);
  kmem.keep_end = riscv::pg_round_up(keep_end);
  kmem.lo = riscv::pg_round_up(reinterpret_cast<u64>(end));
  kmem.hi = riscv::pg_round_down(phys_end);
  u64 kept = 0;
  if (kmem.keep_start < kmem.keep_end) {
    u64 from = kmem.keep_start > kmem.lo ? kmem.keep_start : kmem.lo;
    u64 to = kmem.keep_end < kmem.hi ? kmem.keep_end : kmem.hi;
    if (from < to) kept = (to - from) / riscv::PGSIZE;
  }
  kmem.total = (kmem.hi - kmem.lo) / riscv::PGSIZE - kept;
  kmem.nfree = kmem.total;
  kmem.fresh = past_kept(kmem.lo);
}

void kfree(void *pa) {
  u64 a = reinterpret_cast<u64>(pa);
  if ((a % riscv::PGSIZE) != 0 || a < kmem.lo || a >= kmem.hi) panic("kfree: bad page %p", pa);
  FreePage *p = static_cast<FreePage *>(pa);
  SpinGuard g(kmem.lock);
  p->next = kmem.free;
  kmem.free = p;
  kmem.nfree++;
}

void *kalloc_nozero() {
  SpinGuard g(kmem.lock);
  FreePage *p = kmem.free;
  if (p) {
    kmem.free = p->next;
  } else if (kmem.fresh < kmem.hi) {
    p = reinterpret_cast<FreePage *>(kmem.fresh);
    kmem.fresh = past_kept(kmem.fresh + riscv::PGSIZE);
  } else {
    return nullptr;
  }
  kmem.nfree--;
  return p;
}

void *kalloc() {
  void *p = kalloc_nozero();
  if (p) memset(p, 0, riscv::PGSIZE);
  return p;
}

u64 kfree_count() {
  SpinGuard g(kmem.lock);
  return kmem.nfree;
}

u64 ktotal_pages() { return kmem.total; }
