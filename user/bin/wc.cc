// wc: counts lines, words and bytes in each named file (or standard input) and prints
// "lines words bytes name". A word is a maximal run of characters other than space, tab,
// carriage return, newline and vertical tab.
#include "lib/user.h"

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v'; }

// Returns false on a read error.
bool count(int fd, const char *name) {
  char buf[512];
  long lines = 0, words = 0, bytes = 0;
  bool in_word = false;
  for (;;) {
    int n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      fprintf(2, "wc: read error in %s\n", name);
      return false;
    }
    if (n == 0) break;
    bytes += n;
    for (int i = 0; i < n; i++) {
      if (buf[i] == '\n') lines++;
      if (is_space(buf[i])) {
        in_word = false;
      } else if (!in_word) {
        in_word = true;
        words++;
      }
    }
  }
  printf("%ld %ld %ld %s\n", lines, words, bytes, name);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return count(0, "") ? 0 : 1;

  int status = 0;
  for (int i = 1; i < argc; i++) {
    int fd = open(argv[i], O_RDONLY);
    if (fd < 0) {
      fprintf(2, "wc: cannot open %s\n", argv[i]);
      status = 1;
      continue;
    }
    if (!count(fd, argv[i])) status = 1;
    close(fd);
  }
  return status;
}
