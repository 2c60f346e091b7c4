// labread: reads a file with reads of one size, and says how long it was and what it held.
//
//   labread FILE SIZE [LIMIT [print]]
//
// Reads FILE SIZE bytes at a time (1 to 4096) and prints
//
//   labread: N bytes, fnv1a XXXXXXXX, R reads
//
// where XXXXXXXX is the 32-bit FNV-1a checksum of the bytes, which a grader computes on the
// host in one line. Reading a generated file such as /proc/profile with different sizes
// must give the same line: a read that starts or ends in the middle of a sample must still
// get exactly the right bytes.
//
// LIMIT guards against a file that never ends (a read that ignores its offset returns the
// same bytes forever): after LIMIT bytes the program stops and prints
// `labread: longer than LIMIT bytes` instead. With `print`, the bytes read are also copied to
// the console, on a line of their own before the summary (for looking at the start of a
// large file: `labread /proc/profile 512 512 print`).
#include "lib/user.h"

namespace {

constexpr int kMaxSize = 4096;
char buf[kMaxSize];  // static: the user stack is only one page

// A decimal number of up to 9 digits, or -1.
long number(const char *s) {
  long n = 0;
  int digits = 0;
  for (; *s != '\0'; s++, digits++) {
    if (*s < '0' || *s > '9' || digits == 9) return -1;
    n = n * 10 + (*s - '0');
  }
  return digits > 0 ? n : -1;
}

[[noreturn]] void usage() {
  fprintf(2, "usage: labread FILE SIZE [LIMIT [print]]   (1 <= SIZE <= %d)\n", kMaxSize);
  exit(2);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3 || argc > 5) usage();
  long size = number(argv[2]);
  long limit = argc >= 4 ? number(argv[3]) : 1L << 40;
  bool print = argc == 5;
  if (size < 1 || size > kMaxSize || limit < 0 || (print && strcmp(argv[4], "print") != 0))
    usage();

  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    fprintf(2, "labread: cannot open %s\n", argv[1]);
    return 1;
  }
  long total = 0, reads = 0;
  unsigned hash = 2166136261u;
  bool longer = false;
  for (;;) {
    // Never ask for more than the limit leaves, so `print` shows exactly LIMIT bytes.
    long want = total + size > limit ? limit - total : size;
    if (want == 0) {
      longer = read(fd, buf, 1) > 0;
      break;
    }
    int n = read(fd, buf, static_cast<int>(want));
    if (n < 0) {
      printf("labread: read error after %ld bytes\n", total);
      return 1;
    }
    if (n == 0) break;
    if (n > want) {
      printf("labread: a read of %ld bytes returned %d\n", want, n);
      return 1;
    }
    reads++;
    if (print) write(1, buf, n);
    for (int i = 0; i < n; i++) hash = (hash ^ static_cast<unsigned char>(buf[i])) * 16777619u;
    total += n;
  }
  close(fd);
  if (print) printf("\n");
  if (longer) {
    printf("labread: longer than %ld bytes\n", limit);
    return 1;
  }
  printf("labread: %ld bytes, fnv1a %08x, %ld reads\n", total, hash, reads);
  return 0;
}
