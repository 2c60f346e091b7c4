// labforks: a program that forks children which do the work, for `profile run` to follow.
//
//   labforks [-w] N [SECONDS]   fork N children (1..8), each spinning SECONDS (1 by default,
//                               tenths allowed: 0.3) in child_work() before it exits, while
//                               the parent spins in parent_work(); then wait for them
//
// It prints `labforks: children P1 P2 ...` once it has forked them all, and `labforks:
// done` at the end. `profile run labforks 2` must find child_work() in the children's
// samples, each child a process of its own in the report; `profile run -n labforks 2` must
// find no sample of them at all.
//
// With -w the parent first waits (up to 30 s) until /proc/profstat's `following:` line lists
// it, so that a test can start it in the background, switch sampling on for it with its
// children (`profile PID on children`), and know that the forks come after that.
#include "lib/user.h"

namespace {

constexpr int MAX_CHILDREN = 8;
constexpr unsigned long WAIT_MS = 30000;

volatile unsigned long sink;

// Is pid listed in /proc/profstat's `following:` line?
bool followed(int pid) {
  char line[256];
  if (!profstat_value("following", line, sizeof(line))) return false;
  for (char *p = line; *p != '\0';) {
    while (*p == ' ') p++;
    if (atoi(p) == pid) return true;
    while (*p != ' ' && *p != '\0') p++;
  }
  return false;
}

}  // namespace

// C linkage keeps the names in the profile plain. Each spins until the uptime clock
// reaches `deadline`.
extern "C" {

__attribute__((noinline)) unsigned long child_work(int deadline, unsigned long x) {
  return spin_until(deadline, 100000, x | 1);
}

__attribute__((noinline)) unsigned long parent_work(int deadline, unsigned long x) {
  return spin_until(deadline, 100000, x | 1);
}

}  // extern "C"

int main(int argc, char **argv) {
  int arg = 1;
  bool wait_first = argc > 1 && strcmp(argv[1], "-w") == 0;
  if (wait_first) arg++;
  int n = argc > arg ? atoi(argv[arg]) : 0;
  int ticks = argc > arg + 1 ? tenths(argv[arg + 1]) : 10;  // uptime counts 100 ms ticks
  if (argc < arg + 1 || argc > arg + 2 || n < 1 || n > MAX_CHILDREN || ticks < 1 || ticks > 600)
    usage_exit("labforks [-w] N [SECONDS]   (N from 1 to %d, SECONDS from 0.1 to 60)\n",
               MAX_CHILDREN);

  if (wait_first) {
    unsigned long give_up = now_ms() + WAIT_MS;
    while (!followed(getpid())) {
      if (now_ms() > give_up) {
        printf("labforks: FAIL not followed after %lu ms\n", WAIT_MS);
        exit(1);
      }
      sleep(1);
    }
  }
  int deadline = uptime() + ticks;
  int pids[MAX_CHILDREN];
  for (int i = 0; i < n; i++) {
    pids[i] = fork();
    if (pids[i] < 0) {
      printf("labforks: FAIL fork\n");
      exit(1);
    }
    if (pids[i] == 0) {
      sink = child_work(deadline, static_cast<unsigned long>(i) + 1);
      exit(0);
    }
  }
  // One write, so that the line is not broken up by other programs' output.
  char line[16 + MAX_CHILDREN * 12] = "labforks: children";
  for (int i = 0; i < n; i++)
    snprintf(line + strlen(line), sizeof(line) - strlen(line), " %d", pids[i]);
  printf("%s\n", line);
  sink = parent_work(deadline, rdtime());
  int status, failed = 0;
  for (int i = 0; i < n; i++)
    if (wait(&status) < 0 || status != 0) failed++;
  printf("labforks: %s\n", failed ? "FAIL a child failed" : "done");
  return failed ? 1 : 0;
}
