// The machinery shared by every usertests test: failing, child processes, files, memory.
//
// usertests is one program built from the files of this folder: main.cc (the runner),
// helpers.cc (what this header declares) and one file for each family of tests (proc.cc,
// mem.cc, exec.cc, pipe.cc, badptr.cc, fs.cc, fslimits.cc). A test is a plain function `void
// name()`. The runner calls it in a child process of its own, so a test that crashes, hangs or
// corrupts its memory takes nothing else with it: the runner only looks at how the child ended.
//
//   exit status 0             the test passed
//   exit status FAIL_STATUS   the test failed and has already said why (TEST_FAIL)
//   anything else             the test died unexpectedly (-1: the kernel killed it)
//
// A test says what went wrong with TEST_FAIL(fmt, ...), which prints one line
//
//   test NAME: FAILED (reason)
//
// and ends the process. CHECK(cond, fmt, ...) fails when cond is false. Both are macros
// rather than functions for one reason: the format string is glued to the line's prefix
// at compile time, so the compiler still checks every argument against its conversion,
// and the line is one printf, which hands it to write() whole when it fits printf's
// buffer (128 bytes), so other processes' output cannot land in the middle of it.
//
// Tests that need processes of their own use spawn() and then one of the reaping helpers.
// A grandchild may use TEST_FAIL too: expect_ok() sees the failure status and passes it up
// without printing a second line.
//
// Two constraints every test must respect:
//   * The stack is one page (4096 bytes), with a guard page under it. Big buffers live in
//     the global `scratch` arrays below, never in local variables.
//   * A test that passes removes everything it created on disk: the disk has about 1500
//     free blocks and 200 inodes in all, and the next test needs them. A failing test
//     stops where it is, so its files may stay behind; every test names its files with a
//     prefix of its own ("uf_", "ub/", ...) so that such leftovers are easy to trace and
//     cannot collide with another test's names.
#pragma once

#include "lib/user.h"

namespace ut {

constexpr int FAIL_STATUS = 97;      // a test that reported its own failure
constexpr int SURVIVED_STATUS = 55;  // a child that should have been killed but was not
constexpr unsigned long PAGE = 4096;
constexpr unsigned long MAX_VA = 1UL << 38;
constexpr unsigned long KERNEL_BASE = 0x80000000UL;
constexpr int TICKS_PER_SECOND = 10;

// The name of the test running in this process (set by the runner before it forks).
extern const char *current_test;

[[noreturn]] void failed(int);

// Big buffers for tests, which must not put them on the one-page stack. Each test runs in
// a process of its own, so tests cannot disturb each other's use of them.
extern char scratch[16 * 1024];
extern char scratch2[16 * 1024];

}  // namespace ut

#define TEST_FAIL(fmt, ...) \
  ::ut::failed(printf("test %s: FAILED (" fmt ")\n", ::ut::current_test __VA_OPT__(, ) __VA_ARGS__))

#define CHECK(cond, fmt, ...)                               \
  do {                                                      \
    if (!(cond)) TEST_FAIL(fmt __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

namespace ut {

// ---- Processes (helpers.cc) -----------------------------------------------------------------

// Runs fn in a new child, which exits 0 when fn returns. Returns the child's pid.
template <typename F>
int spawn(F fn) {
  int pid = fork();
  CHECK(pid >= 0, "fork returned %d", pid);
  if (pid == 0) {
    fn();
    exit(0);
  }
  return pid;
}

// Waits for the child `pid` and returns its exit status. The caller must have no other
// child that could end first; one that does is a mistake in the test.
int reap(int pid);

// Waits for the child `pid`, which must exit 0. A child that failed with TEST_FAIL has
// already printed why, so its status is passed on silently.
void expect_ok(int pid, const char *what);

// Waits for all n children in pids, in whatever order they end; each must exit 0.
void expect_all_ok(const int *pids, int n, const char *what);

// Runs fn in a child that the kernel must kill (exit status -1).
template <typename F>
void expect_killed(const char *what, F fn) {
  int pid = spawn([&] {
    fn();
    exit(SURVIVED_STATUS);
  });
  int status = reap(pid);
  CHECK(status == -1, "%s: child exit status %d, expected -1 (killed)", what, status);
}

// Reaps every remaining child. Returns how many there were.
int reap_all();

// Single memory accesses, written in assembly: in C++ an access through a bad pointer is
// undefined behaviour, which the compiler may turn into something other than the access.
void store_byte(unsigned long addr, char value = 0);
char load_byte(unsigned long addr);

// ---- Memory (helpers.cc) --------------------------------------------------------------------

unsigned long page_round_up(unsigned long a);
unsigned long page_round_down(unsigned long a);

unsigned long brk();
bool sbrk_failed(char *r);

// The page holding the caller's frame is the stack page; the one under it is the guard.
unsigned long stack_page();
unsigned long guard_page();

// Grows the heap so that it ends on a page boundary with at least one whole page of it
// below that boundary, and returns the boundary: the first unmapped byte.
unsigned long heap_end_aligned();

// ---- Files (helpers.cc) ---------------------------------------------------------------------

void write_exact(int fd, const void *buf, int n, const char *what);
void read_exact(int fd, void *buf, int n, const char *what);

// Creates (or truncates) path with n bytes of data.
void make_file(const char *path, const void *data, int n);

void must_unlink(const char *path);

// "prefix" followed by the number i, into out (at least 32 bytes).
char *numbered(char *out, const char *prefix, int i);

// An order-dependent checksum (FNV-1a), to compare data sent with data received.
unsigned fnv(unsigned h, const void *data, int n);
constexpr unsigned FNV_START = 2166136261u;

// ---- The tests, one family a file -----------------------------------------------------------

// proc.cc: processes
void test_exitwait();
void test_forkfull();
void test_forkstorm();
void test_reparent();
void test_orphanstorm();
void test_killrunning();
void test_killsleeping();
void test_killwaiting();
void test_killpipe();
void test_killstorm();
void test_killself();
void test_killbad();
void test_pids();
void test_forkcopy();

// mem.cc: memory
void test_sbrkbasic();
void test_sbrkabove();
void test_sbrkoom();
void test_oompaths();
void test_sbrkcycle();
void test_stackguard();
void test_textwrite();

// badptr.cc: bad pointers given to system calls
void test_badread();
void test_badwrite();
void test_badexec();
void test_badpipe();
void test_badopen();
void test_badfstat();
void test_badwait();

// exec.cc: exec
void test_execargs();
void test_exechuge();
void test_execbadelf();

// pipe.cc: pipes
void test_pipebig();
void test_pipewriters();
void test_pipebroken();
void test_pipeends();
void test_pipemany();

// fs.cc: the file system
void test_fsmany();
void test_fsoffsets();
void test_fslinks();
void test_fsdirs();
void test_fsrmcwd();
void test_fsrootdotdot();
void test_fslongname();
void test_fsmaxpath();

// fslimits.cc: the file system's limits
void test_maxfile();
void test_bigdir();
void test_noinodes();
void test_noblocks();
void test_nofds();
void test_ninode();
void test_nfile();
void test_fsconcurrent();

}  // namespace ut
