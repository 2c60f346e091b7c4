// printf, fprintf, snprintf and usage_exit: formatted output without a C library.
//
// Output to a file is collected in a small buffer on the stack and handed to write() in as
// few calls as possible (one, for any line shorter than the buffer). That matters when
// several processes share the console: a line written by one write() call comes out whole,
// instead of interleaved character by character with another process's output.
//
// Supported: %d %i %u %x %p %s %c %%, the 'l' size prefix (%ld %lu %lx), and a field width
// with '-' to pad on the right or '0' to pad with zeros, such as "%5d", "%08lx", "%-14s".
// There is no floating point: user programs run with the FPU off. snprintf formats into a
// string instead, with the same conversions.
#include "user.h"

namespace {

// Where formatted text goes: a file descriptor, through m_buf, or a string of cap bytes.
class Output {
 public:
  explicit Output(int fd) : m_fd(fd) {}
  Output(char *dst, int cap) : m_dst(dst), m_cap(cap) {}

  void put(char c) {
    if (m_dst != nullptr) {
      if (m_total + 1 < m_cap) m_dst[m_total] = c;
    } else {
      if (m_len == sizeof(m_buf)) flush();
      m_buf[m_len++] = c;
    }
    m_total++;
  }

  void put_n(char c, int count) {
    for (int i = 0; i < count; i++) put(c);
  }

  // Writes out what is buffered; a string is terminated instead (cut to cap - 1 bytes).
  void flush() {
    if (m_dst != nullptr) {
      if (m_cap > 0) m_dst[m_total < m_cap ? m_total : m_cap - 1] = '\0';
      return;
    }
    if (m_len > 0) write(m_fd, m_buf, m_len);
    m_len = 0;
  }

  int total() const { return m_total; }

 private:
  int m_fd = -1;
  char *m_dst = nullptr;
  int m_cap = 0;
  int m_len = 0;
  int m_total = 0;
  char m_buf[128];
};

// How one conversion asked to be laid out.
struct Spec {
  bool left = false;   // '-': pad after the text instead of before it
  bool zeros = false;  // '0': pad numbers with zeros instead of spaces
  int width = 0;
};

void put_padded(Output &out, const Spec &spec, const char *text, int len) {
  int pad = spec.width > len ? spec.width - len : 0;
  if (!spec.left) out.put_n(' ', pad);
  for (int i = 0; i < len; i++) out.put(text[i]);
  if (spec.left) out.put_n(' ', pad);
}

// Prints the magnitude in the given base, with a '-' in front when negative is set. Zero
// padding goes between the sign and the digits, so "%05d" of -42 is "-0042".
void put_number(Output &out, const Spec &spec, unsigned long magnitude, int base, bool negative) {
  static constexpr char DIGITS[] = "0123456789abcdef";
  char digits[24];
  int n = 0;
  do {
    digits[n++] = DIGITS[magnitude % base];
    magnitude /= base;
  } while (magnitude != 0);

  int len = n + (negative ? 1 : 0);
  int pad = spec.width > len ? spec.width - len : 0;
  if (!spec.left && !spec.zeros) out.put_n(' ', pad);
  if (negative) out.put('-');
  if (!spec.left && spec.zeros) out.put_n('0', pad);
  while (n > 0) out.put(digits[--n]);
  if (spec.left) out.put_n(' ', pad);
}

int format(Output &out, const char *fmt, __builtin_va_list ap) {
  for (; *fmt != '\0'; fmt++) {
    if (*fmt != '%') {
      out.put(*fmt);
      continue;
    }

    Spec spec;
    fmt++;
    for (;; fmt++) {
      if (*fmt == '-') {
        spec.left = true;
      } else if (*fmt == '0') {
        spec.zeros = true;
      } else {
        break;
      }
    }
    while (*fmt >= '0' && *fmt <= '9') spec.width = spec.width * 10 + (*fmt++ - '0');
    bool is_long = false;
    while (*fmt == 'l') {
      is_long = true;
      fmt++;
    }

    switch (*fmt) {
      case 'd':
      case 'i': {
        long v = is_long ? __builtin_va_arg(ap, long) : __builtin_va_arg(ap, int);
        // Negate as unsigned so that the most negative value has a magnitude too.
        unsigned long mag = v < 0 ? 0UL - static_cast<unsigned long>(v) : v;
        put_number(out, spec, mag, 10, v < 0);
        break;
      }
      case 'u':
      case 'x':
        put_number(
            out, spec,
            is_long ? __builtin_va_arg(ap, unsigned long) : __builtin_va_arg(ap, unsigned int),
            *fmt == 'x' ? 16 : 10, false);
        break;
      case 'p': {
        // Always all 16 hex digits, so addresses line up in columns.
        unsigned long v = reinterpret_cast<unsigned long>(__builtin_va_arg(ap, void *));
        out.put('0');
        out.put('x');
        Spec full;
        full.zeros = true;
        full.width = 16;
        put_number(out, full, v, 16, false);
        break;
      }
      case 's': {
        const char *s = __builtin_va_arg(ap, const char *);
        if (s == nullptr) s = "(null)";
        put_padded(out, spec, s, strlen(s));
        break;
      }
      case 'c': {
        char c = static_cast<char>(__builtin_va_arg(ap, int));
        put_padded(out, spec, &c, 1);
        break;
      }
      case '%': out.put('%'); break;
      case '\0':
        // A lone '%' at the very end: print it rather than read past the string.
        out.put('%');
        fmt--;
        break;
      default:
        // An unknown conversion is shown as written, which makes the mistake visible.
        out.put('%');
        out.put(*fmt);
        break;
    }
  }
  out.flush();
  return out.total();
}

}  // namespace

extern "C" {

int fprintf(int fd, const char *fmt, ...) {
  Output out(fd);
  __builtin_va_list ap;
  __builtin_va_start(ap, fmt);
  int n = format(out, fmt, ap);
  __builtin_va_end(ap);
  return n;
}

int snprintf(char *buf, int cap, const char *fmt, ...) {
  Output out(buf, cap);
  __builtin_va_list ap;
  __builtin_va_start(ap, fmt);
  int n = format(out, fmt, ap);
  __builtin_va_end(ap);
  return n;
}

int printf(const char *fmt, ...) {
  Output out(1);
  __builtin_va_list ap;
  __builtin_va_start(ap, fmt);
  int n = format(out, fmt, ap);
  __builtin_va_end(ap);
  return n;
}

void usage_exit(const char *fmt, ...) {
  Output out(2);
  for (const char *s = "usage: "; *s != '\0'; s++) out.put(*s);
  __builtin_va_list ap;
  __builtin_va_start(ap, fmt);
  format(out, fmt, ap);  // one write() for the whole line, as for fprintf
  __builtin_va_end(ap);
  exit(1);
}

}  // extern "C"
