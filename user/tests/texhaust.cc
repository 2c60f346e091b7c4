// texhaust: file-system calls made while a kernel table is exhausted must fail cleanly.
//
//   texhaust SEED [ROUNDS]
//
// The promise under test: a directory never holds two entries with one name, and when a
// table the kernel needs is full, a call fails with -1 and changes nothing on disk. A lookup
// that cannot get an in-memory inode must not be read as "the name is not there".
//
// The program works in /tx, with eight names n0..n7 (some files at the start) and a model of
// what each should be: absent, a file, a hard link to /tx/old, a directory or a device. Each
// round it
//
//   1. exhausts one table with helper processes (or with nothing, as a control):
//        inodes  children hold distinct files open until the in-memory inode table is full
//        files   children open /tx/old again and again until the open-file table is full
//        pipes   children make pipes until pipe() fails
//        procs   the program forks until fork() fails
//        images  34 distinct tiny executables are run under the profiler, then the inode
//                table is filled as above
//        buffers children read files in a loop while the calls run (the buffer cache waits
//                for a free buffer rather than failing, so this is a stress, not exhaustion)
//      and checks that the table really is full (the next open, pipe or fork fails). Then it
//      frees 0 to 2 slots again, at random, so that lookups sometimes find room and sometimes
//      not;
//   2. makes six random calls (link, open with O_CREATE, mkdir, mknod, unlink, open) on random
//      names, by absolute or relative path. A call the model says must fail (link or mkdir
//      onto an existing name, unlink of a missing one, ...) must return -1; any call may fail
//      while a table is full; a call that returns 0 must have done exactly its job;
//   3. releases the table and reads /tx itself: no name may appear twice, and the names
//      present, their types and inode numbers, and /tx/old's link count must equal the model.
//      So a call that failed changed nothing, and one that succeeded changed what it should.
//
// Output: "texhaust: seed S", one summary line per table, then "texhaust: N cases ok" or
// "texhaust: FAIL ..." lines (and exit status 1). The disk is left as it is, for a checker.

#include "abi/fs_format.h"
#include "abi/profile.h"
#include "lib/user.h"
#include "tinyelf.h"

namespace {

constexpr int NAMES = 8;
constexpr int POOL = 64;  // files a holder may keep open: enough to fill NINODE
constexpr int SLACK = 3;  // files the program may hold itself, to free slots later
constexpr int EXES = 34;  // more than the profiler's image table holds
constexpr int OPS_PER_ROUND = 6;
constexpr int HOLDERS = 16;
constexpr short DEV_MAJOR = 9;  // a device number nothing serves: never opened for I/O

enum Kind : char { Absent = 0, File = 'F', Link = 'L', Dir = 'D', Dev = 'N' };
enum Table { None, Inodes, Files, Pipes, Procs, Images, Buffers, TABLES };
constexpr const char *TABLE_NAMES[TABLES] = {"none",  "inodes", "files",  "pipes",
                                             "procs", "images", "buffers"};

Kind model[NAMES];
Rng rng{1};  // seeded by main
int failures = 0;
int cases = 0;
int old_fd = -1;
unsigned old_ino = 0;

unsigned rnd(unsigned n) { return rng.below(n); }

void fail(const char *what, const char *detail) {
  printf("texhaust: FAIL %s: %s\n", what, detail);
  failures++;
}

// "nK" or "/tx/nK", chosen at random: the absolute form also looks up "/" and "tx".
template <int N>
const char *name_path(int k, char (&buf)[N]) {
  snprintf(buf, N, "%sn%d", rnd(2) == 0 ? "/tx/" : "", k);
  return buf;
}

// prefix and i in two digits, into buf.
template <int N>
void numbered(char (&buf)[N], const char *prefix, int i) {
  snprintf(buf, N, "%s%02d", prefix, i);
}

bool make_file(const char *path) {
  int fd = open(path, O_CREATE | O_RDWR);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// --- Holders: processes that keep a table full until released --------------------------------

struct Holders {
  int pids[NPROC];
  int n = 0;
  int release_w = -1;             // closing it lets every holder blocked on its read end exit
  int control[3] = {-1, -1, -1};  // the other ends of the control pipes
  bool killed = false;            // buffer readers never block: they are killed instead
};

// What one holder does before it blocks: grab as much of `table` as it can.
void grab(Table table, int index) {
  if (table == Inodes || table == Images) {
    if (chdir("/tx/pool") < 0) return;
    char name[8];
    for (int i = 0; i < 10; i++) {
      numbered(name, "p", (index * 10 + i) % POOL);
      if (open(name, O_RDONLY) < 0) break;
    }
  } else if (table == Files) {
    for (int i = 0; i < 10; i++)
      if (open("/tx/old", O_RDONLY) < 0) break;
  } else if (table == Pipes) {
    int fds[2];
    for (int i = 0; i < 5; i++)
      if (pipe(fds) < 0) break;
  }
}

[[noreturn]] void buffer_reader(int index) {
  char name[16], buf[512];
  for (unsigned i = index;; i++) {
    numbered(name, "/tx/pool/p", static_cast<int>(i % POOL));
    int fd = open(name, O_RDONLY);
    if (fd >= 0) {
      while (read(fd, buf, sizeof(buf)) > 0) {
      }
      close(fd);
    }
  }
}

// Start the holders for `table`; false if the table could not be shown to be full.
bool hold(Table table, Holders &h) {
  int release[2], ready[2];
  if (pipe(release) < 0 || pipe(ready) < 0) {
    fail(TABLE_NAMES[table], "cannot make the control pipes");
    return false;
  }
  h.release_w = release[1];
  int want = table == Procs ? NPROC : table == Buffers ? 4 : HOLDERS;
  char byte = 0;
  for (int i = 0; i < want; i++) {
    int pid = fork();
    if (pid < 0) break;  // the expected end for Procs
    if (pid == 0) {
      close(release[1]);
      close(ready[0]);
      if (table == Buffers) {
        write(ready[1], &byte, 1);
        close(ready[1]);
        buffer_reader(i);
      }
      grab(table, i);
      write(ready[1], &byte, 1);
      close(ready[1]);
      read(release[0], &byte, 1);  // returns 0 when the program closes release[1]
      exit(0);
    }
    h.pids[h.n++] = pid;
  }
  // The control pipes stay open until release(): closing them now would free two slots
  // of the open-file table.
  h.control[0] = release[0];
  h.control[1] = ready[0];
  h.control[2] = ready[1];
  for (int i = 0; i < h.n; i++) read(ready[0], &byte, 1);
  h.killed = table == Buffers;

  // Is the table really full?
  bool full = true;
  if (table == Inodes || table == Images) {
    int fd = open("/tx/probe", O_RDONLY);
    full = fd < 0;
    if (fd >= 0) close(fd);
  } else if (table == Files) {
    int fd = open("/tx/old", O_RDONLY);
    full = fd < 0;
    if (fd >= 0) close(fd);
  } else if (table == Pipes) {
    int fds[2];
    full = pipe(fds) < 0;
    if (!full) {
      close(fds[0]);
      close(fds[1]);
    }
  } else if (table == Procs) {
    full = h.n < want;
  }
  if (!full) fail(TABLE_NAMES[table], "the table did not fill up");
  return full;
}

void release(Holders &h) {
  if (h.killed)
    for (int i = 0; i < h.n; i++) kill(h.pids[i]);
  close(h.release_w);
  for (int fd : h.control) close(fd);
  for (int i = 0; i < h.n; i++) wait(nullptr);
  h.n = 0;
}

// --- The calls and the model -----------------------------------------------------------------

enum Op { OpLink, OpCreate, OpMkdir, OpMknod, OpUnlink, OpOpen, OPS };
constexpr const char *OP_NAMES[OPS] = {"link", "create", "mkdir", "mknod", "unlink", "open"};

// Make one random call. `strict`: no table is full, so every call the model allows must
// succeed. Returns whether the call returned 0 (or a descriptor).
bool one_call(const char *table, bool strict, int *failed) {
  int k = static_cast<int>(rnd(NAMES));
  Op op = static_cast<Op>(rnd(OPS));
  char path[16];
  name_path(k, path);
  Kind was = model[k];
  int r = -1;
  bool may = false;  // may the call succeed, by the model?
  Kind after = was;
  switch (op) {
    case OpLink:
      r = link(rnd(2) ? "/tx/old" : "old", path);
      may = was == Absent;
      after = Link;
      break;
    case OpCreate: {
      int fd = open(path, O_CREATE | O_RDWR);
      if (fd >= 0) close(fd);
      r = fd >= 0 ? 0 : -1;
      may = was != Dir;
      after = was == Absent ? File : was;
      break;
    }
    case OpMkdir:
      r = mkdir(path);
      may = was == Absent;
      after = Dir;
      break;
    case OpMknod:
      r = mknod(path, DEV_MAJOR, static_cast<short>(k));
      may = was == Absent;
      after = Dev;
      break;
    case OpUnlink:
      r = unlink(path);
      may = was != Absent;
      after = Absent;
      break;
    case OpOpen: {
      int fd = open(path, O_RDONLY);
      if (fd >= 0) close(fd);
      r = fd >= 0 ? 0 : -1;
      may = was != Absent;
      break;
    }
    default: break;
  }
  cases++;
  if (r == 0 && !may) {
    printf("texhaust: FAIL %s: %s %s returned 0, but the name was %c\n", table, OP_NAMES[op], path,
           was ? static_cast<char>(was) : '-');
    failures++;
  } else if (r != 0 && may && strict) {
    printf("texhaust: FAIL %s: %s %s failed with no table full (the name was %c)\n", table,
           OP_NAMES[op], path, was ? static_cast<char>(was) : '-');
    failures++;
  }
  if (r == 0) model[k] = after;
  if (r != 0) (*failed)++;
  return r == 0;
}

}  // namespace

namespace {

// Read /tx as the disk holds it and compare it with the model.
void check_dir(const char *table) {
  int fd = open("/tx", O_RDONLY);
  if (fd < 0) {
    fail(table, "cannot open /tx after the round");
    return;
  }
  constexpr int MAX_ENTRIES = 128;
  static char seen[MAX_ENTRIES][fsfmt::DIRSIZ + 1];
  static unsigned short inums[MAX_ENTRIES];
  int n = 0;
  struct {
    unsigned short inum;
    char name[fsfmt::DIRSIZ];
  } de;
  while (read(fd, &de, sizeof(de)) == sizeof(de)) {
    if (de.inum == 0) continue;
    if (n == MAX_ENTRIES) break;
    memcpy(seen[n], de.name, fsfmt::DIRSIZ);
    seen[n][fsfmt::DIRSIZ] = 0;
    inums[n] = de.inum;
    for (int j = 0; j < n; j++) {
      if (strcmp(seen[j], seen[n]) == 0) {
        printf("texhaust: FAIL %s: /tx holds the name %s twice (inodes %d and %d)\n", table,
               seen[n], inums[j], inums[n]);
        failures++;
      }
    }
    n++;
  }
  close(fd);

  int links = 1;
  for (int k = 0; k < NAMES; k++) {
    char name[3];
    snprintf(name, sizeof(name), "n%d", k);
    int at = -1;
    for (int j = 0; j < n; j++)
      if (strcmp(seen[j], name) == 0) at = j;
    Kind want = model[k];
    if (want == Link) links++;
    if ((at >= 0) != (want != Absent)) {
      printf("texhaust: FAIL %s: %s is %s in /tx, but the calls that returned 0 say %c\n", table,
             name, at >= 0 ? "present" : "absent", want ? static_cast<char>(want) : '-');
      failures++;
      continue;
    }
    if (at < 0) continue;
    char path[8];
    snprintf(path, sizeof(path), "/tx/n%d", k);
    struct stat st;
    if (stat(path, &st) < 0) {
      printf("texhaust: FAIL %s: cannot stat %s\n", table, path);
      failures++;
      continue;
    }
    short type = want == Dir ? T_DIR : want == Dev ? T_DEVICE : T_FILE;
    bool linked = st.ino == old_ino;
    if (st.type != type || st.ino != inums[at] || linked != (want == Link)) {
      printf("texhaust: FAIL %s: %s has type %d, inode %d; the model says %c\n", table, path,
             st.type, static_cast<int>(st.ino), want);
      failures++;
    }
  }
  struct stat st;
  if (fstat(old_fd, &st) < 0 || st.nlink != links) {
    printf("texhaust: FAIL %s: /tx/old has %d links, the model says %d\n", table, st.nlink, links);
    failures++;
  }
}

// Run the 34 tiny executables under the profiler, so its image table is full.
void fill_images() {
  char path[16];
  for (int i = 0; i < EXES; i++) {
    numbered(path, "/tx/e", i);
    int pid = fork();
    if (pid == 0) {
      profile(getpid(), PROF_ON, 0);
      char *argv[] = {path, nullptr};
      exec(path, argv);
      exit(1);
    }
    int status = -1;
    if (pid > 0) wait(&status);
    if (status != 0) fail("images", "a tiny executable did not run");
  }
}

bool setup() {
  if (mkdir("/tx") < 0 || mkdir("/tx/pool") < 0 || chdir("/tx") < 0) {
    printf("texhaust: cannot make /tx (does it exist already?)\n");
    return false;
  }
  char path[16];
  bool ok = make_file("old") && make_file("probe");
  for (int i = 0; ok && i < POOL; i++) {
    numbered(path, "pool/p", i);
    ok = make_file(path);
  }
  for (int i = 0; ok && i < SLACK; i++) {
    numbered(path, "s", i);
    ok = make_file(path);
  }
  for (int i = 0; ok && i < EXES; i++) {
    numbered(path, "e", i);
    ok = write_exit_elf(path, static_cast<unsigned>(i));
  }
  for (int k = 0; ok && k < NAMES; k++) {
    model[k] = Absent;
    if (rnd(2)) {
      char name[3];
      snprintf(name, sizeof(name), "n%d", k);
      ok = make_file(name);
      model[k] = File;
    }
  }
  old_fd = open("old", O_RDONLY);
  struct stat st;
  if (!ok || old_fd < 0 || fstat(old_fd, &st) < 0) {
    printf("texhaust: cannot make the files of /tx\n");
    return false;
  }
  old_ino = st.ino;
  return true;
}

void run_round(Table table, int *ops, int *failed) {
  // Slack: files (or descriptors) held now and closed once the table is full, to leave
  // that many slots free.
  int slack_fds[SLACK];
  int slack = table == Inodes || table == Images || table == Files ? static_cast<int>(rnd(3)) : 0;
  for (int i = 0; i < slack; i++) {
    char path[8];
    numbered(path, "s", i);
    slack_fds[i] = open(table == Files ? "old" : path, O_RDONLY);
  }
  if (table == Images) fill_images();
  Holders h;
  bool full = table == None || hold(table, h);
  for (int i = 0; i < slack; i++)
    if (slack_fds[i] >= 0) close(slack_fds[i]);
  if (full) {
    for (int i = 0; i < OPS_PER_ROUND; i++) {
      one_call(TABLE_NAMES[table], table == None || table == Buffers, failed);
      (*ops)++;
    }
  }
  if (table != None) release(h);
  if (table == Images) profile(0, PROF_CLEAR, 0);
  check_dir(TABLE_NAMES[table]);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || atoi(argv[1]) <= 0) {
    fprintf(2, "usage: texhaust SEED [ROUNDS]   (SEED > 0)\n");
    return 2;
  }
  int seed = atoi(argv[1]);
  int rounds = argc > 2 ? atoi(argv[2]) : 3;
  if (rounds <= 0) rounds = 1;
  rng = Rng{0x9e3779b97f4a7c15UL ^ static_cast<unsigned long>(seed)};
  printf("texhaust: seed %d, %d rounds a table\n", seed, rounds);
  if (!setup()) return 1;
  for (int t = 0; t < TABLES; t++) {
    int ops = 0, failed = 0;
    for (int r = 0; r < rounds; r++) run_round(static_cast<Table>(t), &ops, &failed);
    printf("texhaust: %s: %d calls, %d failed with -1\n", TABLE_NAMES[t], ops, failed);
  }
  if (failures > 0) {
    printf("texhaust: FAIL: %d problems in %d cases\n", failures, cases);
    return 1;
  }
  printf("texhaust: %d cases ok\n", cases);
  return 0;
}
