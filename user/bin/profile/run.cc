// profile run [-n] CMD [ARG...]: profile CMD, and the processes it forks (not with -n), from
// its first instruction to its exit, then print `profile top` for them alone.
//
// LAB profile/run BEGIN
// `profile run` has to switch sampling on before the command executes its first
// instruction, but a process can only be named once it exists. So the child it forks waits
// on a pipe; the parent turns sampling on for the child's pid, and following its forks
// unless told not to, and only then writes the byte that lets the child exec. Samples of
// other processes are left alone: the report filters by pid, and by who was followed from
// whom, instead of clearing the profile. A command that cannot be executed gets no report:
// the child says so on a second pipe and exits with EXEC_FAILED.
// LAB profile/run STARTER
// // `profile run CMD [ARG...]` runs CMD as a child process, samples it, and every process
// // it forks (unless `children` is false: `profile run -n`), from its first instruction to
// // its exit, prints `profile: pid N (CMD) exited with status S after T ms`, and then the
// // report for those processes alone. Samples of other processes must stay in the profile.
// LAB profile/run END
#include "abi/profile.h"
#include "lib/user.h"
#include "profile.h"

namespace prof {

// LAB profile/run BEGIN: write `profile run`, see labs/profile/README.md, task 3
namespace {

// The exit status of a child whose exec failed (the shells' "command not found"), and the
// pipe on which it says so: a command may exit with that status of its own accord.
constexpr int EXEC_FAILED = 127;
int exec_failed_fd = -1;

// After the child's exit: did it say that its exec failed? Only asked when it exited with
// EXEC_FAILED, so the read cannot wait on a command's child that still holds the pipe.
bool exec_failed(int fd, int status) {
  char said = 0;
  bool failed = status == EXEC_FAILED && read(fd, &said, 1) == 1 && said == 'f';
  close(fd);
  return failed;
}

}  // namespace

// The child of `profile run`: wait for the parent's word, then become the command.
[[noreturn]] void run_child(int go_fd, char **argv) {
  char go = 0;
  int n = read(go_fd, &go, 1);
  close(go_fd);
  if (n != 1 || go != 'g') exit(1);  // the parent could not switch sampling on
  exec(argv[0], argv);
  // Like the shell: a bare name not found here is looked for in the root directory.
  if (strchr(argv[0], '/') == nullptr && strlen(argv[0]) < MAXPATH - 1) {
    char path[MAXPATH];
    path[0] = '/';
    strcpy(path + 1, argv[0]);
    exec(path, argv);
  }
  fprintf(2, "profile: exec %s failed\n", argv[0]);
  write(exec_failed_fd, "f", 1);
  exit(EXEC_FAILED);
}

int run(char **argv, bool children) {
  int go[2], failed[2];
  if (pipe(go) < 0 || pipe(failed) < 0) fail("pipe failed");
  int pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    close(go[1]);
    close(failed[0]);
    exec_failed_fd = failed[1];
    run_child(go[0], argv);
  }
  close(go[0]);
  bool on = profile(pid, PROF_ON, 0) == 0 && (!children || profile(pid, PROF_FOLLOW, 1) == 0);
  unsigned long start = now_ms();
  write(go[1], on ? "g" : "x", 1);
  close(go[1]);
  close(failed[1]);
  int status = 0;
  int waited;
  while ((waited = wait(&status)) != pid && waited >= 0) {
  }
  if (!on) {
    fprintf(2, "profile: could not start profiling pid %d\n", pid);
    return 1;
  }
  if (exec_failed(failed[0], status)) return 1;  // the child said why
  // The process has exited, which stopped its sampling; its samples stay. Its time from the
  // go-ahead to its exit says how many samples the rate promised (it was not running all of
  // that time: it may have slept, or waited for a hart).
  printf("profile: pid %d (%s) exited with status %d after %lu ms\n", pid, argv[0], status,
         now_ms() - start);
  return top(10, pid, children);
}
// LAB profile/run STARTER
// // profile run [-n] CMD [ARG...]: argv is CMD and its arguments, null-terminated;
// // `children` is false with -n.
// int run([[maybe_unused]] char **argv, [[maybe_unused]] bool children) {
//   fprintf(2, "profile: run is not written yet\n");
//   return 1;
// }
// LAB profile/run END

}  // namespace prof
