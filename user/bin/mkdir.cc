// mkdir: creates each named directory (with its "." and ".." entries).
#include "lib/user.h"

int main(int argc, char **argv) {
  if (argc < 2) usage_exit("mkdir DIR...\n");
  int status = 0;
  for (int i = 1; i < argc; i++) {
    if (mkdir(argv[i]) < 0) {
      fprintf(2, "mkdir: cannot create %s\n", argv[i]);
      status = 1;
    }
  }
  return status;
}
