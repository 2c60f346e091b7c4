// profrace: switches sampling on and off for processes while they fork, exec and exit, and
// checks that the kernel's count of profiled processes stays true.
//
//   profrace [SEED [ROUNDS [WORKERS]]]     defaults: a seed from the clock, 300 rounds, 2
//
// The kernel keeps a count of the processes whose Proc::profiled flag is set
// (prof::nprofiled); the sampler stays on while it is above zero. /proc/profstat shows the
// count (`profiled:`) and the number of process slots with the flag set, found by scanning
// the table (`flagged:`). They must always agree, and once every process this program made
// is gone, both must be back where they were before it started.
//
// WORKERS processes each run ROUNDS rounds. In a round a worker forks a child that does one
// of these, chosen at random: exit at once; spin a random while, then exit; fork a grandchild
// (which exits at once and is reparented to init), then exit; exec this program again in a
// mode that exits at once; switch sampling on for itself, then exit; switch sampling on for
// itself with its children (PROF_FOLLOW), then fork a small storm of grandchildren that fork
// again and exit. Meanwhile the worker calls profile(PID, PROF_ON), PROF_OFF or PROF_FOLLOW
// (on or off) a random number of times, back to back, for the child or a process near it
// (another worker, another worker's child or a grandchild), so that the calls land before,
// during and after each fork and exit. Then it waits for the child.
//
// Output: `profrace: seed S rounds R workers W` first, and last either `profrace: ok, N
// rounds, profiled P flagged F` or one `profrace: FAIL ...` line. The same seed makes the
// same choices; the timing, and so the interleaving, differs from run to run.
#include "abi/profile.h"
#include "lib/user.h"

namespace {

constexpr int MAX_WORKERS = 8;
constexpr unsigned long SETTLE_MS = 5000;  // for grandchildren to be reaped by init

// The two counts from one read of /proc/profstat.
struct Counts {
  long profiled;
  long flagged;
};

bool read_counts(Counts *c) {
  char a[24], b[24];
  if (!profstat_value("profiled", a, sizeof(a)) || !profstat_value("flagged", b, sizeof(b)))
    return false;
  c->profiled = atoi(a);
  c->flagged = atoi(b);
  return true;
}

void spin(int n) {
  for (int i = 0; i < n; i++) asm volatile("");
}

[[noreturn]] void child(int kind, Rng &rng) {
  switch (kind) {
    case 0: break;
    case 1: spin(rng.below(20000)); break;
    case 2:
      if (fork() == 0) exit(0);
      break;
    case 3: {
      char arg0[] = "profrace", arg1[] = "-x";
      char *argv[] = {arg0, arg1, nullptr};
      exec("/profrace", argv);
      exit(2);  // exec failed
    }
    case 4: profile(getpid(), PROF_ON, 0); break;
    default:
      // Followed: every fork below is sampled from its start, and switched off by its exit.
      profile(getpid(), PROF_ON, 0);
      profile(getpid(), PROF_FOLLOW, 1);
      for (int i = 0, n = 1 + rng.below(4); i < n; i++) {
        if (fork() == 0) {
          if (fork() == 0) exit(0);
          exit(0);
        }
      }
      break;
  }
  exit(0);
}

// One worker's rounds. `floor` is the pid of the first process, which must not be switched
// on: it reads the counts at the end. (A worker may be: it exits before then.)
[[noreturn]] void worker(unsigned long seed, int rounds, int floor) {
  Rng rng{seed};
  for (int r = 0; r < rounds; r++) {
    int kind = rng.below(6);
    Rng child_rng{rng.next() | 1};
    int pid = fork();
    if (pid < 0) {
      printf("profrace: FAIL fork returned -1 in round %d\n", r);
      exit(1);
    }
    if (pid == 0) child(kind, child_rng);
    int calls = 1 + rng.below(40);
    for (int i = 0; i < calls; i++) {
      int target = pid + static_cast<int>(rng.below(5)) - 2;
      if (target <= floor) target = pid;
      switch (rng.below(6)) {
        case 0: profile(target, PROF_OFF, 0); break;
        case 1: profile(target, PROF_FOLLOW, 1); break;
        case 2: profile(target, PROF_FOLLOW, 0); break;
        default: profile(target, PROF_ON, 0); break;
      }
    }
    int status = -1;
    if (wait(&status) != pid || status != 0) {
      printf("profrace: FAIL round %d: child %d (kind %d) exited with %d\n", r, pid, kind, status);
      exit(1);
    }
  }
  exit(0);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "-x") == 0) exit(0);  // the exec'd child
  if (argc > 4) usage_exit("profrace [SEED [ROUNDS [WORKERS]]]\n");
  unsigned long seed = argc > 1 ? static_cast<unsigned long>(atoi(argv[1])) : rdtime() % 1000000;
  int rounds = argc > 2 ? atoi(argv[2]) : 300;
  int workers = argc > 3 ? atoi(argv[3]) : 2;
  if (seed == 0 || rounds < 1 || workers < 1 || workers > MAX_WORKERS) {
    fprintf(2, "profrace: SEED must be positive, ROUNDS at least 1, WORKERS 1 to %d\n",
            MAX_WORKERS);
    exit(1);
  }
  printf("profrace: seed %lu rounds %d workers %d\n", seed, rounds, workers);

  Counts before;
  if (!read_counts(&before)) {
    printf("profrace: FAIL /proc/profstat has no `profiled:` or `flagged:` line\n");
    exit(1);
  }
  if (before.profiled != before.flagged) {
    printf("profrace: FAIL before starting: profiled %ld flagged %ld\n", before.profiled,
           before.flagged);
    exit(1);
  }

  int floor = getpid();
  for (int w = 0; w < workers; w++) {
    int pid = fork();
    if (pid < 0) {
      printf("profrace: FAIL cannot fork worker %d\n", w);
      exit(1);
    }
    if (pid == 0) worker(seed * 7919 + static_cast<unsigned long>(w) * 104729 + 1, rounds, floor);
  }
  bool ok = true;
  for (int w = 0; w < workers; w++) {
    int status = -1;
    if (wait(&status) < 0 || status != 0) ok = false;
  }
  if (!ok) {
    printf("profrace: FAIL a worker failed\n");
    exit(1);
  }

  // Every child has been waited for; grandchildren may still be on their way to init's wait.
  // Both counts must come back to where they were, and agree.
  Counts after{};
  unsigned long deadline = now_ms() + SETTLE_MS;
  for (;;) {
    if (!read_counts(&after)) {
      printf("profrace: FAIL cannot read /proc/profstat\n");
      exit(1);
    }
    if (after.profiled == before.profiled && after.flagged == before.flagged) break;
    if (now_ms() > deadline) {
      printf(
          "profrace: FAIL after %d rounds: profiled %ld flagged %ld, before: profiled %ld "
          "flagged %ld\n",
          rounds * workers, after.profiled, after.flagged, before.profiled, before.flagged);
      exit(1);
    }
    sleep(1);
  }
  printf("profrace: ok, %d rounds, profiled %ld flagged %ld\n", rounds * workers, after.profiled,
         after.flagged);
  exit(0);
}
