// pbadcall: calls profile(2) directly with bad arguments; every such call must return -1.
//
//   pbadcall
//
// The cases: a pid that does not exist (large, negative, zero), a child that has exited but
// not been waited for (a zombie), a child that has been killed, unknown commands (0, 99, -1),
// switching off a process that is not being profiled, switching off "all" mode when it is
// not on, rates outside PROF_MIN_HZ..PROF_MAX_HZ (0, 9, 10001, -1, 100000), and counts of
// the instruction clock outside PROF_MIN_INSNS..PROF_MAX_INSNS (9999, -5, 1000000001). A few
// good calls are checked too, so that a kernel refusing everything does not pass: profiling
// itself on and off again succeeds, and so does setting the rate it already has. A refused
// rate must leave the rate as it was.
//
// The verdict is the last line: "pbadcall: all -1" when every case behaved, otherwise one
// "pbadcall: FAIL ..." line per case that did not.
#include "abi/profile.h"
#include "lib/user.h"

namespace {

int failures = 0;

void check(const char *name, int got, int want) {
  if (got != want) {
    printf("pbadcall: FAIL %s returned %d, expected %d\n", name, got, want);
    failures++;
  }
}

// A child that has exited and not been waited for: a zombie. Its end of a pipe is closed
// on the way out, so the end of the pipe says it is exiting; exit's remaining steps (the
// profiler's hook, dropping its directory and executable) may still sleep, so how long they
// take is not known here: see on_zombie. -1 if the child could not be made.
int zombie_child() {
  int fds[2];
  if (pipe(fds) < 0) return -1;
  int pid = fork();
  if (pid == 0) {
    close(fds[0]);
    exit(0);  // closes fds[1]
  }
  close(fds[1]);
  char c;
  while (pid > 0 && read(fds[0], &c, 1) > 0) {
  }
  close(fds[0]);
  return pid;
}

// PROF_ON for the exiting child `pid`: while it is still finishing exit() the call may
// rightly succeed (exit() switches it off again), but once it is a zombie the answer must
// be -1, and it stays a zombie until reap(). So ask until the answer is -1, a tick (100 ms)
// apart, for at most ZOMBIE_TRIES ticks: a kernel that accepts zombies never answers -1.
constexpr int ZOMBIE_TRIES = 30;  // 3 s: exit() ends in milliseconds
int on_zombie(int pid) {
  int got = 0;
  for (int i = 0; i < ZOMBIE_TRIES && (got = profile(pid, PROF_ON, 0)) != -1; i++) sleep(1);
  return got;
}

// A child that has been killed: asleep for 100 s when the kill comes, it is woken to exit,
// and the calls right after the kill find it killed, or already a zombie. Both must be
// refused. -1 if the child could not be made.
int killed_child() {
  int pid = fork();
  if (pid == 0) {
    sleep(1000);
    exit(0);
  }
  if (pid > 0 && kill(pid) < 0) return -1;
  return pid;
}

// Wait for the child `pid`, which must still be there to be waited for.
void reap(const char *what, int pid) {
  int status;
  int got = wait(&status);
  if (got != pid) {
    printf("pbadcall: FAIL wait for the %s child %d returned %d\n", what, pid, got);
    failures++;
  }
}

}  // namespace

int main() {
  int me = getpid();

  check("on/pid 99999", profile(99999, PROF_ON, 0), -1);
  check("on/pid -5", profile(-5, PROF_ON, 0), -1);
  check("on/pid 0", profile(0, PROF_ON, 0), -1);
  check("off/pid 99999", profile(99999, PROF_OFF, 0), -1);

  int zombie = zombie_child();
  if (zombie < 0) {
    printf("pbadcall: FAIL cannot make a zombie child (fork or pipe failed)\n");
    failures++;
  } else {
    check("on/zombie", on_zombie(zombie), -1);
    check("off/zombie", profile(zombie, PROF_OFF, 0), -1);
    reap("zombie", zombie);
  }
  int victim = killed_child();
  if (victim < 0) {
    printf("pbadcall: FAIL cannot make a killed child (fork or kill failed)\n");
    failures++;
  } else {
    check("on/killed", profile(victim, PROF_ON, 0), -1);
    reap("killed", victim);
  }

  check("cmd 0", profile(me, 0, 0), -1);
  check("cmd 99", profile(me, 99, 0), -1);
  check("cmd -1", profile(me, -1, 0), -1);

  check("off/self not on", profile(me, PROF_OFF, 0), -1);
  check("on/self", profile(me, PROF_ON, 0), 0);
  check("off/self", profile(me, PROF_OFF, 0), 0);
  check("off/self again", profile(me, PROF_OFF, 0), -1);

  char mode[64];
  if (!profstat_value("profiling", mode, sizeof(mode))) {
    printf("pbadcall: FAIL cannot read /proc/profstat\n");
    failures++;
  } else if (strcmp(mode, "all") != 0) {
    // Only when nobody else has switched "all" mode on: this must not switch it off.
    check("off/all not on", profile(PROF_ALL_PIDS, PROF_OFF, 0), -1);
  }

  char before[16], after[16];
  bool have_rate = profstat_value("rate", before, sizeof(before));
  const int bad_rates[] = {0, PROF_MIN_HZ - 1, PROF_MAX_HZ + 1, -1, 100000};
  for (int hz : bad_rates) {
    char name[32];
    snprintf(name, sizeof(name), "rate %d", hz);  // the name shows which rate failed
    check(name, profile(0, PROF_RATE, hz), -1);
  }
  if (!have_rate || !profstat_value("rate", after, sizeof(after))) {
    printf("pbadcall: FAIL no rate in /proc/profstat\n");
    failures++;
  } else {
    if (strcmp(before, after) != 0) {
      printf("pbadcall: FAIL a refused rate changed the rate from %s to %s\n", before, after);
      failures++;
    }
    check("rate unchanged", profile(0, PROF_RATE, atoi(before)), 0);
  }

  // The instruction clock's count: refused out of range by the kernel itself (the profile
  // command checks it too, so only a direct call shows the kernel's check), leaving the
  // timer the clock; 0 (the timer) is always accepted.
  const int bad_counts[] = {PROF_MIN_INSNS - 1, -5, PROF_MAX_INSNS + 1};
  for (int n : bad_counts) {
    char name[32];
    snprintf(name, sizeof(name), "clock %d", n);
    check(name, profile(0, PROF_CLOCK, n), -1);
  }
  char clock[32];
  if (profstat_value("clock", clock, sizeof(clock)) && strcmp(clock, "timer") != 0) {
    printf("pbadcall: FAIL a refused count changed the clock to %s\n", clock);
    failures++;
  }
  check("clock 0", profile(0, PROF_CLOCK, 0), 0);

  if (failures == 0) printf("pbadcall: all -1\n");
  return failures == 0 ? 0 : 1;
}
