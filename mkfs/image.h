// Building a file-system image on the host, before the kernel ever runs.
//
// The kernel boots with its programs already on disk, so something has to write that disk
// without a kernel to help: this is mkfs. It builds the whole image in memory, in exactly the
// format the kernel's file system reads (kern/abi/fs_format.h), and mkfs.cc writes it out.
//
// An image is a row of BSIZE-byte blocks cut into regions, in this order:
//
//   [ boot | super | log | inodes | free bitmap | data ... ]
//
// Everything before the data region is "metadata" and its size follows from two numbers: the
// total number of blocks and the number of inodes. Layout (below) does that arithmetic once, and
// the superblock records its result so the kernel never has to redo it.
//
// ImageBuilder then fills the image the way the kernel would if it created the files itself:
// inode 1 becomes the root directory holding "." and "..", and each added file takes the next
// free inode, the next free data blocks (twelve direct ones, then an indirect block naming up to
// 256 more) and a new entry in the root directory. The free bitmap is kept up to date after every
// step, so bytes() is a valid image at any moment.
//
// Every way a request can fail (a name too long, a file too big, a full disk) is checked before
// anything is changed, and is reported as a Status holding a message for the person running
// mkfs. A failed add_file() leaves the image exactly as it was.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "abi/fs_format.h"
#include "abi/param.h"

namespace mkfs {

// The log region: one header block, then room for the LOGSIZE blocks the header can name.
inline constexpr uint32_t kLogBlocks = LOGSIZE + 1;
// The largest file an inode can describe, in bytes.
inline constexpr uint32_t kMaxFileBytes = fsfmt::MAXFILE * fsfmt::BSIZE;
// A directory entry's inum is 16 bits wide, so no image can use more inodes than this.
inline constexpr uint32_t kMaxInodes = 1u << 16;
// The whole image is built in memory; this cap (2 GiB) keeps a typing slip from exhausting it.
inline constexpr uint32_t kMaxBlocks = 1u << 21;

// The outcome of a step that can fail because of its input: success, or a message that tells
// the person running mkfs what was wrong.
class [[nodiscard]] Status {
 public:
  static Status success() { return Status(); }
  static Status failure(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return !failed_; }
  const std::string &message() const { return message_; }

 private:
  Status() = default;
  bool failed_ = false;
  std::string message_;
};

// Where each region starts and how long it is. Only plan_layout() fills one in, so a Layout in
// hand is always self-consistent.
struct Layout {
  uint32_t size = 0;     // total blocks in the image
  uint32_t ninodes = 0;  // inodes 0 .. ninodes-1; inode 0 is never used
  uint32_t nlog = 0;     // log blocks, header included
  uint32_t logstart = 0;
  uint32_t inodestart = 0;
  uint32_t ninodeblocks = 0;
  uint32_t bmapstart = 0;
  uint32_t nbitmap = 0;
  uint32_t datastart = 0;  // first data block, which is also the number of metadata blocks

  uint32_t nblocks() const { return size - datastart; }
  fsfmt::SuperBlock superblock() const;
};

// Works out the regions of an image of `size` blocks with `ninodes` inodes. Fails when the
// metadata would leave no data block for the root directory, or the numbers are out of range.
Status plan_layout(uint32_t size, uint32_t ninodes, Layout &out);

// Data blocks (indirect block included) that a file of `bytes` bytes occupies.
uint32_t blocks_for(uint32_t bytes);

// The name a host file gets in the root directory: its last path component, with one leading
// '_' dropped ("build/user/_ls" becomes "ls").
std::string image_name(std::string_view host_path);

// Checks that `name` can be a root-directory entry: 1 to DIRSIZ bytes, no '/' or NUL, and not
// "." or "..".
Status check_name(std::string_view name);

class ImageBuilder {
 public:
  // Formats an empty file system: superblock, bitmap of the metadata, and the root directory.
  explicit ImageBuilder(const Layout &layout);

  // Adds a regular file named `name` to the root directory. On failure nothing changes.
  Status add_file(std::string_view name, std::span<const uint8_t> data);

  const Layout &layout() const { return layout_; }
  const std::vector<uint8_t> &bytes() const { return image_; }
  // Blocks in use, metadata included: exactly the blocks marked in the bitmap.
  uint32_t used_blocks() const { return next_block_; }
  // The next inode number add_file() would take.
  uint32_t next_inum() const { return next_inum_; }

 private:
  uint8_t *block(uint32_t b) { return &image_[size_t{b} * fsfmt::BSIZE]; }
  fsfmt::DiskInode read_inode(uint32_t inum) const;
  void write_inode(uint32_t inum, const fsfmt::DiskInode &di);
  uint32_t alloc_inode(int16_t type);
  uint32_t alloc_block();
  void mark_used(uint32_t b);
  void map_block(fsfmt::DiskInode &di, uint32_t index, uint32_t b);
  void append(uint32_t inum, std::span<const uint8_t> data);
  void add_dir_entry(uint32_t dir, uint32_t inum, std::string_view name);

  Layout layout_;
  std::vector<uint8_t> image_;
  uint32_t next_inum_ = fsfmt::ROOTINO;
  uint32_t next_block_ = 0;  // blocks below this are in use; data is handed out in order
  std::set<std::string, std::less<>> names_;  // names already in the root directory
};

}  // namespace mkfs
