// rm: removes each named file (unlinks the name; the inode is freed with its last link and
// last open file). Directories can be removed only when empty.
#include "lib/user.h"

int main(int argc, char **argv) {
  if (argc < 2) usage_exit("rm FILE...\n");
  int status = 0;
  for (int i = 1; i < argc; i++) {
    if (unlink(argv[i]) < 0) {
      fprintf(2, "rm: cannot remove %s\n", argv[i]);
      status = 1;
    }
  }
  return status;
}
