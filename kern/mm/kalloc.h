// The physical page allocator: whole 4096-byte pages for page tables, user memory, kernel
// stacks and pipe buffers.
#pragma once

#include "lib/types.h"

// Hand every page from the end of the kernel image to phys_end to the allocator, except
// those of [keep_start, keep_end) (the RAM disk's; an empty range keeps none).
void kinit(u64 phys_end, u64 keep_start = 0, u64 keep_end = 0);
// A zero-filled page, or nullptr when memory is exhausted.
void *kalloc();
// A page with undefined contents (cheaper when the caller overwrites it entirely).
void *kalloc_nozero();
void kfree(void *pa);
// Number of free pages now (exposed to users through /proc, for leak tests).
u64 kfree_count();
// Total pages the allocator manages.
u64 ktotal_pages();
