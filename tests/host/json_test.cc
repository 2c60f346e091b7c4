// The JSON writer used by /proc/profile (kern/profile/json.h).
#include "profile/json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>

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
  EXPECT_EQ(s, R"({"pid":3,"samples":[{"address":4096,"kernel":true},{"address":0,"kernel":false}],"empty":[]})");
}

TEST(Json, NumbersAtTheLimits) {
  EXPECT_EQ(render([](json::Writer &w) { w.begin_array().number(0).number(18446744073709551615ull).end_array(); }),
            "[0,18446744073709551615]");
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

// A document with every kind of value, for tests/host/test_json_writer.py to parse with
// Python's json module.
TEST(Json, WritesASampleForAParser) {
  const char *path = std::getenv("JSON_SAMPLE");
  if (path == nullptr) GTEST_SKIP() << "JSON_SAMPLE not set (run through tests/host/Makefile)";
  std::string s = render([](json::Writer &w) {
    w.begin_array();
    for (int i = 0; i < 3; i++) {
      w.begin_object();
      w.key("pid").number(i).key("mode").string(i ? "kernel" : "user");
      w.key("samples").begin_array();
      w.begin_object().key("symbol").string("Spinlock::acquire()\t\"x\"\\").end_object();
      w.begin_object().key("symbol").string("\x01\x1f\x7f\xff").end_object();
      w.end_array();
      w.end_object();
    }
    w.end_array();
  });
  FILE *f = std::fopen(path, "w");
  ASSERT_NE(f, nullptr);
  std::fwrite(s.data(), 1, s.size(), f);
  std::fclose(f);
}

}  // namespace
