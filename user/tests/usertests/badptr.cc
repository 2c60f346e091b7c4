// usertests: system calls given pointers the process may not use.
//
// Every pointer a system call receives comes from user space and can be anything. The
// kernel must check each byte it touches against the calling process's page table, and a
// call given a bad pointer must return -1: never panic, never read or write kernel memory
// on the process's behalf, never kill the caller. The bad addresses tried, for each call
// that takes a pointer (read, write, exec, pipe, open, fstat, wait):
//
//   kernel    0x80000000, where the kernel (and OpenSBI below it) lives
//   allones   0xffffffffffffffff, the very top of the address space
//   maxva     2^38, the first address Sv39 cannot map for user space
//   unmapped  16 pages above the break: inside the user range, but not allocated
//   guard     the guard page under the stack: mapped, but without user access
//   straddle  an object whose first bytes are the last ones of the heap and whose rest
//             lies beyond the break (for strings: no NUL before the unmapped page)
//
// After each call the test carries on, which is itself the check that it was not killed.
#include "usertests.h"

namespace ut {

namespace {

enum class Bad { Kernel, AllOnes, MaxVa, Unmapped, Guard, Straddle, Count };
constexpr int BAD_KINDS = static_cast<int>(Bad::Count);
constexpr const char *BAD_NAMES[BAD_KINDS] = {"kernel",   "allones", "maxva",
                                              "unmapped", "guard",   "straddle"};

// The first unmapped byte above the heap, once set up by bad_setup().
unsigned long bad_heap_end = 0;

void bad_setup() {
  if (bad_heap_end == 0) bad_heap_end = heap_end_aligned();
}

// A bad address of the given kind. With Straddle, `mapped` bytes of the object are in
// mapped memory (filled with 'a', so a string there runs into the unmapped page).
unsigned long bad_addr(int kind, int mapped) {
  bad_setup();
  switch (static_cast<Bad>(kind)) {
    case Bad::Kernel: return KERNEL_BASE;
    case Bad::AllOnes: return ~0UL;
    case Bad::MaxVa: return MAX_VA;
    case Bad::Unmapped: return bad_heap_end + 16 * PAGE;
    case Bad::Guard: return guard_page();
    default: {
      char *p = reinterpret_cast<char *>(bad_heap_end - mapped);
      memset(p, 'a', mapped);
      return bad_heap_end - mapped;
    }
  }
}

template <typename T>
T *bad_ptr(int kind, int mapped) {
  return reinterpret_cast<T *>(bad_addr(kind, mapped));
}

constexpr const char *BAD_FILE = "ub_file";

int open_bad_file(int flags) {
  int fd = open(BAD_FILE, flags);
  CHECK(fd >= 0, "cannot open %s", BAD_FILE);
  return fd;
}

void make_bad_file() {
  memset(scratch, 'f', 2048);
  make_file(BAD_FILE, scratch, 2048);
}

// No descriptor was left behind: the lowest free one is still 3.
// The program's own code: readable, so fine as a source, but never a destination.
unsigned long text_addr() { return reinterpret_cast<unsigned long>(&bad_setup) & ~7UL; }

void check_no_fd_leak(const char *after) {
  int fd = dup(0);
  close(fd);
  CHECK(fd == 3, "after %s the lowest free descriptor is %d, not 3", after, fd);
}

}  // namespace

void test_badread() {
  make_bad_file();
  for (int k = 0; k < BAD_KINDS; k++) {
    int fd = open_bad_file(O_RDONLY);
    int r = read(fd, bad_ptr<char>(k, 16), 64);
    CHECK(r == -1, "read from a file into %s: %d", BAD_NAMES[k], r);
    close(fd);
    if (static_cast<Bad>(k) == Bad::Straddle) continue;  // a pipe may copy part of it
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe failed");
    write_exact(fds[1], "12345678", 8, "pipe");
    r = read(fds[0], bad_ptr<char>(k, 16), 8);
    CHECK(r == -1, "read from a pipe into %s: %d", BAD_NAMES[k], r);
    close(fds[0]);
    close(fds[1]);
  }
  // Text is readable but must not be written, not even by the kernel on our behalf.
  int fd = open_bad_file(O_RDONLY);
  unsigned long text = text_addr();
  char before = load_byte(text);
  CHECK(read(fd, reinterpret_cast<char *>(text), 16) == -1, "read into text did not fail");
  CHECK(load_byte(text) == before, "a read changed the program's text");
  close(fd);
  // A good buffer with a bad length.
  fd = open_bad_file(O_RDONLY);
  CHECK(read(fd, scratch, -1) == -1, "read of -1 bytes did not fail");
  CHECK(read(-1, scratch, 1) == -1, "read from fd -1 did not fail");
  CHECK(read(NOFILE, scratch, 1) == -1, "read from fd NOFILE did not fail");
  CHECK(read(1000000, scratch, 1) == -1, "read from fd 1000000 did not fail");
  close(fd);
  must_unlink(BAD_FILE);
  check_no_fd_leak("bad reads");
}

void test_badwrite() {
  make_bad_file();
  for (int k = 0; k < BAD_KINDS; k++) {
    int fd = open_bad_file(O_RDWR);
    int r = write(fd, bad_ptr<char>(k, 16), 64);
    CHECK(r == -1, "write to a file from %s: %d", BAD_NAMES[k], r);
    close(fd);
    if (static_cast<Bad>(k) == Bad::Straddle) continue;
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe failed");
    r = write(fds[1], bad_ptr<char>(k, 16), 8);
    CHECK(r == -1, "write to a pipe from %s: %d", BAD_NAMES[k], r);
    close(fds[0]);
    close(fds[1]);
    // The console (standard output) takes the same care.
    r = write(1, bad_ptr<char>(k, 16), 8);
    CHECK(r == -1, "write to the console from %s: %d", BAD_NAMES[k], r);
  }
  // Whatever did not fail must not have changed the file: it still holds only 'f'.
  int fd = open_bad_file(O_RDONLY);
  read_exact(fd, scratch2, 2048, BAD_FILE);
  for (int i = 0; i < 2048; i++) {
    CHECK(scratch2[i] == 'f' || scratch2[i] == 'a', "a failed write left byte %d = %d", i,
          scratch2[i]);
  }
  CHECK(write(fd, "x", 1) == -1, "write to a read-only descriptor did not fail");
  CHECK(write(fd, scratch, -5) == -1, "write of -5 bytes did not fail");
  CHECK(write(-1, scratch, 1) == -1, "write to fd -1 did not fail");
  CHECK(write(NOFILE + 3, scratch, 1) == -1, "write to fd NOFILE+3 did not fail");
  close(fd);
  must_unlink(BAD_FILE);
  check_no_fd_leak("bad writes");
}

// exec with a bad path, a bad argv array, and a bad string inside a good array.
void test_badexec() {
  constexpr int EXEC_RETURNED_HERE = 66;
  auto try_exec = [](const char *path, char **argv) {
    int pid = fork();
    CHECK(pid >= 0, "fork failed");
    if (pid == 0) {
      int r = exec(path, argv);
      exit(r == -1 ? EXEC_RETURNED_HERE : EXEC_RETURNED_HERE + 1);
    }
    return reap(pid);
  };
  for (int k = 0; k < BAD_KINDS; k++) {
    char *argv[] = {const_cast<char *>("echo"), const_cast<char *>("x"), nullptr};
    int status = try_exec(bad_ptr<char>(k, 16), argv);
    CHECK(status == EXEC_RETURNED_HERE, "exec of a path at %s: child status %d", BAD_NAMES[k],
          status);

    char **bad_argv = bad_ptr<char *>(k, 8);
    if (static_cast<Bad>(k) == Bad::Straddle) bad_argv[0] = const_cast<char *>("echo");
    status = try_exec("/echo", bad_argv);
    CHECK(status == EXEC_RETURNED_HERE, "exec with argv at %s: child status %d", BAD_NAMES[k],
          status);

    char *argv2[] = {const_cast<char *>("echo"), bad_ptr<char>(k, 16), nullptr};
    status = try_exec("/echo", argv2);
    CHECK(status == EXEC_RETURNED_HERE, "exec with argv[1] at %s: child status %d", BAD_NAMES[k],
          status);
  }
}

void test_badpipe() {
  CHECK(pipe(reinterpret_cast<int *>(text_addr())) == -1, "pipe into text did not fail");
  check_no_fd_leak("a pipe into text");
  for (int k = 0; k < BAD_KINDS; k++) {
    int r = pipe(bad_ptr<int>(k, 4));
    CHECK(r == -1, "pipe into %s: %d", BAD_NAMES[k], r);
    check_no_fd_leak("a failed pipe");
  }
  // Room for one descriptor only: pipe needs two, so it must fail and give the one back.
  int fds[NOFILE];
  int n = 0;
  while (n < NOFILE) {
    int fd = dup(0);
    if (fd < 0) break;
    fds[n++] = fd;
  }
  close(fds[--n]);
  int p[2];
  CHECK(pipe(p) == -1, "pipe with one free descriptor did not fail");
  int fd = dup(0);
  CHECK(fd >= 0, "the one free descriptor was lost by a failed pipe");
  close(fd);
  while (n > 0) close(fds[--n]);
  check_no_fd_leak("pipe with full descriptor table");
}

void test_badopen() {
  for (int k = 0; k < BAD_KINDS; k++) {
    const char *name = BAD_NAMES[k];
    char *path = bad_ptr<char>(k, 16);
    CHECK(open(path, O_RDONLY) == -1, "open of a path at %s did not fail", name);
    CHECK(open(bad_ptr<char>(k, 16), O_CREATE | O_RDWR) == -1,
          "open(O_CREATE) of a path at %s did not fail", name);
    CHECK(mkdir(bad_ptr<char>(k, 16)) == -1, "mkdir of a path at %s did not fail", name);
    CHECK(unlink(bad_ptr<char>(k, 16)) == -1, "unlink of a path at %s did not fail", name);
    CHECK(chdir(bad_ptr<char>(k, 16)) == -1, "chdir to a path at %s did not fail", name);
    CHECK(mknod(bad_ptr<char>(k, 16), 1, 0) == -1, "mknod at %s did not fail", name);
    CHECK(link("/README", bad_ptr<char>(k, 16)) == -1, "link to %s did not fail", name);
    CHECK(link(bad_ptr<char>(k, 16), "ub_link") == -1, "link from %s did not fail", name);
  }
  check_no_fd_leak("bad opens");
  // The straddling name was all 'a's; nothing of that name may have been created.
  struct stat st;
  CHECK(stat("aaaaaaaaaaaaaa", &st) == -1, "a file named by a straddling path was created");
  CHECK(stat("ub_link", &st) == -1, "a link from a bad path was created");
}

void test_badfstat() {
  int fd = open("/README", O_RDONLY);
  CHECK(fd >= 0, "cannot open /README");
  for (int k = 0; k < BAD_KINDS; k++) {
    int r = fstat(fd, bad_ptr<struct stat>(k, 8));
    CHECK(r == -1, "fstat into %s: %d", BAD_NAMES[k], r);
  }
  CHECK(fstat(fd, reinterpret_cast<struct stat *>(text_addr())) == -1,
        "fstat into text did not fail");
  struct stat st;
  CHECK(fstat(fd, &st) == 0 && st.type == T_FILE, "fstat into a good buffer failed");
  CHECK(fstat(-1, &st) == -1, "fstat of fd -1 did not fail");
  close(fd);
  CHECK(fstat(fd, &st) == -1, "fstat of a closed fd did not fail");
}

void test_badwait() {
  int pid = spawn([] { exit(7); });
  CHECK(wait(reinterpret_cast<int *>(text_addr())) == -1, "wait into text did not fail");
  CHECK(wait(nullptr) == pid, "after a failed wait the child could not be reaped");
  for (int k = 0; k < BAD_KINDS; k++) {
    int pid = spawn([] { exit(7); });
    int r = wait(bad_ptr<int>(k, 2));
    CHECK(r == -1, "wait with the status at %s returned %d", BAD_NAMES[k], r);
    // The child was not lost: it can still be waited for, with its status intact.
    int status = 0;
    int got = wait(&status);
    CHECK(got == pid, "after a failed wait, wait returned %d, not the child %d", got, pid);
    CHECK(status == 7, "after a failed wait the child's status is %d", status);
  }
}

}  // namespace ut
