// Symbolization: from an address in a sample to the name of its function.
//
// Kernel addresses are looked up in the table embedded in the kernel image (lib/ksyms.h).
// User addresses are looked up in the executable that was running (images.cc), read through
// the file system, in one of two tables:
//
//   - `.symtab.sorted`: programs built in this tree carry the kernel's table format
//     (lib/symtab.h), sorted, with demangled C++ names, added by the build from `nm -C`.
//     A binary search reads about log2(n) 16-byte entries.
//   - `.symtab`: any other ELF (for example a program built for xv6) falls back to its
//     standard symbol table, scanned for the function symbol whose range holds the address.
//     Names there are as the compiler wrote them (C names are already plain).
//
// Reading files is slow next to the sampler, which is why none of this happens in the trap.
// Profiles repeat the same few addresses thousands of times, so a small direct-mapped cache
// of (image, address) -> name in front of the file reads makes rendering fast.
//
// A name is at most NAME_MAX - 1 bytes (profiler.h): a longer one, which only a user's own
// program can have (the kernel's longest is 151), is cut and ends in "..." so that a reader
// sees it was cut.
//
// Callers hold prof::lock(): the cache and the per-image table locations are not locked.

#include "fs/fs.h"
#include "lib/ksyms.h"
#include "lib/string.h"
#include "lib/symtab.h"
#include "profile/profiler.h"
#include "profile/walk.h"

namespace prof {

namespace {

constexpr int NIMAGE_INFO = 32;
constexpr u32 SHT_SYMTAB = 2;
constexpr u8 STT_FUNC = 2;

struct SectionHeader {
  u32 name;
  u32 type;
  u64 flags;
  u64 addr;
  u64 offset;
  u64 size;
  u32 link;
  u32 info;
  u64 addralign;
  u64 entsize;
};
static_assert(sizeof(SectionHeader) == 64);

struct ElfSym {
  u32 name;
  u8 info;
  u8 other;
  u16 shndx;
  u64 value;
  u64 size;
};
static_assert(sizeof(ElfSym) == 24);

// A loaded segment of the program, to find code bytes in the file.
struct Segment {
  u64 vaddr = 0;
  u64 filesz = 0;
  u64 offset = 0;
};
constexpr int MAX_SEGMENTS = 4;

// Where an image's symbols (and code) are, found once per image.
struct TableInfo {
  Segment segments[MAX_SEGMENTS];
  int nsegments = 0;
  bool probed = false;
  bool sorted = false;    // .symtab.sorted found
  u32 entries = 0;        // sorted: file offset of the Entry array
  u32 count = 0;          // sorted: entries; elf: symbols
  u32 strtab = 0;         // file offset of the string table
  u32 strtab_size = 0;
  u32 symtab = 0;         // elf: file offset of the symbol array
};
constinit TableInfo tables[NIMAGE_INFO];

// The inode is locked by the caller for all of these.
template <typename T>
bool read_at(Inode *ip, u32 off, T &out) {
  return readi(ip, false, reinterpret_cast<u64>(&out), off, sizeof(T)) == sizeof(T);
}

// Mark a name that did not fit in its buffer: its last bytes (buf holds len - 1 and the NUL)
// become "...", so a reader sees that it was cut.
void mark_cut(char *buf, u32 len) {
  if (len < 4) return;
  buf[len - 4] = buf[len - 3] = buf[len - 2] = '.';
  buf[len - 1] = 0;
}

// Copy a name into buf (len bytes with the NUL), marking it if it had to be cut.
void copy_name(char *buf, const char *name, u32 len) {
  safestrcpy(buf, name, len);
  if (strlen(name) >= len) mark_cut(buf, len);
}

bool read_name(Inode *ip, const TableInfo &t, u32 name, char *buf, u32 len) {
  if (name >= t.strtab_size || len < 4) return false;
  // One byte more than fits: if it is not the name's NUL either, the name is longer.
  u32 n = t.strtab_size - name < len ? t.strtab_size - name : len;
  int got = readi(ip, false, reinterpret_cast<u64>(buf), t.strtab + name, n);
  if (got <= 0) return false;
  u32 end = 0;
  while (end < static_cast<u32>(got) && buf[end] != 0) end++;
  if (end == static_cast<u32>(got)) {
    // No NUL: longer than the buffer, or running off the end of the table.
    u32 keep = end < len ? end : len - 1;
    buf[keep] = 0;
    mark_cut(buf, keep + 1);
  }
  return buf[0] != 0;
}

void probe(Inode *ip, TableInfo &t) {
  t.probed = true;
  u8 eh[64];
  if (readi(ip, false, reinterpret_cast<u64>(eh), 0, 64) != 64) return;
  if (eh[0] != 0x7f || eh[1] != 'E' || eh[2] != 'L' || eh[3] != 'F' || eh[4] != 2) return;
  u64 shoff;
  u16 shnum, shstrndx;
  u64 phoff;
  u16 phnum;
  memmove(&phoff, eh + 0x20, 8);
  memmove(&phnum, eh + 0x38, 2);
  for (u16 i = 0; i < phnum && t.nsegments < MAX_SEGMENTS && phoff < 0xffffffffu; i++) {
    struct {
      u32 type, flags;
      u64 offset, vaddr, paddr, filesz, memsz, align;
    } ph;
    if (!read_at(ip, static_cast<u32>(phoff + i * sizeof(ph)), ph)) break;
    if (ph.type == 1 /* PT_LOAD */) t.segments[t.nsegments++] = {ph.vaddr, ph.filesz, ph.offset};
  }
  memmove(&shoff, eh + 0x28, 8);
  memmove(&shnum, eh + 0x3c, 2);
  memmove(&shstrndx, eh + 0x3e, 2);
  if (shoff == 0 || shoff > 0xffffffffu || shstrndx >= shnum) return;
  SectionHeader names;
  if (!read_at(ip, static_cast<u32>(shoff + shstrndx * sizeof(SectionHeader)), names)) return;
  for (u16 i = 0; i < shnum; i++) {
    SectionHeader sh;
    if (!read_at(ip, static_cast<u32>(shoff + i * sizeof(SectionHeader)), sh)) return;
    char name[16] = {};
    readi(ip, false, reinterpret_cast<u64>(name), static_cast<u32>(names.offset + sh.name),
          sizeof(name) - 1);
    if (strncmp(name, ".symtab.sorted", 15) == 0) {
      symtab::Header h;
      if (!read_at(ip, static_cast<u32>(sh.offset), h) || h.magic != symtab::MAGIC) continue;
      t.sorted = true;
      t.entries = static_cast<u32>(sh.offset + sizeof(h));
      t.count = h.count;
      t.strtab = t.entries + h.count * static_cast<u32>(sizeof(symtab::Entry));
      t.strtab_size = h.strtab_size;
      return;  // the preferred table: stop looking
    }
    if (sh.type == SHT_SYMTAB && sh.link < shnum && !t.sorted) {
      SectionHeader str;
      if (!read_at(ip, static_cast<u32>(shoff + sh.link * sizeof(SectionHeader)), str)) continue;
      t.symtab = static_cast<u32>(sh.offset);
      t.count = static_cast<u32>(sh.size / sizeof(ElfSym));
      t.strtab = static_cast<u32>(str.offset);
      t.strtab_size = static_cast<u32>(str.size);
    }
  }
}

bool lookup_sorted(Inode *ip, const TableInfo &t, u64 addr, char *buf, u32 len) {
  symtab::Entry e;
  u32 lo = 0, hi = t.count;  // find the last entry with e.addr <= addr
  if (hi == 0) return false;
  if (!read_at(ip, t.entries, e) || e.addr > addr) return false;
  while (hi - lo > 1) {
    u32 mid = lo + (hi - lo) / 2;
    if (!read_at(ip, t.entries + mid * static_cast<u32>(sizeof(e)), e)) return false;
    if (e.addr <= addr)
      lo = mid;
    else
      hi = mid;
  }
  if (!read_at(ip, t.entries + lo * static_cast<u32>(sizeof(e)), e)) return false;
  u64 end = e.addr + e.size;
  if (e.size == 0) {
    symtab::Entry next;
    if (lo + 1 >= t.count || !read_at(ip, t.entries + (lo + 1) * static_cast<u32>(sizeof(e)), next))
      return false;
    end = next.addr;
  }
  if (addr >= end) return false;
  return read_name(ip, t, e.name, buf, len);
}

bool lookup_elf(Inode *ip, const TableInfo &t, u64 addr, char *buf, u32 len) {
  constexpr u32 CHUNK = 32;
  ElfSym syms[CHUNK];
  for (u32 i = 0; i < t.count; i += CHUNK) {
    u32 n = t.count - i < CHUNK ? t.count - i : CHUNK;
    u32 bytes = n * static_cast<u32>(sizeof(ElfSym));
    if (readi(ip, false, reinterpret_cast<u64>(syms), t.symtab + i * static_cast<u32>(sizeof(ElfSym)),
              bytes) != static_cast<int>(bytes))
      return false;
    for (u32 k = 0; k < n; k++) {
      const ElfSym &s = syms[k];
      if ((s.info & 0xf) == STT_FUNC && s.value <= addr && addr < s.value + s.size)
        return read_name(ip, t, s.name, buf, len);
    }
  }
  return false;
}

// The cache: direct-mapped on the address.
constexpr int CACHE_SIZE = 1024;
struct CacheEntry {
  u64 addr = 0;
  i32 image = 0;
  bool valid = false;
  bool found = false;
  char name[NAME_MAX] = {};
};
constinit CacheEntry cache[CACHE_SIZE];

// stub_at's answers, direct-mapped on (image, pc). Keyed by image slot, so it must be
// forgotten whenever the slots are (symbolize_reset): a slot reused after a clear holds
// another program.
constexpr int STUB_CACHE_SIZE = 256;
struct StubCache {
  u64 pc;
  i32 image;
  bool valid, stub;
};
constinit StubCache stubs[STUB_CACHE_SIZE];

bool user_lookup(int image, u64 addr, char *buf, u32 len) {
  Inode *ip = image_inode(image);
  if (ip == nullptr || image >= NIMAGE_INFO) return false;
  TableInfo &t = tables[image];
  ilock(ip);
  if (!t.probed) probe(ip, t);
  bool ok = false;
  if (t.sorted)
    ok = lookup_sorted(ip, t, addr, buf, len);
  else if (t.count > 0)
    ok = lookup_elf(ip, t, addr, buf, len);
  iunlock(ip);
  return ok;
}

}  // namespace

bool symbolize(bool kernel, int image, u64 addr, char *buf, u32 len) {
  if (len < 4) return false;
  if (kernel) {
    const char *name = ksym_lookup(addr);
    if (name == nullptr) return false;
    copy_name(buf, name, len);
    return true;
  }
  if (image < 0) return false;
  CacheEntry &c = cache[(addr ^ (addr >> 12) ^ static_cast<u64>(image) * 0x9e37) % CACHE_SIZE];
  if (!(c.valid && c.addr == addr && c.image == image)) {
    c.valid = true;
    c.addr = addr;
    c.image = image;
    c.found = user_lookup(image, addr, c.name, NAME_MAX);
  }
  if (!c.found) return false;
  copy_name(buf, c.name, len);
  return true;
}

bool stub_at(int image, u64 pc) {
  if (image < 0 || image >= NIMAGE_INFO || pc < 4) return false;
  StubCache &c = stubs[(pc / 2 + static_cast<u64>(image) * 31) % STUB_CACHE_SIZE];
  if (c.valid && c.pc == pc && c.image == image) return c.stub;
  c = StubCache{pc, image, true, false};

  Inode *ip = image_inode(image);
  if (ip == nullptr) return false;
  TableInfo &t = tables[image];
  ilock(ip);
  if (!t.probed) probe(ip, t);
  for (int i = 0; i < t.nsegments; i++) {
    const Segment &sg = t.segments[i];
    if (pc - 4 < sg.vaddr || pc + 8 > sg.vaddr + sg.filesz) continue;
    u8 code[12];
    u64 off = sg.offset + (pc - 4 - sg.vaddr);
    if (off < 0xffffffffu &&
        readi(ip, false, reinterpret_cast<u64>(code), static_cast<u32>(off), 12) == 12)
      c.stub = profwalk::in_syscall_stub(code);
    break;
  }
  iunlock(ip);
  return c.stub;
}

void symbolize_reset() {
  for (CacheEntry &c : cache) c.valid = false;
  for (StubCache &c : stubs) c.valid = false;
  for (TableInfo &t : tables) t = TableInfo{};
}

}  // namespace prof
