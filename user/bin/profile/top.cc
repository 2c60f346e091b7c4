// profile top [-p PID] [N]: the N functions with the most samples, each with its process.
//
// The report reads /proc/profile once, through a Stream and the JSON parser, adding each
// sample to a Tally, and prints the table, how many rows it left out, the processes followed
// from PID if it was asked to cover them (`profile run`), the count of samples the kernel
// dropped, and the sampling periods it missed, if any.
#include "abi/profile.h"
#include "json.h"
#include "lib/user.h"
#include "profile.h"
#include "tally.h"

namespace prof {

int top(int n, int pid, bool children) {
  Tally tally;
  if (!tally.init()) fail("out of memory");
  if (!read_profile(pid, children, [&](const Sample &s) { tally.add(s); })) return 1;
  if (tally.samples() > 0) tally.print_top(n, processes);
  if (children) processes.print_followed(pid);
  char dropped[24];
  if (!profstat_value("dropped", dropped, sizeof(dropped))) strcpy(dropped, "?");
  printf("%d samples (%s dropped)\n", tally.samples(), dropped);
  // Periods with no sample make the counts smaller than rate x time: say so where the
  // reader looks (the count is the profiler's, over every process).
  char missed[24];
  if (profstat_value("missed", missed, sizeof(missed)) && strcmp(missed, "0") != 0)
    printf(
        "(%s sampling periods missed: the timer interrupt came late, so there are fewer "
        "samples than rate x time)\n",
        missed);
  return 0;
}

int samples_of(int pid) {
  int fd = open(PROFILE_PATH, O_RDONLY);
  if (fd < 0) return -1;
  Stream in(fd);
  ProfileParser parser(in, scratch_sample);
  int count = 0;
  bool ok = parser.each_sample([&](const Sample &s) { count += s.pid == pid ? 1 : 0; });
  close(fd);
  return ok ? count : -1;
}

}  // namespace prof
