// crashwork: an endless, write-heavy file-system workload, for crash-recovery tests.
//
//   crashwork [SEED [OPS]]
//
// The crash tests (tests/qemu/test_crash.py) start this program, let it run for a moment, and
// then pull the plug on the whole machine. The disk is left with whatever the log had
// committed by then, plus perhaps a committed transaction that was not yet copied home. If
// the log does its job, the next boot (which replays that transaction) sees a file system in
// which every operation either happened completely or not at all. The workload's task is to
// make that hard: to keep many multi-block operations in flight at any moment, so that a
// crash lands in the middle of something interesting.
//
// Three worker processes run at once, so their system calls share transactions (the log's
// group commit). Worker W owns the directory cwW and everything under it, and nothing else:
//
//   cwW/fS.G, cwW/dD/fS.G   file slot S (0..7) under generation G; a rename moves a file to
//                           another directory or just bumps G, by link() then unlink()
//   cwW/aS.G, cwW/dD/aS.G   a second name (hard link) some files get for a while
//   cwW/dD                  subdirectory D (0..2), made and removed again
//
// Each step picks one of: create a file, append to it, truncate it (O_TRUNC) and rewrite it,
// rename it, give it a second name or take that away, unlink it, make a subdirectory, or
// empty and remove one. Files grow to at most 16 KB, past the 12 direct blocks, so the
// indirect block is allocated and freed too. The sizes are bounded so that three workers
// need at most about 420 blocks and 36 inodes of the disk.
//
// What a crash may leave behind, and what it may not:
//
// * Each worker's choices come from a random generator seeded by SEED and the worker
//   number, so a seed names one workload (the interleaving of the three is up to the
//   scheduler, as in any real system).
// * A file is never unlinked while any process has it open: every step opens, works and
//   closes before the next one starts. So an inode that is allocated but named by no
//   directory can only mean a broken file system, never an "open but unlinked" file that a
//   crash interrupted.
// * Everything written is a sequence of self-describing records, so a checker can tell
//   good data from garbage without knowing the history:
//
//     <TTTTTTTT:LLLLL|abcd...\n     TTTTTTTT a 32-bit tag in hex, LLLLL the record's length
//                                   in decimal (header and '\n' included); byte i of the
//                                   record, for 16 <= i < L-1, is 'a' + (tag + i) % 26
//
//   After a crash every file must be whole records, perhaps followed by the beginning of
//   one more (a large write is split over several transactions, so a crash can stop it
//   half way).
//
// Every 20 steps a worker prints `crashwork: N ops (cwW)`, which is how a test knows the
// workload is running. With OPS given, each worker stops after OPS steps and the program
// exits; without it (or with 0) it runs until the machine stops. An earlier run's cwW is
// removed first. Any system call that fails where it should succeed prints a line with
// FAIL and ends the worker: that is a bug even without a crash.
#include "abi/fs_format.h"
#include "lib/user.h"

namespace {

constexpr int WORKERS = 3;
constexpr int SUBDIRS = 3;
constexpr int FILE_SLOTS = 8;
constexpr uint MAX_FILE_BYTES = 16 * 1024;
constexpr uint HEADER_BYTES = 16;              // "<TTTTTTTT:LLLLL|"
constexpr uint MIN_RECORD = HEADER_BYTES + 1;  // a header and the '\n'
constexpr uint MAX_RECORD = 3000;              // up to four blocks: often two transactions
constexpr long REPORT_EVERY = 20;

// A file or name lives either in the worker's own directory or in one of its subdirectories.
constexpr int TOP_DIR = -1;

// A path being put together, always NUL-terminated. Every name this program makes is far
// shorter than MAXPATH, so running out of room would be a bug in this file.
class Path {
 public:
  Path &add(const char *s) {
    while (*s != '\0' && m_len + 1 < MAXPATH) m_text[m_len++] = *s++;
    m_text[m_len] = '\0';
    return *this;
  }

  Path &add(uint n) {
    char digits[12];
    snprintf(digits, sizeof(digits), "%u", n);
    return add(digits);
  }

  const char *str() const { return m_text; }

 private:
  char m_text[MAXPATH] = {};
  uint m_len = 0;
};

// What the worker knows about one of its file slots. The disk must agree with it at all
// times; a disagreement the program can observe (a size, a link count) is reported.
struct FileSlot {
  bool exists = false;
  int dir = TOP_DIR;       // where the file's own name is
  uint gen = 0;            // bumped by every rename
  bool has_alias = false;  // a second name, in alias_dir, with the same generation
  int alias_dir = TOP_DIR;
  uint size = 0;
};

struct Worker {
  uint id = 0;
  Rng rng{1};  // seeded by run_worker
  bool subdir[SUBDIRS] = {};
  FileSlot files[FILE_SLOTS] = {};
  long ops = 0;
};

// Buffers for file data live outside the stack: a user stack is a single page.
char record[MAX_RECORD];
char scratch[fsfmt::BSIZE];

[[noreturn]] void fail(const Worker &w, const char *what, const char *path) {
  printf("crashwork: FAIL in cw%u after %ld ops: %s %s\n", w.id, w.ops, what, path);
  exit(1);
}

Path dir_path(const Worker &w, int dir) {
  Path p;
  p.add("cw").add(w.id);
  if (dir != TOP_DIR) p.add("/d").add(static_cast<uint>(dir));
  return p;
}

Path file_path(const Worker &w, int slot) {
  const FileSlot &f = w.files[slot];
  Path p = dir_path(w, f.dir);
  p.add("/f").add(static_cast<uint>(slot)).add(".").add(f.gen);
  return p;
}

Path alias_path(const Worker &w, int slot) {
  const FileSlot &f = w.files[slot];
  Path p = dir_path(w, f.alias_dir);
  p.add("/a").add(static_cast<uint>(slot)).add(".").add(f.gen);
  return p;
}

// A directory that exists: the worker's own or one of its subdirectories.
int pick_dir(Worker &w) {
  int choice = static_cast<int>(w.rng.below(SUBDIRS + 1)) - 1;
  return choice == TOP_DIR || w.subdir[choice] ? choice : TOP_DIR;
}

void put_hex(char *out, uint value, int digits) {
  for (int i = digits - 1; i >= 0; i--) {
    out[i] = "0123456789abcdef"[value & 0xf];
    value >>= 4;
  }
}

void put_decimal(char *out, uint value, int digits) {
  for (int i = digits - 1; i >= 0; i--) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}

// Fill `record` with one record of `len` bytes (see the format at the top of the file).
void make_record(uint tag, uint len) {
  record[0] = '<';
  put_hex(record + 1, tag, 8);
  record[9] = ':';
  put_decimal(record + 10, len, 5);
  record[15] = '|';
  for (uint i = HEADER_BYTES; i + 1 < len; i++) {
    record[i] = static_cast<char>('a' + (static_cast<uint64>(tag) + i) % 26);
  }
  record[len - 1] = '\n';
}

// Append one fresh record of `len` bytes at fd's offset.
void write_record(Worker &w, int fd, uint len, const char *path) {
  make_record(static_cast<uint>(w.rng.next()), len);
  if (write(fd, record, static_cast<int>(len)) != static_cast<int>(len)) {
    fail(w, "write", path);
  }
}

uint record_length(Worker &w, uint room) {
  uint hi = room < MAX_RECORD ? room : MAX_RECORD;
  return MIN_RECORD + w.rng.below(hi - MIN_RECORD + 1);
}

// --- The steps ---------------------------------------------------------------------------

void create_file(Worker &w, int slot) {
  FileSlot &f = w.files[slot];
  f = FileSlot{};
  f.dir = pick_dir(w);
  f.gen = w.rng.below(1000);
  Path p = file_path(w, slot);
  int fd = open(p.str(), O_CREATE | O_WRONLY);
  if (fd < 0) fail(w, "create", p.str());
  uint records = w.rng.below(3);  // an empty file now and then
  for (uint i = 0; i < records; i++) {
    uint len = record_length(w, MAX_FILE_BYTES - f.size);
    write_record(w, fd, len, p.str());
    f.size += len;
  }
  close(fd);
  f.exists = true;
}

// O_TRUNC, then a little new data: frees every block (the indirect one too) and reuses some.
void truncate_file(Worker &w, int slot) {
  FileSlot &f = w.files[slot];
  Path p = file_path(w, slot);
  int fd = open(p.str(), O_WRONLY | O_TRUNC);
  if (fd < 0) fail(w, "truncate", p.str());
  f.size = 0;
  if (w.rng.below(4) != 0) {
    uint len = record_length(w, MAX_RECORD);
    write_record(w, fd, len, p.str());
    f.size = len;
  }
  close(fd);
}

// xv6 has no O_APPEND and no lseek: reading to the end moves the offset there.
void append_file(Worker &w, int slot) {
  FileSlot &f = w.files[slot];
  if (f.size + MIN_RECORD > MAX_FILE_BYTES) {
    truncate_file(w, slot);
    return;
  }
  Path p = file_path(w, slot);
  int fd = open(p.str(), O_RDWR);
  if (fd < 0) fail(w, "open", p.str());
  uint seen = 0;
  int n;
  while ((n = read(fd, scratch, sizeof(scratch))) > 0) seen += static_cast<uint>(n);
  if (n < 0 || seen != f.size) fail(w, "size differs from what was written to", p.str());
  uint len = record_length(w, MAX_FILE_BYTES - f.size);
  write_record(w, fd, len, p.str());
  f.size += len;
  close(fd);
}

// A rename is link() to the new name, then unlink() of the old: in between, the file has
// two names and a link count of two, which a crash may preserve.
void rename_file(Worker &w, int slot) {
  FileSlot &f = w.files[slot];
  Path from = file_path(w, slot);
  FileSlot old = f;
  f.dir = pick_dir(w);
  f.gen = old.gen + 1;
  Path to = file_path(w, slot);
  if (link(from.str(), to.str()) < 0) fail(w, "link", to.str());
  if (unlink(from.str()) < 0) fail(w, "unlink", from.str());
  if (f.has_alias) {
    // The alias carries the generation in its name too: move it along.
    f.gen = old.gen;
    Path alias_from = alias_path(w, slot);
    f.gen = old.gen + 1;
    Path alias_to = alias_path(w, slot);
    if (link(to.str(), alias_to.str()) < 0) fail(w, "link", alias_to.str());
    if (unlink(alias_from.str()) < 0) fail(w, "unlink", alias_from.str());
  }
}

void toggle_alias(Worker &w, int slot) {
  FileSlot &f = w.files[slot];
  if (f.has_alias) {
    Path a = alias_path(w, slot);
    if (unlink(a.str()) < 0) fail(w, "unlink", a.str());
    f.has_alias = false;
    return;
  }
  f.alias_dir = pick_dir(w);
  Path p = file_path(w, slot);
  Path a = alias_path(w, slot);
  if (link(p.str(), a.str()) < 0) fail(w, "link", a.str());
  f.has_alias = true;
  struct stat st;
  if (stat(a.str(), &st) < 0 || st.nlink != 2 || st.size != f.size) {
    fail(w, "link count or size wrong on", a.str());
  }
}

void remove_file(Worker &w, int slot) {
  FileSlot &f = w.files[slot];
  if (f.has_alias) {
    Path a = alias_path(w, slot);
    if (unlink(a.str()) < 0) fail(w, "unlink", a.str());
  }
  Path p = file_path(w, slot);
  if (unlink(p.str()) < 0) fail(w, "unlink", p.str());
  f = FileSlot{};
}

void make_subdir(Worker &w, int d) {
  Path p = dir_path(w, d);
  if (mkdir(p.str()) < 0) fail(w, "mkdir", p.str());
  w.subdir[d] = true;
}

// A directory can be removed only when empty: first every file with a name in it goes.
void remove_subdir(Worker &w, int d) {
  for (int slot = 0; slot < FILE_SLOTS; slot++) {
    const FileSlot &f = w.files[slot];
    if (f.exists && (f.dir == d || (f.has_alias && f.alias_dir == d))) remove_file(w, slot);
  }
  Path p = dir_path(w, d);
  if (unlink(p.str()) < 0) fail(w, "rmdir", p.str());
  w.subdir[d] = false;
}

void step(Worker &w) {
  if (w.rng.below(10) == 0) {
    int d = static_cast<int>(w.rng.below(SUBDIRS));
    if (w.subdir[d]) {
      remove_subdir(w, d);
    } else {
      make_subdir(w, d);
    }
    return;
  }
  int slot = static_cast<int>(w.rng.below(FILE_SLOTS));
  if (!w.files[slot].exists) {
    create_file(w, slot);
    return;
  }
  uint choice = w.rng.below(100);
  if (choice < 40) {
    append_file(w, slot);
  } else if (choice < 52) {
    truncate_file(w, slot);
  } else if (choice < 72) {
    rename_file(w, slot);
  } else if (choice < 85) {
    toggle_alias(w, slot);
  } else {
    remove_file(w, slot);
  }
}

[[noreturn]] void run_worker(uint id, uint seed, long limit) {
  Worker w;
  w.id = id;
  w.rng = Rng{0x9e3779b97f4a7c15UL ^ ((static_cast<uint64>(seed) << 8) + id)};
  while (limit == 0 || w.ops < limit) {
    step(w);
    w.ops++;
    if (w.ops % REPORT_EVERY == 0) printf("crashwork: %ld ops (cw%u)\n", w.ops, id);
  }
  printf("crashwork: cw%u done after %ld ops\n", id, w.ops);
  exit(0);
}

// --- Starting clean ----------------------------------------------------------------------

// Remove path and, if it is a directory, everything below it. Each directory is closed
// before it is unlinked, so even this never unlinks an open file. False if something stayed.
bool remove_tree(const char *path) {
  struct stat st;
  if (stat(path, &st) < 0) return true;  // nothing there
  if (st.type == T_DIR) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    fsfmt::DirEntry de;
    while (read(fd, &de, sizeof(de)) == sizeof(de)) {
      if (de.inum == 0) continue;
      char name[fsfmt::DIRSIZ + 1];
      memmove(name, de.name, fsfmt::DIRSIZ);
      name[fsfmt::DIRSIZ] = '\0';
      if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
      Path child;
      child.add(path).add("/").add(name);
      if (!remove_tree(child.str())) {
        close(fd);
        return false;
      }
    }
    close(fd);
  }
  return unlink(path) == 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 3 || (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9')) ||
      (argc > 2 && (argv[2][0] < '0' || argv[2][0] > '9')))
    usage_exit("crashwork [SEED [OPS]]\n");
  uint seed = argc > 1 ? static_cast<uint>(atoi(argv[1])) : 1;
  long limit = argc > 2 ? atoi(argv[2]) : 0;

  // The directories are made before any worker starts, one after another, so that their
  // inode numbers do not depend on the scheduler.
  for (uint id = 0; id < WORKERS; id++) {
    Path top;
    top.add("cw").add(id);
    if (!remove_tree(top.str()) || mkdir(top.str()) < 0) {
      fprintf(2, "crashwork: cannot make a fresh %s\n", top.str());
      return 1;
    }
  }
  printf("crashwork: seed %u, %d workers\n", seed, WORKERS);

  for (uint id = 0; id < WORKERS; id++) {
    int pid = fork();
    if (pid < 0) {
      fprintf(2, "crashwork: fork failed\n");
      return 1;
    }
    if (pid == 0) run_worker(id, seed, limit);
  }
  int failed = 0;
  for (int i = 0; i < WORKERS; i++) {
    int status = 0;
    if (wait(&status) < 0) break;
    if (status != 0) failed++;
  }
  if (failed != 0) {
    printf("crashwork: %d workers failed\n", failed);
    return 1;
  }
  printf("crashwork: done\n");
  return 0;
}
