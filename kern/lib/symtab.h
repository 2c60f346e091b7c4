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
// Builder makes such a table in memory (the profiler's copies of user programs' tables).
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
    const char *strtab =
        reinterpret_cast<const char *>(blob) + sizeof(Header) + size_t(h->count) * sizeof(Entry);
    if (h->strtab_size == 0 || strtab[h->strtab_size - 1] != 0) return t;
    t.m_entries = reinterpret_cast<const Entry *>(h + 1);
    t.m_count = h->count;
    t.m_strtab = strtab;
    t.m_strtab_size = h->strtab_size;
    return t;
  }

  uint32_t count() const { return m_count; }
  // Entry i's address and size (0 if unknown), i < count().
  uint64_t addr(uint32_t i) const { return m_entries[i].addr; }
  uint32_t size(uint32_t i) const { return m_entries[i].size; }
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

// Builds a table in a caller's buffer of fixed size, one symbol at a time (the profiler copies
// a program's symbols this way, kern/profile/symbolize.cc). Entries grow up from after the
// header and names down from the end of the buffer; finish() moves the names down behind the
// entries and writes the header. A symbol that does not fit is refused, and so the table is
// cut there. The buffer must be 8-byte aligned; names are copied as given.
class Builder {
 public:
  Builder(uint8_t *buf, uint32_t cap) : m_buf(buf), m_cap(cap), m_names(cap) {}

  // Append a symbol (len bytes of name, no NUL needed); false if it does not fit.
  bool add(uint64_t addr, uint64_t size, const char *name, uint32_t len) {
    uint64_t entry_end = HEADER + uint64_t(m_count + 1) * ENTRY;
    // Room for the entry, the name, its NUL and the table's final NUL.
    if (entry_end + len + 2 > m_names) return false;
    m_names -= len + 1;
    __builtin_memmove(m_buf + m_names, name, len);
    m_buf[m_names + len] = 0;
    Entry e{addr, size > 0xffffffffu ? 0xffffffffu : uint32_t(size), m_names};
    __builtin_memcpy(m_buf + HEADER + m_count * ENTRY, &e, ENTRY);
    m_count++;
    return true;
  }

  Entry *entries() { return reinterpret_cast<Entry *>(m_buf + HEADER); }
  uint32_t count() const { return m_count; }

  // Sort the entries by address (for sources that are not sorted). Shell's sort: no
  // recursion and no memory, fast enough for the few thousand entries a buffer holds.
  void sort() {
    Entry *e = entries();
    for (uint32_t gap = m_count / 2; gap > 0; gap /= 2)
      for (uint32_t i = gap; i < m_count; i++)
        for (uint32_t j = i; j >= gap && e[j - gap].addr > e[j].addr; j -= gap) {
          Entry tmp = e[j];
          e[j] = e[j - gap];
          e[j - gap] = tmp;
        }
  }

  // Close the table: its length in bytes (a blob Table::from accepts), or 0 if empty.
  uint32_t finish() {
    if (m_count == 0) return 0;
    uint32_t strtab = HEADER + m_count * ENTRY;
    uint32_t names_len = m_cap - m_names;
    __builtin_memmove(m_buf + strtab, m_buf + m_names, names_len);
    m_buf[strtab + names_len] = 0;  // Table::from wants the string table to end in a NUL
    for (uint32_t i = 0; i < m_count; i++) entries()[i].name -= m_names;
    Header h{MAGIC, m_count, names_len + 1, 0};
    __builtin_memcpy(m_buf, &h, HEADER);
    return strtab + names_len + 1;
  }

 private:
  static constexpr uint32_t HEADER = sizeof(Header);
  static constexpr uint32_t ENTRY = sizeof(Entry);
  uint8_t *m_buf;
  uint32_t m_cap;
  uint32_t m_names;  // where the lowest name starts
  uint32_t m_count = 0;
};

}  // namespace symtab
