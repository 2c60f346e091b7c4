// Small helpers built on the system calls: numbers from text, reading a line, stat by path,
// and where spin_until (user.h) leaves its values.
#include "user.h"

extern "C" {

// Decimal only, with an optional leading '-'; stops at the first non-digit. Good enough
// for the pids and counts that programs take as arguments.
int atoi(const char *s) {
  bool negative = false;
  if (*s == '-') {
    negative = true;
    s++;
  }
  int n = 0;
  while (*s >= '0' && *s <= '9') n = n * 10 + (*s++ - '0');
  return negative ? -n : n;
}

// Reads from fd 0 one byte at a time, because the console delivers a line at a time and a
// pipe may hold the next line too: reading ahead would steal input that belongs to whoever
// reads fd 0 next (a program the shell starts, for instance).
char *gets(char *buf, int max) {
  int i = 0;
  while (i + 1 < max) {
    char c;
    if (read(0, &c, 1) < 1) break;
    buf[i++] = c;
    if (c == '\n' || c == '\r') break;
  }
  buf[i] = '\0';
  return buf;
}

volatile unsigned long spin_sink;

int stat(const char *path, struct stat *st) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  int r = fstat(fd, st);
  close(fd);
  return r;
}

}  // extern "C"
