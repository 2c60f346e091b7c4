// sleep: waits for a number of clock ticks (100 ms each, kern/trap/timer.cc's TICK_HZ) and
// exits, doing nothing meanwhile: the hart is free for others, or idle.
//
//   sleep TICKS
#include "lib/user.h"

int main(int argc, char **argv) {
  if (argc != 2) usage_exit("sleep TICKS   (a tick is 100 ms)\n");
  const char *s = argv[1];
  for (const char *c = s; *c != '\0'; c++) {
    if (*c < '0' || *c > '9' || c - s > 8) {
      fprintf(2, "sleep: '%s' is not a number of ticks (0 to 999999999)\n", s);
      usage_exit("sleep TICKS   (a tick is 100 ms)\n");
    }
  }
  if (*s == '\0') usage_exit("sleep TICKS   (a tick is 100 ms)\n");
  return sleep(atoi(s)) < 0 ? 1 : 0;
}
