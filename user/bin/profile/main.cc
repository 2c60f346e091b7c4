// profile: the command-line face of the sampling profiler.
//
//   profile PID on|off       start or stop sampling one process
//   profile PID on children  start sampling it and every process it forks from now on, and
//                            theirs in turn (PROF_FOLLOW in kern/abi/profile.h)
//   profile all on|off       sample every process, or stop doing so
//   profile rate HZ          samples a second, 10..10000 (1000 after boot)
//   profile event instructions N   sample every N retired instructions instead (the
//                            instruction clock, 10000..1000000000), where the machine has
//                            a counter-overflow interrupt; `profile event timer` goes back
//   profile clear            forget every sample recorded so far
//   profile status           the profiler's state (/proc/profstat); `missed:` counts the
//                            sampling periods that went by with no sample because the
//                            timer interrupt came late
//   profile top [-p PID] [N] the N functions with the most samples (10 if N is left out),
//                            each with its process; of PID alone if given
//   profile tree [-t PCT] [PID]  the call tree of the samples (of PID alone if given),
//                            callers above callees, leaving out calls under PCT% (1%)
//   profile run [-n] CMD [ARG...]  profile CMD from its first instruction to its exit,
//                            with the processes it forks (not with -n), then print `profile
//                            top` for them alone, and name each process forked
//
// The kernel does the sampling: on each tick of the sampling clock it records, for the
// process running on that hart, the interrupted pc and the chain of return addresses it
// finds by following frame pointers (kernel frames first when the process was inside a
// system call). Reading /proc/profile renders those samples as a JSON array, one object per
// sample, with every address already named:
//
//   {"pid":3,"tid":3,"comm":"spin","timestamp":123,"hart":0,"mode":"user","samples":[
//     {"address":1234,"symbol":"hot","kernel":false}, ...]}
//
// `profile top` turns that into a table of self and inclusive counts per function
// (tally.h), `profile tree` into the call tree of the samples (tree.h), both reading the JSON a
// chunk at a time (stream.h, json.h) so that a profile of any size fits; `profile run` (run.cc)
// profiles one command from its start. profile.h lists the files. Both count the samples taken
// on the CPU: a process's wait samples ("mode":"wait", taken while it was asleep) are left to
// the host's tools (tools/profconv --cpu off|both).
#include "abi/profile.h"
#include "lib/user.h"
#include "profile.h"

using namespace prof;

[[noreturn]] void prof::fail(const char *what) {
  fprintf(2, "profile: %s\n", what);
  exit(1);
}

namespace {

constexpr const char *USAGE =
    "usage: profile PID on|off\n"
    "       profile PID on children  (and every process it forks from now on)\n"
    "       profile all on|off\n"
    "       profile rate HZ        (10..10000 samples a second)\n"
    "       profile event timer|instructions N  (the sampling clock: the timer at the\n"
    "                              rate, or every N retired instructions, 10000..1000000000)\n"
    "       profile clear\n"
    "       profile status         (missed: sampling periods with no sample, because the\n"
    "                              timer interrupt came late: a busy host, or a hart that\n"
    "                              had interrupts off)\n"
    "       profile top [-p PID] [N]\n"
    "       profile tree [-t PCT] [PID]  (calls under PCT%, 1 if left out, are summed)\n"
    "       profile run [-n] CMD [ARG...]  (-n: not the processes CMD forks)\n";

constexpr const char *STAT_PATH = "/proc/profstat";

// Says what was wrong with the command line (`why`, a format with up to two %s for a and
// b), then the usage, and exits with status 1.
[[noreturn]] void usage(const char *why, const char *a = "", const char *b = "") {
  char line[160];
  snprintf(line, sizeof(line), why, a, b);
  fprintf(2, "profile: %s\n%s", line, USAGE);
  exit(1);
}

// A decimal number made of digits only (no sign, nothing after it), up to 9 of them, so it
// cannot overflow an int. atoi would read "3x" as 3 and "x" as 0.
bool parse_number(const char *s, int *out) {
  int n = 0, digits = 0;
  for (; *s != '\0'; s++, digits++) {
    if (*s < '0' || *s > '9' || digits == 9) return false;
    n = n * 10 + (*s - '0');
  }
  *out = n;
  return digits > 0;
}

// A percentage from 0 to 100 with at most one decimal, such as "1", "0.5" or "12.5", in
// tenths of a percent.
bool parse_tenths(const char *s, int *out) {
  int whole;
  char digits[4] = {};
  const char *dot = strchr(s, '.');
  if (dot == nullptr) {
    if (!parse_number(s, &whole)) return false;
    *out = whole * 10;
  } else {
    if (dot - s > 3 || strlen(dot + 1) != 1 || dot[1] < '0' || dot[1] > '9') return false;
    memmove(digits, s, dot - s);
    if (!parse_number(digits, &whole)) return false;
    *out = whole * 10 + (dot[1] - '0');
  }
  return *out <= 1000;
}

// profile top [-p PID] [N]
int top_command(int argc, char **argv) {
  int n = 10, pid = ANY_PID;
  bool have_n = false;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "-p") == 0) {
      if (i + 1 == argc) usage("top: -p needs a pid");
      if (pid != ANY_PID) usage("top: -p given twice");
      if (!parse_number(argv[i + 1], &pid)) usage("top: '%s' is not a pid", argv[i + 1]);
      i++;
    } else if (have_n) {
      usage("top: unexpected '%s' (N was given already)", argv[i]);
    } else if (!parse_number(argv[i], &n) || n == 0) {
      usage("top: '%s' is not a number of rows (1 or more)", argv[i]);
    } else {
      have_n = true;
    }
  }
  return top(n, pid);
}

// profile tree [-t PCT] [PID]
int tree_command(int argc, char **argv) {
  int pid = ANY_PID, min_tenths = 10;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "-t") == 0) {
      if (i + 1 == argc) usage("tree: -t needs a percentage");
      if (!parse_tenths(argv[i + 1], &min_tenths))
        usage("tree: '%s' is not a percentage from 0 to 100 (one decimal at most)", argv[i + 1]);
      i++;
    } else if (pid != ANY_PID) {
      usage("tree: unexpected '%s' (PID was given already)", argv[i]);
    } else if (!parse_number(argv[i], &pid)) {
      usage("tree: '%s' is not a pid", argv[i]);
    }
  }
  return tree(pid, min_tenths);
}

// profile status: /proc/profstat as it is.
int show_status() {
  int fd = open(STAT_PATH, O_RDONLY);
  if (fd < 0) fail("cannot open /proc/profstat");
  char buf[256];
  int n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) write(1, buf, n);
  close(fd);
  return 0;
}

// profile rate HZ
int set_rate(const char *arg) {
  int hz;
  if (!parse_number(arg, &hz) || hz < PROF_MIN_HZ || hz > PROF_MAX_HZ) {
    fprintf(2, "profile: rate must be a number from %d to %d (samples a second)\n", PROF_MIN_HZ,
            PROF_MAX_HZ);
    return 1;
  }
  if (profile(0, PROF_RATE, hz) < 0) fail("the kernel refused the rate");
  return 0;
}

// profile event timer | profile event instructions N
int set_event(int argc, char **argv) {
  if (argc < 3) usage("event needs timer, or instructions and a count");
  if (strcmp(argv[2], "timer") == 0) {
    if (argc > 3) usage("event timer: unexpected '%s'", argv[3]);
    if (profile(0, PROF_CLOCK, 0) < 0) fail("the kernel refused the timer clock");
    return 0;
  }
  if (strcmp(argv[2], "instructions") != 0) usage("event: unknown event '%s'", argv[2]);
  if (argc < 4) usage("event instructions needs a count of instructions a sample");
  if (argc > 4) usage("event instructions: unexpected '%s'", argv[4]);
  int n;
  if (!parse_number(argv[3], &n) || n < PROF_MIN_INSNS || n > PROF_MAX_INSNS) {
    fprintf(2, "profile: instructions must be a number from %d to %d\n", PROF_MIN_INSNS,
            PROF_MAX_INSNS);
    return 1;
  }
  if (profile(0, PROF_CLOCK, n) < 0)
    fail(
        "this machine has no instruction clock (its boot message says `instruction clock: "
        "none`: QEMU needs -cpu rv64,sscofpmf=true)");
  return 0;
}

// profile all on|off
int switch_all(bool on) {
  if (profile(PROF_ALL_PIDS, on ? PROF_ON : PROF_OFF, 0) == 0) return 0;
  fail(on ? "cannot profile all processes" : "not profiling all processes");
}

// profile PID on|off, and profile PID on children
int switch_pid(int pid, bool on, bool children) {
  if (profile(pid, on ? PROF_ON : PROF_OFF, 0) == 0) {
    if (!children || profile(pid, PROF_FOLLOW, 1) == 0) return 0;
    fprintf(2, "profile: cannot follow the children of process %d: it has exited or was killed\n",
            pid);
    return 1;
  }
  if (on) {
    fprintf(2, "profile: no process %d\n", pid);
    return 1;
  }
  // The kernel answers -1 both for a pid that does not exist and for one that is not being
  // profiled. Switching sampling on tells the two apart, and is undone at once: at worst
  // it records a sample or two of a process that was running anyway.
  // No such process: it may have exited while profiled, and its samples are kept.
  if (profile(pid, PROF_ON, 0) < 0) {
    int kept = samples_of(pid);
    if (kept > 0)
      fprintf(2, "profile: process %d has exited; its %d samples are kept (profile top -p %d)\n",
              pid, kept, pid);
    else
      fprintf(2, "profile: no process %d\n", pid);
    return 1;
  }
  profile(pid, PROF_OFF, 0);
  fprintf(2, "profile: process %d is not being profiled\n", pid);
  return 1;
}

// "on" -> 1, "off" -> 0, anything else -> -1.
int on_off(const char *word) {
  if (strcmp(word, "on") == 0) return 1;
  if (strcmp(word, "off") == 0) return 0;
  return -1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) usage("no command given");
  const char *verb = argv[1];

  if (strcmp(verb, "run") == 0) {
    int first = 2;
    bool children = !(argc > 2 && strcmp(argv[2], "-n") == 0);
    if (!children) first++;
    if (argc <= first) usage("run: no command to run");
    if (argv[first][0] == '-') usage("run: unknown option '%s' (only -n)", argv[first]);
    return run(argv + first, children);
  }
  if (strcmp(verb, "top") == 0) {
    return top_command(argc, argv);
  }
  if (strcmp(verb, "tree") == 0) return tree_command(argc, argv);
  if (strcmp(verb, "status") == 0 || strcmp(verb, "clear") == 0) {
    if (argc != 2) usage("%s takes no arguments, but was given '%s'", verb, argv[2]);
    if (verb[0] == 's') return show_status();
    if (profile(0, PROF_CLEAR, 0) < 0) fail("clear failed");
    return 0;
  }
  if (strcmp(verb, "rate") == 0) {
    if (argc < 3) usage("rate needs a number of samples a second");
    if (argc > 3) usage("rate: unexpected '%s'", argv[3]);
    return set_rate(argv[2]);
  }
  if (strcmp(verb, "event") == 0) return set_event(argc, argv);

  // profile PID|all on|off, profile PID on children
  int pid = ANY_PID;
  if (strcmp(verb, "all") != 0 && !parse_number(verb, &pid)) usage("unknown command '%s'", verb);
  if (argc < 3) usage("'%s' needs on or off", verb);
  int on = on_off(argv[2]);
  if (on < 0) usage("'%s' is not on or off", argv[2]);
  bool children = argc > 3 && strcmp(argv[3], "children") == 0 && on == 1 && pid != ANY_PID;
  int last = children ? 3 : 2;
  if (argc > last + 1) usage("unexpected '%s' after '%s'", argv[last + 1], argv[last]);
  if (pid == ANY_PID) return switch_all(on == 1);
  return switch_pid(pid, on == 1, children);
}
