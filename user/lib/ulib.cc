// Small helpers built on the system calls: numbers and durations from text, reading a line,
// stat by path, and where spin_until (user.h) leaves its values.
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

int tenths(const char *s) {
  int n = 0, digits = 0;
  for (; *s >= '0' && *s <= '9'; s++, digits++) {
    if (digits == 6) return -1;
    n = n * 10 + (*s - '0');
  }
  n *= 10;
  if (*s == '.') {
    if (s[1] < '0' || s[1] > '9') return -1;
    n += s[1] - '0';
    s += 2;
  }
  return digits > 0 && *s == '\0' ? n : -1;
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
