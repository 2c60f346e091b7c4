// usertests: a process's memory. sbrk, the break, the stack's guard page, read-only text.
//
// A process owns the addresses [0, sz): its program's segments, a guard page, one stack
// page, then the heap, whose top (the "break") is sz itself. sbrk(n) moves the break by n
// bytes and returns where it was. Memory above the break is not the process's: touching
// it must kill the process, and so must touching the guard page (which is how a stack
// overflow is caught instead of silently overwriting the program's data) or storing into
// the program's text.
//
// When the kernel runs out of physical pages, sbrk must fail with -1 and leave everything
// as it was: the break, the process's memory, and the kernel's count of free pages once
// the process is gone. Page counts are read from /proc/meminfo, and always compared
// across a child's whole life: a process that shrinks its heap keeps the page-table pages
// that mapped it until it exits, so its own count is not expected to come back.
#include "usertests.h"

namespace ut {

// Growing and shrinking the break by odd and even amounts.
void test_sbrkbasic() {
  unsigned long start = brk();
  char *a = sbrk(1);
  CHECK(reinterpret_cast<unsigned long>(a) == start, "sbrk(1) returned %p, break was %lx", a,
        start);
  CHECK(brk() == start + 1, "break did not move by 1");
  *a = 'x';
  char *b = sbrk(4095);
  CHECK(b == a + 1, "sbrk(4095) returned %p, expected %p", b, a + 1);
  char *c = sbrk(10 * PAGE);
  CHECK(c == a + PAGE, "sbrk(10 pages) returned %p", c);
  // New memory reads as zero and holds what is written.
  for (unsigned long i = 0; i < 10 * PAGE; i++) {
    CHECK(c[i] == 0, "new heap memory is not zero at offset %lu", i);
    c[i] = static_cast<char>(i % 251);
  }
  for (unsigned long i = 0; i < 10 * PAGE; i++) {
    CHECK(c[i] == static_cast<char>(i % 251), "heap memory changed at offset %lu", i);
  }
  CHECK(*a == 'x', "the first heap byte changed");
  // Shrinking returns the old break too.
  char *d = sbrk(-static_cast<int>(5 * PAGE));
  CHECK(d == c + 10 * PAGE, "sbrk(-5 pages) returned %p", d);
  CHECK(brk() == reinterpret_cast<unsigned long>(c) + 5 * PAGE, "break after shrinking");
  CHECK(c[5 * PAGE - 1] == static_cast<char>((5 * PAGE - 1) % 251),
        "memory below the new break changed");
  // Growing again gives fresh zeroed pages, not the old contents.
  char *e = sbrk(2 * PAGE);
  CHECK(e == c + 5 * PAGE, "regrowing returned %p", e);
  for (unsigned long i = 0; i < 2 * PAGE; i++) {
    CHECK(e[i] == 0, "regrown heap is not zero at offset %lu", i);
  }
  // Shrinking below address 0 is refused and moves nothing.
  unsigned long before = brk();
  CHECK(sbrk_failed(sbrk(-static_cast<int>(before) - 1)), "sbrk(-(break+1)) did not fail");
  CHECK(brk() == before, "a refused sbrk moved the break");
}

// The byte at the break and above it, and pages given back, are not ours.
void test_sbrkabove() {
  unsigned long end = heap_end_aligned();
  expect_killed("load at the break", [end] { load_byte(end); });
  expect_killed("store at the break", [end] { store_byte(end); });
  expect_killed("store 100 pages above the break", [end] { store_byte(end + 100 * PAGE); });
  // A page given back with a negative sbrk is unmapped at once.
  expect_killed("store into a page given back", [] {
    char *top = sbrk(2 * PAGE);
    top[PAGE] = 1;
    sbrk(-static_cast<int>(PAGE));
    store_byte(reinterpret_cast<unsigned long>(top) + PAGE);
  });
  // Below the break all is well, even in the last byte.
  store_byte(end - 1, 'z');
  CHECK(load_byte(end - 1) == 'z', "the last byte below the break did not keep its value");
}

// Growing until physical memory runs out: sbrk fails cleanly and everything comes back.
void test_sbrkoom() {
  long before = free_pages();
  CHECK(before > 0, "cannot read /proc/meminfo");
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe failed");
  int pid = spawn([&] {
    constexpr int STEP = 1 << 20;
    unsigned long start = brk();
    long grown = 0;
    for (;;) {
      unsigned long old = brk();
      char *p = sbrk(STEP);
      if (sbrk_failed(p)) {
        CHECK(brk() == old, "a failed sbrk moved the break from %lx to %lx", old, brk());
        break;
      }
      // Touch every page, so that a kernel that handed out pages twice would show it.
      for (long i = 0; i < STEP; i += PAGE) p[i] = static_cast<char>(i / PAGE);
      grown += STEP;
    }
    // All of it is still there.
    char *heap = reinterpret_cast<char *>(start);
    for (long i = 0; i < grown; i += STEP) {
      CHECK(heap[i] == 0, "heap page at %ld lost its value", i);
    }
    // A grab far beyond memory fails in one go too, and leaves the break alone.
    unsigned long old = brk();
    CHECK(sbrk_failed(sbrk(0x7fffffff)), "sbrk(2 GB) with no memory left did not fail");
    CHECK(brk() == old, "a failed sbrk(2 GB) moved the break");
    long mb = grown >> 20;
    write(fds[1], &mb, sizeof(mb));
  });
  long mb = 0;
  read_exact(fds[0], &mb, sizeof(mb), "report");
  expect_ok(pid, "memory eater");
  close(fds[0]);
  close(fds[1]);
  // The eater's own page tables and kernel stack, and every other process, hold some of
  // what was free; most of it must have been handed out, whatever the machine's size.
  long free_mb = before * static_cast<long>(PAGE) >> 20;
  CHECK(mb >= free_mb * 3 / 4, "only %ld MB could be allocated of the %ld MB free", mb, free_mb);
  // A single huge request in a process with memory to spare fails without allocating.
  pid = spawn([] {
    unsigned long old = brk();
    CHECK(sbrk_failed(sbrk(0x7fffffff)), "sbrk(2 GB) did not fail");
    CHECK(brk() == old, "a failed sbrk(2 GB) moved the break");
    CHECK(!sbrk_failed(sbrk(PAGE)), "sbrk(one page) failed after a failed big one");
  });
  expect_ok(pid, "big sbrk");
  long after = free_pages();
  CHECK(after == before, "free pages: %ld before, %ld after the memory eaters", before, after);
}

namespace {

constexpr int MAX_SPARE_PIPES = 4;  // more than the page-table pages one sbrk can need

// Grows this process's heap until sbrk fails, with at most one page left (see test_oompaths).
// Returns the bytes grown.
long eat_all_memory() {
  long grown = 0;
  for (int step = 1 << 20; step >= static_cast<int>(PAGE); step /= 16) {
    while (!sbrk_failed(sbrk(step))) grown += step;
  }
  return grown;
}

}  // namespace

// With no free page in the kernel, every call that needs one fails cleanly, and works
// again once memory is given back.
void test_oompaths() {
  long before = free_pages();
  CHECK(before > 0, "cannot read /proc/meminfo");
  int pid = spawn([before] {
    long grown = eat_all_memory();
    long free_bytes = before * static_cast<long>(PAGE);
    CHECK(grown > free_bytes * 3 / 4, "only %ld bytes could be allocated of the %ld free", grown,
          free_bytes);
    // sbrk of one page can fail with a page still free, when it would also need a new
    // page-table page; pipes, one page each, take what is left. (/proc/meminfo cannot tell:
    // reading it takes a page too.) The pipe that fails is the one made with no free
    // memory, and it must fail cleanly: no descriptor left behind, and again if retried.
    int spare[2 * MAX_SPARE_PIPES];
    int nspare = 0;
    while (nspare < 2 * MAX_SPARE_PIPES && pipe(spare + nspare) == 0) nspare += 2;
    CHECK(nspare < 2 * MAX_SPARE_PIPES, "%d pipes succeeded after sbrk ran out of memory",
          MAX_SPARE_PIPES);
    int fds[2];
    CHECK(pipe(fds) == -1, "pipe with no free memory succeeded");
    int lowest = 3 + nspare;  // descriptors 0, 1, 2 and the spare pipes' are taken
    CHECK(dup(0) == lowest, "a failed pipe left a descriptor behind");
    close(lowest);
    int child = fork();
    if (child == 0) exit(0);
    CHECK(child == -1, "fork with no free memory succeeded");
    char *argv[] = {const_cast<char *>("usertests"), const_cast<char *>("--probe"), nullptr};
    CHECK(exec("/usertests", argv) == -1, "exec with no free memory succeeded");
    CHECK(free_pages() <= 0, "/proc/meminfo says pages are free after memory ran out");
    // Give back a little: enough for each of these, one at a time.
    sbrk(-static_cast<int>(64 * PAGE));
    CHECK(pipe(fds) == 0, "pipe failed after memory was given back");
    close(fds[0]);
    close(fds[1]);
    child = fork();
    if (child == 0) exit(0);
    // The child would need a copy of everything this process holds: it cannot fit.
    CHECK(child == -1, "fork of a process bigger than free memory succeeded");
    sbrk(-static_cast<int>(grown - 64 * PAGE));
    child = fork();
    CHECK(child >= 0, "fork failed after all memory was given back");
    if (child == 0) exit(9);
    int status = 0;
    CHECK(wait(&status) == child && status == 9, "the child did not exit properly");
  });
  expect_ok(pid, "memory eater");
  // The runner compares the free-page count before and after this test.
}

// Memory given and taken back many times is not lost.
void test_sbrkcycle() {
  long before = free_pages();
  int pid = spawn([] {
    for (int i = 0; i < 40; i++) {
      char *p = sbrk(1 << 20);
      CHECK(!sbrk_failed(p), "sbrk(1 MB) failed in round %d", i);
      p[0] = p[(1 << 20) - 1] = 1;
      CHECK(sbrk(-(1 << 20)) == p + (1 << 20), "shrinking did not return the old break");
    }
  });
  expect_ok(pid, "sbrk cycler");
  long after = free_pages();
  CHECK(after == before, "free pages: %ld before, %ld after 40 grow-shrink rounds", before, after);
}

namespace {

// The guard page under the stack: loads, stores and a runaway recursion all kill.
[[gnu::noinline]] int recurse(int depth) {
  volatile char pad[256];
  pad[0] = static_cast<char>(depth);
  if (depth > 1000000) return 0;  // never reached: the stack is one page
  return recurse(depth + 1) + pad[0];
}

}  // namespace

void test_stackguard() {
  unsigned long guard = guard_page();
  expect_killed("store into the guard page", [guard] { store_byte(guard + PAGE - 8); });
  expect_killed("load from the guard page", [guard] { load_byte(guard); });
  expect_killed("unbounded recursion", [] { recurse(0); });
  // The whole stack page itself is usable.
  unsigned long stack = stack_page();
  store_byte(stack, 1);
  CHECK(load_byte(stack) == 1, "the bottom byte of the stack page did not keep its value");
}

namespace {

// The program's text is read-only and the kernel's memory is out of reach.
int main_marker() { return 42; }

}  // namespace

void test_textwrite() {
  unsigned long text = reinterpret_cast<unsigned long>(&main_marker);
  char first = load_byte(text);  // reading text is allowed
  (void)first;
  expect_killed("store into text", [text] { store_byte(text, 0x13); });
  expect_killed("store at address 0", [] { store_byte(0); });
  expect_killed("load from the kernel", [] { load_byte(KERNEL_BASE); });
  expect_killed("store into the kernel", [] { store_byte(KERNEL_BASE + 0x200000); });
  expect_killed("load at MAXVA", [] { load_byte(MAX_VA); });
  expect_killed("load from all ones", [] { load_byte(~0UL); });
  CHECK(main_marker() == 42, "text changed");
}

}  // namespace ut
