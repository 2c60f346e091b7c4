// Virtual memory: Sv39 page tables.
//
// Sv39 translates a 39-bit virtual address through three levels of 512-entry page-table
// pages: bits 38..30 index the root, 29..21 the middle, 20..12 the leaf level, and the low
// 12 bits are the offset in the 4096-byte page. A PTE holds a physical page number and
// permission bits (V R W X U ...). We use only 4 KiB leaves.
//
// The kernel has one page table, shared by all harts, mapping devices and all of RAM at
// their physical addresses, the trampoline at the top, and each process's kernel stack.
// Each process has its own page table for its user memory (see memlayout.h for the layout).
//
// The kernel never dereferences a user address. copyin/copyout/copyinstr translate each
// page through the process's page table and check the permissions the user has, so a
// system call given a bad pointer fails with -1 instead of faulting in the kernel.

#include "mm/vm.h"

#include "abi/param.h"
#include "arch/riscv/memlayout.h"
#include "boot/main.h"
#include "lib/linker.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/kalloc.h"

using namespace riscv;

namespace {

constinit pagetable_t kernel_pagetable = nullptr;

void kvmmap(pagetable_t kpt, u64 va, u64 pa, u64 sz, u64 perm) {
  if (mappages(kpt, va, sz, pa, perm) != 0) panic("kvmmap: out of memory");
}

}  // namespace

void kvminit() {
  pagetable_t kpt = static_cast<pagetable_t>(kalloc());
  kvmmap(kpt, mem::TEST_DEVICE, mem::TEST_DEVICE, PGSIZE, PTE_R | PTE_W);
  kvmmap(kpt, mem::UART0, mem::UART0, PGSIZE, PTE_R | PTE_W);
  kvmmap(kpt, mem::VIRTIO0, mem::VIRTIO0, 2 * PGSIZE, PTE_R | PTE_W);  // slots 0 and 1
  kvmmap(kpt, mem::PLIC, mem::PLIC, mem::PLIC_SIZE, PTE_R | PTE_W);
  u64 kbase = reinterpret_cast<u64>(kernel_start);
  u64 ktext_end = reinterpret_cast<u64>(etext);
  kvmmap(kpt, kbase, kbase, ktext_end - kbase, PTE_R | PTE_X);
  kvmmap(kpt, ktext_end, ktext_end, phys_end - ktext_end, PTE_R | PTE_W);
  kvmmap(kpt, mem::TRAMPOLINE, reinterpret_cast<u64>(trampoline), PGSIZE, PTE_R | PTE_X);
  // A kernel stack for every process slot, each below an unmapped gap (kern/proc/proc.cc).
  for (int i = 0; i < NPROC; i++) {
    for (u64 pg = 0; pg < mem::KSTACK_PAGES; pg++) {
      void *pa = kalloc_nozero();
      if (pa == nullptr) panic("kvminit: no memory for kernel stacks");
      kvmmap(kpt, mem::kstack(i) + pg * PGSIZE, reinterpret_cast<u64>(pa), PGSIZE, PTE_R | PTE_W);
    }
  }
  kernel_pagetable = kpt;
}

void kvminithart() {
  sfence_vma();  // finish writes to the page table before using it
  CSR_WRITE(satp, make_satp(kernel_pagetable));
  sfence_vma();
}

pte_t *walk(pagetable_t pt, u64 va, bool alloc) {
  if (va >= MAXVA) return nullptr;
  for (int level = 2; level > 0; level--) {
    pte_t *pte = &pt[px(level, va)];
    if (*pte & PTE_V) {
      pt = reinterpret_cast<pagetable_t>(pte_to_pa(*pte));
    } else {
      if (!alloc) return nullptr;
      pt = static_cast<pagetable_t>(kalloc());
      if (pt == nullptr) return nullptr;
      *pte = pa_to_pte(reinterpret_cast<u64>(pt)) | PTE_V;
    }
  }
  return &pt[px(0, va)];
}

u64 walkaddr(pagetable_t pt, u64 va) {
  pte_t *pte = walk(pt, va, false);
  if (pte == nullptr || (*pte & PTE_V) == 0 || (*pte & PTE_U) == 0) return 0;
  return pte_to_pa(*pte);
}

int mappages(pagetable_t pt, u64 va, u64 size, u64 pa, u64 perm) {
  if ((va % PGSIZE) != 0 || (size % PGSIZE) != 0 || size == 0) panic("mappages: misaligned");
  for (u64 off = 0; off < size; off += PGSIZE) {
    pte_t *pte = walk(pt, va + off, true);
    if (pte == nullptr) return -1;
    if (*pte & PTE_V) panic("mappages: remap of %p", reinterpret_cast<void *>(va + off));
    *pte = pa_to_pte(pa + off) | perm | PTE_V | PTE_A | PTE_D;
  }
  return 0;
}

void uvmunmap(pagetable_t pt, u64 va, u64 npages, bool do_free) {
  if ((va % PGSIZE) != 0) panic("uvmunmap: misaligned");
  for (u64 a = va; a < va + npages * PGSIZE; a += PGSIZE) {
    pte_t *pte = walk(pt, a, false);
    if (pte == nullptr || (*pte & PTE_V) == 0) continue;
    if (pte_flags(*pte) == PTE_V) panic("uvmunmap: not a leaf");
    // Unmap before freeing: the profiler's sampler may read this page table from a timer
    // trap taken between the two, and must never reach a page that is already free.
    u64 pa = pte_to_pa(*pte);
    *pte = 0;
    asm volatile("" ::: "memory");
    if (do_free) kfree(reinterpret_cast<void *>(pa));
  }
}

pagetable_t uvmcreate() { return static_cast<pagetable_t>(kalloc()); }

u64 uvmalloc(pagetable_t pt, u64 oldsz, u64 newsz, u64 xperm) {
  if (newsz < oldsz) return oldsz;
  if (newsz > mem::TRAPFRAME) return 0;
  for (u64 a = pg_round_up(oldsz); a < newsz; a += PGSIZE) {
    void *mem = kalloc();
    if (mem == nullptr ||
        mappages(pt, a, PGSIZE, reinterpret_cast<u64>(mem), PTE_R | PTE_U | xperm) != 0) {
      if (mem) kfree(mem);
      uvmdealloc(pt, a, oldsz);
      return 0;
    }
  }
  return newsz;
}

u64 uvmdealloc(pagetable_t pt, u64 oldsz, u64 newsz) {
  if (newsz >= oldsz) return oldsz;
  if (pg_round_up(newsz) < pg_round_up(oldsz)) {
    u64 npages = (pg_round_up(oldsz) - pg_round_up(newsz)) / PGSIZE;
    uvmunmap(pt, pg_round_up(newsz), npages, true);
  }
  return newsz;
}

namespace {
// Free the page-table pages; every leaf must already have been removed.
void freewalk(pagetable_t pt) {
  for (int i = 0; i < 512; i++) {
    pte_t pte = pt[i];
    if ((pte & PTE_V) && (pte & (PTE_R | PTE_W | PTE_X)) == 0) {
      freewalk(reinterpret_cast<pagetable_t>(pte_to_pa(pte)));
      pt[i] = 0;
    } else if (pte & PTE_V) {
      panic("freewalk: leaf still mapped");
    }
  }
  kfree(pt);
}
}  // namespace

void uvmfree(pagetable_t pt, u64 sz) {
  if (sz > 0) uvmunmap(pt, 0, pg_round_up(sz) / PGSIZE, true);
  freewalk(pt);
}

int uvmcopy(pagetable_t from, pagetable_t to, u64 sz) {
  for (u64 a = 0; a < sz; a += PGSIZE) {
    pte_t *pte = walk(from, a, false);
    if (pte == nullptr || (*pte & PTE_V) == 0) continue;
    void *mem = kalloc_nozero();
    if (mem == nullptr) {
      uvmunmap(to, 0, a / PGSIZE, true);
      return -1;
    }
    memmove(mem, reinterpret_cast<void *>(pte_to_pa(*pte)), PGSIZE);
    if (mappages(to, a, PGSIZE, reinterpret_cast<u64>(mem), pte_flags(*pte)) != 0) {
      kfree(mem);
      uvmunmap(to, 0, a / PGSIZE, true);
      return -1;
    }
  }
  return 0;
}

void uvmclear(pagetable_t pt, u64 va) {
  pte_t *pte = walk(pt, va, false);
  if (pte == nullptr) panic("uvmclear");
  *pte &= ~PTE_U;
}

namespace {
// Physical address of the user page containing va if the user may access it with `need`
// permission bits; 0 otherwise.
u64 user_page(pagetable_t pt, u64 va, u64 need) {
  if (va >= MAXVA) return 0;
  pte_t *pte = walk(pt, pg_round_down(va), false);
  if (pte == nullptr) return 0;
  u64 want = PTE_V | PTE_U | need;
  if ((*pte & want) != want) return 0;
  return pte_to_pa(*pte);
}

// Visit [va, va+len) page by page: fn(kernel pointer, bytes) for each piece, after checking
// that the user has `need` permission on its page. Returns 0, or -1 at the first bad page.
template <typename Fn>
int for_each_user_piece(pagetable_t pt, u64 va, u64 len, u64 need, Fn &&fn) {
  while (len > 0) {
    u64 pa = user_page(pt, va, need);
    if (pa == 0) return -1;
    u64 off = va % PGSIZE;
    u64 n = PGSIZE - off < len ? PGSIZE - off : len;
    fn(reinterpret_cast<u8 *>(pa + off), n);
    len -= n;
    va += n;
  }
  return 0;
}

}  // namespace

int copyout(pagetable_t pt, UserAddr dst, const void *src, u64 len) {
  const u8 *s = static_cast<const u8 *>(src);
  return for_each_user_piece(pt, dst.va, len, PTE_W, [&s](u8 *p, u64 n) {
    memmove(p, s, n);
    s += n;
  });
}

int copyin(pagetable_t pt, void *dst, UserAddr src, u64 len) {
  u8 *d = static_cast<u8 *>(dst);
  return for_each_user_piece(pt, src.va, len, PTE_R, [&d](const u8 *p, u64 n) {
    memmove(d, p, n);
    d += n;
  });
}

int copyinstr(pagetable_t pt, char *dst, UserAddr src, u64 max) {
  u64 va = src.va;
  while (max > 0) {
    u64 pa = user_page(pt, va, PTE_R);
    if (pa == 0) return -1;
    u64 off = va % PGSIZE;
    u64 n = PGSIZE - off < max ? PGSIZE - off : max;
    const char *p = reinterpret_cast<const char *>(pa + off);
    for (u64 i = 0; i < n; i++) {
      *dst = p[i];
      if (p[i] == 0) return 0;
      dst++;
    }
    max -= n;
    va += n;
  }
  return -1;
}
