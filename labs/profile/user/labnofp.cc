// labnofp: one function compiled without a frame pointer, in the middle of a call chain.
//
//   labnofp [SECONDS]     run for SECONDS (2 by default), then print "labnofp: done"
//
// The calls are main -> prepare -> no_frame -> churn, and nearly all the time is spent in
// churn() and no_frame(). Every function here is compiled with frame pointers, as the whole
// tree is, except no_frame(): its attribute asks GCC to leave the frame pointer out, as it
// does for any code built with -fomit-frame-pointer (the default of most compilers at -O2,
// and so of most libraries a program links with). Profile it and compare the stacks the
// profiler reports with the real chain above (labs/profile/README.md, question 3).
#include "lib/user.h"

namespace {

volatile unsigned long sink;

}  // namespace

// C linkage keeps the names in the profile plain.
extern "C" {

// The work: a few thousand rounds of xorshift.
__attribute__((noinline, noclone)) unsigned long churn(unsigned long x) {
  return spin_rounds(x, 20000);
}

// Built without a frame pointer: it saves ra on the stack (it makes calls) but keeps no
// frame record, and leaves s0 as its caller set it.
__attribute__((noinline, noclone, optimize("omit-frame-pointer"))) unsigned long no_frame(
    unsigned long x) {
  for (int i = 0; i < 8; i++) x = churn(x + i) ^ (x >> 3);
  return x;
}

__attribute__((noinline, noclone)) unsigned long prepare(unsigned long x) {
  unsigned long r = no_frame(x);
  return r + 1;  // work after the call, so that it stays a call and not a jump
}

}  // extern "C"

int main(int argc, char **argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 2;
  if (argc > 2 || seconds < 0) usage_exit("labnofp [SECONDS]\n");
  int deadline = uptime() + 10 * seconds;
  unsigned long x = 1;
  while (uptime() < deadline) {
    x = prepare(x);
    sink = x;
  }
  printf("labnofp: done\n");
  return 0;
}
