// pstatus: runs a command and prints its exit status, which the shell does not show.
//
//   pstatus CMD [ARG...]     prints "pstatus: exit S" after CMD has finished
//
// Tests use it to check that a command fails the right way: `pstatus profile 3 sideways`
// must print the usage message and then "pstatus: exit 1".
#include "lib/user.h"

int main(int argc, char **argv) {
  if (argc < 2) usage_exit("pstatus CMD [ARG...]\n");
  int pid = fork();
  if (pid < 0) {
    fprintf(2, "pstatus: fork failed\n");
    return 1;
  }
  if (pid == 0) {
    exec(argv[1], argv + 1);
    // Like the shell: a bare name not found here is looked for in the root directory.
    if (strchr(argv[1], '/') == nullptr && strlen(argv[1]) < MAXPATH - 1) {
      char path[MAXPATH];
      path[0] = '/';
      strcpy(path + 1, argv[1]);
      exec(path, argv + 1);
    }
    fprintf(2, "pstatus: exec %s failed\n", argv[1]);
    exit(127);
  }
  int status = 0;
  int waited;
  while ((waited = wait(&status)) != pid && waited >= 0) {
  }
  printf("pstatus: exit %d\n", status);
  return 0;
}
