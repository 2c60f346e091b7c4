// A tiny JSON writer into a fixed buffer, for /proc/profile.
//
// It writes only what the profile needs (objects, arrays, unsigned numbers, booleans and
// strings, with every string escaped per RFC 8259; an object's keys are string literals,
// checked when compiled to need no escape), and never writes past its buffer: on
// overflow it stops and remembers, so the caller can detect it. It has no kernel
// dependencies, so host unit tests check its output with a real JSON parser.
//
// Sizes are known in advance, so a caller can size its buffer when it is compiled and never
// overflow: a number takes at most NUMBER_MAX bytes, and a string of n bytes at most
// string_max(n), since one byte escapes to at most MAX_ESCAPE bytes (\u00XX). A string that
// may be long is written with a limit on its bytes, string(s, max): one longer than that is
// cut to its first max - 3 bytes followed by CUT_MARK ("..."), so a reader sees that it was
// cut. The cut is made in the source bytes, before escaping, so it never splits an escape.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace json {

inline constexpr size_t NUMBER_MAX = 20;  // 2^64 - 1 has 20 decimal digits
inline constexpr size_t MAX_ESCAPE = 6;   // a control byte or a byte >= 0x7f: \u00XX
inline constexpr char CUT_MARK[] = "...";
inline constexpr size_t CUT_MARK_LEN = sizeof(CUT_MARK) - 1;

// The most a string of at most n bytes takes, with its quotes.
constexpr size_t string_max(size_t n) { return 2 + n * MAX_ESCAPE; }

// TENS[k] is 10^k: a number v has k + 1 digits or more when v >= TENS[k].
struct Tens {
  uint64_t v[NUMBER_MAX];
  constexpr Tens() : v() {
    v[0] = 1;
    for (size_t k = 1; k < NUMBER_MAX; k++) v[k] = v[k - 1] * 10;
  }
  constexpr uint64_t operator[](size_t k) const { return v[k]; }
};
inline constexpr Tens TENS;
static_assert(TENS[NUMBER_MAX - 1] == 10000000000000000000ull);

// The length of a literal, without its NUL: for adding up what fixed text takes.
template <size_t N>
constexpr size_t literal_len(const char (&)[N]) {
  return N - 1;
}

// A byte a JSON string holds as it is: RFC 8259 wants '"', '\\' and control bytes escaped,
// and bytes >= 0x7f are escaped too, so that the text is ASCII whatever a name holds.
constexpr bool plain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

void a_key_must_need_no_escape();  // never defined: Key calls it to stop the build

// An object's key: a string literal, checked when compiled to need no escape (a key such as
// "a\"b" stops the build), so that key() copies it as it is.
class Key {
 public:
  template <size_t N>
  consteval Key(const char (&k)[N]) : m_text(k), m_len(N - 1) {
    for (size_t i = 0; i < m_len; i++)
      if (!plain(static_cast<unsigned char>(k[i]))) a_key_must_need_no_escape();
  }
  const char *text() const { return m_text; }
  size_t len() const { return m_len; }

 private:
  const char *m_text;
  size_t m_len;
};

class Writer {
 public:
  Writer(char *buf, size_t cap) : m_buf(buf), m_cap(cap) {}

  size_t size() const { return m_len; }
  bool overflow() const { return m_overflow; }
  const char *data() const { return m_buf; }

  Writer &raw(const char *s) {
    put_run(s, __builtin_strlen(s));
    return *this;
  }
  Writer &key(Key k) {
    comma();
    put('"');
    put_run(k.text(), k.len());
    put('"');
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
    size_t n = 1;  // how many digits v has
    while (n < NUMBER_MAX && v >= TENS[n]) n++;
    // Written in place, from the last digit back; if they do not all fit, into `spare` first,
    // and put_run() takes as many as fit.
    char spare[NUMBER_MAX];
    bool fits = n <= m_cap - m_len;
    char *d = fits ? m_buf + m_len : spare;
    for (size_t k = n; k-- > 0; v /= 10) d[k] = static_cast<char>('0' + v % 10);
    if (fits)
      m_len += n;
    else
      put_run(spare, n);
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
    string_body(s, static_cast<size_t>(-1));
    m_need_comma = true;
    return *this;
  }
  // A value written before by another Writer, `len` bytes of text, copied as it is.
  Writer &verbatim(const char *text, size_t len) {
    comma();
    put_run(text, len);
    m_need_comma = true;
    return *this;
  }
  // At most `max` bytes of s (max >= CUT_MARK_LEN): a longer s is cut to its first
  // max - CUT_MARK_LEN bytes and CUT_MARK. Takes at most string_max(max) bytes.
  Writer &string(const char *s, size_t max) {
    comma();
    string_body(s, max);
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
  // n bytes at once, as put() would write them one by one: as many as fit.
  void put_run(const char *s, size_t n) {
    if (n > m_cap - m_len) {
      n = m_cap - m_len;
      m_overflow = true;
    }
    __builtin_memcpy(m_buf + m_len, s, n);
    m_len += n;
  }
  void escape(unsigned char c) {
    if (c == '"' || c == '\\') {
      put('\\');
      put(static_cast<char>(c));
    } else {
      // Control bytes, and (to stay valid UTF-8 whatever a symbol holds) anything non-ASCII.
      constexpr char hex[] = "0123456789abcdef";
      char text[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      put_run(text, sizeof(text));
    }
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
  // Is s longer than max bytes? (Looks at no more than max + 1 of them.)
  static bool longer_than(const char *s, size_t max) {
    for (size_t i = 0; i <= max; i++)
      if (s[i] == 0) return false;
    return true;
  }
  void string_body(const char *s, size_t max) {
    bool cut = max != static_cast<size_t>(-1) && longer_than(s, max);
    size_t keep = !cut ? max : max > CUT_MARK_LEN ? max - CUT_MARK_LEN : 0;
    put('"');
    size_t i = 0;
    while (i < keep && s[i] != 0) {
      // Most bytes need no escape: copy each run of them whole, then escape the byte after it.
      size_t run = i;
      while (run < keep && plain(static_cast<unsigned char>(s[run]))) run++;
      put_run(s + i, run - i);
      i = run;
      if (i < keep && s[i] != 0) escape(static_cast<unsigned char>(s[i++]));
    }
    if (cut) raw(CUT_MARK);
    put('"');
  }

  char *m_buf;
  size_t m_cap;
  size_t m_len = 0;
  bool m_overflow = false;
  bool m_need_comma = false;
};

}  // namespace json
