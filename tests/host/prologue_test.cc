// Prologue and epilogue windows (kern/profile/prologue.h) on code GCC 12 made for pentry
// (user/tests/pentry.cc), on the 32-bit forms of the same instructions, and on random bytes.
#include "profile/prologue.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

namespace {

using profwalk::Window;

std::vector<Window> windows(const std::vector<uint8_t> &code, uint64_t start, int max = 16) {
  std::vector<Window> out(max);
  int n = profwalk::frame_windows(code.data(), start, static_cast<uint32_t>(code.size()),
                                  out.data(), max);
  out.resize(n);
  return out;
}

void put16(std::vector<uint8_t> &v, uint16_t h) {
  v.push_back(h & 0xff);
  v.push_back(h >> 8);
}

void put32(std::vector<uint8_t> &v, uint32_t w) {
  for (int i = 0; i < 4; i++) v.push_back((w >> (8 * i)) & 0xff);
}

// pentry's tiny() at 0x18: the frame pointer is set at 0x1c and put back at 0x1e already.
//   18 1141 addi sp,sp,-16   1a e422 sd s0,8(sp)   1c 0800 addi s0,sp,16   1e 6422 ld s0,8(sp)
//   20 00151793 slli   24 00002717 auipc   28 fca73e23 sd   2c 97aa add   2e 00178513 addi
//   32 0141 addi sp,sp,16   34 8082 ret
std::vector<uint8_t> tiny() {
  std::vector<uint8_t> v;
  put16(v, 0x1141);
  put16(v, 0xe422);
  put16(v, 0x0800);
  put16(v, 0x6422);
  put32(v, 0x00151793);
  put32(v, 0x00002717);
  put32(v, 0xfca73e23);
  put16(v, 0x97aa);
  put32(v, 0x00178513);
  put16(v, 0x0141);
  put16(v, 0x8082);
  return v;
}

TEST(Prologue, LeafFunctionFromGcc) {
  auto w = windows(tiny(), 0x18);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].from, 0x18u);                           // entry: s0 is the caller's ...
  EXPECT_EQ(w[0].to, 0x1cu);                             // ... up to the instruction that sets it
  EXPECT_EQ(w[1].from, 0x20u);                           // after `ld s0` ...
  EXPECT_EQ(w[1].to, 0x34u);                             // ... to the ret
  EXPECT_FALSE(profwalk::in_window(w.data(), 2, 0x1e));  // s0 is tiny's own there
  EXPECT_TRUE(profwalk::in_window(w.data(), 2, 0x18));
  EXPECT_TRUE(profwalk::in_window(w.data(), 2, 0x1c));
  EXPECT_TRUE(profwalk::in_window(w.data(), 2, 0x2c));
  EXPECT_FALSE(profwalk::in_window(w.data(), 2, 0x36));
  EXPECT_FALSE(profwalk::in_window(w.data(), 2, 0x10));
}

// The 32-bit forms: addi s0,sp,32; ld s0,16(sp); jalr x0,0(ra); and two epilogues.
TEST(Prologue, WideFormsAndTwoExits) {
  std::vector<uint8_t> v;
  put32(v, 0xfe010113);  // 0  addi sp,sp,-32
  put32(v, 0x00813823);  // 4  sd s0,16(sp)
  put32(v, 0x02010413);  // 8  addi s0,sp,32
  put32(v, 0x00050463);  // c  beqz a0, ...
  put32(v, 0x01013403);  // 10 ld s0,16(sp)
  put32(v, 0x02010113);  // 14 addi sp,sp,32
  put32(v, 0x00008067);  // 18 ret
  put32(v, 0x00100513);  // 1c li a0,1
  put32(v, 0x01013403);  // 20 ld s0,16(sp)
  put32(v, 0x02010113);  // 24 addi sp,sp,32
  put32(v, 0x00008067);  // 28 ret
  auto w = windows(v, 0x1000);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].from, 0x1000u);
  EXPECT_EQ(w[0].to, 0x1008u);
  EXPECT_EQ(w[1].from, 0x1014u);
  EXPECT_EQ(w[1].to, 0x1018u);
  EXPECT_EQ(w[2].from, 0x1024u);
  EXPECT_EQ(w[2].to, 0x1028u);
}

// No frame pointer set (a system-call stub: li a7,N; ecall; ret): no window, even at its ret.
TEST(Prologue, FramelessCodeHasNone) {
  std::vector<uint8_t> v;
  put16(v, 0x48c5);      // li a7,17
  put32(v, 0x00000073);  // ecall
  put16(v, 0x8082);      // ret
  EXPECT_TRUE(windows(v, 0x500).empty());
}

// Cut short in the middle of a 32-bit instruction, or with room for one window only.
TEST(Prologue, ShortCodeAndFewSlots) {
  auto v = tiny();
  std::vector<uint8_t> cut(v.begin(), v.begin() + 9);  // up to half of the slli
  auto w = windows(cut, 0x18);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].to, 0x1cu);
  EXPECT_EQ(windows(v, 0x18, 1).size(), 1u);
  EXPECT_TRUE(windows(std::vector<uint8_t>{0x41}, 0).empty());
}

// Random code: the windows stay inside the function, in order, apart, each from <= to;
// in_window agrees with a plain scan.
TEST(Prologue, RandomBytes) {
  unsigned seed = std::random_device{}();
  std::printf("prologue random seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int round = 0; round < 2000; round++) {
    std::vector<uint8_t> v(rng() % 200);
    // Mostly real instructions of interest, so that windows occur.
    const uint16_t pieces[] = {0x0800, 0x6422, 0x8082, 0x1141, 0x97aa};
    for (size_t i = 0; i + 1 < v.size(); i += 2) {
      uint16_t h = rng() % 3 == 0 ? static_cast<uint16_t>(rng()) : pieces[rng() % 5];
      v[i] = h & 0xff;
      v[i + 1] = h >> 8;
    }
    uint64_t start = 0x1000 + 2 * (rng() % 100);
    auto w = windows(v, start);
    for (size_t k = 0; k < w.size(); k++) {
      EXPECT_LE(w[k].from, w[k].to) << "seed " << seed;
      EXPECT_GE(w[k].from, start) << "seed " << seed;
      EXPECT_LT(w[k].to, start + v.size()) << "seed " << seed;
      if (k > 0) {
        EXPECT_GT(w[k].from, w[k - 1].to) << "seed " << seed;
      }
    }
    for (uint64_t pc = start - 4; pc < start + v.size() + 4; pc += 2) {
      bool plain = false;
      for (const Window &x : w) plain = plain || (x.from <= pc && pc <= x.to);
      EXPECT_EQ(profwalk::in_window(w.data(), static_cast<uint32_t>(w.size()), pc), plain)
          << "seed " << seed << " pc " << pc;
    }
  }
}

}  // namespace
