// cat: copies each named file to standard output, or standard input if none is named.
#include "lib/user.h"

namespace {

// Returns false if reading or writing failed part way.
bool copy(int fd) {
  char buf[512];
  for (;;) {
    int n = read(fd, buf, sizeof(buf));
    if (n == 0) return true;
    if (n < 0) return false;
    if (write(1, buf, n) != n) {
      fprintf(2, "cat: write error\n");
      exit(1);
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    if (!copy(0)) {
      fprintf(2, "cat: read error\n");
      return 1;
    }
    return 0;
  }

  int status = 0;
  for (int i = 1; i < argc; i++) {
    int fd = open(argv[i], O_RDONLY);
    if (fd < 0) {
      fprintf(2, "cat: cannot open %s\n", argv[i]);
      status = 1;
      continue;
    }
    if (!copy(fd)) {
      fprintf(2, "cat: read error in %s\n", argv[i]);
      status = 1;
    }
    close(fd);
  }
  return status;
}
