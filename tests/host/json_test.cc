// The JSON writer used by /proc/profile (kern/profile/json.h).
#include "profile/json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

std::string render(void (*fill)(json::Writer &), size_t cap = 4096) {
  std::string buf(cap, '\0');
  json::Writer w(buf.data(), cap);
  fill(w);
  return std::string(w.data(), w.size());
}

TEST(Json, ObjectsArraysAndCommas) {
  std::string s = render([](json::Writer &w) {
    w.begin_object();
    w.key("pid").number(3);
    w.key("samples").begin_array();
    w.begin_object().key("address").number(4096).key("kernel").boolean(true).end_object();
    w.begin_object().key("address").number(0).key("kernel").boolean(false).end_object();
    w.end_array();
    w.key("empty").begin_array().end_array();
    w.end_object();
  });
  EXPECT_EQ(
      s,
      R"({"pid":3,"samples":[{"address":4096,"kernel":true},{"address":0,"kernel":false}],"empty":[]})");
}

TEST(Json, NumbersAtTheLimits) {
  EXPECT_EQ(render([](json::Writer &w) {
              w.begin_array().number(0).number(18446744073709551615ull).end_array();
            }),
            "[0,18446744073709551615]");
}

// number() counts a number's digits before it writes them: every length, at both edges.
TEST(Json, NumbersAtEveryPowerOfTen) {
  uint64_t ten = 1;
  for (int k = 0; k < 20; k++, ten *= 10) {
    for (uint64_t v : {ten - 1, ten, ten + 1}) {
      char buf[32];
      json::Writer w(buf, sizeof(buf));
      w.number(v);
      EXPECT_EQ(std::string(w.data(), w.size()), std::to_string(v)) << "10^" << k;
    }
  }
}

TEST(Json, StringsAreEscaped) {
  std::string s = render([](json::Writer &w) { w.string("a\"b\\c\nd\te\x01\x7f\xc3\xa9"); });
  EXPECT_EQ(s, R"("a\"b\\c\u000ad\u0009e\u0001\u007f\u00c3\u00a9")");
}

TEST(Json, NeverWritesPastItsBuffer) {
  char buf[16];
  std::memset(buf, 'X', sizeof(buf));
  json::Writer w(buf, 8);
  w.begin_object().key("symbol").string("a long name").end_object();
  EXPECT_TRUE(w.overflow());
  EXPECT_EQ(w.size(), 8u);
  for (int i = 8; i < 16; i++) EXPECT_EQ(buf[i], 'X');
}

// Decodes one JSON string written by the writer back into the bytes it came from, strictly:
// only the escapes the writer uses, no raw control or non-ASCII byte. Returns false if the
// text is not exactly one such string.
bool decode_string(const std::string &text, std::string &out) {
  out.clear();
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return false;
  for (size_t i = 1; i + 1 < text.size(); i++) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '"') return false;
    if (c != '\\') {
      out += static_cast<char>(c);
      continue;
    }
    if (i + 2 >= text.size()) return false;
    char e = text[++i];
    if (e == '"' || e == '\\') {
      out += e;
    } else if (e == 'u' && i + 5 < text.size() && text.compare(i + 1, 2, "00") == 0) {
      out += static_cast<char>(std::stoi(text.substr(i + 3, 2), nullptr, 16));
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

// The seed of the random properties below: JSON_SEED if set (to repeat a failure), else fresh.
static unsigned json_seed() {
  const char *given = std::getenv("JSON_SEED");
  return given ? static_cast<unsigned>(std::strtoul(given, nullptr, 10)) : std::random_device{}();
}

// Property: whatever the bytes (1..255) and the limit, string(s, max) writes one valid JSON
// string of at most string_max(max) bytes, holding s whole if it has at most max bytes, and
// otherwise its first max - 3 bytes followed by "...".
TEST(Json, BoundedStringsAreWholeOrCutWithAMark) {
  unsigned seed = json_seed();
  std::mt19937 rng(seed);
  constexpr int kCases = 20000;
  std::printf("JSON_SEED=%u, %d cases\n", seed, kCases);
  for (int k = 0; k < kCases; k++) {
    size_t len = rng() % 400;
    size_t max = json::CUT_MARK_LEN + rng() % 300;
    std::string s;
    for (size_t i = 0; i < len; i++) s += static_cast<char>(1 + rng() % 255);
    if (k % 4 == 0) {  // around the edge: max one under the length, at it, or one over
      size_t delta = rng() % 3;
      max = len + delta >= 1 ? len + delta - 1 : 0;
    }
    if (max < json::CUT_MARK_LEN) max = json::CUT_MARK_LEN;
    std::string buf(json::string_max(max), '\0');
    json::Writer w(buf.data(), buf.size());
    w.string(s.c_str(), max);
    ASSERT_FALSE(w.overflow()) << "seed " << seed << " case " << k;
    std::string text(w.data(), w.size()), got;
    ASSERT_TRUE(decode_string(text, got)) << "seed " << seed << " case " << k << ": " << text;
    std::string want = len <= max ? s : s.substr(0, max - json::CUT_MARK_LEN) + json::CUT_MARK;
    ASSERT_EQ(got, want) << "seed " << seed << " case " << k << " len " << len << " max " << max;
  }
}

// Property: a writer with a small buffer writes exactly the start of what one with room for
// everything writes, whatever the calls (random keys, numbers, strings with and without a
// limit, nesting), and says it overflowed exactly when the whole did not fit.
TEST(Json, ASmallBufferHoldsTheStartOfTheWhole) {
  unsigned seed = json_seed();
  std::mt19937_64 rng(seed);
  constexpr int kCases = 5000;
  std::printf("JSON_SEED=%u, %d cases\n", seed, kCases);
  for (int k = 0; k < kCases; k++) {
    // One script of calls, as (kind, number, text) steps, played on both writers.
    struct Step {
      int kind;
      uint64_t v;
      std::string text;
      size_t max;
    };
    std::vector<Step> steps(1 + rng() % 30);
    for (Step &st : steps) {
      st.kind = static_cast<int>(rng() % 9);
      st.v = rng() >> (rng() % 64);
      size_t len = rng() % 40;
      for (size_t i = 0; i < len; i++)
        st.text += static_cast<char>(rng() % 3 == 0 ? 1 + rng() % 255 : 'a' + rng() % 26);
      st.max = json::CUT_MARK_LEN + rng() % 30;
    }
    auto play = [&steps](json::Writer &w) {
      for (const Step &st : steps) {
        switch (st.kind) {
          case 0: w.begin_object(); break;
          case 1: w.end_object(); break;
          case 2: w.begin_array(); break;
          case 3: w.end_array(); break;
          case 4: st.v % 2 ? w.key("address") : w.key("x"); break;  // keys are literals
          case 5: w.number(st.v); break;
          case 6: w.string(st.text.c_str()); break;
          case 7: w.string(st.text.c_str(), st.max); break;
          default: w.boolean(st.v & 1); break;
        }
      }
    };
    std::string whole(65536, '\0');
    json::Writer big(whole.data(), whole.size());
    play(big);
    ASSERT_FALSE(big.overflow());
    size_t cap = rng() % (big.size() + 8);
    std::string part(cap + 16, 'X');
    json::Writer small(part.data(), cap);
    play(small);
    std::string want = std::string(big.data(), big.size()).substr(0, cap);
    ASSERT_EQ(std::string(small.data(), small.size()), want) << "seed " << seed << " case " << k;
    ASSERT_EQ(small.overflow(), big.size() > cap) << "seed " << seed << " case " << k;
    ASSERT_EQ(part.substr(cap), std::string(16, 'X')) << "seed " << seed << " case " << k;
  }
}

TEST(Json, TheWorstByteTakesMaxEscape) {
  for (int c = 1; c < 256; c++) {
    char s[2] = {static_cast<char>(c), 0};
    char buf[16];
    json::Writer w(buf, sizeof(buf));
    w.string(s);
    EXPECT_LE(w.size(), json::string_max(1)) << "byte " << c;
  }
}

// A document with every kind of value, for tests/host/test_json_writer.py to parse with
// Python's json module.
TEST(Json, WritesASampleForAParser) {
  const char *path = std::getenv("JSON_SAMPLE");
  if (path == nullptr) GTEST_SKIP() << "JSON_SAMPLE not set (run through tests/host/Makefile)";
  std::string s = render(
      [](json::Writer &w) {
        w.begin_array();
        for (int i = 0; i < 3; i++) {
          w.begin_object();
          w.key("pid").number(i).key("mode").string(i ? "kernel" : "user");
          w.key("samples").begin_array();
          w.begin_object().key("symbol").string("Spinlock::acquire()\t\"x\"\\").end_object();
          w.begin_object().key("symbol").string("\x01\x1f\x7f\xff").end_object();
          std::string every;
          for (int c = 1; c < 256; c++) every += static_cast<char>(c);
          w.begin_object().key("symbol").string(every.c_str()).end_object();
          w.begin_object().key("symbol").string(every.c_str(), 100).end_object();
          w.end_array();
          w.end_object();
        }
        w.end_array();
      },
      32768);
  ASSERT_LT(s.size(), 32768u);
  // Written whole under another name, then renamed: a reader of `path` (the Python test, on
  // another worker, while a test of the Makefile runs this binary again) never sees it cut.
  std::string part = std::string(path) + ".part";
  FILE *f = std::fopen(part.c_str(), "w");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(s.data(), 1, s.size(), f), s.size());
  ASSERT_EQ(std::fclose(f), 0);
  ASSERT_EQ(std::rename(part.c_str(), path), 0);
}

}  // namespace
