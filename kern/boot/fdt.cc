// A minimal reader for the flattened device tree (Devicetree Specification v0.4, chapter 5).
//
// The blob has a header, a structure block of big-endian 32-bit tokens (BEGIN_NODE name,
// PROP len nameoff value, END_NODE, NOP, END) and a strings block holding property names.
// We need one fact from it: where RAM ends, from the `reg` property of the top-level
// /memory node (QEMU's virt uses two address cells and two size cells).

#include "boot/fdt.h"

#include "lib/string.h"

namespace {

constexpr u32 FDT_MAGIC = 0xd00dfeed;
constexpr u32 FDT_BEGIN_NODE = 1;
constexpr u32 FDT_END_NODE = 2;
constexpr u32 FDT_PROP = 3;
constexpr u32 FDT_NOP = 4;
constexpr u32 FDT_END = 9;

u32 be32(const void *p) {
  const u8 *b = static_cast<const u8 *>(p);
  return (u32(b[0]) << 24) | (u32(b[1]) << 16) | (u32(b[2]) << 8) | b[3];
}

u64 be_cells(const u8 *p, u32 cells) {
  u64 v = 0;
  for (u32 i = 0; i < cells; i++) v = (v << 32) | be32(p + 4 * i);
  return v;
}

}  // namespace

u64 fdt_memory_end(u64 dtb) {
  const u8 *base = reinterpret_cast<const u8 *>(dtb);
  if (dtb == 0 || be32(base) != FDT_MAGIC) return 0;
  u32 totalsize = be32(base + 4);
  const u8 *structs = base + be32(base + 8);
  const char *strings = reinterpret_cast<const char *>(base + be32(base + 12));
  const u8 *limit = base + totalsize;

  u32 addr_cells = 2, size_cells = 1;  // defaults from the specification
  int depth = 0;
  bool in_memory = false;
  for (const u8 *p = structs; p + 4 <= limit;) {
    u32 token = be32(p);
    p += 4;
    if (token == FDT_BEGIN_NODE) {
      const char *name = reinterpret_cast<const char *>(p);
      depth++;
      in_memory = depth == 2 && strncmp(name, "memory", 6) == 0;
      p += (strlen(name) + 1 + 3) & ~u64(3);
    } else if (token == FDT_END_NODE) {
      depth--;
      in_memory = false;
    } else if (token == FDT_PROP) {
      u32 len = be32(p);
      const char *pname = strings + be32(p + 4);
      const u8 *value = p + 8;
      if (depth == 1 && strncmp(pname, "#address-cells", 15) == 0) addr_cells = be32(value);
      if (depth == 1 && strncmp(pname, "#size-cells", 12) == 0) size_cells = be32(value);
      if (in_memory && strncmp(pname, "reg", 4) == 0 && len >= 4 * (addr_cells + size_cells))
        return be_cells(value, addr_cells) + be_cells(value + 4 * addr_cells, size_cells);
      p += 8 + ((len + 3) & ~u32(3));
    } else if (token == FDT_NOP) {
      continue;
    } else if (token == FDT_END) {
      break;
    } else {
      return 0;
    }
  }
  return 0;
}
