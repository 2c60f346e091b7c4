// Symbolization: from an address in a sample to the name of its function.
//
// Kernel addresses are looked up in the table embedded in the kernel image (lib/ksyms.h).
// User addresses are looked up in a copy of the program's own table, made when the program
// was registered (images.cc calls load_symbols()), so that the file need not be kept. The
// copy is always in the kernel's table format (lib/symtab.h), built from one of two sources:
//
//   - `.symtab.sorted`: programs built in this tree carry that format already, sorted, with
//     demangled C++ names, added by the build from `nm -C`. Entries are copied in order.
//   - `.symtab`: any other ELF (for example a program built for xv6) falls back to its
//     standard symbol table: its function symbols are copied, then sorted by address. Names
//     there are as the compiler wrote them (C names are already plain).
//
// A name is at most NAME_MAX - 1 bytes (profiler.h): a longer one, which only a user's own
// program can have (the kernel's longest is 151), is cut as it is copied and ends in "..."
// so that a reader sees it was cut. The copy is built in the caller's buffer by
// symtab::Builder, and cut where the buffer is full: the symbols left out are not in the
// copy, so their addresses print as "??", never as another function's name.
//
// For stub_at(), load_symbols() also records where the program's ecall instructions are:
// a sample's caller is inserted from ra only when its pc sits in a system-call stub, and
// whether it does is a question about the code bytes around the pc (walk.h's
// in_syscall_stub), which the ecall addresses answer without the file.
//
// The same holds for a pc in a function's prologue or epilogue, where s0 is still (or again)
// the caller's frame pointer (prologue.h): load_symbols() scans each function's code once for
// those windows and keeps them, sorted, in the space its table leaves; caller_in_ra() asks
// both questions. Only the first CODE_MAX bytes of a function are scanned, and windows that
// do not fit are left out: a pc there keeps the chain the walk found.
//
// Looking up a copy is a binary search in memory, so nothing is cached here (the reader of
// /proc/profile keeps each frame's rendered text, report.cc). Callers hold prof::lock(),
// which keeps the copies in place.

#include "fs/fs.h"
#include "lib/printf.h"
#include "lib/ksyms.h"
#include "lib/string.h"
#include "lib/symtab.h"
#include "profile/profiler.h"
#include "profile/prologue.h"
#include "profile/walk.h"

namespace prof {

namespace {

constexpr u32 SHT_SYMTAB = 2;
constexpr u8 STT_FUNC = 2;
constexpr u32 PF_X = 1;
constexpr u32 MAX_ECALLS = 256;  // per program; a usual one has one per system call
constexpr u32 CODE_MAX = 2048;   // bytes of a function scanned for its windows
constexpr int FN_WINDOWS = 16;   // windows kept per function

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

struct ProgramHeader {
  u32 type, flags;
  u64 offset, vaddr, paddr, filesz, memsz, align;
};
static_assert(sizeof(ProgramHeader) == 56);

struct ElfSym {
  u32 name;
  u8 info;
  u8 other;
  u16 shndx;
  u64 value;
  u64 size;
};
static_assert(sizeof(ElfSym) == 24);

// An executable segment of the program, to find its ecall instructions.
struct Segment {
  u64 vaddr = 0;
  u64 filesz = 0;
  u64 offset = 0;
};
constexpr int MAX_SEGMENTS = 4;

// Where a program's symbols and code are in its file.
struct Layout {
  Segment segments[MAX_SEGMENTS];
  int nsegments = 0;
  bool sorted = false;  // .symtab.sorted found
  u32 entries = 0;      // sorted: file offset of the Entry array
  u32 count = 0;        // sorted: entries; elf: symbols
  u32 strtab = 0;       // file offset of the string table
  u32 strtab_size = 0;
  u32 symtab = 0;  // elf: file offset of the symbol array
};

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

// Name `name` of the string table into buf (len >= 4 bytes, NUL-terminated), cut to
// len - 1 bytes and marked if longer; its length, or 0.
u32 read_name(Inode *ip, const Layout &t, u32 name, char *buf, u32 len) {
  if (name >= t.strtab_size || len < 4) return 0;
  // One byte more than fits: if it is not the name's NUL either, the name is longer.
  u32 n = t.strtab_size - name < len ? t.strtab_size - name : len;
  int got = readi(ip, false, reinterpret_cast<u64>(buf), t.strtab + name, n);
  if (got <= 0) return 0;
  u32 end = 0;
  while (end < static_cast<u32>(got) && buf[end] != 0) end++;
  if (end < static_cast<u32>(got)) return end;
  // No NUL: longer than the buffer, or running off the end of the table.
  u32 keep = end < len ? end : len - 1;
  buf[keep] = 0;
  mark_cut(buf, keep + 1);
  return keep;
}

Layout probe(Inode *ip) {
  Layout t;
  u8 eh[64];
  if (readi(ip, false, reinterpret_cast<u64>(eh), 0, 64) != 64) return t;
  if (eh[0] != 0x7f || eh[1] != 'E' || eh[2] != 'L' || eh[3] != 'F' || eh[4] != 2) return t;
  u64 shoff;
  u16 shnum, shstrndx;
  u64 phoff;
  u16 phnum;
  memmove(&phoff, eh + 0x20, 8);
  memmove(&phnum, eh + 0x38, 2);
  for (u16 i = 0; i < phnum && t.nsegments < MAX_SEGMENTS && phoff < 0xffffffffu; i++) {
    ProgramHeader ph;
    if (!read_at(ip, static_cast<u32>(phoff + i * sizeof(ph)), ph)) break;
    if (ph.type == 1 /* PT_LOAD */ && (ph.flags & PF_X))
      t.segments[t.nsegments++] = {ph.vaddr, ph.filesz, ph.offset};
  }
  memmove(&shoff, eh + 0x28, 8);
  memmove(&shnum, eh + 0x3c, 2);
  memmove(&shstrndx, eh + 0x3e, 2);
  if (shoff == 0 || shoff > 0xffffffffu || shstrndx >= shnum) return t;
  SectionHeader names;
  if (!read_at(ip, static_cast<u32>(shoff + shstrndx * sizeof(SectionHeader)), names)) return t;
  for (u16 i = 0; i < shnum; i++) {
    SectionHeader sh;
    if (!read_at(ip, static_cast<u32>(shoff + i * sizeof(SectionHeader)), sh)) return t;
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
      return t;  // the preferred table: stop looking
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
  return t;
}

// Record the address of every ecall (bytes 73 00 00 00 at an even address) in the
// executable segments, in ascending order, at most `max`. Returns how many.
u32 find_ecalls(Inode *ip, const Layout &t, u64 *out, u32 max) {
  u32 n = 0;
  constexpr u32 CHUNK = 512;
  u8 code[CHUNK + 3];
  for (int s = 0; s < t.nsegments; s++) {
    const Segment &sg = t.segments[s];
    if (sg.offset > 0xffffffffu || sg.filesz > 0xffffffffu) continue;
    for (u64 off = 0; off + 4 <= sg.filesz && n < max; off += CHUNK) {
      u32 want = static_cast<u32>(sg.filesz - off < CHUNK + 3 ? sg.filesz - off : CHUNK + 3);
      int got =
          readi(ip, false, reinterpret_cast<u64>(code), static_cast<u32>(sg.offset + off), want);
      if (got < 4) break;
      // Positions 0, 2, ... CHUNK - 2 of this chunk; the 3 extra bytes finish the last ones.
      for (u32 i = 0; i + 4 <= static_cast<u32>(got) && i < CHUNK && n < max; i += 2) {
        if (code[i] == 0x73 && code[i + 1] == 0 && code[i + 2] == 0 && code[i + 3] == 0)
          out[n++] = sg.vaddr + off + i;
      }
    }
  }
  // Segments normally come in address order; keep the list sorted whatever the file says.
  for (u32 i = 1; i < n; i++)
    for (u32 j = i; j > 0 && out[j - 1] > out[j]; j--) {
      u64 tmp = out[j];
      out[j] = out[j - 1];
      out[j - 1] = tmp;
    }
  return n;
}

void copy_sorted(Inode *ip, const Layout &t, symtab::Builder &b) {
  constexpr u32 CHUNK = 32;
  symtab::Entry chunk[CHUNK];
  char name[NAME_MAX];
  for (u32 i = 0; i < t.count; i += CHUNK) {
    u32 n = t.count - i < CHUNK ? t.count - i : CHUNK;
    u32 bytes = n * static_cast<u32>(sizeof(symtab::Entry));
    if (readi(ip, false, reinterpret_cast<u64>(chunk),
              t.entries + i * static_cast<u32>(sizeof(symtab::Entry)),
              bytes) != static_cast<int>(bytes))
      return;
    for (u32 k = 0; k < n; k++) {
      u32 len = read_name(ip, t, chunk[k].name, name, sizeof(name));
      if (!b.add(chunk[k].addr, chunk[k].size, name, len)) return;  // full: the rest is cut
    }
  }
}

void copy_elf(Inode *ip, const Layout &t, symtab::Builder &b) {
  constexpr u32 CHUNK = 32;
  ElfSym syms[CHUNK];
  char name[NAME_MAX];
  for (u32 i = 0; i < t.count; i += CHUNK) {
    u32 n = t.count - i < CHUNK ? t.count - i : CHUNK;
    u32 bytes = n * static_cast<u32>(sizeof(ElfSym));
    if (readi(ip, false, reinterpret_cast<u64>(syms),
              t.symtab + i * static_cast<u32>(sizeof(ElfSym)), bytes) != static_cast<int>(bytes))
      break;
    bool full = false;
    for (u32 k = 0; k < n && !full; k++) {
      const ElfSym &s = syms[k];
      if ((s.info & 0xf) != STT_FUNC || s.size == 0) continue;
      u32 len = read_name(ip, t, s.name, name, sizeof(name));
      if (len > 0) full = !b.add(s.value, s.size, name, len);
    }
    if (full) break;
  }
  b.sort();
}

// Read `len` bytes of code at address `addr` from the executable segment holding all of
// them; false if none does.
bool read_code(Inode *ip, const Layout &t, u64 addr, u8 *out, u32 len) {
  for (int s = 0; s < t.nsegments; s++) {
    const Segment &sg = t.segments[s];
    if (addr < sg.vaddr || addr + len > sg.vaddr + sg.filesz) continue;
    u64 off = sg.offset + (addr - sg.vaddr);
    if (off + len > 0xffffffffu) return false;
    return readi(ip, false, reinterpret_cast<u64>(out), static_cast<u32>(off), len) ==
           static_cast<int>(len);
  }
  return false;
}

// The prologue and epilogue windows of every function in `table`, into out (at most max, in
// address order, since the table is sorted and functions do not overlap). Returns how many.
u32 find_windows(Inode *ip, const Layout &t, const symtab::Table &table, profwalk::Window *out,
                 u32 max) {
  static u8 code[CODE_MAX];  // load_symbols()'s callers hold prof::lock()
  u32 n = 0;
  for (u32 i = 0; i < table.count() && n < max; i++) {
    u64 start = table.addr(i);
    u64 end = table.size(i) != 0      ? start + table.size(i)
              : i + 1 < table.count() ? table.addr(i + 1)
                                      : start;
    u32 len = end - start < CODE_MAX ? static_cast<u32>(end - start) : CODE_MAX;
    if (len < 2 || !read_code(ip, t, start, code, len)) continue;
    profwalk::Window w[FN_WINDOWS];
    int got = profwalk::frame_windows(code, start, len, w, FN_WINDOWS);
    for (int k = 0; k < got && n < max; k++) {
      if (n > 0 && w[k].from <= out[n - 1].to) continue;  // keep them sorted and apart
      out[n++] = w[k];
    }
  }
  return n;
}

}  // namespace

u32 load_symbols(Inode *ip, u8 *buf, u32 cap, ImageSymbols *out) {
  if (!holding_lock()) panic("load_symbols: prof::lock() not held");
  *out = ImageSymbols{};
  cap &= ~7u;
  Layout t = probe(ip);

  // The ecall list first (it is small), then the symbol table in what is left.
  u64 *ecalls = reinterpret_cast<u64 *>(buf);
  u32 max_ecalls = cap / sizeof(u64) < MAX_ECALLS ? cap / sizeof(u64) : MAX_ECALLS;
  u32 necalls = find_ecalls(ip, t, ecalls, max_ecalls);
  u32 used = necalls * sizeof(u64);
  if (necalls > 0) {
    out->ecalls = ecalls;
    out->necalls = necalls;
  }

  symtab::Builder b(buf + used, cap - used);
  if (t.sorted)
    copy_sorted(ip, t, b);
  else if (t.count > 0)
    copy_elf(ip, t, b);
  u32 len = b.finish();
  if (len > 0) {
    out->table = buf + used;
    out->table_len = len;
  }
  used += (len + 7) & ~7u;

  // The windows in what is left.
  if (len > 0 && used < cap) {
    auto *windows = reinterpret_cast<profwalk::Window *>(buf + used);
    u32 n = find_windows(ip, t, symtab::Table::from(out->table, len), windows,
                         (cap - used) / sizeof(profwalk::Window));
    if (n > 0) {
      out->windows = windows;
      out->nwindows = n;
      used += n * sizeof(profwalk::Window);
    }
  }
  return used;
}

bool symbolize(bool kernel, int image, u64 addr, char *buf, u32 len) {
  if (len < 4) return false;
  const char *name = nullptr;
  if (kernel) {
    name = ksym_lookup(addr);
  } else if (const ImageSymbols *syms = image_symbols(image)) {
    name = symtab::Table::from(syms->table, syms->table_len).lookup(addr).name;
  }
  if (name == nullptr || name[0] == 0) return false;
  copy_name(buf, name, len);
  return true;
}

bool stub_at(int image, u64 pc) {
  const ImageSymbols *syms = image_symbols(image);
  if (syms == nullptr || pc < 4) return false;
  u8 code[12];
  profwalk::ecall_window(syms->ecalls, syms->necalls, pc, code);
  return profwalk::in_syscall_stub(code);
}

bool caller_in_ra(int image, u64 pc) {
  const ImageSymbols *syms = image_symbols(image);
  if (syms == nullptr) return false;
  return profwalk::in_window(syms->windows, syms->nwindows, pc) || stub_at(image, pc);
}

void symbolize_reset() {
  // Nothing to forget: the copies live in the image slots, which release_images() empties.
}

}  // namespace prof
