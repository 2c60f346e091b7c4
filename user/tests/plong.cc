// plong: spins in a function with a long C++ name, to check that the profiler reports
// names whole.
//
//   plong [SECONDS]     spin for SECONDS (1 by default), then print "plong: done"
//
// Names of C++ functions, demangled, are long: a namespace, the function, and its
// parameter types. The function here demangles to about 80 characters, and a profile must
// show that name exactly as the program's symbol table has it, not a cut-off prefix.
#include "lib/user.h"

namespace profiler_demo::long_names {

__attribute__((noinline)) unsigned long spin_in_a_function_with_a_long_name(unsigned long seed,
                                                                            int deadline) {
  return spin_until(deadline, 100000, seed | 1);
}

}  // namespace profiler_demo::long_names

int main(int argc, char **argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 1;
  if (argc > 2 || seconds < 0) usage_exit("plong [SECONDS]\n");
  profiler_demo::long_names::spin_in_a_function_with_a_long_name(getpid(), uptime() + 10 * seconds);
  printf("plong: done\n");
  return 0;
}
