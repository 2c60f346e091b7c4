// ln: makes NEW another name (a hard link) for the file OLD. Both names then refer to the
// same inode, whose link count goes up by one.
#include "lib/user.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(2, "usage: ln OLD NEW\n");
    return 1;
  }
  if (link(argv[1], argv[2]) < 0) {
    fprintf(2, "ln: cannot link %s to %s\n", argv[2], argv[1]);
    return 1;
  }
  return 0;
}
