// The RAM disk's pure parts: where the device tree says the initrd is (kern/boot/fdt.cc,
// fdt_initrd) and whether that memory can be the root file system (kern/dev/ramdisk.h,
// ramdisk_problem), on blobs and images built here.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// The kernel's string helpers and device-tree reader, compiled here under other names so
// that they neither take the place of the host's nor clash with string_test.cc's copy.
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#define memset fdt_memset
#define memcpy fdt_memcpy
#define memmove fdt_memmove
#define memcmp fdt_memcmp
#define strncmp fdt_strncmp
#define strlen fdt_strlen
#define safestrcpy fdt_safestrcpy
#define strncpy fdt_strncpy
#include "boot/fdt.cc"
#include "lib/string.cc"
#undef memset
#undef memcpy
#undef memmove
#undef memcmp
#undef strncmp
#undef strlen
#undef safestrcpy
#undef strncpy

#include "dev/ramdisk.h"

namespace {

// A flattened device tree with a root node holding /memory and /chosen, whose properties
// are (name, value) pairs; values are big-endian bytes as the blob holds them.
using Props = std::vector<std::pair<std::string, std::vector<uint8_t>>>;

std::vector<uint8_t> cells32(std::initializer_list<uint32_t> cells) {
  std::vector<uint8_t> v;
  for (uint32_t c : cells)
    for (int shift = 24; shift >= 0; shift -= 8) v.push_back(uint8_t(c >> shift));
  return v;
}

class Blob {
 public:
  std::vector<uint8_t> build(const Props &chosen) {
    word(1);
    name("");
    prop("#address-cells", cells32({2}));
    prop("#size-cells", cells32({2}));
    word(1);
    name("memory@80000000");
    prop("reg", cells32({0, 0x80000000, 0, 0x08000000}));
    word(2);
    word(1);
    name("chosen");
    for (const auto &[n, v] : chosen) prop(n, v);
    word(2);
    word(2);
    word(9);
    std::vector<uint8_t> out =
        cells32({0xd00dfeed, 0, 40, uint32_t(40 + m_struct.size()), 0, 17, 16, 0,
                 uint32_t(m_strings.size()), uint32_t(m_struct.size())});
    out.insert(out.end(), m_struct.begin(), m_struct.end());
    out.insert(out.end(), m_strings.begin(), m_strings.end());
    std::vector<uint8_t> size = cells32({uint32_t(out.size())});
    std::copy(size.begin(), size.end(), out.begin() + 4);
    return out;
  }

 private:
  void word(uint32_t w) {
    std::vector<uint8_t> b = cells32({w});
    m_struct.insert(m_struct.end(), b.begin(), b.end());
  }
  void pad() {
    while (m_struct.size() % 4 != 0) m_struct.push_back(0);
  }
  void name(const std::string &n) {
    m_struct.insert(m_struct.end(), n.begin(), n.end());
    m_struct.push_back(0);
    pad();
  }
  void prop(const std::string &n, const std::vector<uint8_t> &value) {
    word(3);
    word(uint32_t(value.size()));
    word(uint32_t(m_strings.size()));
    m_strings.insert(m_strings.end(), n.begin(), n.end());
    m_strings.push_back(0);
    m_struct.insert(m_struct.end(), value.begin(), value.end());
    pad();
  }
  std::vector<uint8_t> m_struct, m_strings;
};

PhysRange initrd_of(const Props &chosen) {
  std::vector<uint8_t> blob = Blob().build(chosen);
  return fdt_initrd(reinterpret_cast<u64>(blob.data()));
}

TEST(Initrd, OneCellValuesAsQemu72WritesThem) {
  PhysRange r = initrd_of({{"bootargs", {'x', 0}},
                           {"linux,initrd-end", cells32({0x843f4000})},
                           {"linux,initrd-start", cells32({0x84200000})}});
  EXPECT_EQ(r.start, 0x84200000u);
  EXPECT_EQ(r.end, 0x843f4000u);
}

TEST(Initrd, TwoCellValues) {
  PhysRange r = initrd_of({{"linux,initrd-start", cells32({0x1, 0x00200000})},
                           {"linux,initrd-end", cells32({0x1, 0x00400000})}});
  EXPECT_EQ(r.start, 0x100200000u);
  EXPECT_EQ(r.end, 0x100400000u);
}

TEST(Initrd, NoneWithoutBothBoundsOrWithOddLengths) {
  PhysRange none = initrd_of({{"bootargs", {'x', 0}}});
  EXPECT_EQ(none.start, 0u);
  EXPECT_EQ(none.end, 0u);
  PhysRange half = initrd_of({{"linux,initrd-start", cells32({0x84200000})}});
  EXPECT_EQ(half.start, 0u);
  EXPECT_EQ(half.end, 0u);
  PhysRange odd = initrd_of(
      {{"linux,initrd-start", {0x84, 0x20, 0x00}}, {"linux,initrd-end", cells32({0x843f4000})}});
  EXPECT_EQ(odd.start, 0u);
  EXPECT_EQ(odd.end, 0u);
}

TEST(Initrd, NoneFromSomethingThatIsNotADeviceTree) {
  std::vector<uint8_t> junk(64, 0xab);
  PhysRange r = fdt_initrd(reinterpret_cast<u64>(junk.data()));
  EXPECT_EQ(r.start, 0u);
  EXPECT_EQ(r.end, 0u);
  EXPECT_EQ(fdt_initrd(0).end, 0u);
}

// An image of `blocks` blocks whose superblock claims `claimed`, plus `extra` bytes.
std::vector<uint8_t> image(uint32_t blocks, uint32_t claimed, uint32_t extra = 0,
                           uint32_t magic = fsfmt::FSMAGIC) {
  std::vector<uint8_t> img(blocks * fsfmt::BSIZE + extra, 0);
  if (img.size() >= 2 * fsfmt::BSIZE) {
    fsfmt::SuperBlock sb{};
    sb.magic = magic;
    sb.size = claimed;
    std::memcpy(img.data() + fsfmt::BSIZE, &sb, sizeof(sb));
  }
  return img;
}

// ramdisk_problem for the image as the whole of RAM, with the device tree elsewhere.
std::string problem(const std::vector<uint8_t> &img, u64 ram_lo_shift = 0) {
  u64 start = reinterpret_cast<u64>(img.data()), end = start + img.size();
  const char *p = ramdisk_problem(start, end, start + ram_lo_shift, end, 0);
  return p ? p : "";
}

TEST(RamdiskProblem, AFileSystemIsAccepted) {
  EXPECT_EQ(problem(image(8, 8)), "");
  EXPECT_EQ(problem(image(8, 5)), "");  // room to spare is fine
}

TEST(RamdiskProblem, EachWayOfNotBeingAFileSystemIsNamed) {
  EXPECT_EQ(problem(image(8, 9)), "it is smaller than its superblock says");
  EXPECT_EQ(problem(image(8, 8, 512)), "its length is not a whole number of blocks");
  EXPECT_EQ(problem(image(8, 8, 0, 0x12345678)), "it has no file-system superblock");
  EXPECT_EQ(problem(image(1, 1)), "it is too short to hold a superblock");
  EXPECT_EQ(problem(image(8, 8), 4096), "it lies outside the kernel's free RAM");
  EXPECT_STREQ(ramdisk_problem(0x84200000, 0x84200000, 0x80000000, 0x88000000, 0), "it is empty");
}

TEST(RamdiskProblem, OutsideRamIsRefusedBeforeAnythingIsRead) {
  // Nothing at these addresses may be read: the answer must come from the bounds alone.
  EXPECT_STREQ(ramdisk_problem(0x90000000, 0x90200000, 0x80000000, 0x88000000, 0),
               "it lies outside the kernel's free RAM");
  EXPECT_STREQ(ramdisk_problem(0x87f00000, 0x88100000, 0x80000000, 0x88000000, 0),
               "it lies outside the kernel's free RAM");
}

TEST(RamdiskProblem, TheDeviceTreeMustNotLieInside) {
  std::vector<uint8_t> img = image(8, 8);
  u64 start = reinterpret_cast<u64>(img.data()), end = start + img.size();
  EXPECT_STREQ(ramdisk_problem(start, end, start, end, start + 100),
               "the device tree lies inside it");
}

}  // namespace
