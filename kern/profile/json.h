// A tiny JSON writer into a fixed buffer, for /proc/profile.
//
// It writes only what the profile needs (objects, arrays, unsigned numbers, booleans and
// strings, with every string escaped per RFC 8259), and never writes past its buffer: on
// overflow it stops and remembers, so the caller can detect it. It has no kernel
// dependencies, so host unit tests check its output with a real JSON parser.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace json {

class Writer {
 public:
  Writer(char *buf, size_t cap) : m_buf(buf), m_cap(cap) {}

  size_t size() const { return m_len; }
  bool overflow() const { return m_overflow; }
  const char *data() const { return m_buf; }

  Writer &raw(const char *s) {
    while (*s) put(*s++);
    return *this;
  }
  Writer &key(const char *k) {
    comma();
    string_body(k);
    put(':');
    m_need_comma = false;
    return *this;
  }
  Writer &begin_object() { return open('{'); }
  Writer &end_object() { return close('}'); }
  Writer &begin_array() { return open('['); }
  Writer &end_array() { return close(']'); }
  Writer &number(uint64_t v) {
    comma();
    char d[20];
    int k = 0;
    do {
      d[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (k > 0) put(d[--k]);
    m_need_comma = true;
    return *this;
  }
  Writer &boolean(bool b) {
    comma();
    raw(b ? "true" : "false");
    m_need_comma = true;
    return *this;
  }
  Writer &string(const char *s) {
    comma();
    string_body(s);
    m_need_comma = true;
    return *this;
  }

 private:
  void put(char c) {
    if (m_len < m_cap)
      m_buf[m_len++] = c;
    else
      m_overflow = true;
  }
  void comma() {
    if (m_need_comma) put(',');
  }
  Writer &open(char c) {
    comma();
    put(c);
    m_need_comma = false;
    return *this;
  }
  Writer &close(char c) {
    put(c);
    m_need_comma = true;
    return *this;
  }
  void string_body(const char *s) {
    put('"');
    for (; *s; s++) {
      unsigned char c = static_cast<unsigned char>(*s);
      if (c == '"' || c == '\\') {
        put('\\');
        put(static_cast<char>(c));
      } else if (c < 0x20 || c >= 0x7f) {
        // Control bytes, and (to stay valid UTF-8 whatever a symbol holds) anything non-ASCII.
        constexpr char hex[] = "0123456789abcdef";
        put('\\');
        put('u');
        put('0');
        put('0');
        put(hex[c >> 4]);
        put(hex[c & 15]);
      } else {
        put(static_cast<char>(c));
      }
    }
    put('"');
  }

  char *m_buf;
  size_t m_cap;
  size_t m_len = 0;
  bool m_overflow = false;
  bool m_need_comma = false;
};

}  // namespace json
