// profon: checks what profile(2)'s PROF_ON and PROF_OFF answer in the cases that
// labs/profile/README.md (task 1) specifies beyond its table.
//
//   profon
//
//   - PROF_ON for a process already profiled returns 0 and counts it once; likewise for all
//     mode already on.
//   - Leaving all mode keeps the processes switched on by pid.
//   - A zombie (exited, not yet waited for) and a killed process are not live: PROF_ON and
//     PROF_OFF return -1 for them.
//   - Once every process it switched on is gone, /proc/profstat's `profiled:` and `flagged:`
//     are back where they were.
//
// Prints one `profon: FAIL ...` line per wrong answer, and last `profon: ok, N checks` or
// `profon: N of M checks failed`. All mode is left alone if something else switched it on.
#include "abi/profile.h"
#include "lib/user.h"

namespace {

int checks = 0, failures = 0;

void expect(const char *what, int got, int want) {
  checks++;
  if (got != want) {
    printf("profon: FAIL %s returned %d, expected %d\n", what, got, want);
    failures++;
  }
}

long stat_number(const char *key) {
  char v[32];
  if (!profstat_value(key, v, sizeof(v))) {
    printf("profon: FAIL /proc/profstat has no `%s:` line\n", key);
    exit(1);
  }
  return atoi(v);
}

void expect_counts(const char *when, long want) {
  checks++;
  long profiled = stat_number("profiled"), flagged = stat_number("flagged");
  if (profiled != want || flagged != want) {
    printf("profon: FAIL %s: profiled %ld flagged %ld, expected %ld\n", when, profiled, flagged,
           want);
    failures++;
  }
}

// Is pid in the `profiling:` line?
bool listed(int pid) {
  char line[256];
  if (!profstat_value("profiling", line, sizeof(line))) return false;
  for (char *s = line; *s;) {
    while (*s == ' ') s++;
    if (atoi(s) == pid && *s >= '0' && *s <= '9') return true;
    while (*s && *s != ' ') s++;
  }
  return false;
}

// A child that blocks reading a pipe nobody writes. Returns its pid; *wfd is the write end.
int blocked_child(int *wfd) {
  int fds[2];
  if (pipe(fds) < 0) {
    printf("profon: FAIL pipe\n");
    exit(1);
  }
  int pid = fork();
  if (pid == 0) {
    close(fds[1]);
    char c;
    read(fds[0], &c, 1);
    exit(0);
  }
  close(fds[0]);
  *wfd = fds[1];
  return pid;
}

void reap(int pid, const char *what) {
  checks++;
  int got = wait(nullptr);
  if (got != pid) {
    printf("profon: FAIL wait for the %s returned %d, expected %d\n", what, got, pid);
    failures++;
  }
}

}  // namespace

int main() {
  int me = getpid();
  long base = stat_number("profiled");
  expect_counts("at the start", base);

  // Already profiled: 0, counted once.
  expect("on/self", profile(me, PROF_ON, 0), 0);
  expect("on/self again", profile(me, PROF_ON, 0), 0);
  expect_counts("after two PROF_ON for one process", base + 1);
  expect("off/self", profile(me, PROF_OFF, 0), 0);
  expect("off/self again", profile(me, PROF_OFF, 0), -1);
  expect_counts("after PROF_OFF", base);

  // All mode: on twice is fine, and leaving it keeps the per-process switch.
  char mode[64];
  if (profstat_value("profiling", mode, sizeof(mode)) && strcmp(mode, "all") != 0) {
    expect("on/self", profile(me, PROF_ON, 0), 0);
    expect("on/all", profile(PROF_ALL_PIDS, PROF_ON, 0), 0);
    expect("on/all again", profile(PROF_ALL_PIDS, PROF_ON, 0), 0);
    expect("off/all", profile(PROF_ALL_PIDS, PROF_OFF, 0), 0);
    expect("off/all again", profile(PROF_ALL_PIDS, PROF_OFF, 0), -1);
    checks++;
    if (!listed(me)) {
      printf("profon: FAIL leaving all mode switched off pid %d, switched on by pid\n", me);
      failures++;
    }
    expect_counts("after leaving all mode", base + 1);
    expect("off/self after all mode", profile(me, PROF_OFF, 0), 0);
    expect_counts("after PROF_OFF", base);
  }

  // A zombie: the child exits; once it is a zombie (PROF_ON starts refusing it, within a few
  // seconds), every call must refuse it until it is waited for.
  int wfd;
  int pid = blocked_child(&wfd);
  expect("on/blocked child", profile(pid, PROF_ON, 0), 0);
  close(wfd);  // the child reads end of file and exits
  int refused = 0;
  for (int i = 0; i < 50 && refused == 0; i++) {
    if (profile(pid, PROF_ON, 0) < 0)
      refused = 1;
    else
      sleep(1);
  }
  checks++;
  if (!refused) {
    printf("profon: FAIL PROF_ON still accepts child %d 5 s after it exited\n", pid);
    failures++;
  }
  for (int i = 0; i < 20; i++) {
    expect("on/zombie", profile(pid, PROF_ON, 0), -1);
    expect("off/zombie", profile(pid, PROF_OFF, 0), -1);
  }
  expect_counts("with a zombie that was profiled", base);
  reap(pid, "zombie");

  // A killed process, profiled before the kill and blocked, so that it may not yet have
  // exited when asked: whichever it is (killed, zombie or gone), it is not live.
  pid = blocked_child(&wfd);
  expect("on/child to be killed", profile(pid, PROF_ON, 0), 0);
  expect("kill", kill(pid), 0);
  expect("on/killed", profile(pid, PROF_ON, 0), -1);
  expect("off/killed", profile(pid, PROF_OFF, 0), -1);
  close(wfd);
  reap(pid, "killed child");
  expect_counts("after the killed child was reaped", base);

  if (failures == 0)
    printf("profon: ok, %d checks\n", checks);
  else
    printf("profon: %d of %d checks failed\n", failures, checks);
  return failures == 0 ? 0 : 1;
}
