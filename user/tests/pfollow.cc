// pfollow: checks profile(2)'s PROF_FOLLOW and PROF_FOLLOWED (kern/abi/profile.h).
//
//   pfollow
//
// Bad calls, which must return -1: PROF_FOLLOW for pid 0, a negative pid, PROF_ALL_PIDS, a
// pid that does not exist, a live process that is not being sampled, a zombie (a child that
// was followed, then exited), a killed child, and with an argument other than 0 or 1;
// PROF_FOLLOWED for pid 0, a negative pid, and a process no fork made followed.
//
// Good ones: following itself, its next child is sampled (/proc/profstat's `profiling:`
// lists it) and follows in turn (`following:`), and PROF_FOLLOWED names the parent; so for
// a grandchild too. Once it stops following (PROF_FOLLOW 0), its next child is not sampled.
// At the end, with every child gone and sampling switched off, `profiled:` and `flagged:`
// are back where they were.
//
// Prints one `pfollow: FAIL ...` line per wrong answer, and last `pfollow: ok, N checks` or
// `pfollow: N of M checks failed`.
#include "abi/profile.h"
#include "lib/user.h"

namespace {

int checks = 0, failures = 0;

void expect(const char *what, int got, int want) {
  checks++;
  if (got != want) {
    printf("pfollow: FAIL %s returned %d, expected %d\n", what, got, want);
    failures++;
  }
}

void expect_true(const char *what, bool ok) {
  checks++;
  if (!ok) {
    printf("pfollow: FAIL %s\n", what);
    failures++;
  }
}

// Is pid listed in /proc/profstat's line `key:`?
bool listed(const char *key, int pid) {
  char line[512];
  if (!profstat_value(key, line, sizeof(line))) return false;
  for (char *p = line; *p != '\0';) {
    while (*p == ' ') p++;
    if (atoi(p) == pid) return true;
    while (*p != ' ' && *p != '\0') p++;
  }
  return false;
}

long profstat_number(const char *key) {
  char v[24];
  return profstat_value(key, v, sizeof(v)) ? atoi(v) : -1;
}

// A child that waits for a byte on `go`, then exits; with `grandchild`, it first forks one
// that does the same, and writes the grandchild's pid to `back`.
int waiting_child(int go[2], int back[2], bool grandchild) {
  int pid = fork();
  if (pid != 0) return pid;
  close(go[1]);
  if (grandchild) {
    int g = fork();
    if (g == 0) {
      char c;
      read(go[0], &c, 1);
      exit(0);
    }
    write(back[1], &g, sizeof(g));
  }
  char c;
  read(go[0], &c, 1);
  if (grandchild) wait(nullptr);
  exit(0);
}

// PROF_FOLLOW for the exiting child `pid`, a tick apart until it answers -1 (at most 3 s):
// while exit() is still running the call may rightly succeed, never once it is a zombie.
int follow_zombie(int pid) {
  int got = 0;
  for (int i = 0; i < 30 && (got = profile(pid, PROF_FOLLOW, 1)) != -1; i++) sleep(1);
  return got;
}

void bad_calls(int me) {
  expect("follow/pid 0", profile(0, PROF_FOLLOW, 1), -1);
  expect("follow/pid -5", profile(-5, PROF_FOLLOW, 1), -1);
  expect("follow/all", profile(PROF_ALL_PIDS, PROF_FOLLOW, 1), -1);
  expect("follow/pid 99999", profile(99999, PROF_FOLLOW, 1), -1);
  expect("follow/self not sampled", profile(me, PROF_FOLLOW, 1), -1);
  expect("followed/pid 0", profile(0, PROF_FOLLOWED, 0), -1);
  expect("followed/pid -5", profile(-5, PROF_FOLLOWED, 0), -1);
  expect("followed/pid 99999", profile(99999, PROF_FOLLOWED, 0), -1);

  // A child that was sampled and followed, then exited: a zombie until it is waited for.
  int fds[2];
  if (pipe(fds) < 0) return;
  int pid = fork();
  if (pid == 0) {
    close(fds[1]);
    char c;
    read(fds[0], &c, 1);
    exit(0);
  }
  close(fds[0]);
  expect("on/child", profile(pid, PROF_ON, 0), 0);
  expect("follow/child", profile(pid, PROF_FOLLOW, 1), 0);
  close(fds[1]);  // lets it exit
  expect("follow/zombie", follow_zombie(pid), -1);
  expect("follow 0/zombie", profile(pid, PROF_FOLLOW, 0), -1);
  expect("wait/zombie", wait(nullptr), pid);

  // A killed child, asleep when the kill comes.
  pid = fork();
  if (pid == 0) {
    sleep(1000);
    exit(0);
  }
  expect("on/to be killed", profile(pid, PROF_ON, 0), 0);
  kill(pid);
  expect("follow/killed", profile(pid, PROF_FOLLOW, 1), -1);
  expect("wait/killed", wait(nullptr), pid);

  expect("on/self", profile(me, PROF_ON, 0), 0);
  expect("follow/self arg 2", profile(me, PROF_FOLLOW, 2), -1);
  expect("follow/self arg -1", profile(me, PROF_FOLLOW, -1), -1);
  expect("off/self", profile(me, PROF_OFF, 0), 0);
}

void good_calls(int me) {
  int go[2], back[2];
  if (pipe(go) < 0 || pipe(back) < 0) return;
  expect("on/self", profile(me, PROF_ON, 0), 0);
  expect("follow/self", profile(me, PROF_FOLLOW, 1), 0);
  expect("follow/self again", profile(me, PROF_FOLLOW, 1), 0);
  expect_true("following: lists pfollow itself", listed("following", me));

  int child = waiting_child(go, back, true);
  int grandchild = -1;
  read(back[0], &grandchild, sizeof(grandchild));
  expect_true("profiling: lists the followed child", listed("profiling", child));
  expect_true("following: lists the followed child", listed("following", child));
  expect_true("profiling: lists the followed grandchild", listed("profiling", grandchild));
  expect("followed/child", profile(child, PROF_FOLLOWED, 0), me);
  expect("followed/grandchild", profile(grandchild, PROF_FOLLOWED, 0), child);

  expect("follow 0/self", profile(me, PROF_FOLLOW, 0), 0);
  expect_true("following: still lists pfollow", !listed("following", me));
  int other = waiting_child(go, back, false);
  expect_true("profiling: lists a child forked after following stopped",
              !listed("profiling", other));
  expect("followed/unfollowed child", profile(other, PROF_FOLLOWED, 0), -1);

  // PROF_OFF stops sampling pfollow and following with it; the followed child stays
  // sampled until it exits.
  expect("follow/self", profile(me, PROF_FOLLOW, 1), 0);
  expect("off/self", profile(me, PROF_OFF, 0), 0);
  expect_true("following: lists pfollow after PROF_OFF", !listed("following", me));
  expect("follow/self after off", profile(me, PROF_FOLLOW, 1), -1);
  expect_true("profiling: lists the child after its parent's PROF_OFF", listed("profiling", child));

  close(go[1]);
  close(back[0]);
  close(back[1]);
  expect("wait/child", wait(nullptr) > 0, true);
  expect("wait/other", wait(nullptr) > 0, true);
}

}  // namespace

int main(int argc, char **) {
  if (argc != 1) usage_exit("pfollow\n");
  int me = getpid();
  long profiled = profstat_number("profiled"), flagged = profstat_number("flagged");
  bad_calls(me);
  good_calls(me);
  // Every child has been waited for; let the counts settle all the same.
  unsigned long give_up = now_ms() + 5000;
  while ((profstat_number("profiled") != profiled || profstat_number("flagged") != flagged) &&
         now_ms() < give_up)
    sleep(1);
  expect("profiled: at the end", profstat_number("profiled"), profiled);
  expect("flagged: at the end", profstat_number("flagged"), flagged);
  if (failures == 0)
    printf("pfollow: ok, %d checks\n", checks);
  else
    printf("pfollow: %d of %d checks failed\n", failures, checks);
  return failures == 0 ? 0 : 1;
}
