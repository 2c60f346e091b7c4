// tbadarg: checks that system calls refuse bad user pointers with -1.
//
// A system call that takes a pointer must check it before using it: the address may be the
// kernel's (0x80000000), beyond the user address space (2^38, or all ones), in an unmapped
// part of the heap, or a buffer that starts in mapped memory and runs off its end. In every
// case the right answer is -1, not a crash, a kernel panic, or a killed process.
//
// Each case prints "NAME: ret R", where NAME is call/target (for example read/kernel).
// Then comes "tbadarg: done" and a verdict: "tbadarg: all -1" when every call returned -1,
// otherwise one "tbadarg: FAIL NAME" line per case that did not.
//
// Calls that could wrongly succeed in a harmful way (exec replacing this program) are made
// in a child, which reports exec's result through its exit status.
#include "lib/user.h"

namespace {

constexpr unsigned long PAGE_SIZE = 4096;
constexpr const char *TEMP_FILE = "tbadarg.tmp";
constexpr int IO_SIZE = 64;  // bytes asked of read and write

// The end of mapped memory: the first unmapped byte above a heap page this program owns.
unsigned long heap_end;

// The five kinds of bad address.
enum Target { Kernel, AllOnes, MaxVa, Unmapped, Straddle, TARGETS };
constexpr const char *TARGET_NAMES[TARGETS] = {"kernel", "allones", "maxva", "unmapped",
                                               "straddle"};

// Returns the bad address of the given kind. For Straddle, `overlap` bytes of the object
// lie in mapped memory and the rest beyond its end; those bytes are filled with 'a', so a
// string there has no terminating NUL before the unmapped page.
unsigned long target(int kind, int overlap) {
  switch (kind) {
    case Kernel: return 0x80000000UL;
    case AllOnes: return ~0UL;
    case MaxVa: return 1UL << 38;
    case Unmapped: return heap_end + 10 * PAGE_SIZE;
    default: {
      char *p = reinterpret_cast<char *>(heap_end - overlap);
      memset(p, 'a', overlap);
      return heap_end - overlap;
    }
  }
}

template <typename T>
T *ptr(unsigned long addr) {
  return reinterpret_cast<T *>(addr);
}

// ---- Recording results ----------------------------------------------------------------------

struct Failure {
  const char *call;
  int kind;
};
Failure failures[128];
int nfailures = 0;

void report(const char *call, int kind, long ret, int child_status = 0, bool in_child = false) {
  if (in_child) {
    printf("%s/%s: ret %ld (child exit status %d)\n", call, TARGET_NAMES[kind], ret, child_status);
  } else {
    printf("%s/%s: ret %ld\n", call, TARGET_NAMES[kind], ret);
  }
  if (ret != -1 && nfailures < static_cast<int>(sizeof(failures) / sizeof(failures[0])))
    failures[nfailures++] = {call, kind};
}

// ---- Helpers --------------------------------------------------------------------------------

int open_temp(int flags) {
  int fd = open(TEMP_FILE, flags);
  if (fd < 0) {
    fprintf(2, "tbadarg: cannot open %s\n", TEMP_FILE);
    exit(1);
  }
  return fd;
}

// Runs exec in a child. The child's exit status says what exec did: EXEC_FAILED if it
// returned -1 (the expected outcome); anything else means exec ran the program or the
// child was killed.
constexpr int EXEC_FAILED = 77;

void exec_case(const char *call, int kind, const char *path, char **argv) {
  int pid = fork();
  if (pid < 0) {
    fprintf(2, "tbadarg: fork failed\n");
    exit(1);
  }
  if (pid == 0) {
    int r = exec(path, argv);
    exit(r == -1 ? EXEC_FAILED : EXEC_FAILED + 1);
  }
  int status = 0;
  wait(&status);
  report(call, kind, status == EXEC_FAILED ? -1 : 0, status, true);
}

// ---- The cases ------------------------------------------------------------------------------

void test_read_write(int kind) {
  int fd = open_temp(O_RDONLY);
  report("read", kind, read(fd, ptr<void>(target(kind, 16)), IO_SIZE));
  close(fd);

  fd = open_temp(O_RDWR);
  report("write", kind, write(fd, ptr<void>(target(kind, 16)), IO_SIZE));
  close(fd);

  // A pipe copies user memory by its own path. Give the reader something to read, so that a
  // kernel that got the check wrong would not block it forever.
  if (kind == Straddle) return;  // a partial pipe transfer may legitimately succeed
  int fds[2];
  if (pipe(fds) < 0) {
    fprintf(2, "tbadarg: pipe failed\n");
    exit(1);
  }
  write(fds[1], "12345678", 8);
  report("read-pipe", kind, read(fds[0], ptr<void>(target(kind, 16)), 8));
  report("write-pipe", kind, write(fds[1], ptr<void>(target(kind, 16)), 8));
  close(fds[0]);
  close(fds[1]);
}

void test_paths(int kind) {
  report("open", kind, open(ptr<char>(target(kind, 16)), O_RDONLY));
  report("open-create", kind, open(ptr<char>(target(kind, 16)), O_CREATE | O_RDWR));
  report("unlink", kind, unlink(ptr<char>(target(kind, 16))));
  report("mkdir", kind, mkdir(ptr<char>(target(kind, 16))));
  report("chdir", kind, chdir(ptr<char>(target(kind, 16))));
  report("link-old", kind, link(ptr<char>(target(kind, 16)), "tbadarg.lnk"));
  report("link-new", kind, link(TEMP_FILE, ptr<char>(target(kind, 16))));
  char *argv[] = {const_cast<char *>("echo"), const_cast<char *>("exec-path"), nullptr};
  exec_case("exec-path", kind, ptr<char>(target(kind, 16)), argv);
}

void test_out_pointers(int kind) {
  // Two ints: with Straddle, the first is mapped and the second is not.
  report("pipe", kind, pipe(ptr<int>(target(kind, 4))));

  int fd = open_temp(O_RDONLY);
  report("fstat", kind, fstat(fd, ptr<struct stat>(target(kind, 8))));
  close(fd);

  int pid = fork();
  if (pid < 0) {
    fprintf(2, "tbadarg: fork failed\n");
    exit(1);
  }
  if (pid == 0) exit(0);
  int r = wait(ptr<int>(target(kind, 2)));
  report("wait", kind, r);
  // If the status could not be delivered the child may still be a zombie: reap it.
  if (r == -1) wait(nullptr);
}

void test_exec_argv(int kind) {
  // The argv array itself is unreadable. With Straddle its first entry is mapped and holds
  // a good string, so that the failure comes from reading past the end of the mapping.
  char **bad_argv = ptr<char *>(target(kind, 8));
  if (kind == Straddle) bad_argv[0] = const_cast<char *>("echo");
  exec_case("exec-argv", kind, "/echo", bad_argv);

  // A readable argv array holding one bad string pointer.
  char *argv[] = {const_cast<char *>("echo"), ptr<char>(target(kind, 16)), nullptr};
  exec_case("exec-argstr", kind, "/echo", argv);
}

// The calls that failed must not have left descriptors behind (pipe in particular opens two
// before it can find out that it cannot store them). With 0, 1 and 2 open, the next
// descriptor should be 3.
void check_descriptors() {
  int fd = open_temp(O_RDONLY);
  close(fd);
  if (fd != 3) {
    printf("descriptors: next fd is %d, expected 3\n", fd);
    failures[nfailures++] = {"descriptors", Kernel};
  }
}

// Makes the heap end on a page boundary with a whole page of it ours below that boundary.
void set_up_heap() {
  unsigned long brk = reinterpret_cast<unsigned long>(sbrk(0));
  unsigned long aligned = (brk + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
  if (sbrk(static_cast<int>(aligned - brk + PAGE_SIZE)) == reinterpret_cast<char *>(-1)) {
    fprintf(2, "tbadarg: sbrk failed\n");
    exit(1);
  }
  heap_end = aligned + PAGE_SIZE;
}

void make_temp_file() {
  int fd = open_temp(O_CREATE | O_RDWR | O_TRUNC);
  char data[512];
  for (unsigned i = 0; i < sizeof(data); i++) data[i] = 'x';
  if (write(fd, data, sizeof(data)) != sizeof(data)) {
    fprintf(2, "tbadarg: cannot write %s\n", TEMP_FILE);
    exit(1);
  }
  close(fd);
}

}  // namespace

int main(int argc, char **) {
  if (argc != 1) usage_exit("tbadarg\n");
  set_up_heap();
  make_temp_file();

  for (int kind = 0; kind < TARGETS; kind++) test_read_write(kind);
  for (int kind = 0; kind < TARGETS; kind++) test_paths(kind);
  for (int kind = 0; kind < TARGETS; kind++) test_out_pointers(kind);
  for (int kind = 0; kind < TARGETS; kind++) test_exec_argv(kind);
  check_descriptors();

  unlink(TEMP_FILE);
  unlink("tbadarg.lnk");
  printf("tbadarg: done\n");
  if (nfailures == 0) {
    printf("tbadarg: all -1\n");
    return 0;
  }
  for (int i = 0; i < nfailures; i++) {
    if (strcmp(failures[i].call, "descriptors") == 0) {
      printf("tbadarg: FAIL descriptors\n");
    } else {
      printf("tbadarg: FAIL %s/%s\n", failures[i].call, TARGET_NAMES[failures[i].kind]);
    }
  }
  return 1;
}
