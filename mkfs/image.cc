// The arithmetic and bookkeeping behind mkfs: planning the regions of an image and filling it.
//
// Planning. The boot block and the superblock come first (blocks 0 and 1). The log follows: a
// header block plus LOGSIZE blocks for the logged copies. Then enough inode blocks for every
// inode (IPB of them to a block) and enough bitmap blocks for one bit per block of the whole
// image (BPB bits to a block). Whatever remains is the data region. The bitmap covers the
// metadata too, and those bits are set, so the kernel's block allocator can scan the bitmap from
// block 0 without knowing where the data region starts.
//
// Filling. Since mkfs only ever adds files, it needs no free lists: inodes and data blocks are
// both handed out in increasing order, so "the next free one" is a single counter each. A file's
// bytes are appended block by block; the thirteenth block of a file first allocates the indirect
// block, whose slots name blocks 12 to 267 of the file. The root directory grows the same way,
// sixteen bytes per entry.
//
// All integers on disk are little-endian, like the host we run on (checked below), so the
// fsfmt structs are copied in and out of the image with memcpy.
#include "image.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mkfs {

static_assert(
    std::endian::native == std::endian::little,
    "mkfs writes on-disk structs as they are in memory, which needs a little-endian host");
static_assert(fsfmt::BSIZE % sizeof(fsfmt::DirEntry) == 0);
static_assert(sizeof(fsfmt::LogHeader) <= fsfmt::BSIZE);

namespace {

constexpr uint32_t div_round_up(uint32_t n, uint32_t d) { return n / d + (n % d != 0); }

}  // namespace

fsfmt::SuperBlock Layout::superblock() const {
  fsfmt::SuperBlock sb{};
  sb.magic = fsfmt::FSMAGIC;
  sb.size = size;
  sb.nblocks = nblocks();
  sb.ninodes = ninodes;
  sb.nlog = nlog;
  sb.logstart = logstart;
  sb.inodestart = inodestart;
  sb.bmapstart = bmapstart;
  return sb;
}

Status plan_layout(uint32_t size, uint32_t ninodes, Layout &out) {
  if (size > kMaxBlocks)
    return Status::failure("an image of " + std::to_string(size) +
                           " blocks is too large (at most " + std::to_string(kMaxBlocks) + ")");
  // Inode 0 is never used and inode 1 is the root, so an image needs at least two.
  if (ninodes < 2 || ninodes > kMaxInodes)
    return Status::failure("the number of inodes must be between 2 and " +
                           std::to_string(kMaxInodes) + ", not " + std::to_string(ninodes));

  Layout l;
  l.size = size;
  l.ninodes = ninodes;
  l.nlog = kLogBlocks;
  l.logstart = 2;
  l.inodestart = l.logstart + l.nlog;
  l.ninodeblocks = div_round_up(ninodes, fsfmt::IPB);
  l.bmapstart = l.inodestart + l.ninodeblocks;
  l.nbitmap = div_round_up(size, fsfmt::BPB);
  l.datastart = l.bmapstart + l.nbitmap;
  // The root directory's first block is the least data an image can hold.
  if (l.datastart >= size)
    return Status::failure("an image of " + std::to_string(size) + " blocks is too small: its " +
                           std::to_string(l.datastart) + " metadata blocks leave no data block");
  out = l;
  return Status::success();
}

uint32_t blocks_for(uint32_t bytes) {
  uint32_t data = div_round_up(bytes, fsfmt::BSIZE);
  return data + (data > fsfmt::NDIRECT ? 1 : 0);
}

std::string image_name(std::string_view host_path) {
  std::string_view name = host_path;
  if (size_t slash = name.rfind('/'); slash != std::string_view::npos)
    name.remove_prefix(slash + 1);
  if (!name.empty() && name.front() == '_') name.remove_prefix(1);
  return std::string(name);
}

Status check_name(std::string_view name) {
  if (name.empty()) return Status::failure("a file name cannot be empty");
  if (name.size() > fsfmt::DIRSIZ)
    return Status::failure("name \"" + std::string(name) + "\" is longer than " +
                           std::to_string(fsfmt::DIRSIZ) + " characters");
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos)
    return Status::failure("name \"" + std::string(name) + "\" contains '/' or a NUL byte");
  if (name == "." || name == "..")
    return Status::failure("\"" + std::string(name) + "\" is reserved for the directory itself");
  return Status::success();
}

ImageBuilder::ImageBuilder(const Layout &layout)
    : layout_(layout), image_(size_t{layout.size} * fsfmt::BSIZE, 0) {
  // A Layout made by hand could break the invariants everything below relies on.
  Layout check;
  if (!plan_layout(layout.size, layout.ninodes, check).ok() ||
      std::memcmp(&check, &layout, sizeof(Layout)) != 0) {
    std::fprintf(stderr, "mkfs: ImageBuilder given a Layout that plan_layout did not make\n");
    std::abort();
  }

  fsfmt::SuperBlock sb = layout_.superblock();
  std::memcpy(block(1), &sb, sizeof(sb));

  // Metadata blocks are never free: mark them so an allocator scanning from 0 skips them.
  for (uint32_t b = 0; b < layout_.datastart; b++) mark_used(b);
  next_block_ = layout_.datastart;

  uint32_t root = alloc_inode(fsfmt::T_DIR);
  // The root is its own parent: ".." leads back to inode 1.
  add_dir_entry(root, root, ".");
  add_dir_entry(root, root, "..");
}

Status ImageBuilder::add_file(std::string_view name, std::span<const uint8_t> data) {
  if (Status s = check_name(name); !s.ok()) return s;
  if (names_.contains(name))
    return Status::failure("two files would be named \"" + std::string(name) + "\"");
  if (data.size() > kMaxFileBytes)
    return Status::failure("\"" + std::string(name) + "\" has " + std::to_string(data.size()) +
                           " bytes, more than the " + std::to_string(kMaxFileBytes) +
                           " (MAXFILE blocks) an inode can hold");
  if (next_inum_ >= layout_.ninodes)
    return Status::failure("no free inode for \"" + std::string(name) + "\" (the image has " +
                           std::to_string(layout_.ninodes) + ")");

  uint32_t root_size = read_inode(fsfmt::ROOTINO).size;
  if (root_size + sizeof(fsfmt::DirEntry) > kMaxFileBytes)
    return Status::failure("the root directory is full: no room for \"" + std::string(name) + "\"");

  uint32_t bytes = static_cast<uint32_t>(data.size());
  uint32_t needed =
      blocks_for(bytes) + (blocks_for(root_size + sizeof(fsfmt::DirEntry)) - blocks_for(root_size));
  uint32_t free_blocks = layout_.size - next_block_;
  if (needed > free_blocks)
    return Status::failure("no room for \"" + std::string(name) + "\": it needs " +
                           std::to_string(needed) + " blocks and " + std::to_string(free_blocks) +
                           " are free");

  uint32_t inum = alloc_inode(fsfmt::T_FILE);
  append(inum, data);
  add_dir_entry(fsfmt::ROOTINO, inum, name);
  return Status::success();
}

fsfmt::DiskInode ImageBuilder::read_inode(uint32_t inum) const {
  fsfmt::DiskInode di;
  size_t off = size_t{fsfmt::inode_block(inum, layout_.superblock())} * fsfmt::BSIZE +
               (inum % fsfmt::IPB) * sizeof(fsfmt::DiskInode);
  std::memcpy(&di, &image_[off], sizeof(di));
  return di;
}

void ImageBuilder::write_inode(uint32_t inum, const fsfmt::DiskInode &di) {
  size_t off = size_t{fsfmt::inode_block(inum, layout_.superblock())} * fsfmt::BSIZE +
               (inum % fsfmt::IPB) * sizeof(fsfmt::DiskInode);
  std::memcpy(&image_[off], &di, sizeof(di));
}

// Callers have checked that an inode is free.
uint32_t ImageBuilder::alloc_inode(int16_t type) {
  uint32_t inum = next_inum_++;
  fsfmt::DiskInode di{};
  di.type = type;
  di.nlink = 1;  // the one directory entry that will name it
  write_inode(inum, di);
  return inum;
}

// Callers have checked that a block is free. Blocks come zeroed, because the image starts
// zeroed and no block is handed out twice.
uint32_t ImageBuilder::alloc_block() {
  uint32_t b = next_block_++;
  mark_used(b);
  return b;
}

void ImageBuilder::mark_used(uint32_t b) {
  uint8_t *map = block(fsfmt::bitmap_block(b, layout_.superblock()));
  uint32_t bit = b % fsfmt::BPB;
  map[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
}

// Records that block `index` of a file lives in block `b`, allocating the indirect block when
// the file first needs it.
void ImageBuilder::map_block(fsfmt::DiskInode &di, uint32_t index, uint32_t b) {
  if (index < fsfmt::NDIRECT) {
    di.addrs[index] = b;
    return;
  }
  if (di.addrs[fsfmt::NDIRECT] == 0) di.addrs[fsfmt::NDIRECT] = alloc_block();
  uint8_t *slot = block(di.addrs[fsfmt::NDIRECT]) + (index - fsfmt::NDIRECT) * sizeof(uint32_t);
  std::memcpy(slot, &b, sizeof(b));
}

// Adds `data` at the end of inode `inum`. Callers have checked the size limit and the free
// blocks. Files never have holes, so a write that starts on a block boundary always needs a
// new block.
void ImageBuilder::append(uint32_t inum, std::span<const uint8_t> data) {
  fsfmt::DiskInode di = read_inode(inum);
  size_t done = 0;
  while (done < data.size()) {
    uint32_t index = di.size / fsfmt::BSIZE;
    uint32_t within = di.size % fsfmt::BSIZE;
    uint32_t b;
    if (within == 0) {
      b = alloc_block();
      map_block(di, index, b);
    } else if (index < fsfmt::NDIRECT) {
      b = di.addrs[index];
    } else {
      std::memcpy(&b, block(di.addrs[fsfmt::NDIRECT]) + (index - fsfmt::NDIRECT) * sizeof(b),
                  sizeof(b));
    }
    size_t n = std::min<size_t>(fsfmt::BSIZE - within, data.size() - done);
    std::memcpy(block(b) + within, data.data() + done, n);
    done += n;
    di.size += static_cast<uint32_t>(n);
  }
  write_inode(inum, di);
}

void ImageBuilder::add_dir_entry(uint32_t dir, uint32_t inum, std::string_view name) {
  fsfmt::DirEntry de{};
  de.inum = static_cast<uint16_t>(inum);
  // A name of exactly DIRSIZ bytes fills the field and has no terminating NUL.
  std::memcpy(de.name, name.data(), name.size());
  append(dir, std::span(reinterpret_cast<const uint8_t *>(&de), sizeof(de)));
  if (dir == fsfmt::ROOTINO && inum != fsfmt::ROOTINO) names_.emplace(name);
}

}  // namespace mkfs
