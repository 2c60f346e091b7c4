// profile: Stream, a file read a chunk at a time (stream.h).
#include "stream.h"

#include "lib/user.h"

namespace prof {

int Stream::peek() {
  if (pos_ == len_ && !fill()) return -1;
  return static_cast<unsigned char>(buf_[pos_]);
}

int Stream::get() {
  int c = peek();
  if (c >= 0) {
    pos_++;
    offset_++;
  }
  return c;
}

bool Stream::fill() {
  if (eof_) return false;
  int n = read(fd_, buf_, sizeof(buf_));
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  len_ = n;
  pos_ = 0;
  return true;
}

}  // namespace prof
