// The physical page allocator.
//
// Free pages form a singly linked list threaded through the pages themselves: the first
// word of a free page points at the next free page. kinit() hands every page between the
// end of the kernel image and the end of RAM to the list, one store per page, so even 128
// MiB is ready in well under a millisecond. The one exception is the RAM disk's memory
// (kern/dev/ramdisk.cc), which holds the root file system and is never handed out. Pages
// are zeroed when allocated (kalloc), not when freed, and only if the caller wants that.
//
// One spinlock protects the list; allocation and free are a handful of instructions under
// it, so contention between harts is short.

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
  FreePage *free = nullptr;
  u64 nfree = 0;
  u64 total = 0;
  u64 lo = 0, hi = 0;  // managed range [lo, hi)
};
constinit Allocator kmem;

}  // namespace

void kinit(u64 phys_end, u64 keep_start, u64 keep_end) {
  keep_start = riscv::pg_round_down(keep_start);
  keep_end = riscv::pg_round_up(keep_end);
  u64 lo = riscv::pg_round_up(reinterpret_cast<u64>(end));
  kmem.lo = lo;
  kmem.hi = phys_end;
  // Build the list in ascending address order, so early allocations come from low memory.
  FreePage *head = nullptr;
  for (u64 pa = phys_end - riscv::PGSIZE; pa >= lo; pa -= riscv::PGSIZE) {
    if (pa >= keep_start && pa < keep_end) continue;
    FreePage *p = reinterpret_cast<FreePage *>(pa);
    p->next = head;
    head = p;
    kmem.total++;
  }
  kmem.free = head;
  kmem.nfree = kmem.total;
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
    kmem.nfree--;
  }
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
