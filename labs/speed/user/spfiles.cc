// spfiles N: the speed lab's file workload (labs/speed/README.md). N times: open /README, read
// its first 512 bytes, fstat it, close it. Every step takes and releases sleep locks: the
// inodes of the path's directories and of the file, and the buffer of each block read.
// Nothing is written, so after a first run everything comes from the buffer cache.
#include "lib/user.h"

int main(int argc, char **argv) {
  int n = argc == 2 ? atoi(argv[1]) : 0;
  if (n <= 0) usage_exit("spfiles N\n");
  static char buf[512];
  for (int i = 0; i < n; i++) {
    int fd = open("/README", O_RDONLY);
    if (fd < 0) {
      fprintf(2, "spfiles: cannot open /README\n");
      return 1;
    }
    struct stat st;
    if (read(fd, buf, sizeof buf) != static_cast<int>(sizeof buf) || fstat(fd, &st) < 0) {
      fprintf(2, "spfiles: cannot read /README\n");
      return 1;
    }
    close(fd);
  }
  return 0;
}
