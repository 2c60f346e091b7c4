// profile: Stream, a file read a chunk at a time (stream.h).
#include "stream.h"

#include "lib/user.h"

namespace prof {

int Stream::peek() {
  if (m_pos == m_len && !fill()) return -1;
  return static_cast<unsigned char>(m_buf[m_pos]);
}

int Stream::get() {
  int c = peek();
  if (c >= 0) {
    m_pos++;
    m_offset++;
  }
  return c;
}

bool Stream::fill() {
  if (m_eof) return false;
  int n = read(m_fd, m_buf, sizeof(m_buf));
  if (n <= 0) {
    m_eof = true;
    return false;
  }
  m_len = n;
  m_pos = 0;
  return true;
}

}  // namespace prof
