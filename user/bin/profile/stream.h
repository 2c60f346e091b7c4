// profile: reading a file a chunk at a time.
//
// A profile can be megabytes of JSON, far more than this program wants to hold in memory, so
// /proc/profile is never loaded whole: a Stream reads it 512 bytes at a time and hands it
// out one byte at a time, with one byte of lookahead for the parser (json.h).
#pragma once

namespace prof {

// A byte source over a file descriptor, with one character of lookahead. The buffer is
// small on purpose: /proc/profile renders what each read asks for, so any size works.
class Stream {
 public:
  explicit Stream(int fd) : m_fd(fd) {}

  // The next byte without consuming it, or -1 at the end of the file (or on an error).
  int peek();
  // The next byte, consumed, or -1 at the end.
  int get();
  // How many bytes have been consumed: where a parse error was found.
  unsigned long offset() const { return m_offset; }

 private:
  bool fill();

  int m_fd;
  char m_buf[512];
  int m_len = 0;
  int m_pos = 0;
  unsigned long m_offset = 0;
  bool m_eof = false;
};

}  // namespace prof
