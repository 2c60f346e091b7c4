// profile: counting samples per function, for `profile top`.
//
// For every function of every process (a row of the report: `hot` of pid 3 and `hot` of
// pid 4 are two rows) the report counts two things:
//
//   self   samples whose innermost frame is in the function: time spent in its own code;
//   incl   samples with the function anywhere on the stack, counted once per sample even
//          when it recurses: time spent in it and in everything it called.
//
// Only these counts grow with the profile, and there are few functions.
#pragma once

#include "json.h"
#include "lib/user.h"
#include "profile.h"

namespace prof {

struct FunctionCount {
  const char *name = nullptr;  // nullptr: a free slot
  bool kernel = false;
  int pid = -1;  // the process whose function it is; -1 for the row of the rest
  int self = 0;
  int incl = 0;
  int last_sample = -1;  // the sample that last counted this function inclusively
};

class Processes;

// Per-function counts in an open-addressing hash table keyed by (pid, name, kernel). The table
// has a fixed size; if a profile ever names more functions than it holds, the rest are
// counted together as "(other functions)" rather than failing the whole report.
class Tally {
 public:
  // False if the table cannot be allocated.
  bool init();
  void add(const Sample &s);
  int samples() const { return m_samples; }
  // The function a frame names, counted nowhere: the tree (tree.h) uses the table to give
  // each name one address.
  const FunctionCount *function(const Frame &f) { return find(f, 0); }
  // Prints the n rows with the most self samples (ties: more inclusive samples first),
  // each with its process named from `procs`, and how many rows were left out.
  void print_top(int n, const Processes &procs);

 private:
  static constexpr int SLOTS = 2048;
  static constexpr int MAX_USED = SLOTS * 3 / 4;  // keep probe sequences short

  static unsigned hash(const char *s, bool kernel, int pid);
  static bool before(const FunctionCount &a, const FunctionCount &b);
  int tenths_of_percent(int part) const;
  FunctionCount *find(const Frame &f, int pid);

  FunctionCount *m_slots = nullptr;
  FunctionCount m_overflow;
  int m_used = 0;
  int m_samples = 0;
};

// The programs' names by pid, each as the last sample of that pid gave it (a process that
// execs changes its name), and their samples. Processes beyond the table's size are named "?".
class Processes {
 public:
  void note(const Sample &s);
  const char *comm(int pid) const;
  // A line for each process but `root`: its name, who forked it and its samples.
  void print_followed(int root) const;

 private:
  static constexpr int MAX = 128;
  struct Entry {
    int pid;
    char comm[COMM_MAX];
    int samples;
  };
  Entry m_entries[MAX] = {};
  int m_count = 0;
  int m_last = -1;  // the entry found last: samples of one process come in runs
};

// The reports' state: the sample being parsed, and the processes' names. They are static
// because a user stack is a single 4 KiB page, and a sample's frames with their names take
// more than that.
extern Sample scratch_sample;
extern Processes processes;

// Is pid `root`, or a process the kernel followed from it (PROF_FOLLOWED, through any
// number of forks)?
bool in_family(int pid, int root);

// One pass of a report over /proc/profile: for each sample of `pid` (of every process for
// ANY_PID; with `children`, of pid and every process followed from it), its process is noted
// in `processes` and add(sample) is called. Fails if the file cannot be opened; returns
// false, having said at which byte, if it is not a valid profile.
template <typename Add>
bool read_profile(int pid, bool children, Add &&add) {
  int fd = open(PROFILE_PATH, O_RDONLY);
  if (fd < 0) fail("cannot open /proc/profile");
  Stream in(fd);
  ProfileParser parser(in, scratch_sample);
  bool ok = parser.each_sample([&](const Sample &s) {
    if (pid != ANY_PID && s.pid != pid && !(children && in_family(s.pid, pid))) return;
    processes.note(s);
    add(s);
  });
  close(fd);
  if (!ok) fprintf(2, "profile: /proc/profile is not a valid profile (at byte %lu)\n", in.offset());
  return ok;
}

}  // namespace prof
