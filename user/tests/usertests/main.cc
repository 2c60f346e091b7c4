// usertests: the kernel's correctness suite, run from the shell.
//
//   usertests              run every test
//   usertests -q           run the quick ones (well under a minute on one hart)
//   usertests NAME...      run the named tests only
//   usertests -l           list the tests, marking the quick ones
//
// Each test runs in a child process of its own (see usertests.h for how a test reports),
// watched by a second child, the watchdog, which kills the test if it runs far longer than
// it should: a test that hangs fails instead of stopping the suite. The test starts only
// once the watchdog is there, so that the watchdog's pages are not taken while the test
// counts free pages itself. For each test one line
// is printed, `test NAME: OK` or `test NAME: FAILED (reason)`, and at the end either
//
//   ALL TESTS PASSED
//   FAILED: name1 name2 ...        (and the exit status is 1)
//
// The runner also keeps the books on physical memory. It reads the kernel's count of free
// pages (/proc/meminfo) before and after each test, once the test and everything it
// started have ended, and a test after which pages are missing fails even if it passed
// otherwise. The same comparison over the whole run is printed as
// `free pages: before N after M`. Orphaned grandchildren of a test end on their own
// schedule (init reaps them), so a difference is re-read for a few seconds before it
// counts: the count must *settle* at its old value.
//
// `usertests --probe ARG...` is not a test: it is the program that the exec tests run. It
// exits at once with argc + 100 * (total length of the arguments after --probe), which
// tells the test that the exec worked and the arguments arrived whole.
#include "usertests.h"

namespace {

using namespace ut;

struct Test {
  const char *name;
  void (*fn)();
  bool quick;       // part of `usertests -q`
  int max_seconds;  // the watchdog's limit
};

constexpr Test TESTS[] = {
    // Processes.
    {"exitwait", test_exitwait, true, 60},
    {"forkfull", test_forkfull, true, 60},
    {"forkstorm", test_forkstorm, true, 180},
    {"reparent", test_reparent, true, 120},
    {"orphanstorm", test_orphanstorm, true, 120},
    {"killrunning", test_killrunning, true, 60},
    {"killsleeping", test_killsleeping, true, 60},
    {"killwaiting", test_killwaiting, true, 60},
    {"killpipe", test_killpipe, true, 60},
    {"killself", test_killself, true, 60},
    {"killstorm", test_killstorm, true, 120},
    {"killbad", test_killbad, true, 60},
    {"pids", test_pids, true, 60},
    {"forkcopy", test_forkcopy, true, 60},
    // Memory.
    {"sbrkbasic", test_sbrkbasic, true, 60},
    {"sbrkabove", test_sbrkabove, true, 60},
    {"sbrkoom", test_sbrkoom, true, 300},
    {"sbrkcycle", test_sbrkcycle, true, 120},
    {"oompaths", test_oompaths, true, 300},
    {"stackguard", test_stackguard, true, 60},
    {"textwrite", test_textwrite, true, 60},
    // Bad pointers given to system calls.
    {"badread", test_badread, true, 60},
    {"badwrite", test_badwrite, true, 60},
    {"badexec", test_badexec, true, 60},
    {"badpipe", test_badpipe, true, 60},
    {"badopen", test_badopen, true, 60},
    {"badfstat", test_badfstat, true, 60},
    {"badwait", test_badwait, true, 60},
    // exec.
    {"execargs", test_execargs, true, 60},
    {"exechuge", test_exechuge, true, 60},
    {"execbadelf", test_execbadelf, false, 300},
    // Pipes.
    {"pipebig", test_pipebig, true, 120},
    {"pipewriters", test_pipewriters, true, 120},
    {"pipebroken", test_pipebroken, true, 60},
    {"pipeends", test_pipeends, true, 60},
    {"pipemany", test_pipemany, true, 60},
    // The file system.
    {"fsmany", test_fsmany, true, 120},
    {"fsoffsets", test_fsoffsets, true, 60},
    {"fslinks", test_fslinks, true, 60},
    {"fsdirs", test_fsdirs, true, 60},
    {"fsrmcwd", test_fsrmcwd, true, 60},
    {"fsrootdotdot", test_fsrootdotdot, true, 60},
    {"fslongname", test_fslongname, true, 60},
    {"fsmaxpath", test_fsmaxpath, true, 60},
    {"maxfile", test_maxfile, false, 300},
    {"bigdir", test_bigdir, false, 300},
    {"noinodes", test_noinodes, false, 300},
    {"noblocks", test_noblocks, false, 600},
    {"nofds", test_nofds, true, 60},
    {"nfile", test_nfile, true, 60},
    {"ninode", test_ninode, false, 300},
    {"fsconcurrent", test_fsconcurrent, false, 300},
};
constexpr int NUM_TESTS = sizeof(TESTS) / sizeof(TESTS[0]);

constexpr int WATCHDOG_FIRED = 3;
constexpr int SETTLE_TICKS = 5 * TICKS_PER_SECOND;

// The free-page count once it has come back to `want`, or the last value read after
// SETTLE_TICKS of waiting for it to.
long settled_free_pages(long want) {
  long now = free_pages();
  for (int waited = 0; now != want && waited < SETTLE_TICKS; waited += 2) {
    sleep(2);
    now = free_pages();
  }
  return now;
}

// Runs one test in a child, under a watchdog. Returns true if it passed.
bool run_test(const Test &t) {
  current_test = t.name;
  long before = free_pages();
  // The test starts only once the watchdog exists: a test that counts free pages itself
  // must not see the watchdog's fork take them halfway through. It waits for the end of
  // file on `gate`, which comes when the runner and the watchdog have closed the write end.
  int gate[2];
  if (pipe(gate) < 0) {
    printf("test %s: FAILED (the runner could not make a pipe)\n", t.name);
    return false;
  }
  int pid = fork();
  if (pid < 0) {
    printf("test %s: FAILED (the runner could not fork)\n", t.name);
    close(gate[0]);
    close(gate[1]);
    return false;
  }
  if (pid == 0) {
    close(gate[1]);
    char c;
    read(gate[0], &c, 1);
    close(gate[0]);  // the last reference: the gate's page is free before the test runs
    t.fn();
    exit(0);
  }
  close(gate[0]);
  int dog = fork();
  if (dog == 0) {
    close(gate[1]);
    sleep(t.max_seconds * TICKS_PER_SECOND);
    kill(pid);
    exit(WATCHDOG_FIRED);
  }
  close(gate[1]);

  int status = 0;
  bool timed_out = false;
  for (;;) {
    int s = 0;
    int got = wait(&s);
    if (got < 0) break;
    if (got == pid) {
      status = s;
      if (dog > 0) kill(dog);
    } else if (got == dog && s == WATCHDOG_FIRED) {
      timed_out = true;
    }
  }

  long after = settled_free_pages(before);
  if (timed_out) {
    printf("test %s: FAILED (timed out after %d s and was killed)\n", t.name, t.max_seconds);
    return false;
  }
  if (status == FAIL_STATUS) return false;  // the test has printed its own line
  if (status == -1) {
    printf("test %s: FAILED (killed by the kernel, exit status -1)\n", t.name);
    return false;
  }
  if (status != 0) {
    printf("test %s: FAILED (exit status %d)\n", t.name, status);
    return false;
  }
  if (after != before) {
    printf("test %s: FAILED (free pages: %ld before, %ld after: %ld lost)\n", t.name, before, after,
           before - after);
    return false;
  }
  printf("test %s: OK\n", t.name);
  return true;
}

const Test *find_test(const char *name) {
  for (const Test &t : TESTS) {
    if (strcmp(t.name, name) == 0) return &t;
  }
  return nullptr;
}

int probe(int argc, char **argv) {
  int payload = 0;
  for (int i = 2; i < argc; i++) payload += static_cast<int>(strlen(argv[i]));
  return argc + 100 * payload;
}

void usage() {
  fprintf(2, "usage: usertests [-q | -l | NAME...]\n");
  exit(1);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--probe") == 0) return probe(argc, argv);

  bool quick = false;
  bool selected[NUM_TESTS] = {};
  bool by_name = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-q") == 0) {
      quick = true;
    } else if (strcmp(argv[i], "-l") == 0) {
      for (const Test &t : TESTS) printf("%s%s\n", t.name, t.quick ? " (quick)" : "");
      return 0;
    } else if (argv[i][0] == '-') {
      usage();
    } else {
      const Test *t = find_test(argv[i]);
      if (t == nullptr) {
        fprintf(2, "usertests: no test named %s (usertests -l lists them)\n", argv[i]);
        return 1;
      }
      selected[t - TESTS] = true;
      by_name = true;
    }
  }
  if (quick && by_name) usage();
  for (int i = 0; i < NUM_TESTS; i++) {
    if (!by_name) selected[i] = !quick || TESTS[i].quick;
  }

  long before = free_pages();
  if (before < 0) {
    fprintf(2, "usertests: cannot read /proc/meminfo\n");
    return 1;
  }
  int start = uptime();
  printf("usertests starting\n");

  // Static, like every big buffer here: the stack is one page, and the tests run below
  // this frame in their forked copies of it.
  static const char *failed[NUM_TESTS + 1];
  int nfailed = 0;
  for (int i = 0; i < NUM_TESTS; i++) {
    if (selected[i] && !run_test(TESTS[i])) failed[nfailed++] = TESTS[i].name;
  }

  long after = settled_free_pages(before);
  printf("free pages: before %ld after %ld\n", before, after);
  if (after != before) {
    printf("memory: %ld pages lost over the whole run\n", before - after);
    failed[nfailed++] = "memory";
  }
  int took = uptime() - start;
  printf("usertests: %d.%d s\n", took / TICKS_PER_SECOND, took % TICKS_PER_SECOND);
  if (nfailed == 0) {
    printf("ALL TESTS PASSED\n");
    return 0;
  }
  // One write, so that the whole list stays on one line.
  static char line[512];
  strcpy(line, "FAILED:");
  for (int i = 0; i < nfailed; i++) {
    if (strlen(line) + strlen(failed[i]) + 3 >= sizeof(line)) break;
    strcpy(line + strlen(line), " ");
    strcpy(line + strlen(line), failed[i]);
  }
  printf("%s\n", line);
  return 1;
}
