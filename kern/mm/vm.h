// Virtual memory: Sv39 page tables for the kernel and for each process, and the only
// sanctioned ways to move bytes between kernel and user memory.
#pragma once

#include "lib/types.h"

// Kernel page table.
void kvminit();
void kvminithart();  // turn on paging on this hart

// Generic page-table operations.
// The PTE for va, allocating page-table pages when alloc is true; nullptr if absent.
pte_t *walk(pagetable_t pt, u64 va, bool alloc);
// Map [va, va+size) to [pa, ...) with perm. Returns 0, or -1 if a page-table page could not
// be allocated. va and size must be page-aligned.
[[nodiscard]] int mappages(pagetable_t pt, u64 va, u64 size, u64 pa, u64 perm);
// Physical address of a user page, or 0 if va is not mapped with PTE_U.
u64 walkaddr(pagetable_t pt, u64 va);

// User address spaces.
pagetable_t uvmcreate();
// Grow from oldsz to newsz, mapping fresh zeroed pages with PTE_R|PTE_U|xperm. Returns the
// new size, or 0 on failure (the partial growth is undone).
u64 uvmalloc(pagetable_t pt, u64 oldsz, u64 newsz, u64 xperm);
u64 uvmdealloc(pagetable_t pt, u64 oldsz, u64 newsz);
void uvmunmap(pagetable_t pt, u64 va, u64 npages, bool do_free);
// Copy parent's memory [0, sz) into child; -1 on failure (child's partial copy freed).
int uvmcopy(pagetable_t from, pagetable_t to, u64 sz);
// Free the user pages [0, sz) and every page-table page.
void uvmfree(pagetable_t pt, u64 sz);
// Remove PTE_U from the page at va (the stack guard page).
void uvmclear(pagetable_t pt, u64 va);

// Copying to and from user memory. Each returns 0, or -1 when any byte of the range is not
// mapped with user permission (and, for copyout, write permission) or lies at or above MAXVA.
[[nodiscard]] int copyout(pagetable_t pt, UserAddr dst, const void *src, u64 len);
[[nodiscard]] int copyin(pagetable_t pt, void *dst, UserAddr src, u64 len);
// Copy a NUL-terminated string of at most max bytes (including the NUL); -1 if none found.
[[nodiscard]] int copyinstr(pagetable_t pt, char *dst, UserAddr src, u64 max);

// Typed forms for trivially copyable values.
template <typename T>
[[nodiscard]] int copyin(pagetable_t pt, T &dst, UserAddr src) {
  static_assert(__is_trivially_copyable(T));
  return copyin(pt, &dst, src, sizeof(T));
}
template <typename T>
[[nodiscard]] int copyout(pagetable_t pt, UserAddr dst, const T &src) {
  static_assert(__is_trivially_copyable(T));
  return copyout(pt, dst, &src, sizeof(T));
}
