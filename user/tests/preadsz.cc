// preadsz: reads a file with reads of one size and prints its length and a checksum.
//
//   preadsz FILE SIZE     SIZE from 1 to 4096 bytes a read
//
// Output: "preadsz: N bytes, fnv1a XXXXXXXX". Reading the same unchanging file with
// different sizes must give the same line. That is a real test for generated files such as
// /proc/profile, whose contents are rendered piece by piece for each read: a read that
// starts or ends in the middle of a piece must still get exactly the right bytes.
// The checksum is 32-bit FNV-1a, which a test can compute on the host in a line of code.
#include "lib/user.h"

namespace {

constexpr int kMaxSize = 4096;
char buf[kMaxSize];  // static: the user stack is only one page

}  // namespace

int main(int argc, char **argv) {
  int size = argc == 3 ? atoi(argv[2]) : 0;
  if (argc != 3 || size < 1 || size > kMaxSize) {
    fprintf(2, "usage: preadsz FILE SIZE   (1 <= SIZE <= %d)\n", kMaxSize);
    return 1;
  }
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    fprintf(2, "preadsz: cannot open %s\n", argv[1]);
    return 1;
  }
  unsigned long total = 0;
  unsigned int hash = 2166136261u;
  int n;
  while ((n = read(fd, buf, size)) > 0) {
    if (n > size) {
      printf("preadsz: FAIL read returned %d for a %d-byte read\n", n, size);
      return 1;
    }
    for (int i = 0; i < n; i++) hash = (hash ^ static_cast<unsigned char>(buf[i])) * 16777619u;
    total += n;
  }
  close(fd);
  if (n < 0) {
    printf("preadsz: FAIL read error after %lu bytes\n", total);
    return 1;
  }
  printf("preadsz: %lu bytes, fnv1a %08x\n", total, hash);
  return 0;
}
