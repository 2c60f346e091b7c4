// Unit tests for mkfs's image builder (mkfs/image.h), run on the host.
//
// These read the image back through the same fsfmt structs that mkfs writes with, so they check
// mkfs's arithmetic and bookkeeping: where each region lands, what the superblock says, what
// the root directory holds, that the bitmap marks exactly the blocks in use, and where the
// limits are (MAXFILE, DIRSIZ, inodes, blocks, the root directory's own size). Whether the
// structs themselves match the published format is a separate question, answered by the
// independent Python reader in fsimage.py and test_image.py.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "image.h"

namespace {

using fsfmt::BSIZE;
using fsfmt::DirEntry;
using fsfmt::DiskInode;
using fsfmt::SuperBlock;

mkfs::Layout plan(uint32_t size = FSSIZE, uint32_t ninodes = NINODES) {
  mkfs::Layout l;
  mkfs::Status s = mkfs::plan_layout(size, ninodes, l);
  EXPECT_TRUE(s.ok()) << s.message();
  return l;
}

// Reads an image the way the kernel would, through the shared structs.
class Reader {
 public:
  explicit Reader(const std::vector<uint8_t> &bytes) : bytes_(bytes) {
    std::memcpy(&sb_, block(1), sizeof(sb_));
  }

  const SuperBlock &sb() const { return sb_; }
  const uint8_t *block(uint32_t b) const { return &bytes_.at(size_t{b} * BSIZE); }

  DiskInode inode(uint32_t inum) const {
    DiskInode di;
    std::memcpy(&di, block(fsfmt::inode_block(inum, sb_)) + (inum % fsfmt::IPB) * sizeof(di),
                sizeof(di));
    return di;
  }

  bool marked(uint32_t b) const {
    uint32_t bit = b % fsfmt::BPB;
    return (block(fsfmt::bitmap_block(b, sb_))[bit / 8] >> (bit % 8)) & 1;
  }

  uint32_t block_of(const DiskInode &di, uint32_t index) const {
    if (index < fsfmt::NDIRECT) return di.addrs[index];
    uint32_t b;
    std::memcpy(&b, block(di.addrs[fsfmt::NDIRECT]) + (index - fsfmt::NDIRECT) * 4, 4);
    return b;
  }

  std::vector<uint8_t> contents(uint32_t inum) const {
    DiskInode di = inode(inum);
    std::vector<uint8_t> out;
    for (uint32_t off = 0; off < di.size; off += BSIZE) {
      const uint8_t *p = block(block_of(di, off / BSIZE));
      out.insert(out.end(), p, p + std::min(BSIZE, di.size - off));
    }
    return out;
  }

  std::vector<DirEntry> entries(uint32_t inum) const {
    std::vector<uint8_t> raw = contents(inum);
    std::vector<DirEntry> out(raw.size() / sizeof(DirEntry));
    std::memcpy(out.data(), raw.data(), out.size() * sizeof(DirEntry));
    return out;
  }

 private:
  const std::vector<uint8_t> &bytes_;
  SuperBlock sb_;
};

std::string entry_name(const DirEntry &de) {
  return std::string(de.name, strnlen(de.name, fsfmt::DIRSIZ));
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<uint8_t>(seed + i * 7 + i / 1024);
  return v;
}

// --- Layout arithmetic -----------------------------------------------------------------------

TEST(Layout, DefaultImageMatchesTheDocumentedRegions) {
  mkfs::Layout l = plan();
  EXPECT_EQ(l.size, 2000u);
  EXPECT_EQ(l.ninodes, 200u);
  EXPECT_EQ(l.logstart, 2u);
  EXPECT_EQ(l.nlog, 31u);  // header + LOGSIZE (30)
  EXPECT_EQ(l.inodestart, 33u);
  EXPECT_EQ(l.ninodeblocks, 13u);  // 200 inodes at 16 per block
  EXPECT_EQ(l.bmapstart, 46u);
  EXPECT_EQ(l.nbitmap, 1u);
  EXPECT_EQ(l.datastart, 47u);
  EXPECT_EQ(l.nblocks(), 1953u);
}

TEST(Layout, RegionsAreContiguousAndJustBigEnough) {
  for (uint32_t size : {100u, 2000u, 8191u, 8192u, 8193u, 40000u, 100000u}) {
    for (uint32_t ninodes : {2u, 16u, 17u, 200u, 1024u, 1025u}) {
      mkfs::Layout l;
      if (!mkfs::plan_layout(size, ninodes, l).ok()) continue;
      SCOPED_TRACE("size " + std::to_string(size) + " ninodes " + std::to_string(ninodes));
      EXPECT_EQ(l.inodestart, l.logstart + l.nlog);
      EXPECT_EQ(l.bmapstart, l.inodestart + l.ninodeblocks);
      EXPECT_EQ(l.datastart, l.bmapstart + l.nbitmap);
      EXPECT_GE(l.ninodeblocks * fsfmt::IPB, ninodes);
      EXPECT_LT((l.ninodeblocks - 1) * fsfmt::IPB, ninodes);
      EXPECT_GE(l.nbitmap * fsfmt::BPB, size);
      EXPECT_LT((l.nbitmap - 1) * fsfmt::BPB, size);
      EXPECT_EQ(l.datastart + l.nblocks(), size);
    }
  }
}

TEST(Layout, BitmapGrowsPastOneBlockAtBpb) {
  EXPECT_EQ(plan(fsfmt::BPB).nbitmap, 1u);
  EXPECT_EQ(plan(fsfmt::BPB + 1).nbitmap, 2u);
}

TEST(Layout, SmallestImageHasOneDataBlock) {
  uint32_t meta = plan().datastart;
  mkfs::Layout l;
  EXPECT_FALSE(mkfs::plan_layout(meta, NINODES, l).ok());
  ASSERT_TRUE(mkfs::plan_layout(meta + 1, NINODES, l).ok());
  EXPECT_EQ(l.nblocks(), 1u);
  mkfs::ImageBuilder image(l);  // the root directory's block is the only data block
  EXPECT_EQ(image.used_blocks(), meta + 1);
  EXPECT_FALSE(image.add_file("a", pattern(1, 0)).ok());
  EXPECT_TRUE(image.add_file("empty", {}).ok()) << "an empty file needs no block";
}

TEST(Layout, RejectsImpossibleNumbers) {
  mkfs::Layout l;
  EXPECT_FALSE(mkfs::plan_layout(10, NINODES, l).ok());
  EXPECT_FALSE(mkfs::plan_layout(0, NINODES, l).ok());
  EXPECT_FALSE(mkfs::plan_layout(FSSIZE, 0, l).ok());
  EXPECT_FALSE(mkfs::plan_layout(FSSIZE, 1, l).ok());
  EXPECT_FALSE(mkfs::plan_layout(100000, mkfs::kMaxInodes + 1, l).ok());
  EXPECT_TRUE(mkfs::plan_layout(100000, mkfs::kMaxInodes, l).ok());
  EXPECT_FALSE(mkfs::plan_layout(mkfs::kMaxBlocks + 1, NINODES, l).ok());
}

TEST(Layout, BlocksForCountsTheIndirectBlock) {
  EXPECT_EQ(mkfs::blocks_for(0), 0u);
  EXPECT_EQ(mkfs::blocks_for(1), 1u);
  EXPECT_EQ(mkfs::blocks_for(BSIZE), 1u);
  EXPECT_EQ(mkfs::blocks_for(BSIZE + 1), 2u);
  EXPECT_EQ(mkfs::blocks_for(fsfmt::NDIRECT * BSIZE), fsfmt::NDIRECT);
  EXPECT_EQ(mkfs::blocks_for(fsfmt::NDIRECT * BSIZE + 1), fsfmt::NDIRECT + 2);
  EXPECT_EQ(mkfs::blocks_for(mkfs::kMaxFileBytes), fsfmt::MAXFILE + 1);
}

// --- A fresh image ---------------------------------------------------------------------------

TEST(Image, SuperblockFields) {
  mkfs::Layout l = plan();
  mkfs::ImageBuilder image(l);
  ASSERT_EQ(image.bytes().size(), size_t{FSSIZE} * BSIZE);
  Reader r(image.bytes());
  EXPECT_EQ(r.sb().magic, fsfmt::FSMAGIC);
  EXPECT_EQ(r.sb().size, 2000u);
  EXPECT_EQ(r.sb().nblocks, 1953u);
  EXPECT_EQ(r.sb().ninodes, 200u);
  EXPECT_EQ(r.sb().nlog, 31u);
  EXPECT_EQ(r.sb().logstart, 2u);
  EXPECT_EQ(r.sb().inodestart, 33u);
  EXPECT_EQ(r.sb().bmapstart, 46u);
  // Block 1 holds only the superblock, and the little-endian magic leads it.
  const uint8_t *b1 = r.block(1);
  EXPECT_EQ(b1[0], 0x40);
  EXPECT_EQ(b1[3], 0x10);
  for (uint32_t i = sizeof(SuperBlock); i < BSIZE; i++) ASSERT_EQ(b1[i], 0) << "byte " << i;
}

TEST(Image, BootBlockAndLogAreZero) {
  mkfs::ImageBuilder image(plan());
  Reader r(image.bytes());
  for (uint32_t b : {0u, 2u, 3u, 32u})
    for (uint32_t i = 0; i < BSIZE; i++)
      ASSERT_EQ(r.block(b)[i], 0) << "block " << b << " byte " << i;
}

TEST(Image, RootDirectoryHoldsDotAndDotDot) {
  mkfs::ImageBuilder image(plan());
  Reader r(image.bytes());
  DiskInode zero = r.inode(0);
  EXPECT_EQ(zero.type, fsfmt::T_FREE) << "inode 0 is never used";
  DiskInode root = r.inode(fsfmt::ROOTINO);
  EXPECT_EQ(root.type, fsfmt::T_DIR);
  EXPECT_EQ(root.nlink, 1);
  EXPECT_EQ(root.size, 2 * sizeof(DirEntry));
  EXPECT_EQ(root.addrs[0], 47u) << "the root takes the first data block";
  std::vector<DirEntry> es = r.entries(fsfmt::ROOTINO);
  ASSERT_EQ(es.size(), 2u);
  EXPECT_EQ(entry_name(es[0]), ".");
  EXPECT_EQ(es[0].inum, fsfmt::ROOTINO);
  EXPECT_EQ(entry_name(es[1]), "..");
  EXPECT_EQ(es[1].inum, fsfmt::ROOTINO);
  for (uint32_t inum = 2; inum < NINODES; inum++)
    ASSERT_EQ(r.inode(inum).type, fsfmt::T_FREE) << "inode " << inum;
}

// --- Adding files ----------------------------------------------------------------------------

TEST(Image, FilesAppearInTheRootInOrder) {
  mkfs::ImageBuilder image(plan());
  std::vector<std::vector<uint8_t>> data = {pattern(0, 1), pattern(10, 2), pattern(5000, 3)};
  const char *names[] = {"empty", "small", "five"};
  for (int i = 0; i < 3; i++) ASSERT_TRUE(image.add_file(names[i], data[i]).ok());
  Reader r(image.bytes());
  std::vector<DirEntry> es = r.entries(fsfmt::ROOTINO);
  ASSERT_EQ(es.size(), 5u);
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(entry_name(es[2 + i]), names[i]);
    EXPECT_EQ(es[2 + i].inum, 2u + i);
    DiskInode di = r.inode(es[2 + i].inum);
    EXPECT_EQ(di.type, fsfmt::T_FILE);
    EXPECT_EQ(di.nlink, 1);
    EXPECT_EQ(di.size, data[i].size());
    EXPECT_EQ(r.contents(es[2 + i].inum), data[i]);
  }
  EXPECT_EQ(r.inode(2).addrs[0], 0u) << "an empty file has no blocks";
}

TEST(Image, IndirectBlockCarriesTheThirteenthBlockOn) {
  mkfs::ImageBuilder image(plan());
  std::vector<uint8_t> data = pattern(fsfmt::NDIRECT * BSIZE + 1, 9);
  ASSERT_TRUE(image.add_file("big", data).ok());
  Reader r(image.bytes());
  DiskInode di = r.inode(2);
  for (uint32_t i = 0; i <= fsfmt::NDIRECT; i++) EXPECT_NE(di.addrs[i], 0u) << "slot " << i;
  EXPECT_NE(r.block_of(di, fsfmt::NDIRECT), 0u);
  EXPECT_EQ(r.block_of(di, fsfmt::NDIRECT + 1), 0u);
  EXPECT_EQ(r.contents(2), data);
  EXPECT_EQ(image.used_blocks(), 47u + 1 + fsfmt::NDIRECT + 2);
}

TEST(Image, ExactlyMaxfileBlocksFitsOneMoreByteDoesNot) {
  mkfs::ImageBuilder image(plan());
  std::vector<uint8_t> too_big = pattern(mkfs::kMaxFileBytes + 1, 4);
  std::vector<uint8_t> before = image.bytes();
  mkfs::Status s = image.add_file("huge", too_big);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("MAXFILE"), std::string::npos) << s.message();
  EXPECT_EQ(image.bytes(), before) << "a failed add must not change the image";

  std::vector<uint8_t> max = pattern(mkfs::kMaxFileBytes, 5);
  ASSERT_TRUE(image.add_file("max", max).ok());
  Reader r(image.bytes());
  EXPECT_EQ(r.inode(2).size, mkfs::kMaxFileBytes);
  EXPECT_NE(r.block_of(r.inode(2), fsfmt::MAXFILE - 1), 0u);
  EXPECT_EQ(r.contents(2), max);
}

TEST(Image, BitmapMarksExactlyTheUsedBlocks) {
  mkfs::ImageBuilder image(plan());
  for (size_t n : {0, 1, 1024, 1025, 12 * 1024, 12 * 1024 + 1, 70000})
    ASSERT_TRUE(image.add_file("f" + std::to_string(n), pattern(n, 1)).ok());
  Reader r(image.bytes());

  // Collect every block the file system uses, from the inodes.
  std::vector<bool> used(FSSIZE, false);
  for (uint32_t b = 0; b < r.sb().size - r.sb().nblocks; b++) used[b] = true;
  for (uint32_t inum = 1; inum < NINODES; inum++) {
    DiskInode di = r.inode(inum);
    if (di.type == fsfmt::T_FREE) continue;
    uint32_t nblocks = (di.size + BSIZE - 1) / BSIZE;
    for (uint32_t i = 0; i < nblocks; i++) {
      uint32_t b = r.block_of(di, i);
      ASSERT_FALSE(used[b]) << "block " << b << " used twice";
      used[b] = true;
    }
    if (di.addrs[fsfmt::NDIRECT] != 0) {
      ASSERT_FALSE(used[di.addrs[fsfmt::NDIRECT]]);
      used[di.addrs[fsfmt::NDIRECT]] = true;
    }
  }
  uint32_t marked = 0;
  for (uint32_t b = 0; b < FSSIZE; b++) {
    EXPECT_EQ(r.marked(b), used[b]) << "block " << b;
    marked += r.marked(b);
  }
  EXPECT_EQ(marked, image.used_blocks());
  // Bits past the end of the image stay clear.
  for (uint32_t b = FSSIZE; b < fsfmt::BPB; b++) ASSERT_FALSE(r.marked(b)) << "block " << b;
}

// --- Names -----------------------------------------------------------------------------------

TEST(Names, LeadingUnderscoreAndDirectoriesAreDropped) {
  EXPECT_EQ(mkfs::image_name("build/user/_ls"), "ls");
  EXPECT_EQ(mkfs::image_name("_init"), "init");
  EXPECT_EQ(mkfs::image_name("README"), "README");
  EXPECT_EQ(mkfs::image_name("/abs/path/__x"), "_x") << "only one underscore goes";
  EXPECT_EQ(mkfs::image_name("dir_with_/plain"), "plain");
  EXPECT_EQ(mkfs::image_name("_"), "");
  EXPECT_EQ(mkfs::image_name("dir/"), "");
}

TEST(Names, Rules) {
  EXPECT_TRUE(mkfs::check_name("a").ok());
  EXPECT_TRUE(mkfs::check_name("abcdefghijklmn").ok());    // 14
  EXPECT_FALSE(mkfs::check_name("abcdefghijklmno").ok());  // 15
  EXPECT_FALSE(mkfs::check_name("").ok());
  EXPECT_FALSE(mkfs::check_name(".").ok());
  EXPECT_FALSE(mkfs::check_name("..").ok());
  EXPECT_TRUE(mkfs::check_name("...").ok());
  EXPECT_FALSE(mkfs::check_name("a/b").ok());
  EXPECT_FALSE(mkfs::check_name(std::string_view("a\0b", 3)).ok());
}

TEST(Names, FourteenCharactersAreStoredWithoutTerminator) {
  mkfs::ImageBuilder image(plan());
  ASSERT_TRUE(image.add_file("abcdefghijklmn", pattern(3, 0)).ok());
  mkfs::Status s = image.add_file("abcdefghijklmno", pattern(3, 0));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("longer than 14"), std::string::npos) << s.message();
  Reader r(image.bytes());
  std::vector<DirEntry> es = r.entries(fsfmt::ROOTINO);
  ASSERT_EQ(es.size(), 3u);
  EXPECT_EQ(std::memcmp(es[2].name, "abcdefghijklmn", 14), 0);
  EXPECT_EQ(entry_name(es[2]), "abcdefghijklmn");
}

TEST(Names, ShortNamesArePaddedWithNul) {
  mkfs::ImageBuilder image(plan());
  ASSERT_TRUE(image.add_file("ab", {}).ok());
  Reader r(image.bytes());
  DirEntry de = r.entries(fsfmt::ROOTINO)[2];
  for (uint32_t i = 2; i < fsfmt::DIRSIZ; i++) EXPECT_EQ(de.name[i], 0) << "byte " << i;
}

TEST(Names, DuplicatesAreRejected) {
  mkfs::ImageBuilder image(plan());
  ASSERT_TRUE(image.add_file("ls", pattern(100, 0)).ok());
  std::vector<uint8_t> before = image.bytes();
  mkfs::Status s = image.add_file("ls", pattern(100, 1));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ls"), std::string::npos);
  EXPECT_EQ(image.bytes(), before);
  EXPECT_FALSE(image.add_file(".", {}).ok());
  EXPECT_FALSE(image.add_file("..", {}).ok());
}

// --- Running out -----------------------------------------------------------------------------

TEST(Limits, OutOfInodes) {
  mkfs::ImageBuilder image(plan(FSSIZE, 4));  // inode 0 unused, 1 root: room for two files
  ASSERT_TRUE(image.add_file("a", pattern(1, 0)).ok());
  ASSERT_TRUE(image.add_file("b", pattern(1, 0)).ok());
  std::vector<uint8_t> before = image.bytes();
  mkfs::Status s = image.add_file("c", pattern(1, 0));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("inode"), std::string::npos) << s.message();
  EXPECT_EQ(image.bytes(), before);
}

TEST(Limits, OutOfBlocksAtTheExactBoundary) {
  mkfs::Layout l = plan();
  ASSERT_TRUE(mkfs::plan_layout(l.datastart + 1 + 14, NINODES, l).ok());
  // 15 data blocks: the root takes one; 13 file blocks plus the indirect block fill the rest.
  mkfs::ImageBuilder image(l);
  std::vector<uint8_t> before = image.bytes();
  mkfs::Status s = image.add_file("big", pattern(14 * BSIZE, 0));  // 14 + indirect = 15
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("15 blocks"), std::string::npos) << s.message();
  EXPECT_EQ(image.bytes(), before);
  ASSERT_TRUE(image.add_file("fits", pattern(13 * BSIZE, 0)).ok());
  EXPECT_EQ(image.used_blocks(), l.size);
  EXPECT_FALSE(image.add_file("more", pattern(1, 0)).ok());
  EXPECT_TRUE(image.add_file("empty", {}).ok());
}

TEST(Limits, NewRootDirectoryBlockIsCounted) {
  // Two data blocks: the root's first, and one more.
  mkfs::Layout l;
  ASSERT_TRUE(mkfs::plan_layout(plan(FSSIZE, 80).datastart + 2, 80, l).ok());
  mkfs::ImageBuilder image(l);
  // 64 entries fill the root's first block; "." and ".." are two of them.
  for (int i = 0; i < 62; i++) ASSERT_TRUE(image.add_file("e" + std::to_string(i), {}).ok()) << i;
  // The next entry needs the last block for the directory, so a one-block file cannot fit.
  EXPECT_FALSE(image.add_file("x", pattern(1, 0)).ok());
  EXPECT_TRUE(image.add_file("y", {}).ok());
  EXPECT_EQ(image.used_blocks(), l.size);
}

TEST(Limits, RootDirectoryFullAtMaxfileBlocksOfEntries) {
  uint32_t capacity = mkfs::kMaxFileBytes / sizeof(DirEntry);  // 17152 entries
  mkfs::ImageBuilder image(plan(4000, capacity + 10));
  for (uint32_t i = 0; i < capacity - 2; i++)
    ASSERT_TRUE(image.add_file("f" + std::to_string(i), {}).ok()) << i;
  mkfs::Status s = image.add_file("onemore", {});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("full"), std::string::npos) << s.message();
  Reader r(image.bytes());
  EXPECT_EQ(r.inode(fsfmt::ROOTINO).size, mkfs::kMaxFileBytes);
  std::vector<DirEntry> es = r.entries(fsfmt::ROOTINO);
  ASSERT_EQ(es.size(), capacity);
  EXPECT_EQ(entry_name(es.back()), "f" + std::to_string(capacity - 3));
  EXPECT_EQ(es.back().inum, capacity - 1);
}

}  // namespace
