// grind: a system-call fuzzer. Random calls with random arguments, until time is up.
//
//   grind SECONDS [NPROC [SEED]]
//
// NPROC worker processes (default 4) each issue a stream of system calls chosen at random
// from the whole list in kern/abi/syscalls.def (except halt), with arguments drawn from
// the values most likely to find mistakes: descriptors from -1 to 20, paths in a scratch
// directory and pointers that are not paths at all, buffers that are valid, null, in the
// kernel, beyond MAXVA, unmapped, straddling the end of the heap, in the stack's guard
// page, or read-only text; sizes from 0 to far too big. Workers fork (a bounded number of
// short-lived children), exit, make pipes, grow and shrink their heap, kill their own
// children, and turn the profiler on and off. A few impossible system-call numbers are
// thrown in too. The kernel must survive all of it: no panic, no hang, every call returns.
//
// A weak oracle checks results on the way: a call that was given an unusable pointer for
// its output and still claims to have transferred bytes has written where it must not.
// Such a result is printed as a `grind: error: ...` line.
//
// The parent runs generations. Every few seconds it kills every process grind has
// started since it began (all pids above its own, which only grind's processes can have
// while it runs alone), so a worker stuck for ever in a pipe read is no problem, and
// starts fresh workers. Workers that end on their own are replaced at once. Each process
// reports its progress as one-byte counts through a pipe to an accountant process, which
// adds them up; when everything else is dead the pipe reaches end of file and the
// accountant's exit status is the total. At the end grind removes the scratch directory,
// switches the profiler off, and prints
//
//   grind: done, N calls
//
// The pseudo-random generator is deterministic: SEED (default: from the pid and the
// clock) fixes the stream of choices each worker makes, though not the timing between
// them. grind kills every process with a pid above its own, so run it alone.
#include "abi/profile.h"
#include "lib/user.h"

namespace {

constexpr const char *SCRATCH = "/grindtmp";
constexpr int TICKS_PER_SECOND = 10;
constexpr int GENERATION_TICKS = 30;  // a new set of workers every 3 s
constexpr int REPORT_FD = 15;         // the accountant's pipe, in every grind process
constexpr int CONSOLE_FD = 14;        // for error lines, in every grind process
constexpr int REPORT_EVERY = 8;       // calls between progress bytes
constexpr unsigned long PAGE = 4096;
constexpr int HALT_NUMBER = 23;  // never called

// ---- Randomness ---------------------------------------------------------------------------

// Rng (xorshift64*) is in user/lib/user.h.

// ---- The state of one grind process (a worker or a worker's child) ----------------------

Rng rng;
long calls = 0;         // calls made since the last progress report
bool is_child = false;  // a worker's child: may not fork
int children[8];        // live children of a worker, for kill and wait
int nchildren = 0;
unsigned long heap_base = 0;  // the break when this process started fuzzing

char buf[3 * PAGE];  // "valid" buffers are carved out of this

// ---- Reporting ----------------------------------------------------------------------------

void report_progress(bool all) {
  while (calls >= REPORT_EVERY || (all && calls > 0)) {
    unsigned char n = static_cast<unsigned char>(calls >= REPORT_EVERY ? REPORT_EVERY : calls);
    write(REPORT_FD, &n, 1);
    calls -= n;
  }
}

[[noreturn]] void finish(int status) {
  report_progress(true);
  exit(status);
}

void error(const char *what, long result) {
  fprintf(CONSOLE_FD, "grind: error: %s returned %ld\n", what, result);
}

// ---- Arguments ----------------------------------------------------------------------------

enum class Ptr { Valid, Null, Kernel, AllOnes, MaxVa, Unmapped, Straddle, Guard, Text, Count };

struct Pointer {
  unsigned long addr;
  Ptr kind;
  // Whether the kernel may store through it. A store through any other kind must fail.
  bool writable() const { return kind == Ptr::Valid || kind == Ptr::Straddle; }
};

[[gnu::noinline]] unsigned long stack_page() {
  volatile char here = 0;
  return reinterpret_cast<unsigned long>(&here) & ~(PAGE - 1);
}

Pointer pointer() {
  // Valid pointers are the most common, so that calls get past their checks.
  Ptr kind = rng.below(3) == 0 ? static_cast<Ptr>(rng.below(static_cast<unsigned>(Ptr::Count)))
                               : Ptr::Valid;
  unsigned long top = reinterpret_cast<unsigned long>(sbrk(0));
  switch (kind) {
    case Ptr::Valid: return {reinterpret_cast<unsigned long>(buf) + rng.below(2 * PAGE), kind};
    case Ptr::Null: return {0, kind};
    case Ptr::Kernel: return {0x80000000UL + rng.below(0x800000), kind};
    case Ptr::AllOnes: return {~0UL - rng.below(16), kind};
    case Ptr::MaxVa: return {(1UL << 38) - rng.below(2) * 8, kind};
    case Ptr::Unmapped:
      return {((top + PAGE - 1) & ~(PAGE - 1)) + PAGE * (1 + rng.below(64)), kind};
    case Ptr::Straddle:
      // The heap's last bytes and beyond; when the break is page-aligned this is the
      // boundary between mapped and unmapped memory.
      return {top > 16 ? top - 1 - rng.below(16) : 0, top > 16 ? kind : Ptr::Null};
    case Ptr::Guard: return {stack_page() - PAGE + rng.below(PAGE), kind};
    default: return {0x100 + rng.below(0x1000), Ptr::Text};  // read-only program text
  }
}

int fd() {
  int f = static_cast<int>(rng.below(22)) - 1;
  // The two descriptors grind itself relies on are never handed to a random call.
  return f == REPORT_FD || f == CONSOLE_FD ? -1 : f;
}

int size() {
  switch (rng.below(8)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return static_cast<int>(rng.below(64));
    case 3: return static_cast<int>(rng.below(600));
    case 4: return static_cast<int>(PAGE);
    case 5: return static_cast<int>(rng.below(3 * PAGE));
    case 6: return -static_cast<int>(rng.below(3)) - 1;
    default: return 0x7fffffff;
  }
}

// Paths: names in the scratch directory (a fixed set, shared by all workers so that they
// collide), random short names relative to the working directory (always inside the
// scratch directory), and pointers that are not strings at all.
constexpr const char *PATHS[] = {
    "/grindtmp/a",       "/grindtmp/b",
    "/grindtmp/c",       "/grindtmp/d0",
    "/grindtmp/d1",      "/grindtmp/d0/a",
    "/grindtmp/d0/d2",   "/grindtmp/d1/b",
    "/grindtmp/d0/d2/c", "/grindtmp/d1/..",
    "/grindtmp/.",       "/grindtmp/d0/./a",
    "/grindtmp/a/x",     "/grindtmp/averyveryverylongname",
};
constexpr int NUM_PATHS = sizeof(PATHS) / sizeof(PATHS[0]);
char random_name[24];

const char *path() {
  unsigned pick = rng.below(10);
  if (pick < 6) return PATHS[rng.below(NUM_PATHS)];
  if (pick < 8) {
    // Letters and digits only: no '/' or '.', so the name cannot leave the scratch tree.
    int n = 1 + static_cast<int>(rng.below(20));
    for (int i = 0; i < n; i++)
      random_name[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.below(36)];
    random_name[n] = '\0';
    return random_name;
  }
  return reinterpret_cast<const char *>(pointer().addr);
}

// ---- The calls ----------------------------------------------------------------------------

long raw_syscall(long number, long a0, long a1, long a2) {
  register long x10 asm("a0") = a0;
  register long x11 asm("a1") = a1;
  register long x12 asm("a2") = a2;
  register long x17 asm("a7") = number;
  asm volatile("ecall" : "+r"(x10) : "r"(x11), "r"(x12), "r"(x17) : "memory");
  return x10;
}

void remember_child(int pid) {
  if (nchildren < static_cast<int>(sizeof(children) / sizeof(children[0]))) {
    children[nchildren++] = pid;
  }
}

void forget_child(int pid) {
  for (int i = 0; i < nchildren; i++) {
    if (children[i] == pid) children[i] = children[--nchildren];
  }
}

int some_pid() {
  switch (rng.below(5)) {
    case 0: return getpid();
    case 1:
    case 2: return nchildren > 0 ? children[rng.below(nchildren)] : -1;
    case 3: return -static_cast<int>(rng.below(3));
    default: return 100000 + static_cast<int>(rng.below(1000));  // no such process
  }
}

[[noreturn]] void run_as_child(int budget);

void do_fork() {
  // Bounded: only workers fork, and only while they have few live children.
  if (is_child || nchildren >= 6) return;
  int pid = fork();
  if (pid == 0) run_as_child(10 + static_cast<int>(rng.below(50)));
  if (pid > 0) remember_child(pid);
}

void do_exec() {
  static char *argv[48];
  static char strings[40][16];
  int argc = static_cast<int>(rng.below(40));
  for (int i = 0; i < argc; i++) {
    int n = static_cast<int>(rng.below(15));
    for (int j = 0; j < n; j++) strings[i][j] = static_cast<char>('a' + rng.below(26));
    strings[i][n] = '\0';
    argv[i] = strings[i];
  }
  argv[argc] = nullptr;
  char **args = argv;
  switch (rng.below(4)) {
    case 0: args = reinterpret_cast<char **>(pointer().addr); break;
    case 1:
      if (argc > 0) argv[rng.below(argc)] = reinterpret_cast<char *>(pointer().addr);
      break;
    default: break;
  }
  // No file under the scratch directory is a program, so exec can only fail.
  long r = exec(path(), args);
  if (r != -1) error("exec", r);
}

void one_call() {
  calls++;
  switch (rng.below(28)) {
    case 0: do_fork(); break;
    case 1:
      if (rng.one_in(20)) finish(static_cast<int>(rng.below(5)));
      break;
    case 2: {
      Pointer p = pointer();
      int status;
      int *out = rng.one_in(4) ? nullptr
                               : (p.kind == Ptr::Valid ? &status : reinterpret_cast<int *>(p.addr));
      if (nchildren == 0 && rng.below(4) != 0) break;  // wait would only return -1
      int pid = wait(out);
      if (pid > 0) {
        forget_child(pid);
        if (out != nullptr && out != &status && !p.writable())
          error("wait with a bad status pointer", pid);
      }
      break;
    }
    case 3: {
      Pointer p = pointer();
      long r = pipe(reinterpret_cast<int *>(p.addr));
      if (r == 0 && !p.writable()) error("pipe into a bad pointer", r);
      break;
    }
    case 4:
    case 5: {
      Pointer p = pointer();
      int n = size();
      int f = fd();
      // Reading a pipe can block for ever (this process may hold the only write end);
      // the generation's end takes care of that, but not too often.
      if (rng.one_in(2) && n > 0) n = 1 + n % 512;
      long r = read(f, reinterpret_cast<void *>(p.addr), n);
      if (r > 0 && !p.writable()) error("read into a bad pointer", r);
      break;
    }
    case 6:
    case 7: {
      Pointer p = pointer();
      int n = size();
      if (n > 600 && rng.below(4) != 0) n = 600;  // a full pipe blocks: not too often
      write(fd(), reinterpret_cast<void *>(p.addr), n);
      break;
    }
    case 8: {
      int pid = some_pid();
      if (pid == getpid() && !rng.one_in(10)) break;  // killing ourselves ends the worker
      kill(pid);
      break;
    }
    case 9:
      if (rng.one_in(3)) do_exec();
      break;
    case 10: {
      Pointer p = pointer();
      long r = fstat(fd(), reinterpret_cast<struct stat *>(p.addr));
      if (r == 0 && !p.writable()) error("fstat into a bad pointer", r);
      break;
    }
    case 11: {
      const char *dir = PATHS[rng.below(NUM_PATHS)];
      chdir(rng.one_in(8) ? reinterpret_cast<const char *>(pointer().addr) : dir);
      break;
    }
    case 12: dup(fd()); break;
    case 13: getpid(); break;
    case 14: {
      long change;
      unsigned long top = reinterpret_cast<unsigned long>(sbrk(0));
      unsigned long room = top - heap_base;  // what this process has grown by
      switch (room > (8UL << 20) ? 3 : rng.below(7)) {
        case 0: change = static_cast<long>(rng.below(5000)); break;
        case 1: change = static_cast<long>(rng.below(64)) * PAGE; break;
        case 2:
          // More than there is: the kernel allocates until memory runs out, then has to
          // give it all back. Everyone else's allocations may fail meanwhile.
          change = rng.one_in(4) ? 0x7fffffff : 0;
          break;
        case 3:
        case 4:
          // Shrink, but not below where this process started...
          change = room == 0 ? 0 : -static_cast<long>(rng.below(static_cast<unsigned>(room + 1)));
          break;
        case 5:
          // ...except rarely, when it may take its own stack and code with it.
          change = rng.one_in(50) ? -static_cast<long>(rng.below(1 << 20)) : 0;
          break;
        default: change = static_cast<long>(rng.below(4)) << 20; break;
      }
      sbrk(static_cast<int>(change));
      break;
    }
    case 15: sleep(static_cast<int>(rng.below(4)) - 1); break;
    case 16: uptime(); break;
    case 17: {
      constexpr int FLAGS[] = {
          O_RDONLY, O_WRONLY,   O_RDWR, O_CREATE | O_RDWR, O_CREATE | O_WRONLY | O_TRUNC,
          O_TRUNC,  0x7fffffff, -1};
      open(path(), FLAGS[rng.below(sizeof(FLAGS) / sizeof(FLAGS[0]))]);
      break;
    }
    case 18: {
      // Never major 1, the console: a device file for it would let random bytes through.
      constexpr short MAJORS[] = {0, 2, 3, 9, 10, -1, 100, 32767};
      mknod(path(), MAJORS[rng.below(8)], static_cast<short>(rng.below(8)) - 1);
      break;
    }
    case 19: unlink(path()); break;
    case 20: {
      const char *from = path();
      // The second name is chosen after the first may have been copied to random_name.
      static char saved[24];
      if (from == random_name) {
        strcpy(saved, random_name);
        from = saved;
      }
      link(from, path());
      break;
    }
    case 21: mkdir(path()); break;
    case 22: close(fd()); break;
    case 23: {
      constexpr int RATES[] = {PROF_MIN_HZ, 100, PROF_DEFAULT_HZ, PROF_MAX_HZ, 0, -5, 1 << 20};
      int cmd = static_cast<int>(rng.below(7));  // 0 is none; 5 is the clock, 6 a stall
      int pid = rng.one_in(4) ? PROF_ALL_PIDS : some_pid();
      profile(pid, cmd, RATES[rng.below(sizeof(RATES) / sizeof(RATES[0]))]);
      break;
    }
    case 24: {
      // System-call numbers that do not exist (rarely: the kernel logs each one).
      if (!rng.one_in(4)) break;
      constexpr long NUMBERS[] = {0, 24, 25, 99, 1000, -1, 1L << 32, HALT_NUMBER + 100};
      long r = raw_syscall(NUMBERS[rng.below(8)], static_cast<long>(rng.next()),
                           static_cast<long>(rng.next()), static_cast<long>(rng.next()));
      if (r != -1) error("an unknown system call", r);
      break;
    }
    case 25: {
      // The files under /proc are generated on each read: read them at random offsets
      // (by reading in random pieces) into random buffers.
      constexpr const char *PROC[] = {"/proc/meminfo", "/proc/profstat", "/proc/profile"};
      int f = open(PROC[rng.below(3)], rng.one_in(8) ? O_RDWR : O_RDONLY);
      if (f < 0) break;
      for (int i = 0, pieces = 1 + static_cast<int>(rng.below(4)); i < pieces; i++) {
        Pointer p = pointer();
        long r = read(f, reinterpret_cast<void *>(p.addr), size());
        if (r > 0 && !p.writable()) error("read of /proc into a bad pointer", r);
      }
      close(f);
      break;
    }
    default: {
      // Write through a good descriptor now and then, so that files really grow.
      int f = fd();
      memset(buf, 'a' + static_cast<int>(rng.below(26)), 1024);
      write(f, buf, 1 + static_cast<int>(rng.below(1024)));
      break;
    }
  }
  report_progress(false);
}

void start_fuzzing(unsigned long seed) {
  rng.state = seed ? seed : 1;
  for (int f = 0; f < NOFILE; f++) {
    if (f != REPORT_FD && f != CONSOLE_FD) close(f);
  }
  chdir(SCRATCH);
  heap_base = reinterpret_cast<unsigned long>(sbrk(0));
}

[[noreturn]] void run_as_child(int budget) {
  is_child = true;
  nchildren = 0;
  rng.state ^= static_cast<unsigned long>(getpid()) * 0x9e3779b97f4a7c15UL;
  for (int i = 0; i < budget; i++) one_call();
  finish(0);
}

[[noreturn]] void run_worker(unsigned long seed) {
  start_fuzzing(seed);
  int budget = 100 + static_cast<int>(rng.below(900));
  for (int i = 0; i < budget; i++) one_call();
  finish(0);
}

// ---- The parent ---------------------------------------------------------------------------

// The accountant: adds up the progress bytes until every writer has gone.
[[noreturn]] void run_accountant(int from) {
  long total = 0;
  unsigned char chunk[64];
  for (;;) {
    int n = read(from, chunk, sizeof(chunk));
    if (n <= 0) break;
    for (int i = 0; i < n; i++) total += chunk[i];
  }
  exit(total > 0x7fffffff ? 0x7fffffff : static_cast<int>(total));
}

// Remove a directory tree (the scratch directory). Entries are read one at a time by
// offset, re-opening the directory, because removing entries while reading is allowed
// but a long name needs its NUL added.
void remove_tree(const char *dir, int depth) {
  struct {
    unsigned short inum;
    char name[14];
  } e;
  char child[MAXPATH];
  int fd = open(dir, O_RDONLY);
  if (fd < 0) return;
  while (read(fd, &e, sizeof(e)) == sizeof(e)) {
    if (e.inum == 0) continue;
    char name[15];
    memcpy(name, e.name, 14);
    name[14] = '\0';
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    if (strlen(dir) + 1 + strlen(name) + 1 > sizeof(child)) continue;
    strcpy(child, dir);
    strcpy(child + strlen(child), "/");
    strcpy(child + strlen(child), name);
    struct stat st;
    if (stat(child, &st) == 0 && st.type == T_DIR && depth < 10) remove_tree(child, depth + 1);
    unlink(child);
  }
  close(fd);
}

struct Run {
  int seconds;
  int nworkers;
  unsigned long seed;
  int me;
  int accountant;
  int workers[32];
  int ticker = 0;
  int newest = 0;  // the highest pid the parent has forked
};

int spawn_worker(Run &run, int slot, unsigned long generation) {
  int pid = fork();
  if (pid == 0) run_worker(run.seed ^ (generation * 0x100000001b3UL) ^ (slot * 0x9e3779b9UL));
  if (pid > run.newest) run.newest = pid;
  return pid;
}

// Kill every process above our pid up to `upto`, except the accountant. Returns how many
// kills found a process.
int sweep(const Run &run, int upto) {
  int found = 0;
  for (int pid = run.me + 1; pid <= upto; pid++) {
    if (pid != run.accountant && kill(pid) == 0) found++;
  }
  return found;
}

int start_ticker(Run &run, int ticks) {
  int pid = fork();
  if (pid == 0) {
    sleep(ticks);
    exit(0);
  }
  if (pid > run.newest) run.newest = pid;
  return pid;
}

void usage() {
  fprintf(2, "usage: grind SECONDS [NPROC [SEED]]\n");
  exit(1);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) usage();
  Run run;
  run.seconds = atoi(argv[1]);
  run.nworkers = argc > 2 ? atoi(argv[2]) : 4;
  if (run.seconds <= 0 || run.nworkers <= 0 || run.nworkers > 32) usage();
  run.me = getpid();
  run.seed = argc > 3 ? static_cast<unsigned long>(atoi(argv[3]))
                      : static_cast<unsigned long>(run.me) * 7919 + uptime();
  printf("grind: %d s, %d workers, seed %lu\n", run.seconds, run.nworkers, run.seed);
  long pages_before = free_pages();

  remove_tree(SCRATCH, 0);
  unlink(SCRATCH);
  if (mkdir(SCRATCH) < 0) {
    fprintf(2, "grind: cannot create %s\n", SCRATCH);
    return 1;
  }
  // The descriptors every grind process keeps: the console for errors and the report
  // pipe's write end, at fixed numbers that the random calls avoid.
  int report[2];
  if (pipe(report) < 0) {
    fprintf(2, "grind: pipe failed\n");
    return 1;
  }
  // The pipe holds the two lowest free descriptors (3 and 4). Fill the numbers above them
  // with copies of the console until the copy lands on CONSOLE_FD; the next dup of the
  // pipe's write end then lands on REPORT_FD. The filler copies are closed again.
  int spare[NOFILE];
  int nspare = 0;
  int fd;
  while ((fd = dup(1)) >= 0 && fd < CONSOLE_FD) spare[nspare++] = fd;
  if (fd != CONSOLE_FD || dup(report[1]) != REPORT_FD) {
    fprintf(2, "grind: cannot set up descriptors\n");
    return 1;
  }
  while (nspare > 0) close(spare[--nspare]);
  close(report[1]);

  run.accountant = fork();
  if (run.accountant == 0) {
    close(REPORT_FD);
    run_accountant(report[0]);
  }
  close(report[0]);

  int end = uptime() + run.seconds * TICKS_PER_SECOND;
  unsigned long generation = 0;
  for (int i = 0; i < run.nworkers; i++) run.workers[i] = spawn_worker(run, i, generation);
  run.ticker = start_ticker(run, GENERATION_TICKS);

  while (uptime() < end) {
    int status = 0;
    int pid = wait(&status);
    if (pid < 0) break;
    if (pid == run.ticker) {
      // End of a generation: kill everything grind started (but the accountant), then
      // start over with new workers.
      generation++;
      sweep(run, run.newest);
      for (int i = 0; i < run.nworkers; i++) run.workers[i] = 0;
      if (uptime() >= end) break;
      for (int i = 0; i < run.nworkers; i++) run.workers[i] = spawn_worker(run, i, generation);
      int left = end - uptime();
      run.ticker =
          start_ticker(run, left < GENERATION_TICKS ? (left > 0 ? left : 1) : GENERATION_TICKS);
      continue;
    }
    for (int i = 0; i < run.nworkers; i++) {
      if (run.workers[i] == pid && uptime() < end) {
        run.workers[i] = spawn_worker(run, i, generation * 1000 + pid);
      }
    }
  }

  // Stop everything: sweep up to a fresh pid until a pass finds nobody, reaping our own
  // children as they go. The accountant ends when the last writer has gone.
  close(REPORT_FD);
  bool accounted = false;
  int total = 0;
  while (!accounted) {
    int probe = fork();
    if (probe == 0) exit(0);
    if (probe > run.newest) run.newest = probe;
    sweep(run, run.newest);
    for (;;) {
      int status = 0;
      int pid = wait(&status);
      if (pid < 0) break;
      if (pid == run.accountant) {
        accounted = true;
        total = status;
      }
      if (pid == probe) break;
    }
    if (!accounted) sleep(1);
  }
  while (wait(nullptr) >= 0) {
  }

  profile(PROF_ALL_PIDS, PROF_OFF, 0);
  profile(0, PROF_RATE, PROF_DEFAULT_HZ);
  profile(0, PROF_CLEAR, 0);
  remove_tree(SCRATCH, 0);
  if (unlink(SCRATCH) < 0) fprintf(2, "grind: cannot remove %s\n", SCRATCH);
  // Orphans that init has not reaped yet still hold pages: give them a moment.
  long pages_after = free_pages();
  for (int i = 0; i < 10 && pages_after != pages_before; i++) {
    sleep(5);
    pages_after = free_pages();
  }
  printf("grind: free pages before %ld after %ld\n", pages_before, pages_after);
  printf("grind: done, %d calls\n", total);
  return 0;
}
