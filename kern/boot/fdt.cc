// A minimal reader for the flattened device tree (Devicetree Specification v0.4, chapter 5).
//
// The blob has a header, a structure block of big-endian 32-bit tokens (BEGIN_NODE name,
// PROP len nameoff value, END_NODE, NOP, END) and a strings block holding property names.
// We need three facts from it: where RAM ends, from the `reg` property of the top-level
// /memory node (QEMU's virt uses two address cells and two size cells), the kernel command
// line, the `bootargs` property of /chosen, and where an initrd lies, if QEMU loaded one
// (/chosen's linux,initrd-start and linux,initrd-end).

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

// Walk the structure block, calling visit(depth, node name, property name, value, length)
// for each property. Returns false if the blob is not a device tree.
template <typename Visit>
bool fdt_walk(u64 dtb, Visit &&visit) {
  const u8 *base = reinterpret_cast<const u8 *>(dtb);
  if (dtb == 0 || be32(base) != FDT_MAGIC) return false;
  const u8 *structs = base + be32(base + 8);
  const char *strings = reinterpret_cast<const char *>(base + be32(base + 12));
  const u8 *limit = base + be32(base + 4);
  const char *node = "";
  int depth = 0;
  for (const u8 *p = structs; p + 4 <= limit;) {
    u32 token = be32(p);
    p += 4;
    if (token == FDT_BEGIN_NODE) {
      node = reinterpret_cast<const char *>(p);
      depth++;
      p += (strlen(node) + 1 + 3) & ~u64(3);
    } else if (token == FDT_END_NODE) {
      depth--;
      node = "";
    } else if (token == FDT_PROP) {
      u32 len = be32(p);
      if (visit(depth, node, strings + be32(p + 4), p + 8, len)) return true;
      p += 8 + ((len + 3) & ~u32(3));
    } else if (token == FDT_NOP) {
      continue;
    } else {
      break;  // FDT_END, or garbage
    }
  }
  return true;
}

u64 fdt_memory_end(u64 dtb) {
  u32 addr_cells = 2, size_cells = 1;  // defaults from the specification
  u64 end = 0;
  fdt_walk(dtb, [&](int depth, const char *node, const char *prop, const u8 *value, u32 len) {
    if (depth == 1 && strncmp(prop, "#address-cells", 15) == 0) addr_cells = be32(value);
    if (depth == 1 && strncmp(prop, "#size-cells", 12) == 0) size_cells = be32(value);
    if (depth == 2 && strncmp(node, "memory", 6) == 0 && strncmp(prop, "reg", 4) == 0 &&
        len >= 4 * (addr_cells + size_cells)) {
      end = be_cells(value, addr_cells) + be_cells(value + 4 * addr_cells, size_cells);
      return true;
    }
    return false;
  });
  return end;
}

const char *fdt_bootargs(u64 dtb) {
  const char *args = "";
  fdt_walk(dtb, [&](int depth, const char *node, const char *prop, const u8 *value, u32 len) {
    if (depth == 2 && strncmp(node, "chosen", 7) == 0 && strncmp(prop, "bootargs", 9) == 0 &&
        len > 0 && value[len - 1] == 0) {
      args = reinterpret_cast<const char *>(value);
      return true;
    }
    return false;
  });
  return args;
}

PhysRange fdt_initrd(u64 dtb) {
  PhysRange r;
  bool have_start = false, have_end = false;
  fdt_walk(dtb, [&](int depth, const char *node, const char *prop, const u8 *value, u32 len) {
    if (depth != 2 || strncmp(node, "chosen", 7) != 0 || (len != 4 && len != 8)) return false;
    if (strncmp(prop, "linux,initrd-start", 19) == 0) {
      r.start = be_cells(value, len / 4);
      have_start = true;
    } else if (strncmp(prop, "linux,initrd-end", 17) == 0) {
      r.end = be_cells(value, len / 4);
      have_end = true;
    }
    return have_start && have_end;
  });
  if (!have_start || !have_end) return {};
  return r;
}
