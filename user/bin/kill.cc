// kill: asks the kernel to kill each process named by pid. The process exits with status -1
// the next time it would return to user space.
#include "lib/user.h"

int main(int argc, char **argv) {
  if (argc < 2) usage_exit("kill PID...\n");
  int status = 0;
  for (int i = 1; i < argc; i++) {
    if (kill(atoi(argv[i])) < 0) {
      fprintf(2, "kill: cannot kill %s: no such process\n", argv[i]);
      status = 1;
    }
  }
  return status;
}
