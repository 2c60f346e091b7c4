// The machinery shared by every usertests test: failing, child processes, files, memory.
//
// usertests is one program built from usertests.cc and the usertests_*.h files, each of
// which holds one family of tests (processes, memory, exec, pipes, bad pointers, the file
// system and its limits). A test is a plain function `void name()`. The runner calls it in
// a child process of its own, so a test that crashes, hangs or corrupts its memory takes
// nothing else with it: the runner only looks at how the child ended.
//
//   exit status 0             the test passed
//   exit status kFailStatus   the test failed and has already said why (TEST_FAIL)
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

constexpr int kFailStatus = 97;      // a test that reported its own failure
constexpr int kSurvivedStatus = 55;  // a child that should have been killed but was not
constexpr unsigned long kPage = 4096;
constexpr unsigned long kMaxVa = 1UL << 38;
constexpr unsigned long kKernelBase = 0x80000000UL;
constexpr int kTicksPerSecond = 10;

// The name of the test running in this process (set by the runner before it forks).
inline const char *current_test = "?";

[[noreturn]] inline void failed(int) { exit(kFailStatus); }

// Big buffers for tests, which must not put them on the one-page stack. Each test runs in
// a process of its own, so tests cannot disturb each other's use of them.
inline char scratch[16 * 1024];
inline char scratch2[16 * 1024];

}  // namespace ut

#define TEST_FAIL(fmt, ...) \
  ::ut::failed(printf("test %s: FAILED (" fmt ")\n", ::ut::current_test __VA_OPT__(, ) __VA_ARGS__))

#define CHECK(cond, fmt, ...)                               \
  do {                                                      \
    if (!(cond)) TEST_FAIL(fmt __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

namespace ut {

// ---- Processes ------------------------------------------------------------------------------

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
inline int reap(int pid) {
  int status = 0;
  int got = wait(&status);
  CHECK(got == pid, "wait returned %d, expected child %d", got, pid);
  return status;
}

// Waits for the child `pid`, which must exit 0. A child that failed with TEST_FAIL has
// already printed why, so its status is passed on silently.
inline void expect_ok(int pid, const char *what) {
  int status = reap(pid);
  if (status == kFailStatus) exit(kFailStatus);
  CHECK(status == 0, "%s: exit status %d", what, status);
}

// Waits for all n children in pids, in whatever order they end; each must exit 0.
inline void expect_all_ok(const int *pids, int n, const char *what) {
  for (int left = n; left > 0; left--) {
    int status = 0;
    int got = wait(&status);
    bool ours = false;
    for (int i = 0; i < n; i++) ours = ours || pids[i] == got;
    CHECK(ours, "wait returned %d, not one of the %s children", got, what);
    if (status == kFailStatus) exit(kFailStatus);
    CHECK(status == 0, "%s %d: exit status %d", what, got, status);
  }
}

// Runs fn in a child that the kernel must kill (exit status -1).
template <typename F>
void expect_killed(const char *what, F fn) {
  int pid = spawn([&] {
    fn();
    exit(kSurvivedStatus);
  });
  int status = reap(pid);
  CHECK(status == -1, "%s: child exit status %d, expected -1 (killed)", what, status);
}

// Reaps every remaining child. Returns how many there were.
inline int reap_all() {
  int n = 0;
  while (wait(nullptr) >= 0) n++;
  return n;
}

// Single memory accesses, written in assembly: in C++ an access through a bad pointer is
// undefined behaviour, which the compiler may turn into something other than the access.
inline void store_byte(unsigned long addr, char value = 0) {
  asm volatile("sb %0, 0(%1)" : : "r"(value), "r"(addr) : "memory");
}
inline char load_byte(unsigned long addr) {
  char value;
  asm volatile("lb %0, 0(%1)" : "=r"(value) : "r"(addr) : "memory");
  return value;
}

// ---- Memory ---------------------------------------------------------------------------------

inline unsigned long page_round_up(unsigned long a) { return (a + kPage - 1) & ~(kPage - 1); }
inline unsigned long page_round_down(unsigned long a) { return a & ~(kPage - 1); }

inline unsigned long brk() { return reinterpret_cast<unsigned long>(sbrk(0)); }
inline bool sbrk_failed(char *r) { return r == reinterpret_cast<char *>(-1); }

// The page holding this function's frame is the stack page; the one under it is the guard.
[[gnu::noinline]] inline unsigned long stack_page() {
  volatile char here = 0;
  return page_round_down(reinterpret_cast<unsigned long>(&here));
}
inline unsigned long guard_page() { return stack_page() - kPage; }

// The kernel's count of free physical pages, from /proc/meminfo ("free pages: N"), or -1.
inline long free_pages() {
  int fd = open("/proc/meminfo", O_RDONLY);
  if (fd < 0) return -1;
  char buf[96];
  int n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char *key = "free pages: ";
  for (int i = 0; i + 12 <= n; i++) {
    if (strncmp(buf + i, key, 12) == 0) return atoi(buf + i + 12);
  }
  return -1;
}

// Grows the heap so that it ends on a page boundary with at least one whole page of it
// below that boundary, and returns the boundary: the first unmapped byte.
inline unsigned long heap_end_aligned() {
  unsigned long b = brk();
  unsigned long want = page_round_up(b) + kPage;
  CHECK(!sbrk_failed(sbrk(static_cast<int>(want - b))), "sbrk(%lu) failed", want - b);
  return want;
}

// ---- Files ----------------------------------------------------------------------------------

inline void write_exact(int fd, const void *buf, int n, const char *what) {
  int w = write(fd, buf, n);
  CHECK(w == n, "%s: write of %d bytes returned %d", what, n, w);
}

inline void read_exact(int fd, void *buf, int n, const char *what) {
  int r = read(fd, buf, n);
  CHECK(r == n, "%s: read of %d bytes returned %d", what, n, r);
}

// Creates (or truncates) path with n bytes of data.
inline void make_file(const char *path, const void *data, int n) {
  int fd = open(path, O_CREATE | O_TRUNC | O_RDWR);
  CHECK(fd >= 0, "cannot create %s", path);
  if (n > 0) write_exact(fd, data, n, path);
  close(fd);
}

inline void must_unlink(const char *path) { CHECK(unlink(path) == 0, "unlink %s failed", path); }

// Writes the decimal form of v at the end of the string s (which must have room).
inline void append_number(char *s, int v) {
  char digits[12];
  int n = 0;
  unsigned u = v < 0 ? 0u - static_cast<unsigned>(v) : static_cast<unsigned>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  s += strlen(s);
  if (v < 0) *s++ = '-';
  while (n > 0) *s++ = digits[--n];
  *s = '\0';
}

// "prefix" followed by the number i, into out (at least 32 bytes).
inline char *numbered(char *out, const char *prefix, int i) {
  strcpy(out, prefix);
  append_number(out, i);
  return out;
}

// ---- Pseudo-random numbers ------------------------------------------------------------------

// xorshift64*: small, fast and good enough to make test data that a mistake cannot fake.
struct Rng {
  unsigned long state;
  explicit Rng(unsigned long seed) : state(seed ? seed : 0x9e3779b97f4a7c15UL) {}
  unsigned long next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dUL;
  }
  // Uniform enough in [0, n).
  unsigned below(unsigned n) { return static_cast<unsigned>((next() >> 33) % n); }
};

// An order-dependent checksum (FNV-1a), to compare data sent with data received.
inline unsigned fnv(unsigned h, const void *data, int n) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (int i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}
constexpr unsigned kFnvStart = 2166136261u;

}  // namespace ut
