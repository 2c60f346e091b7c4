// texecall: exec each of many corrupted programs, and say what became of each.
//
//   texecall [-w TICKS] PACK...
//
// tests/qemu/test_exec_fuzz.py makes the programs on the host: seeded corruptions of one
// small, well-formed program, with its own model of what exec must do with each (run it, or
// return -1 to the old program). They come in packs, files that hold many copies each (so
// many files would not fit the inodes that fs.img's 200 leave beside the build's programs):
// a pack is a u32 count, the count's u32 sizes, then the copies one after another, all
// little endian.
//
// For each copy in turn texecall writes it to the file /xNNN (NNN counts the copies of all the
// packs from 0, so a copy has the same name in the test), execs that in a child of its own, and
// prints one line:
//
//   texecall: x017 returned   exec returned -1, and the child's memory was as before
//   texecall: x017 broken     exec returned, but the child's memory or break had changed
//   texecall: x017 exit N     the program ran and exited with status N
//   texecall: x017 killed     the program ran and was killed (status -1: a bad access)
//   texecall: x017 hung       its watchdog killed it after TICKS: it ran for ever
//
// A copy that runs garbage may loop, or fork: each child has a watchdog, a second child that
// sleeps TICKS (30, 3 s, unless -w says otherwise) and then kills it (and is killed itself
// when the copy ends first), and after a copy that hung, and at the end, texecall kills every
// process above its own pid, as grind does, so that what a copy forked cannot outlive it.
// Last it prints the kernel's free pages before the first copy and after the last (once
// orphans have been reaped) and "texecall: done N copies". The lines are short: the console
// is slow.
#include "lib/user.h"

namespace {

constexpr int MAX_COPIES = 512;
constexpr int MAX_COPY = 16 * 1024;  // bytes in a copy
constexpr int SETTLE_TICKS = 50;     // for init to reap the strays' orphans
constexpr int RETURNED = 7700001;    // a child's exit status when its exec returned -1...
constexpr int BROKEN = 7700002;      // ...and when it returned, but the child's memory changed
constexpr int DOG_FIRED = 7700003;   // a watchdog's, when it has killed its copy
int watch_ticks = 30;                // -w TICKS

// The child's memory, checked after a failed exec: a page's worth of bytes and a word in the
// bss, a word on the stack and the break must all be as they were.
constexpr unsigned long CANARY = 0x5eed5eedc0ffee00UL;
unsigned char pattern[4096];
volatile unsigned long bss_canary;

unsigned char copy[MAX_COPY];
int sizes[MAX_COPIES];
int self_pid = 0;
int strays = 0;  // processes that copies left behind, killed by sweep_strays()

bool read_all(int fd, void *buf, int n) {
  char *p = static_cast<char *>(buf);
  for (int done = 0; done < n;) {
    int r = read(fd, p + done, n - done);
    if (r <= 0) return false;
    done += r;
  }
  return true;
}

[[noreturn]] void exec_copy(const char *path, int pack_fd) {
  close(pack_fd);
  volatile unsigned long stack_canary = CANARY;
  char *brk = sbrk(0);
  char *argv[] = {const_cast<char *>(path + 1), nullptr};
  int r = exec(path, argv);
  bool intact = r == -1 && stack_canary == CANARY && bss_canary == CANARY && sbrk(0) == brk;
  for (int i = 0; intact && i < static_cast<int>(sizeof(pattern)); i++)
    intact = pattern[i] == static_cast<unsigned char>(i * 7 + 1);
  exit(intact ? RETURNED : BROKEN);
}

// Kill every process above our own pid (strays that a copy forked), until a pass finds none,
// and reap our own children. The first pass's kills are counted in strays (a later pass may
// find the same processes again, as zombies that init has not reaped yet).
void sweep_strays() {
  for (bool first = true;; first = false) {
    int probe = fork();  // the newest pid: nothing we started is above it
    if (probe == 0) exit(0);
    if (probe < 0) {
      printf("texecall: FAIL: no fork for the sweep of strays\n");
      return;
    }
    int found = 0;
    for (int pid = self_pid + 1; pid < probe; pid++)
      if (kill(pid) == 0) found++;
    while (wait(nullptr) >= 0) {
    }
    if (first) strays += found;
    if (found == 0) return;
    sleep(1);
  }
}

// Exec the copy at path in a child, under a watchdog, and print what became of it.
void try_copy(const char *path, int pack_fd) {
  int pid = fork();
  if (pid < 0) {
    printf("texecall: %s FAIL: fork\n", path + 1);
    return;
  }
  if (pid == 0) exec_copy(path, pack_fd);
  int dog = fork();
  if (dog == 0) {
    sleep(watch_ticks);
    kill(pid);
    exit(DOG_FIRED);
  }
  int status = 0;
  bool fired = false, copy_done = false, dog_done = dog < 0;
  while (!copy_done || !dog_done) {
    int s = 0;
    int got = wait(&s);
    if (got < 0) break;
    if (got == pid) {
      copy_done = true;
      status = s;
      if (!dog_done) kill(dog);
    } else if (got == dog) {
      dog_done = true;
      fired = s == DOG_FIRED;
    }
  }
  const char *name = path + 1;
  if (status == RETURNED) {
    printf("texecall: %s returned\n", name);
  } else if (status == BROKEN) {
    printf("texecall: %s broken\n", name);
  } else if (status == -1 && fired) {
    printf("texecall: %s hung\n", name);
    sweep_strays();  // what it forked, before the next copy runs
  } else if (status == -1) {
    printf("texecall: %s killed\n", name);
  } else {
    printf("texecall: %s exit %d\n", name, status);
  }
}

// Run every copy of the pack at path, numbering them from *next on.
bool run_pack(const char *path, int *next) {
  int fd = open(path, O_RDONLY);
  int count = 0;
  if (fd < 0 || !read_all(fd, &count, sizeof(count)) || count < 0 || count > MAX_COPIES ||
      !read_all(fd, sizes, count * static_cast<int>(sizeof(int)))) {
    printf("texecall: FAIL: cannot read the pack %s\n", path);
    if (fd >= 0) close(fd);
    return false;
  }
  for (int i = 0; i < count; i++) {
    char name[16];
    snprintf(name, sizeof(name), "/x%03d", (*next)++);
    int out = -1;
    bool ok = sizes[i] >= 0 && sizes[i] <= MAX_COPY && read_all(fd, copy, sizes[i]) &&
              (out = open(name, O_CREATE | O_WRONLY | O_TRUNC)) >= 0 &&
              write(out, copy, sizes[i]) == sizes[i];
    if (out >= 0) close(out);
    if (!ok) {
      printf("texecall: FAIL: cannot write %s\n", name);
      close(fd);
      return false;
    }
    try_copy(name, fd);
    unlink(name);
  }
  close(fd);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "-w") == 0) {
    watch_ticks = argc > 2 ? atoi(argv[2]) : 0;
    first = 3;
  }
  if (first >= argc || watch_ticks <= 0) usage_exit("texecall [-w TICKS] PACK...\n");
  for (int i = 0; i < static_cast<int>(sizeof(pattern)); i++)
    pattern[i] = static_cast<unsigned char>(i * 7 + 1);
  bss_canary = CANARY;
  self_pid = getpid();
  long before = free_pages();
  int copies = 0;
  bool ok = true;
  for (int i = first; ok && i < argc; i++) ok = run_pack(argv[i], &copies);
  sweep_strays();
  if (strays > 0) printf("texecall: %d stray processes killed\n", strays);
  long after = free_pages();
  for (int waited = 0; after != before && waited < SETTLE_TICKS; waited += 2) {
    sleep(2);
    after = free_pages();
  }
  printf("texecall: free pages before %ld after %ld\n", before, after);
  printf("texecall: done %d copies\n", copies);
  return ok ? 0 : 1;
}
