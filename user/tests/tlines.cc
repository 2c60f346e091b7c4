// tlines: several processes write lines to the console at once; each line must arrive whole.
//
//   tlines [PROCS [LINES]]   default 3 processes, 40 lines each
//
// Each child writes its lines with one write() call apiece:
//
//   tlines: child C line L xxxxxxxx...x
//
// a long line, so that writes overlap and a console that interleaved them byte by byte
// would mix two lines into one. The test reads the console and checks every line against
// that shape (tests/qemu/test_shell.py). The parent prints `tlines: done` after waiting for
// all of them.
#include "lib/user.h"

namespace {

constexpr int PAD = 150;  // padding characters per line: longer than the UART's buffer share

int number(const char *s, int fallback) {
  if (s == nullptr) return fallback;
  int n = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    n = n * 10 + (*s - '0');
  }
  return n;
}

void child(int c, int lines) {
  char line[256];
  for (int l = 0; l < lines; l++) {
    int n = snprintf(line, sizeof(line) - PAD - 1, "tlines: child %d line %d ", c, l);
    for (int i = 0; i < PAD; i++) line[n++] = static_cast<char>('a' + c);
    line[n++] = '\n';
    write(1, line, n);
  }
  exit(0);
}

}  // namespace

int main(int argc, char **argv) {
  int procs = number(argc > 1 ? argv[1] : nullptr, 3);
  int lines = number(argc > 2 ? argv[2] : nullptr, 40);
  if (argc > 3 || procs < 1 || procs > 8 || lines < 1)
    usage_exit("tlines [PROCS [LINES]]   (1..8 processes)\n");
  for (int c = 0; c < procs; c++) {
    int pid = fork();
    if (pid < 0) {
      fprintf(2, "tlines: fork failed\n");
      return 1;
    }
    if (pid == 0) child(c, lines);
  }
  for (int c = 0; c < procs; c++) wait(nullptr);
  printf("tlines: done\n");
  return 0;
}
