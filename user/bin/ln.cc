// ln: makes NEW another name (a hard link) for the file OLD. Both names then refer to the
// same inode, whose link count goes up by one.
#include "lib/user.h"

int main(int argc, char **argv) {
  if (argc != 3) usage_exit("ln OLD NEW\n");
  if (link(argv[1], argv[2]) < 0) {
    fprintf(2, "ln: cannot link %s to %s\n", argv[2], argv[1]);
    return 1;
  }
  return 0;
}
