// usertests: the helpers every family of tests shares (declared, with what they promise,
// in usertests.h).
#include "usertests.h"

namespace ut {

const char *current_test = "?";

[[noreturn]] void failed(int) { exit(FAIL_STATUS); }

char scratch[16 * 1024];
char scratch2[16 * 1024];

// ---- Processes ------------------------------------------------------------------------------

// Waits for the child `pid` and returns its exit status. The caller must have no other
// child that could end first; one that does is a mistake in the test.
int reap(int pid) {
  int status = 0;
  int got = wait(&status);
  CHECK(got == pid, "wait returned %d, expected child %d", got, pid);
  return status;
}

// Waits for the child `pid`, which must exit 0. A child that failed with TEST_FAIL has
// already printed why, so its status is passed on silently.
void expect_ok(int pid, const char *what) {
  int status = reap(pid);
  if (status == FAIL_STATUS) exit(FAIL_STATUS);
  CHECK(status == 0, "%s: exit status %d", what, status);
}

// Waits for all n children in pids, in whatever order they end; each must exit 0.
void expect_all_ok(const int *pids, int n, const char *what) {
  for (int left = n; left > 0; left--) {
    int status = 0;
    int got = wait(&status);
    bool ours = false;
    for (int i = 0; i < n; i++) ours = ours || pids[i] == got;
    CHECK(ours, "wait returned %d, not one of the %s children", got, what);
    if (status == FAIL_STATUS) exit(FAIL_STATUS);
    CHECK(status == 0, "%s %d: exit status %d", what, got, status);
  }
}

// Reaps every remaining child. Returns how many there were.
int reap_all() {
  int n = 0;
  while (wait(nullptr) >= 0) n++;
  return n;
}

// Single memory accesses, written in assembly: in C++ an access through a bad pointer is
// undefined behaviour, which the compiler may turn into something other than the access.
void store_byte(unsigned long addr, char value) {
  asm volatile("sb %0, 0(%1)" : : "r"(value), "r"(addr) : "memory");
}
char load_byte(unsigned long addr) {
  char value;
  asm volatile("lb %0, 0(%1)" : "=r"(value) : "r"(addr) : "memory");
  return value;
}

// ---- Memory ---------------------------------------------------------------------------------

unsigned long page_round_up(unsigned long a) { return (a + PAGE - 1) & ~(PAGE - 1); }
unsigned long page_round_down(unsigned long a) { return a & ~(PAGE - 1); }

unsigned long brk() { return reinterpret_cast<unsigned long>(sbrk(0)); }
bool sbrk_failed(char *r) { return r == reinterpret_cast<char *>(-1); }

// The page holding this function's frame is the stack page; the one under it is the guard.
[[gnu::noinline]] unsigned long stack_page() {
  volatile char here = 0;
  return page_round_down(reinterpret_cast<unsigned long>(&here));
}
unsigned long guard_page() { return stack_page() - PAGE; }

// Grows the heap so that it ends on a page boundary with at least one whole page of it
// below that boundary, and returns the boundary: the first unmapped byte.
unsigned long heap_end_aligned() {
  unsigned long b = brk();
  unsigned long want = page_round_up(b) + PAGE;
  CHECK(!sbrk_failed(sbrk(static_cast<int>(want - b))), "sbrk(%lu) failed", want - b);
  return want;
}

// ---- Files ----------------------------------------------------------------------------------

void write_exact(int fd, const void *buf, int n, const char *what) {
  int w = write(fd, buf, n);
  CHECK(w == n, "%s: write of %d bytes returned %d", what, n, w);
}

void read_exact(int fd, void *buf, int n, const char *what) {
  int r = read(fd, buf, n);
  CHECK(r == n, "%s: read of %d bytes returned %d", what, n, r);
}

// Creates (or truncates) path with n bytes of data.
void make_file(const char *path, const void *data, int n) {
  int fd = open(path, O_CREATE | O_TRUNC | O_RDWR);
  CHECK(fd >= 0, "cannot create %s", path);
  if (n > 0) write_exact(fd, data, n, path);
  close(fd);
}

void must_unlink(const char *path) { CHECK(unlink(path) == 0, "unlink %s failed", path); }

// "prefix" followed by the number i, into out (at least 32 bytes).
char *numbered(char *out, const char *prefix, int i) {
  snprintf(out, 32, "%s%d", prefix, i);
  return out;
}

// An order-dependent checksum (FNV-1a), to compare data sent with data received.
unsigned fnv(unsigned h, const void *data, int n) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (int i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

}  // namespace ut
