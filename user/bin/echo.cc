// echo: prints its arguments, separated by single spaces, and a newline.
//
// The whole line is assembled first and written with one call, so that echo's output stays
// in one piece even when other processes write to the same console or pipe.
#include "lib/user.h"

int main(int argc, char **argv) {
  char line[512];
  int n = 0;
  for (int i = 1; i < argc; i++) {
    for (const char *s = argv[i]; *s != '\0'; s++) {
      if (n == sizeof(line)) {
        write(1, line, n);
        n = 0;
      }
      line[n++] = *s;
    }
    if (n == sizeof(line)) {
      write(1, line, n);
      n = 0;
    }
    line[n++] = i + 1 < argc ? ' ' : '\n';
  }
  if (argc < 2) line[n++] = '\n';
  if (write(1, line, n) != n) {
    fprintf(2, "echo: write error\n");
    return 1;
  }
  return 0;
}
