// The profiler's frame-walk rules (kern/profile/walk.h) on synthetic stacks.
#include "profile/walk.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

namespace {

// A sparse memory: only the words put into it are readable.
struct FakeMemory {
  std::map<uint64_t, uint64_t> words;
  int reads = 0;
  void put(uint64_t addr, uint64_t value) { words[addr] = value; }
  // A frame record at fp: return address at fp-8, caller's fp at fp-16.
  void record(uint64_t fp, uint64_t ret, uint64_t prev) {
    put(fp - 8, ret);
    put(fp - 16, prev);
  }
  bool read_pair(uint64_t addr, uint64_t *lo, uint64_t *hi) {
    reads++;
    auto a = words.find(addr), b = words.find(addr + 8);
    if (a == words.end() || b == words.end()) return false;
    *lo = a->second;
    *hi = b->second;
    return true;
  }
};

constexpr uint64_t TEXT_END = 0x4000;
constexpr profwalk::Bounds STACK{0x10000, 0x11000};
bool is_text(uint64_t pc) { return pc < TEXT_END; }

std::vector<uint64_t> walk(FakeMemory &mem, profwalk::Registers regs, int max = 32,
                           profwalk::Bounds b = STACK) {
  std::vector<uint64_t> out(max > 0 ? max : 1);
  int n = profwalk::walk(mem, regs, b, is_text, out.data(), max);
  out.resize(n);
  return out;
}

// main (fp 0x10ff0) <- outer (0x10fb0) <- middle (0x10f70) <- hot (0x10f30, sampled)
FakeMemory chain() {
  FakeMemory m;
  m.record(0x10f30, 0x300, 0x10f70);  // hot's record: returns into middle
  m.record(0x10f70, 0x200, 0x10fb0);  // middle's: into outer
  m.record(0x10fb0, 0x100, 0x10ff0);  // outer's: into main
  m.record(0x10ff0, 0x10, 0);         // main's: into _start, whose fp is 0
  return m;
}

TEST(Walk, FollowsAChainToTheEnd) {
  FakeMemory m = chain();
  EXPECT_EQ(walk(m, {0x3f0, 0x10f30, 0x999}),
            (std::vector<uint64_t>{0x3f0, 0x300, 0x200, 0x100, 0x10}));
}

TEST(Walk, LeafFrameUsesTheRaRegister) {
  // hot is a leaf: GCC saved only the caller's fp, at fp-8; ra still holds the return.
  FakeMemory m = chain();
  m.put(0x10f20 - 8, 0x10f30);  // leaf record at fp 0x10f20: just middle's... hot's caller fp
  m.put(0x10f20 - 16, 0xdead);  // a local variable below it
  EXPECT_EQ(walk(m, {0x3f0, 0x10f20, 0x300}),
            (std::vector<uint64_t>{0x3f0, 0x300, 0x300, 0x200, 0x100, 0x10}));
}

TEST(Walk, LeafRuleOnlyInTheFirstFrame) {
  // A later record whose ra slot holds a stack-like value is not a leaf: the walk stops at
  // the bad return address instead of taking ra again.
  FakeMemory m;
  m.record(0x10f30, 0x300, 0x10f70);
  m.record(0x10f70, 0x10f90, 0x10fb0);  // "return address" looks like a frame pointer
  EXPECT_EQ(walk(m, {0x3f0, 0x10f30, 0x777}), (std::vector<uint64_t>{0x3f0, 0x300}));
}

TEST(Walk, FramelessFunctionTakesRaFirst) {
  // A system-call stub: fp is still its caller's (middle's) record.
  FakeMemory m = chain();
  EXPECT_EQ(walk(m, {0x3fe, 0x10f70, 0x2f0, true}),
            (std::vector<uint64_t>{0x3fe, 0x2f0, 0x200, 0x100, 0x10}));
}

TEST(Walk, MisalignedFpStopsAtThePc) {
  FakeMemory m = chain();
  EXPECT_EQ(walk(m, {0x3f0, 0x10f33, 0x300}), (std::vector<uint64_t>{0x3f0}));
}

TEST(Walk, FpOutsideTheStackStops) {
  FakeMemory m = chain();
  m.record(0x80200100, 0x300, 0x80200200);  // a "kernel" address: never followed
  EXPECT_EQ(walk(m, {0x3f0, 0x80200100, 0x300}), (std::vector<uint64_t>{0x3f0}));
  EXPECT_EQ(m.reads, 0);
  EXPECT_EQ(walk(m, {0x3f0, 0x100, 0x300}), (std::vector<uint64_t>{0x3f0}));  // below the stack
}

TEST(Walk, ChainIntoTheKernelStops) {
  FakeMemory m;
  m.record(0x10f30, 0x300, 0x80200000);  // caller's fp points into the kernel
  EXPECT_EQ(walk(m, {0x3f0, 0x10f30, 0x1}), (std::vector<uint64_t>{0x3f0, 0x300}));
}

TEST(Walk, SelfPointingRecordStops) {
  FakeMemory m;
  m.record(0x10f30, 0x300, 0x10f30);
  EXPECT_EQ(walk(m, {0x3f0, 0x10f30, 0x1}), (std::vector<uint64_t>{0x3f0, 0x300}));
}

TEST(Walk, DescendingFpStops) {
  FakeMemory m;
  m.record(0x10f30, 0x300, 0x10f00);
  m.record(0x10f00, 0x200, 0x10ff0);
  EXPECT_EQ(walk(m, {0x3f0, 0x10f30, 0x1}), (std::vector<uint64_t>{0x3f0, 0x300}));
}

TEST(Walk, UnreadableRecordStops) {
  FakeMemory m;
  m.record(0x10f30, 0x300, 0x10f70);  // 0x10f70's record is not mapped
  EXPECT_EQ(walk(m, {0x3f0, 0x10f30, 0x1}), (std::vector<uint64_t>{0x3f0, 0x300}));
}

TEST(Walk, ReturnAddressOutsideTextStops) {
  FakeMemory m;
  m.record(0x10f30, 0x5000, 0x10f70);
  EXPECT_EQ(walk(m, {0x3f0, 0x10f30, 0x1}), (std::vector<uint64_t>{0x3f0}));
  m.record(0x10f30, 0, 0x10f70);
  EXPECT_EQ(walk(m, {0x3f0, 0x10f30, 0x1}), (std::vector<uint64_t>{0x3f0}));
}

TEST(Walk, DepthLimit) {
  FakeMemory m;
  for (uint64_t i = 0; i < 100; i++) m.record(0x10100 + 16 * i, 0x100 + i, 0x10100 + 16 * (i + 1));
  EXPECT_EQ(walk(m, {0x3f0, 0x10100, 0x1}, 32).size(), 32u);
  EXPECT_EQ(walk(m, {0x3f0, 0x10100, 0x1}, 1), (std::vector<uint64_t>{0x3f0}));
  std::vector<uint64_t> none(1, 7);
  EXPECT_EQ(profwalk::walk(m, {0x3f0, 0x10100, 0x1}, STACK, is_text, none.data(), 0), 0);
  EXPECT_EQ(none[0], 7u);
}

TEST(Walk, FpAtTheTopOfTheStackIsAllowed) {
  FakeMemory m;
  m.record(0x11000, 0x10, 0);
  EXPECT_EQ(walk(m, {0x3f0, 0x11000, 0x1}), (std::vector<uint64_t>{0x3f0, 0x10}));
  m.record(0x11010, 0x10, 0);
  EXPECT_EQ(walk(m, {0x3f0, 0x11010, 0x1}), (std::vector<uint64_t>{0x3f0}));
}

TEST(SyscallStub, FindsTheEcallAroundPc) {
  // li a7,5 (c.li: 0x48 0x95) ; ecall (73 00 00 00) ; ret (c.jr ra: 0x82 0x80)
  const uint8_t stub[] = {0x01, 0x00, 0x01, 0x00, 0x95, 0x48, 0x73, 0x00, 0x00, 0x00, 0x82,
                          0x80, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00};
  auto window = [&](int pc_offset) {
    uint8_t w[12];
    for (int i = 0; i < 12; i++) w[i] = stub[pc_offset - 4 + i];
    return profwalk::in_syscall_stub(w);
  };
  EXPECT_TRUE(window(4));    // on the li
  EXPECT_TRUE(window(6));    // on the ecall
  EXPECT_TRUE(window(10));   // on the ret, as during the call
  EXPECT_FALSE(window(14));  // past it
  const uint8_t plain[12] = {0x13, 0x00, 0x00, 0x00, 0x13, 0x00,
                             0x00, 0x00, 0x13, 0x00, 0x00, 0x00};
  EXPECT_FALSE(profwalk::in_syscall_stub(plain));
}

// The profiler keeps a program's ecall addresses instead of its code. Property: for random
// code (ecalls planted at random even addresses among random halfwords that may hold 0x73
// bytes) and every even pc, the window rebuilt from the ecall list gives in_syscall_stub()
// the same answer as the real bytes.
TEST(SyscallStub, WindowFromEcallAddressesAgreesWithTheCode) {
  const char *env = std::getenv("WALK_SEED");
  uint64_t seed = env != nullptr ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  std::mt19937_64 rng(seed);
  int cases = 0;
  for (int round = 0; round < 100; round++) {
    std::vector<uint8_t> code(256);
    for (uint8_t &b : code) b = rng() % 4 == 0 ? 0x73 : rng() % 3 == 0 ? 0 : uint8_t(rng());
    for (int k = rng() % 8; k > 0; k--) {
      size_t at = (rng() % (code.size() - 4)) & ~size_t(1);
      code[at] = 0x73;
      code[at + 1] = code[at + 2] = code[at + 3] = 0;
    }
    const uint64_t base = 0x10000;
    std::vector<uint64_t> ecalls;  // what the kernel records: ecalls at even addresses
    for (size_t i = 0; i + 4 <= code.size(); i += 2)
      if (code[i] == 0x73 && code[i + 1] == 0 && code[i + 2] == 0 && code[i + 3] == 0)
        ecalls.push_back(base + i);
    for (size_t off = 4; off + 8 <= code.size(); off += 2, cases++) {
      uint8_t real[12], rebuilt[12];
      for (int i = 0; i < 12; i++) real[i] = code[off - 4 + i];
      profwalk::ecall_window(ecalls.data(), static_cast<uint32_t>(ecalls.size()), base + off,
                             rebuilt);
      ASSERT_EQ(profwalk::in_syscall_stub(rebuilt), profwalk::in_syscall_stub(real))
          << "seed " << seed << " round " << round << " pc offset " << off;
    }
  }
  std::printf("ecall window: seed %llu, %d cases\n", static_cast<unsigned long long>(seed), cases);
}

}  // namespace
