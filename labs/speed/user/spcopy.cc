// spcopy N: the speed lab's copying workload (labs/speed/README.md). One process and one pipe:
// N times, write 3,000 bytes and read them back, checking the last one. The kernel copies
// each byte twice: from the writer's memory into the pipe, and from the pipe to the reader.
#include "lib/user.h"

namespace {

constexpr int SIZE = 3000;  // fits in the pipe's buffer: nobody waits
char out[SIZE], in[SIZE];

}  // namespace

int main(int argc, char **argv) {
  int n = argc == 2 ? atoi(argv[1]) : 0;
  if (n <= 0) {
    fprintf(2, "usage: spcopy N\n");
    return 1;
  }
  int fds[2];
  if (pipe(fds) < 0) {
    fprintf(2, "spcopy: pipe failed\n");
    return 1;
  }
  for (int i = 0; i < SIZE; i++) out[i] = static_cast<char>(i * 7);
  for (int i = 0; i < n; i++) {
    out[SIZE - 1] = static_cast<char>(i);
    if (write(fds[1], out, SIZE) != SIZE || read(fds[0], in, SIZE) != SIZE ||
        in[SIZE - 1] != static_cast<char>(i)) {
      fprintf(2, "spcopy: round %d went wrong\n", i);
      return 1;
    }
  }
  return 0;
}
