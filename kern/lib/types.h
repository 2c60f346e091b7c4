// Basic fixed-width types used throughout the kernel.
#pragma once

#include <stddef.h>
#include <stdint.h>

using u8 = uint8_t;
using u16 = uint16_t;
using u32 = uint32_t;
using u64 = uint64_t;
using i8 = int8_t;
using i16 = int16_t;
using i32 = int32_t;
using i64 = int64_t;

// A page-table page: 512 PTEs.
using pte_t = u64;
using pagetable_t = pte_t *;

// A virtual address in some process's user address space. It is never dereferenced
// directly: only copyin/copyout (kern/mm/vm.h) read or write through it, after walking the
// process's page table. Keeping it a distinct type stops a user pointer from being passed
// where a kernel pointer is expected.
struct UserAddr {
  u64 va = 0;
  constexpr UserAddr() = default;
  constexpr explicit UserAddr(u64 v) : va(v) {}
  constexpr UserAddr operator+(u64 off) const { return UserAddr(va + off); }
  constexpr bool is_null() const { return va == 0; }
};

#define NELEM(x) (sizeof(x) / sizeof((x)[0]))
