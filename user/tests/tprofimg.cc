// tprofimg: the profiler keeps what it needs to name a program's functions, and no more.
//
//   tprofimg keep SEED   run 32 distinct programs under the profiler (its image table's
//                        size), then a file-heavy workload: 3 or 4 processes (chosen by
//                        SEED) each create and hold 10 or 11 files open at once and write
//                        to all of them. Everything must succeed: the executables the
//                        profiler keeps must not take the file system's in-memory inodes.
//   tprofimg unlinked    copy /spin to /tp/victim, run it under the profiler for about a
//                        second, and unlink it once it has exited. The disk space of the
//                        victim must be free at once (the grading test checks the image),
//                        and /proc/profile must still name its functions.
//   tprofimg orphan      copy /sleep to /tp/orphan, start it under the profiler (if profile(2)
//                        works) sleeping for good, and unlink it while it runs, then exit and
//                        leave it there. If the machine stops now, the file is an orphan, which
//                        the next boot must free (the crash tests check that). It sleeps: a
//                        program holds its file whether it runs or waits, and a spinning one
//                        would keep a hart busy for the whole of each crash test.
//   tprofimg stubs       run program A, whose loop makes system calls, under the profiler
//                        and read /proc/profile (so the profiler looks at A's code); then
//                        `profile clear` and run program B, whose loop has the same
//                        addresses but no system call, in the same image slot. B's samples
//                        must not get a caller inserted as if it were in a system-call stub.
//
// Each mode prints "tprofimg: MODE ok" (with what it measured) or "tprofimg: FAIL ..." lines
// and exits with status 1. `keep` and `unlinked` leave /tp behind; the pids they print let
// the grading test pick their samples out of /proc/profile.

#include "abi/profile.h"
#include "lib/user.h"
#include "tinyelf.h"

namespace {

constexpr int IMAGES = 32;  // the profiler's image table (kern/profile/images.cc)
int failures = 0;

void fail(const char *what) {
  printf("tprofimg: FAIL %s\n", what);
  failures++;
}

// prefix and i in two digits, into buf.
template <int N>
void numbered(char (&buf)[N], const char *prefix, int i) {
  snprintf(buf, N, "%s%02d", prefix, i);
}

// Run path (with one optional argument) in a child that is profiled from its first
// instruction. Returns the child's pid after it has exited with status 0, or -1.
int run_profiled(const char *path, const char *arg = nullptr) {
  int go[2];
  if (pipe(go) < 0) return -1;
  int pid = fork();
  if (pid == 0) {
    char byte;
    close(go[1]);
    read(go[0], &byte, 1);  // wait until the parent has switched profiling on
    char *argv[] = {const_cast<char *>(path), const_cast<char *>(arg), nullptr};
    exec(path, argv);
    exit(3);
  }
  close(go[0]);
  bool on = pid > 0 && profile(pid, PROF_ON, 0) == 0;
  close(go[1]);
  int status = -1;
  if (pid > 0) wait(&status);
  if (!on) fail("profile(pid, PROF_ON) failed");
  return status == 0 && on ? pid : -1;
}

Rng rng{1};  // seeded by main
unsigned rnd(unsigned n) { return rng.below(n); }

int keep(int seed) {
  rng = Rng{0x2545f4914f6cdd1dUL ^ static_cast<unsigned long>(seed)};
  printf("tprofimg: seed %d\n", seed);
  if (mkdir("/tp") < 0 || chdir("/tp") < 0) {
    fail("cannot make /tp");
    return 1;
  }
  char path[8];
  int ran = 0;
  for (int i = 0; i < IMAGES; i++) {
    numbered(path, "x", i);
    if (!write_exit_elf(path, static_cast<unsigned>(i))) {
      fail("cannot write a tiny program");
      return 1;
    }
    if (run_profiled(path) > 0) ran++;
  }
  if (ran != IMAGES) fail("a profiled program did not run");

  // The workload: every process creates and holds its files, then writes to each.
  int procs = 3 + static_cast<int>(rnd(2));
  int per = 10 + static_cast<int>(rnd(2));
  int ready[2], release[2];
  if (pipe(ready) < 0 || pipe(release) < 0) {
    fail("cannot make the control pipes");
    return 1;
  }
  for (int p = 0; p < procs; p++) {
    if (fork() == 0) {
      close(ready[0]);
      close(release[1]);
      int held = 0;
      for (int i = 0; i < per; i++) {
        char name[8];
        numbered(name, "w", p * 20 + i);
        int fd = open(name, O_CREATE | O_RDWR);
        if (fd < 0) break;
        held++;
      }
      char byte = static_cast<char>(held);
      write(ready[1], &byte, 1);
      read(release[0], &byte, 1);  // all processes hold their files at the same time
      // The files are the descriptors fstat calls T_FILE (the pipes and console are not).
      int written = 0;
      for (int fd = 0; fd < NOFILE; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0 && st.type == T_FILE && write(fd, "data\n", 5) == 5) written++;
      }
      exit(held == per && written == per ? 0 : 1);
    }
  }
  close(ready[1]);
  close(release[0]);
  int held = 0;
  for (int p = 0; p < procs; p++) {
    char byte = 0;
    if (read(ready[0], &byte, 1) == 1) held += byte;
  }
  close(release[1]);
  int bad = 0;
  for (int p = 0; p < procs; p++) {
    int status = -1;
    wait(&status);
    if (status != 0) bad++;
  }
  printf("tprofimg: %d programs kept, %d processes held %d of %d files at once\n", ran, procs, held,
         procs * per);
  if (held != procs * per || bad != 0) fail("the file workload ran out of in-memory inodes");
  if (failures > 0) return 1;
  printf("tprofimg: keep ok\n");
  return 0;
}

bool copy(const char *from, const char *to) {
  int in = open(from, O_RDONLY);
  int out = open(to, O_CREATE | O_RDWR | O_TRUNC);
  bool ok = in >= 0 && out >= 0;
  char buf[512];
  int n;
  while (ok && (n = read(in, buf, sizeof(buf))) > 0) ok = write(out, buf, n) == n;
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  return ok;
}

int unlinked() {
  mkdir("/tp");  // may exist already
  if (!copy("/spin", "/tp/victim")) {
    fail("cannot copy /spin to /tp/victim");
    return 1;
  }
  int pid = run_profiled("/tp/victim", "1");
  if (pid < 0) fail("/tp/victim did not run");
  if (unlink("/tp/victim") < 0) fail("cannot unlink /tp/victim");
  if (failures > 0) return 1;
  printf("tprofimg: victim pid %d unlinked\n", pid);
  printf("tprofimg: unlinked ok\n");
  return 0;
}

int orphan() {
  mkdir("/tp");  // may exist already
  if (!copy("/sleep", "/tp/orphan")) {
    fail("cannot copy /sleep to /tp/orphan");
    return 1;
  }
  int go[2];
  if (pipe(go) < 0) return 1;
  int pid = fork();
  if (pid == 0) {
    char byte;
    close(go[1]);
    read(go[0], &byte, 1);
    close(go[0]);
    char *argv[] = {const_cast<char *>("orphan"), const_cast<char *>("999999999"), nullptr};
    exec("/tp/orphan", argv);
    exit(3);
  }
  close(go[0]);
  if (pid < 0) fail("cannot fork");
  // Sampled (wait samples) if the profiler works (in the lab's starter it may not yet):
  // either way the sleeping program holds its unlinked file.
  bool profiled = pid > 0 && profile(pid, PROF_ON, 0) == 0;
  close(go[1]);
  sleep(2);  // let it exec (and be sampled) before its file goes
  if (unlink("/tp/orphan") < 0) fail("cannot unlink /tp/orphan");
  if (failures > 0) return 1;
  printf("tprofimg: orphan pid %d runs unlinked (%s)\n", pid,
         profiled ? "profiled" : "not profiled");
  return 0;
}

// A and B: the same addresses, a loop run (lui's count) * 4096 times, then exit(0). Both
// set ra first (the profiler inserts a stub's caller from ra, and only when it is not 0).
// A's loop (128..140) makes a getpid system call: its ecall at 132 puts A's samples at pc
// 136, which is in a stub. B has nops at 128 and 132 and loops on 136..140 alone, so its
// samples sit at 136 too, where B has no system call: a caller inserted there shows as a
// second frame.
constexpr int STUB_CODE = 10;
void stub_program(unsigned *code, bool syscalls) {
  using namespace rv;
  code[0] = li(RA, 64);                                    // 120
  code[1] = lui(T0, syscalls ? 0x40 : 0x10000);            // 124: loop count
  code[2] = syscalls ? li(A7, 11 /* SYS_getpid */) : NOP;  // 128
  code[3] = syscalls ? ECALL : NOP;                        // 132
  code[4] = addi(T0, -1);                                  // 136
  code[5] = bnez(T0, syscalls ? -12 : -4);                 // 140: to 128 or 136
  code[6] = li(A0, 0);                                     // 144
  code[7] = li(A7, 2 /* SYS_exit */);                      // 148
  code[8] = ECALL;                                         // 152
  code[9] = NOP;
}

int stubs() {
  unsigned a[STUB_CODE], b[STUB_CODE];
  stub_program(a, true);
  stub_program(b, false);
  if (!write_tiny_elf("/tstub-a", a, STUB_CODE, 1) ||
      !write_tiny_elf("/tstub-b", b, STUB_CODE, 2)) {
    fail("cannot write the programs");
    return 1;
  }
  profile(0, PROF_CLEAR, 0);
  int pa = run_profiled("/tstub-a");
  // Render the whole profile once, as a reader would: the profiler looks at A's code.
  int fd = open("/proc/profile", O_RDONLY);
  char buf[512];
  int bytes = 0, n;
  while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0) bytes += n;
  if (fd >= 0) close(fd);
  profile(0, PROF_CLEAR, 0);
  int pb = run_profiled("/tstub-b");
  if (pa < 0 || pb < 0) fail("a program did not run");
  if (bytes < 100) fail("A left no samples");
  if (failures > 0) return 1;
  printf("tprofimg: A pid %d (%d bytes of profile), B pid %d\n", pa, bytes, pb);
  printf("tprofimg: stubs ok\n");
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "keep") == 0 && atoi(argv[2]) > 0) return keep(atoi(argv[2]));
  if (argc == 2 && strcmp(argv[1], "unlinked") == 0) return unlinked();
  if (argc == 2 && strcmp(argv[1], "orphan") == 0) return orphan();
  if (argc == 2 && strcmp(argv[1], "stubs") == 0) return stubs();
  fprintf(2, "usage: tprofimg keep SEED | unlinked | orphan | stubs\n");
  return 2;
}
