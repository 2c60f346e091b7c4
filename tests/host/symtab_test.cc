// Unit tests for the symbol-table lookup that panics and the profiler use (kern/lib/symtab.h).
//
// Most tests build small tables by hand, so each one can put a symbol exactly where the case
// needs it: an address at a symbol's first byte, in its middle, at its last byte, in a gap
// between two symbols, before the first, after the last. A symbol whose size is unknown (0)
// runs up to the next symbol. A damaged header must give an empty table, never a read outside
// the blob.
//
// The last test reads a table that tools/mksymtab.py made from real `nm` output
// (data/sample.nm), which checks that the tool and the header agree on the format. The
// Makefile passes its path in SYMTAB_SAMPLE; without it that test is skipped.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "lib/symtab.h"

namespace {

struct Sym {
  uint64_t addr;
  uint32_t size;
  std::string name;
};

// Copies bytes into storage aligned like the kernel image's, where the table is read in place.
std::vector<uint64_t> aligned_copy(const std::vector<uint8_t> &bytes) {
  std::vector<uint64_t> out((bytes.size() + 7) / 8, 0);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// A table laid out as symtab.h documents it, built from a list of symbols sorted by address.
class Blob {
 public:
  explicit Blob(const std::vector<Sym> &syms) {
    std::string strtab(1, '\0');  // offset 0 is the empty name
    std::vector<symtab::Entry> entries;
    for (const Sym &s : syms) {
      entries.push_back({s.addr, s.size, static_cast<uint32_t>(strtab.size())});
      strtab += s.name;
      strtab += '\0';
    }
    symtab::Header h{symtab::MAGIC, static_cast<uint32_t>(syms.size()),
                     static_cast<uint32_t>(strtab.size()), 0};
    size_t entry_bytes = entries.size() * sizeof(symtab::Entry);
    bytes_.resize(sizeof(h) + entry_bytes + strtab.size());
    std::memcpy(bytes_.data(), &h, sizeof(h));
    std::memcpy(bytes_.data() + sizeof(h), entries.data(), entry_bytes);
    std::memcpy(bytes_.data() + sizeof(h) + entry_bytes, strtab.data(), strtab.size());
    words_ = aligned_copy(bytes_);
  }

  const std::vector<uint8_t> &bytes() const { return bytes_; }
  // A table over the first `len` bytes (all of them by default). It points into this Blob.
  symtab::Table table(size_t len = SIZE_MAX) const {
    return symtab::Table::from(words_.data(), len == SIZE_MAX ? bytes_.size() : len);
  }

 private:
  std::vector<uint8_t> bytes_;
  std::vector<uint64_t> words_;
};

std::string name_at(const symtab::Table &t, uint64_t addr) {
  symtab::Symbol s = t.lookup(addr);
  return s.name == nullptr ? "(none)" : s.name;
}

// Three functions: a and b are adjacent, then a gap, then c.
const std::vector<Sym> kThree = {
    {0x1000, 0x20, "a"},
    {0x1020, 0x10, "b"},
    {0x1100, 0x40, "c"},
};

TEST(Symtab, ExactStartsFindTheSymbol) {
  Blob blob(kThree);
  symtab::Table t = blob.table();
  ASSERT_EQ(t.count(), 3u);
  for (const Sym &s : kThree) {
    symtab::Symbol found = t.lookup(s.addr);
    ASSERT_NE(found.name, nullptr) << s.name;
    EXPECT_EQ(std::string(found.name), s.name);
    EXPECT_EQ(found.start, s.addr);
    EXPECT_EQ(found.size, s.size);
  }
}

TEST(Symtab, MiddlesAndLastBytes) {
  Blob blob(kThree);
  symtab::Table t = blob.table();
  EXPECT_EQ(name_at(t, 0x1010), "a");
  EXPECT_EQ(name_at(t, 0x101f), "a");  // last byte of a
  EXPECT_EQ(name_at(t, 0x1020), "b");  // a ends exactly where b starts
  EXPECT_EQ(name_at(t, 0x102f), "b");
  EXPECT_EQ(name_at(t, 0x113f), "c");
}

TEST(Symtab, GapsBeforeAndAfterFindNothing) {
  Blob blob(kThree);
  symtab::Table t = blob.table();
  EXPECT_EQ(name_at(t, 0x1030), "(none)");  // just past b
  EXPECT_EQ(name_at(t, 0x10ff), "(none)");  // just before c
  EXPECT_EQ(name_at(t, 0x0fff), "(none)");  // before the first
  EXPECT_EQ(name_at(t, 0), "(none)");
  EXPECT_EQ(name_at(t, 0x1140), "(none)");  // just past the last
  EXPECT_EQ(name_at(t, UINT64_MAX), "(none)");
}

TEST(Symtab, UnknownSizeRunsToTheNextSymbol) {
  Blob blob({{0x2000, 0, "entry"}, {0x2008, 0x10, "next"}, {0x3000, 0, "last"}});
  symtab::Table t = blob.table();
  symtab::Symbol s = t.lookup(0x2007);
  ASSERT_NE(s.name, nullptr);
  EXPECT_EQ(std::string(s.name), "entry");
  EXPECT_EQ(s.start, 0x2000u);
  EXPECT_EQ(s.size, 8u);
  EXPECT_EQ(name_at(t, 0x2008), "next");
  // The last symbol has no size and nothing after it, so its end is unknown.
  EXPECT_EQ(name_at(t, 0x3000), "(none)");
}

TEST(Symtab, SingleSymbol) {
  Blob blob({{0x80000000, 4, "only"}});
  symtab::Table t = blob.table();
  EXPECT_EQ(name_at(t, 0x7fffffff), "(none)");
  EXPECT_EQ(name_at(t, 0x80000000), "only");
  EXPECT_EQ(name_at(t, 0x80000003), "only");
  EXPECT_EQ(name_at(t, 0x80000004), "(none)");
}

TEST(Symtab, EmptyTableFindsNothing) {
  Blob blob({});
  symtab::Table t = blob.table();
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.count(), 0u);
  EXPECT_EQ(name_at(t, 0), "(none)");
  EXPECT_EQ(name_at(t, 0x80000000), "(none)");
  symtab::Table none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(name_at(none, 0x1000), "(none)");
}

TEST(Symtab, AgreesWithALinearScanOnABigTable) {
  std::mt19937_64 rng(42);
  std::vector<Sym> syms;
  uint64_t addr = 0x80000000;
  for (int i = 0; i < 2000; i++) {
    addr += rng() % 64 + 1;
    uint32_t size = rng() % 4 == 0 ? 0 : static_cast<uint32_t>(rng() % 64 + 1);
    syms.push_back({addr, size, "f" + std::to_string(i)});
  }
  Blob blob(syms);
  symtab::Table t = blob.table();
  ASSERT_EQ(t.count(), syms.size());
  for (uint64_t probe = syms.front().addr - 10; probe < syms.back().addr + 80; probe += 3) {
    std::string expected = "(none)";
    for (size_t i = 0; i < syms.size(); i++) {
      uint64_t end = syms[i].size          ? syms[i].addr + syms[i].size
                     : i + 1 < syms.size() ? syms[i + 1].addr
                                           : syms[i].addr;
      if (syms[i].addr <= probe && (i + 1 == syms.size() || syms[i + 1].addr > probe))
        expected = probe < end ? syms[i].name : "(none)";
    }
    ASSERT_EQ(name_at(t, probe), expected) << "address " << probe;
  }
}

// --- Tables built in a fixed buffer (symtab::Builder) -------------------------------------------
//
// The property: whatever symbols are added (random addresses, sizes and names, in any order,
// sorted afterwards), the finished buffer is a valid table that answers every address as a
// linear scan over the symbols the Builder accepted does; the Builder accepts symbols in
// order until one does not fit, and never writes past its buffer.

uint64_t test_seed() {
  const char *env = std::getenv("SYMTAB_SEED");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : std::random_device{}();
}

TEST(SymtabBuilder, AgreesWithALinearScanWhateverTheBudget) {
  uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  int cases = 0, cut = 0;
  for (int round = 0; round < 200; round++, cases++) {
    uint32_t cap = static_cast<uint32_t>(rng() % 3000 + 1) & ~7u;
    std::vector<uint64_t> storage(cap / 8 + 2, 0xa5a5a5a5a5a5a5a5ull);  // + guard words
    uint8_t *buf = reinterpret_cast<uint8_t *>(storage.data());
    symtab::Builder b(buf, cap);
    std::vector<Sym> accepted;
    int want = static_cast<int>(rng() % 200);
    for (int i = 0; i < want; i++) {
      // Non-overlapping symbols, added in a random order: slot i of 64 bytes, size 1..64.
      uint64_t addr = 0x1000 + (rng() % 4096) * 64;
      uint32_t size = static_cast<uint32_t>(rng() % 64 + 1);
      std::string name(rng() % 20 + 1, 'a');
      for (char &c : name) c = static_cast<char>(rng() % 255 + 1);  // any byte but NUL
      bool dup = false;
      for (const Sym &s : accepted) dup = dup || s.addr == addr;
      if (dup) continue;
      if (!b.add(addr, size, name.data(), static_cast<uint32_t>(name.size()))) {
        cut++;
        break;
      }
      accepted.push_back({addr, size, name});
    }
    b.sort();
    uint32_t len = b.finish();
    ASSERT_LE(len, cap) << "seed " << seed << " round " << round;
    ASSERT_EQ(storage[cap / 8], 0xa5a5a5a5a5a5a5a5ull) << "wrote past the buffer, seed " << seed;
    symtab::Table t = symtab::Table::from(buf, len);
    ASSERT_EQ(t.count(), accepted.size()) << "seed " << seed << " round " << round;
    for (int probe = 0; probe < 300; probe++) {
      uint64_t addr = 0x1000 + rng() % (4096 * 64 + 64);
      std::string expected = "(none)";
      for (const Sym &s : accepted)
        if (s.addr <= addr && addr < s.addr + s.size) expected = s.name;
      ASSERT_EQ(name_at(t, addr), expected) << "seed " << seed << " round " << round;
    }
  }
  std::printf("symtab builder: seed %llu, %d cases (%d cut by the budget)\n",
              static_cast<unsigned long long>(seed), cases, cut);
}

// The profiler copies a `.symtab.sorted` table in address order, and there a symbol may have
// size 0 (it runs to the next one). Whatever the budget cuts, every address of the copy must
// name its function in the whole table or nothing ("??"): never another function's name.
TEST(SymtabBuilder, ACutTableNamesNothingWrongly) {
  uint64_t seed = test_seed() ^ 0x5bd1e995u;
  std::mt19937_64 rng(seed);
  int cases = 0, cut = 0, unnamed = 0;
  for (int round = 0; round < 200; round++, cases++) {
    std::vector<Sym> all;  // in address order, as .symtab.sorted holds them
    uint64_t addr = 0x1000;
    int want = static_cast<int>(rng() % 120 + 1);
    for (int i = 0; i < want; i++) {
      addr += rng() % 48;  // a gap, or none
      uint32_t size = rng() % 4 == 0 ? 0 : static_cast<uint32_t>(rng() % 64 + 1);
      std::string name(rng() % 159 + 1, 'a');  // up to NAME_MAX - 1 bytes, as copied
      for (char &c : name) c = static_cast<char>(rng() % 255 + 1);
      all.push_back({addr, size, name});
      addr += size == 0 ? rng() % 64 + 1 : size;
    }
    Blob whole(all);
    uint32_t cap = static_cast<uint32_t>(rng() % 12000 + 1) & ~7u;
    std::vector<uint64_t> storage(cap / 8 + 2, 0xa5a5a5a5a5a5a5a5ull);
    uint8_t *buf = reinterpret_cast<uint8_t *>(storage.data());
    symtab::Builder b(buf, cap);
    size_t accepted = 0;
    for (const Sym &s : all) {
      if (!b.add(s.addr, s.size, s.name.data(), static_cast<uint32_t>(s.name.size()))) break;
      accepted++;
    }
    if (accepted < all.size()) cut++;
    uint32_t len = b.finish();
    ASSERT_EQ(storage[cap / 8], 0xa5a5a5a5a5a5a5a5ull) << "wrote past the buffer, seed " << seed;
    symtab::Table copy = symtab::Table::from(buf, len);
    ASSERT_EQ(copy.count(), accepted) << "seed " << seed << " round " << round;
    for (uint64_t a = 0xff0; a < addr + 8; a += rng() % 7 + 1) {
      std::string got = name_at(copy, a), truth = name_at(whole.table(), a);
      ASSERT_TRUE(got == truth || got == "(none)")
          << "seed " << seed << " round " << round << " addr " << a << ": another name";
      // What the copy holds it names: only the symbols left out, and the last one kept when
      // its size is unknown (its end was the next, cut, symbol), may go unnamed.
      size_t owner = all.size();
      for (size_t i = 0; i < all.size(); i++)
        if (all[i].addr <= a && name_at(whole.table(), a) == all[i].name) owner = i;
      bool may_lose = owner == all.size() || owner >= accepted ||
                      (owner + 1 == accepted && all[owner].size == 0);
      if (!may_lose) {
        ASSERT_EQ(got, truth) << "seed " << seed << " round " << round << " addr " << a;
      }
      if (got != truth) unnamed++;
    }
  }
  std::printf("symtab cut copy: seed %llu, %d cases (%d cut, %d addresses unnamed)\n",
              static_cast<unsigned long long>(seed), cases, cut, unnamed);
  ASSERT_GT(cut, 0) << "no case was cut: the test would not see a cut, seed " << seed;
}

TEST(SymtabBuilder, EmptyBuilderGivesNoTable) {
  alignas(8) uint8_t buf[64];
  symtab::Builder b(buf, sizeof(buf));
  EXPECT_EQ(b.finish(), 0u);
  symtab::Builder tiny(buf, 16);
  EXPECT_FALSE(tiny.add(1, 1, "x", 1)) << "a header and nothing else has no room for a symbol";
}

// --- Damaged tables --------------------------------------------------------------------------

TEST(Symtab, NullOrShortBlobGivesEmptyTable) {
  EXPECT_TRUE(symtab::Table::from(nullptr, 100).empty());
  Blob blob(kThree);
  EXPECT_TRUE(blob.table(0).empty());
  EXPECT_TRUE(blob.table(sizeof(symtab::Header) - 1).empty());
  // One byte short of the string table's end.
  EXPECT_TRUE(blob.table(blob.bytes().size() - 1).empty());
  EXPECT_FALSE(blob.table().empty());
}

TEST(Symtab, BadMagicGivesEmptyTable) {
  Blob blob(kThree);
  std::vector<uint64_t> words = aligned_copy(blob.bytes());
  reinterpret_cast<symtab::Header *>(words.data())->magic ^= 1;
  EXPECT_TRUE(symtab::Table::from(words.data(), blob.bytes().size()).empty());
}

TEST(Symtab, CountLargerThanTheBlobGivesEmptyTable) {
  Blob blob(kThree);
  for (uint32_t count : {4u, 1000u, 0x10000000u, 0xffffffffu}) {
    std::vector<uint64_t> words = aligned_copy(blob.bytes());
    reinterpret_cast<symtab::Header *>(words.data())->count = count;
    EXPECT_TRUE(symtab::Table::from(words.data(), blob.bytes().size()).empty()) << count;
  }
}

TEST(Symtab, StringTableOutOfBoundsOrUnterminatedGivesEmptyTable) {
  Blob blob(kThree);
  size_t len = blob.bytes().size();
  for (uint32_t strtab_size : {0u, 0xffffffffu, static_cast<uint32_t>(len)}) {
    std::vector<uint64_t> words = aligned_copy(blob.bytes());
    reinterpret_cast<symtab::Header *>(words.data())->strtab_size = strtab_size;
    EXPECT_TRUE(symtab::Table::from(words.data(), len).empty()) << strtab_size;
  }
  std::vector<uint64_t> words = aligned_copy(blob.bytes());
  reinterpret_cast<uint8_t *>(words.data())[len - 1] = 'x';  // the last name loses its NUL
  EXPECT_TRUE(symtab::Table::from(words.data(), len).empty());
}

TEST(Symtab, NameOffsetOutsideTheStringTableIsNotFollowed) {
  Blob blob(kThree);
  std::vector<uint64_t> words = aligned_copy(blob.bytes());
  auto *entries = reinterpret_cast<symtab::Entry *>(reinterpret_cast<uint8_t *>(words.data()) +
                                                    sizeof(symtab::Header));
  entries[1].name = 0x7fffffff;
  symtab::Table t = symtab::Table::from(words.data(), blob.bytes().size());
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(name_at(t, 0x1000), "a");
  EXPECT_EQ(name_at(t, 0x1020), "(none)");
}

// --- A table made by tools/mksymtab.py -------------------------------------------------------

TEST(Symtab, ReadsWhatMksymtabWrites) {
  const char *path = std::getenv("SYMTAB_SAMPLE");
  if (path == nullptr) GTEST_SKIP() << "SYMTAB_SAMPLE is not set (the Makefile sets it)";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<uint64_t> words = aligned_copy(bytes);
  symtab::Table t = symtab::Table::from(words.data(), bytes.size());

  // data/sample.nm lists nine code symbols; the data and absolute ones are left out.
  ASSERT_EQ(t.count(), 9u);
  EXPECT_EQ(name_at(t, 0x80000000), "asm_entry");
  EXPECT_EQ(t.lookup(0x80000002).size, 4u) << "no size in nm: runs to asm_second";
  EXPECT_EQ(name_at(t, 0x80000005), "asm_second");
  EXPECT_EQ(name_at(t, 0x8000000d), "helper(int, char const*)");
  EXPECT_EQ(name_at(t, 0x8000000e), "Spinlock::acquire()");
  EXPECT_EQ(name_at(t, 0x8000003f), "user(char const*)");
  EXPECT_EQ(name_at(t, 0x80000068), "int twice<int>(int)");
  EXPECT_EQ(name_at(t, 0x80000071), "long twice<long>(long)");
  EXPECT_EQ(name_at(t, 0x80000072), "(none)");
  EXPECT_EQ(name_at(t, 0x80001000), "(none)") << "data symbols are not in the table";
  EXPECT_EQ(name_at(t, 0x7fffffff), "(none)");
}

}  // namespace
