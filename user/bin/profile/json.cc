// profile: ProfileParser, the JSON of /proc/profile one sample at a time (json.h).
#include "json.h"

#include "lib/user.h"

namespace prof {

void ProfileParser::skip_space() {
  for (;;) {
    int c = m_in.peek();
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
    m_in.get();
  }
}

bool ProfileParser::expect(char want) {
  skip_space();
  return m_in.get() == want;
}

bool ProfileParser::at_end() {
  skip_space();
  return m_in.peek() < 0;
}

// A string into buf (always terminated). Escapes are decoded; a \u escape outside ASCII
// becomes '?', since names here are plain ASCII anyway. A string longer than cap-1 bytes is
// cut to that and ends in "..." (cap >= 4), so that a reader sees it was cut.
bool ProfileParser::string(char *buf, int cap) {
  if (!expect('"')) return false;
  int n = 0;
  for (;;) {
    int c = m_in.get();
    if (c < 0 || c < 0x20) return false;  // control bytes must be escaped
    if (c == '"') break;
    if (c == '\\') {
      c = m_in.get();
      switch (c) {
        case '"':
        case '\\':
        case '/': break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u': {
          int code = 0;
          for (int i = 0; i < 4; i++) {
            int h = m_in.get();
            int v = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
            if (v < 0) return false;
            code = code * 16 + v;
          }
          c = code < 0x80 ? code : '?';
          break;
        }
        default: return false;
      }
    }
    if (buf != nullptr && n < cap) buf[n++] = static_cast<char>(c);
  }
  if (buf == nullptr) return true;
  if (n == cap) {
    n = cap - 1;
    memcpy(buf + n - 3, "...", 3);
  }
  buf[n] = '\0';
  return true;
}

// A non-negative integer. Numbers of other forms are only ever skipped (skip_value).
bool ProfileParser::number(unsigned long *out) {
  skip_space();
  int c = m_in.peek();
  if (c < '0' || c > '9') return false;
  unsigned long v = 0;
  while (c >= '0' && c <= '9') {
    v = v * 10 + (m_in.get() - '0');
    c = m_in.peek();
  }
  *out = v;
  return true;
}

bool ProfileParser::literal(const char *word) {
  for (; *word != '\0'; word++)
    if (m_in.get() != *word) return false;
  return true;
}

bool ProfileParser::boolean(bool *out) {
  skip_space();
  if (m_in.peek() == 't') {
    *out = true;
    return literal("true");
  }
  *out = false;
  return literal("false");
}

// Any JSON value, thrown away. Nesting is bounded so bad input cannot exhaust the stack.
bool ProfileParser::skip_value(int depth) {
  if (depth > 16) return false;
  skip_space();
  int c = m_in.peek();
  if (c == '"') return string(nullptr, 0);
  if (c == 't') return literal("true");
  if (c == 'f') return literal("false");
  if (c == 'n') return literal("null");
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    m_in.get();
    skip_space();
    if (m_in.peek() == close) {
      m_in.get();
      return true;
    }
    for (;;) {
      if (close == '}' && !(string(nullptr, 0) && expect(':'))) return false;
      if (!skip_value(depth + 1)) return false;
      skip_space();
      int next = m_in.get();
      if (next == close) return true;
      if (next != ',') return false;
    }
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    while ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
      m_in.get();
      c = m_in.peek();
    }
    return true;
  }
  return false;
}

// The members of an object, calling member(key) after each key and its ':'. member
// parses (or skips) the value.
template <typename Member>
bool ProfileParser::object(Member &&member) {
  return expect('{') && items('}', [&] {
           char key[16];
           return string(key, sizeof(key)) && expect(':') && member(key);
         });
}

bool ProfileParser::frame(Frame &f) {
  f.name[0] = '\0';
  f.kernel = false;
  return object([&](const char *key) {
    if (strcmp(key, "symbol") == 0) return string(f.name, NAME_MAX);
    if (strcmp(key, "kernel") == 0) return boolean(&f.kernel);
    return skip_value();
  });
}

bool ProfileParser::frames(Sample &s) {
  return expect('[') && items(']', [&] {
           // Frames beyond what fits are parsed into a scratch slot and dropped: the report
           // only loses the outermost callers of an absurdly deep stack.
           Frame scratch;
           Frame &f = s.nframes < MAX_FRAMES ? s.frames[s.nframes] : scratch;
           if (!frame(f)) return false;
           if (s.nframes < MAX_FRAMES) s.nframes++;
           return true;
         });
}

bool ProfileParser::sample(Sample &s) {
  s.pid = -1;
  s.comm[0] = '\0';
  s.wait = false;
  s.nframes = 0;
  return object([&](const char *key) {
    if (strcmp(key, "pid") == 0) {
      unsigned long pid;
      if (!number(&pid)) return false;
      s.pid = static_cast<int>(pid);
      return true;
    }
    if (strcmp(key, "comm") == 0) return string(s.comm, COMM_MAX);
    if (strcmp(key, "mode") == 0) {
      char mode[8];
      if (!string(mode, sizeof(mode))) return false;
      s.wait = strcmp(mode, "wait") == 0;
      return true;
    }
    if (strcmp(key, "samples") == 0) return frames(s);
    return skip_value();
  });
}

}  // namespace prof
