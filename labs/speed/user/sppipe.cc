// sppipe N: the speed lab's pipe workload (labs/speed/README.md). One process and one pipe:
// N times, write one byte and read it back. Nobody ever waits on the pipe.
#include "lib/user.h"

int main(int argc, char **argv) {
  int n = argc == 2 ? atoi(argv[1]) : 0;
  if (n <= 0) usage_exit("sppipe N\n");
  int fds[2];
  if (pipe(fds) < 0) {
    fprintf(2, "sppipe: pipe failed\n");
    return 1;
  }
  for (int i = 0; i < n; i++) {
    char c = static_cast<char>(i);
    if (write(fds[1], &c, 1) != 1 || read(fds[0], &c, 1) != 1 || c != static_cast<char>(i)) {
      fprintf(2, "sppipe: round %d went wrong\n", i);
      return 1;
    }
  }
  return 0;
}
