// profile: what the command's files share: failing, and the commands that report.
//
// The files of this program, one concept each: main.cc (the command line and the commands
// that only talk to the kernel), stream.cc (reading a file a chunk at a time), json.cc (the
// JSON of /proc/profile), tally.cc (the per-function counts), top.cc (`profile top`), tree.cc
// (`profile tree`) and run.cc (`profile run`).
#pragma once

namespace prof {

constexpr int ANY_PID = -1;  // the report's filter: every process

// Prints `profile: WHAT` and exits with status 1.
[[noreturn]] void fail(const char *what);

// profile top: the report over the samples of `pid`, or of everyone for ANY_PID. With
// `children`, over those of pid and of every process followed from it (tally.h, in_family),
// each of which it names with the process that forked it.
int top(int n, int pid, bool children = false);

// How many samples of `pid` /proc/profile holds; -1 if it cannot be read.
int samples_of(int pid);

// profile tree: the call tree of the samples of `pid` (or of everyone for ANY_PID), leaving
// out calls under min_tenths tenths of a percent.
int tree(int pid, int min_tenths);

// profile run [-n] CMD [ARG...]: argv is CMD and its arguments, null-terminated; `children`
// is false with -n.
int run(char **argv, bool children);

}  // namespace prof
