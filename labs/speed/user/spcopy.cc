// spcopy N: the speed lab's copying workload (labs/speed/README.md). N times: fork a copy of
// this process, whose memory holds 256 KiB of data, and wait for the child, which exits at
// once. fork() copies every page of the parent's memory into the child's.
#include "lib/user.h"

namespace {

constexpr int SIZE = 256 * 1024;
char data[SIZE];

}  // namespace

int main(int argc, char **argv) {
  int n = argc == 2 ? atoi(argv[1]) : 0;
  if (n <= 0) usage_exit("spcopy N\n");
  for (int i = 0; i < SIZE; i += 4096) data[i] = static_cast<char>(i >> 12);
  for (int i = 0; i < n; i++) {
    int pid = fork();
    if (pid < 0) {
      fprintf(2, "spcopy: fork failed\n");
      return 1;
    }
    if (pid == 0) exit(data[(i % 64) * 4096] == static_cast<char>(i % 64) ? 0 : 1);
    int status = 0;
    if (wait(&status) != pid || status != 0) {
      fprintf(2, "spcopy: round %d went wrong\n", i);
      return 1;
    }
  }
  return 0;
}
