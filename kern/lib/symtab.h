// A sorted symbol table in a compact binary form, and lookup in it.
//
// The build makes one for the kernel (tools/mksymtab.py from `nm -C -n -S`, embedded in the
// kernel image's last section, see kern/lib/ksyms.cc) so that panics and the profiler can
// name kernel addresses without parsing ELF. User binaries built here carry the same table
// in a `.symtab.sorted` section. The names are already demangled (`Spinlock::acquire()`),
// because demangling belongs to the toolchain on the build machine, not to the kernel.
//
// Layout (little-endian):
//   Header  { magic "SYMT", count, strtab_size, reserved }
//   Entry   { addr u64, size u32, name u32 }  x count, sorted by addr
//   char    strtab[strtab_size]               NUL-terminated names, Entry::name is an offset
//
// This header is pure: no kernel dependencies, so host unit tests exercise it directly.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace symtab {

inline constexpr uint32_t MAGIC = 0x544d5953;  // "SYMT"

struct Header {
  uint32_t magic;
  uint32_t count;
  uint32_t strtab_size;
  uint32_t reserved;
};
static_assert(sizeof(Header) == 16);

struct Entry {
  uint64_t addr;
  uint32_t size;  // 0 when unknown: then the symbol extends to the next one
  uint32_t name;  // offset into the string table
};
static_assert(sizeof(Entry) == 16);

struct Symbol {
  const char *name = nullptr;  // nullptr: not found
  uint64_t start = 0;
  uint64_t size = 0;
};

// A validated view of a table in memory.
class Table {
 public:
  constexpr Table() = default;

  // Check the header and bounds; an invalid blob gives an empty table.
  static Table from(const void *blob, size_t len) {
    Table t;
    if (blob == nullptr || len < sizeof(Header)) return t;
    const Header *h = static_cast<const Header *>(blob);
    if (h->magic != MAGIC) return t;
    size_t need = sizeof(Header) + size_t(h->count) * sizeof(Entry) + h->strtab_size;
    if (need > len || h->count > (len / sizeof(Entry))) return t;
    const char *strtab = reinterpret_cast<const char *>(blob) + sizeof(Header) +
                         size_t(h->count) * sizeof(Entry);
    if (h->strtab_size == 0 || strtab[h->strtab_size - 1] != 0) return t;
    t.m_entries = reinterpret_cast<const Entry *>(h + 1);
    t.m_count = h->count;
    t.m_strtab = strtab;
    t.m_strtab_size = h->strtab_size;
    return t;
  }

  uint32_t count() const { return m_count; }
  bool empty() const { return m_count == 0; }

  // The symbol containing addr: the last entry starting at or below addr, if addr is inside
  // its size (or, when its size is unknown, before the next entry's start).
  Symbol lookup(uint64_t addr) const {
    if (m_count == 0 || addr < m_entries[0].addr) return {};
    uint32_t lo = 0, hi = m_count;  // invariant: entries[lo].addr <= addr, answer in [lo, hi)
    while (hi - lo > 1) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (m_entries[mid].addr <= addr)
        lo = mid;
      else
        hi = mid;
    }
    const Entry &e = m_entries[lo];
    uint64_t end;
    if (e.size != 0)
      end = e.addr + e.size;
    else if (lo + 1 < m_count)
      end = m_entries[lo + 1].addr;
    else
      return {};
    if (addr >= end) return {};
    if (e.name >= m_strtab_size) return {};
    return Symbol{m_strtab + e.name, e.addr, end - e.addr};
  }

 private:
  const Entry *m_entries = nullptr;
  uint32_t m_count = 0;
  const char *m_strtab = nullptr;
  uint32_t m_strtab_size = 0;
};

}  // namespace symtab
