// The profiler's user-visible interface: the profile(2) system call and the files it feeds.
//
//   int profile(int pid, int cmd, int arg);
//
//   cmd PROF_ON     start sampling process `pid`, or every process if pid == PROF_ALL_PIDS
//   cmd PROF_OFF    stop sampling `pid` (or stop "all" mode); -1 if it was not on
//   cmd PROF_RATE   set the sampling rate to `arg` samples a second (PROF_MIN_HZ..PROF_MAX_HZ)
//   cmd PROF_CLEAR  drop every recorded sample (and the symbols kept to name them)
//   cmd PROF_CLOCK  sample every `arg` retired instructions (PROF_MIN_INSNS..PROF_MAX_INSNS)
//                   instead of at the rate; 0 goes back to the timer; `pid` ignored. -1
//                   where the machine has no counter-overflow interrupt (iclock.cc)
//   cmd PROF_STALL  keep interrupts off on the calling hart for `arg` microseconds of the
//                   `time` clock (0..PROF_STALL_MAX_US), `pid` ignored: a test facility, not
//                   part of profiling. A timer tick that comes due meanwhile is taken late,
//                   as after a long spinlock-held stretch, so tests can make late ticks from
//                   inside the guest (labs/sample's test_late_ticks_*); under QEMU's
//                   -icount shift=0 a stall of N microseconds is N * 1000 instructions.
//                   A hart stalls at most PROF_STALL_BUDGET_US in any second (-1 beyond),
//                   so no program can keep a hart's interrupts off for long.
//   cmd PROF_FOLLOW   `arg` 1: sample, from now on, every process that `pid` forks, and
//                   theirs in turn (following, as `perf record` does); 0: stop. `pid` must
//                   be a live process being sampled (PROF_ON); PROF_OFF and exit stop
//                   following too, but leave the children already followed sampled.
//   cmd PROF_FOLLOWED the pid of the process whose fork made `pid` followed, or -1 if no
//                   fork did (among the last PROF_FOLLOW_LOG followed forks); `arg` ignored.
//                   `profile run` learns from it which processes descend from its command.
//
// Each returns 0 (PROF_FOLLOWED: a pid), or -1 for a bad argument: no such process, unknown
// command, off when not on, a rate or a count out of range. Samples are read as JSON from
// /proc/profile; /proc/profstat shows the profiler's state as `key: value` lines.
#pragma once

#define PROF_ON 1
#define PROF_OFF 2
#define PROF_RATE 3
#define PROF_CLEAR 4
#define PROF_CLOCK 5
#define PROF_STALL 6
#define PROF_FOLLOW 7
#define PROF_FOLLOWED 8

#define PROF_ALL_PIDS (-1)
#define PROF_MIN_HZ 10
#define PROF_MAX_HZ 10000
#define PROF_DEFAULT_HZ 1000
#define PROF_MIN_INSNS 10000
#define PROF_MAX_INSNS 1000000000
#define PROF_STALL_MAX_US 10000      // one time slice (QUANTUM_US)
#define PROF_STALL_BUDGET_US 200000  // per hart and second
#define PROF_FOLLOW_LOG 1024         // followed forks PROF_FOLLOWED remembers

// Minor numbers of the profiler's files under /proc (major PROCFS_MAJOR, see procfs.h).
#define PROC_PROFILE 1   // /proc/profile: the samples, as JSON
#define PROC_PROFSTAT 2  // /proc/profstat: state and counters
