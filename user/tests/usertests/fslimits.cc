// usertests: the file system at its limits, and under concurrent use.
//
// Every resource runs out somewhere: a file at MAXFILE blocks (12 direct and 256 through
// the indirect block), the disk when its free blocks are gone, the inode table at its
// last free inode, a process's descriptor table at NOFILE and the kernel's open-file
// table at NFILE. Each time the call that asks for more must fail with -1 (or, for a
// write, stop short), leave what exists intact, and everything must work again once the
// test has cleaned up.
//
// "Work again" is checked strictly: each test that fills the disk or the inode table
// fills it twice, and the two fills must hold exactly as much. A failed call that leaked
// a block or an inode would make the second fill smaller.
#include "usertests.h"

namespace ut {

namespace {

constexpr int BLOCK = 1024;
constexpr int MAX_FILE_BLOCKS = 12 + 256;

}  // namespace

// A file of exactly MAXFILE blocks; one block more is refused and changes nothing.
void test_maxfile() {
  const char *path = "um_big";
  int fd = open(path, O_CREATE | O_RDWR | O_TRUNC);
  CHECK(fd >= 0, "cannot create %s", path);
  for (int b = 0; b < MAX_FILE_BLOCKS; b++) {
    for (int i = 0; i < BLOCK; i += 4) *reinterpret_cast<int *>(scratch + i) = b * 1000 + i;
    int w = write(fd, scratch, BLOCK);
    CHECK(w == BLOCK, "write of block %d returned %d", b, w);
  }
  int w = write(fd, scratch, BLOCK);
  CHECK(w == -1 || (w >= 0 && w < BLOCK), "write past MAXFILE blocks returned %d", w);
  CHECK(write(fd, scratch, 1) <= 0, "a 1-byte write past MAXFILE succeeded");
  struct stat st;
  CHECK(fstat(fd, &st) == 0, "fstat failed");
  CHECK(st.size == static_cast<unsigned long>(MAX_FILE_BLOCKS) * BLOCK,
        "the file has %lu bytes, expected %d", st.size, MAX_FILE_BLOCKS * BLOCK);
  close(fd);
  // Read it all back: direct blocks, the first indirect one, the last one.
  fd = open(path, O_RDONLY);
  for (int b = 0; b < MAX_FILE_BLOCKS; b++) {
    read_exact(fd, scratch, BLOCK, path);
    for (int i = 0; i < BLOCK; i += 4) {
      int v = *reinterpret_cast<int *>(scratch + i);
      CHECK(v == b * 1000 + i, "block %d offset %d holds %d", b, i, v);
    }
  }
  char c;
  CHECK(read(fd, &c, 1) == 0, "read past MAXFILE blocks returned data");
  close(fd);
  must_unlink(path);
}

// A directory of hundreds of entries, all links to one file.
void test_bigdir() {
  constexpr int LINKS = 256;
  CHECK(mkdir("ub") == 0, "mkdir ub failed");
  make_file("ub/base", "b", 1);
  char name[32];
  for (int i = 0; i < LINKS; i++) {
    int r = link("ub/base", numbered(name, "ub/l", i));
    CHECK(r == 0, "link number %d failed", i);
  }
  struct stat st;
  CHECK(stat("ub/base", &st) == 0 && st.nlink == LINKS + 1, "nlink is %d, expected %d", st.nlink,
        LINKS + 1);
  CHECK(stat("ub", &st) == 0 && st.size >= (LINKS + 3) * 16UL, "directory size %lu", st.size);
  long size = static_cast<long>(st.size);
  for (int i = LINKS - 1; i >= 0; i -= 37) {
    CHECK(stat(numbered(name, "ub/l", i), &st) == 0, "%s is missing", name);
  }
  CHECK(link("ub/base", "ub/l17") == -1, "a duplicate name was accepted");
  // Remove every eighth one, reuse the freed slots with new names, then remove the rest.
  for (int i = 0; i < LINKS; i += 8) must_unlink(numbered(name, "ub/l", i));
  for (int i = 0; i < LINKS; i += 8) {
    CHECK(link("ub/base", numbered(name, "ub/m", i)) == 0, "relink %d failed", i);
  }
  CHECK(stat("ub", &st) == 0 && static_cast<long>(st.size) == size,
        "the directory grew from %ld to %lu bytes instead of reusing free slots", size, st.size);
  CHECK(unlink("ub") == -1, "unlink of a directory of %d entries succeeded", LINKS);
  for (int i = 0; i < LINKS; i++) {
    must_unlink(numbered(name, i % 8 == 0 ? "ub/m" : "ub/l", i));
  }
  CHECK(stat("ub/base", &st) == 0 && st.nlink == 1, "nlink is %d after removing all links",
        st.nlink);
  must_unlink("ub/base");
  must_unlink("ub");
}

namespace {

// Create files until no inode is left; twice, with the same count.
int fill_inodes(const char *prefix, char *name) {
  int n = 0;
  for (;;) {
    int fd = open(numbered(name, prefix, n), O_CREATE | O_RDWR);
    if (fd < 0) break;
    close(fd);
    n++;
    CHECK(n <= NINODES, "created %d files on a disk of %d inodes", n, NINODES);
  }
  return n;
}

}  // namespace

void test_noinodes() {
  CHECK(mkdir("ui") == 0, "mkdir ui failed");
  char name[32];
  int first = fill_inodes("ui/", name);
  CHECK(first >= 50, "only %d inodes were free", first);
  // With no inode left, nothing else that needs one can be made either...
  CHECK(mkdir("ui/d") == -1, "mkdir with no free inode succeeded");
  CHECK(mknod("ui/n", 9, 0) == -1, "mknod with no free inode succeeded");
  // ...but what needs none still works: a link, and writing to an existing file.
  CHECK(link("ui/0", "ui/link") == 0, "link with no free inode failed");
  int fd = open("ui/1", O_RDWR);
  write_exact(fd, "still writable", 14, "ui/1");
  close(fd);
  must_unlink("ui/link");
  for (int i = 0; i < first; i++) must_unlink(numbered(name, "ui/", i));
  int second = fill_inodes("ui/", name);
  for (int i = 0; i < second; i++) must_unlink(numbered(name, "ui/", i));
  must_unlink("ui");
  CHECK(second == first, "the inode table held %d files, then %d: inodes leaked", first, second);
}

namespace {

// Write files until the disk is full. Returns the number of whole blocks written.
int fill_disk(char *name, int *files) {
  memset(scratch, 'D', 4 * BLOCK);
  int blocks = 0;
  *files = 0;
  for (bool full = false; !full; (*files)++) {
    int fd = open(numbered(name, "uo/", *files), O_CREATE | O_RDWR);
    if (fd < 0) break;  // no block left for the directory to grow: also full
    for (int b = 0; b < MAX_FILE_BLOCKS; b++) {
      int w = write(fd, scratch, BLOCK);
      if (w != BLOCK) {
        CHECK(w == -1 || (w >= 0 && w < BLOCK), "a write to a full disk returned %d", w);
        full = true;
        break;
      }
      blocks++;
    }
    close(fd);
  }
  return blocks;
}

void remove_fill(char *name, int files) {
  for (int i = 0; i < files; i++) unlink(numbered(name, "uo/", i));
}

}  // namespace

// The files go in a directory of their own, made before the first fill, so that the
// directory itself does not grow during either fill and both hold the same data blocks.
void test_noblocks() {
  CHECK(mkdir("uo") == 0, "mkdir uo failed");
  char name[32];
  int files = 0;
  int first = fill_disk(name, &files);
  CHECK(first >= 500, "only %d blocks could be written", first);
  // With the disk full: a directory needs a block and fails; a file needs none.
  CHECK(mkdir("uo/dir") == -1, "mkdir on a full disk succeeded");
  struct stat st;
  CHECK(stat("uo/dir", &st) == -1, "a failed mkdir left its name behind");
  int fd = open("uo/empty", O_CREATE | O_RDWR);
  if (fd >= 0) {
    CHECK(write(fd, scratch, BLOCK) <= 0, "a write on a full disk succeeded");
    close(fd);
    must_unlink("uo/empty");
  }
  // What was written is intact.
  fd = open(numbered(name, "uo/", 0), O_RDONLY);
  CHECK(fd >= 0, "cannot open %s", name);
  read_exact(fd, scratch2, BLOCK, name);
  CHECK(scratch2[0] == 'D' && scratch2[BLOCK - 1] == 'D', "data of a full disk is wrong");
  close(fd);
  remove_fill(name, files);
  int files2 = 0;
  int second = fill_disk(name, &files2);
  remove_fill(name, files2);
  CHECK(second == first, "the disk took %d blocks, then %d: blocks leaked", first, second);
  // And a normal file can be written again.
  memset(scratch, 'n', 8 * BLOCK);
  make_file("uo/after", scratch, 8 * BLOCK);
  must_unlink("uo/after");
  must_unlink("uo");
}

// The descriptor table of one process: NOFILE entries, lowest free one first.
void test_nofds() {
  int fds[NOFILE];
  int n = 0;
  for (;;) {
    int fd = open("/README", O_RDONLY);
    if (fd < 0) break;
    CHECK(n < NOFILE, "more than NOFILE descriptors open");
    fds[n++] = fd;
  }
  CHECK(n == NOFILE - 3, "opened %d files besides 0, 1, 2; expected %d", n, NOFILE - 3);
  // Every way of asking for one more fails, many times over, without using anything up.
  for (int i = 0; i < 50; i++) {
    CHECK(open("/README", O_RDONLY) == -1, "open beyond NOFILE succeeded");
    CHECK(dup(0) == -1, "dup beyond NOFILE succeeded");
    int p[2];
    CHECK(pipe(p) == -1, "pipe beyond NOFILE succeeded");
    CHECK(open("un_fdfile", O_CREATE | O_RDWR) == -1, "create beyond NOFILE succeeded");
  }
  // The failed create may have made the file (that is allowed); remove it if so.
  unlink("un_fdfile");
  // The lowest free descriptor is reused.
  close(fds[4]);
  int fd = open("/README", O_RDONLY);
  CHECK(fd == fds[4], "after closing fd %d, open returned %d", fds[4], fd);
  for (int i = 0; i < n; i++) close(fds[i]);
  fd = open("/README", O_RDONLY);
  CHECK(fd == 3, "after closing all, open returned %d", fd);
  close(fd);
  // A child inherits the descriptors and can close its copies without touching ours.
  int p[2];
  CHECK(pipe(p) == 0, "pipe failed");
  int pid = spawn([&] {
    for (int i = 3; i < NOFILE; i++) close(i);
  });
  expect_ok(pid, "closing child");
  write_exact(p[1], "k", 1, "pipe after the child closed its copies");
  close(p[0]);
  close(p[1]);
}

namespace {

// The kernel's table of in-memory inodes (NINODE) is smaller than the number of files:
// processes holding many distinct files open must fill it, after which opens fail with -1
// (and nothing crashes). Its capacity is measured twice, with a battery of failing calls
// in between; a failing call that forgot to release an inode would shrink it.
constexpr int INODE_HOLDERS = 6;
constexpr int PER_HOLDER = 12;
constexpr int INODE_FILES = INODE_HOLDERS * PER_HOLDER;  // more than NINODE

// How many of the files the holders manage to have open at the same time.
int inode_capacity() {
  int counts[2], gate[2];
  CHECK(pipe(counts) == 0 && pipe(gate) == 0, "pipe failed");
  for (int c = 0; c < INODE_HOLDERS; c++) {
    spawn([&, c] {
      close(counts[0]);
      close(gate[1]);
      int n = 0;
      char mine[32];
      for (int i = 0; i < PER_HOLDER; i++) {
        if (open(numbered(mine, "uq/", c * PER_HOLDER + i), O_RDONLY) >= 0) n++;
      }
      write(counts[1], &n, sizeof(n));
      char x;
      read(gate[0], &x, 1);  // hold them until everyone has counted
    });
  }
  close(counts[1]);
  close(gate[0]);
  int total = 0;
  for (int c = 0; c < INODE_HOLDERS; c++) {
    int n = 0;
    read_exact(counts[0], &n, sizeof(n), "count");
    total += n;
  }
  // With the table full a lookup fails too, but cleanly.
  struct stat st;
  int probe = stat("/README", &st);
  CHECK(probe == 0 || probe == -1, "stat with a full inode table returned %d", probe);
  close(gate[1]);
  close(counts[0]);
  CHECK(reap_all() == INODE_HOLDERS, "lost a holder");
  return total;
}

// Calls that fail after having looked up one or two inodes.
void failing_lookups() {
  char *argv[] = {const_cast<char *>("x"), nullptr};
  for (int i = 0; i < 10; i++) {
    CHECK(link("uq/0", "uq/1") == -1, "link onto an existing name succeeded");
    CHECK(link("uq", "uq/dirlink") == -1, "link of a directory succeeded");
    CHECK(link("uq/missing", "uq/x") == -1, "link of a missing file succeeded");
    CHECK(unlink("uq") == -1, "unlink of a non-empty directory succeeded");
    CHECK(unlink("uq/missing") == -1, "unlink of a missing file succeeded");
    CHECK(open("uq", O_RDWR) == -1, "open of a directory for writing succeeded");
    CHECK(chdir("uq/0") == -1, "chdir to a file succeeded");
    CHECK(mkdir("uq/0/x") == -1, "mkdir under a file succeeded");
    CHECK(mkdir("uq/1") == -1, "mkdir over a file succeeded");
    CHECK(mknod("uq/2", 1, 0) == -1, "mknod over a file succeeded");
    CHECK(open("uq/0/x", O_CREATE | O_RDWR) == -1, "create under a file succeeded");
    int pid = spawn([&] { exit(exec("uq/0", argv) == -1 ? 0 : 1); });
    expect_ok(pid, "exec of a non-program");
  }
}

}  // namespace

void test_ninode() {
  CHECK(mkdir("uq") == 0, "mkdir uq failed");
  char name[32];
  for (int i = 0; i < INODE_FILES; i++) make_file(numbered(name, "uq/", i), "i", 1);
  int first = inode_capacity();
  CHECK(first < INODE_FILES, "%d distinct files open at once: the inode table never filled", first);
  failing_lookups();
  int second = inode_capacity();
  CHECK(second == first, "the inode table held %d files, then %d: references leaked", first,
        second);
  for (int i = 0; i < INODE_FILES; i++) {
    int fd = open(numbered(name, "uq/", i), O_RDONLY);
    CHECK(fd >= 0, "%s does not open after the table emptied", name);
    close(fd);
    must_unlink(name);
  }
  must_unlink("uq");
}

// The kernel's table of open files (NFILE) is shared by all processes.
void test_nfile() {
  constexpr int CHILDREN = 10;  // 10 x 11 descriptors: more than NFILE
  int counts[2], gate[2];
  CHECK(pipe(counts) == 0 && pipe(gate) == 0, "pipe failed");
  for (int c = 0; c < CHILDREN; c++) {
    spawn([&] {
      close(counts[0]);
      close(gate[1]);
      // Open as many as this process may (4 descriptors are taken by the two pipes).
      int n = 0;
      while (open("/README", O_RDONLY) >= 0) n++;
      write(counts[1], &n, sizeof(n));
      char x;
      read(gate[0], &x, 1);  // hold them until the parent has counted everyone's
    });
  }
  close(counts[1]);
  close(gate[0]);
  int total = 0;
  bool someone_short = false;
  for (int c = 0; c < CHILDREN; c++) {
    int n = 0;
    read_exact(counts[0], &n, sizeof(n), "count");
    total += n;
    if (n < NOFILE - 5) someone_short = true;
  }
  CHECK(total <= NFILE, "%d files open at once, more than NFILE (%d)", total, NFILE);
  CHECK(someone_short, "no child ran out: the open-file table has room for %d+", total);
  close(gate[1]);  // let them go
  close(counts[0]);
  CHECK(reap_all() == CHILDREN, "lost a child");
  // Everything came back: a process can open its full share again.
  int n = 0;
  int fds[NOFILE];
  for (int fd; (fd = open("/README", O_RDONLY)) >= 0;) fds[n++] = fd;
  CHECK(n == NOFILE - 3, "after the children left only %d files could be opened", n);
  while (n > 0) close(fds[--n]);
}

// Several processes creating, writing, linking and removing the same few names in one
// directory at the same time. Afterwards the directory must be consistent: every entry
// names a live inode, and it can be emptied and removed.
void test_fsconcurrent() {
  constexpr int WORKERS = 4;
  constexpr int ROUNDS = 250;
  constexpr int NAMES = 8;
  CHECK(mkdir("uc") == 0, "mkdir uc failed");
  int pids[WORKERS];
  for (int w = 0; w < WORKERS; w++) {
    pids[w] = spawn([w] {
      Rng rng{0x1234UL + w};
      char name[32], other[32];
      for (int i = 0; i < ROUNDS; i++) {
        numbered(name, "uc/n", static_cast<int>(rng.below(NAMES)));
        switch (rng.below(5)) {
          case 0:
          case 1: {
            int fd = open(name, O_CREATE | O_RDWR);
            if (fd >= 0) {  // it may be a directory, made by another worker
              write(fd, "abcdefgh", 1 + rng.below(8));
              close(fd);
            }
            break;
          }
          case 2:
            unlink(name);  // may fail: already gone, or a non-empty directory
            break;
          case 3: link(name, numbered(other, "uc/n", static_cast<int>(rng.below(NAMES)))); break;
          default:
            if (rng.below(4) == 0) {
              mkdir(name);
            } else {
              // Another worker may unlink the name between the open and the fstat: a file
              // held open keeps its inode with nlink 0. But such a file can never be named
              // again, so while it is held the name must lead elsewhere, or nowhere.
              int fd = open(name, O_RDONLY);
              struct stat st;
              if (fd >= 0 && fstat(fd, &st) == 0) {
                CHECK(st.type == T_FILE || st.type == T_DIR, "%s has type %d", name, st.type);
                struct stat now;
                CHECK(st.nlink >= 1 || stat(name, &now) != 0 || now.ino != st.ino,
                      "%s names inode %u, which has nlink 0", name, st.ino);
              }
              if (fd >= 0) close(fd);
            }
        }
      }
    });
  }
  expect_all_ok(pids, WORKERS, "worker");
  // Check every entry, then clear them all. Every entry leads to its inode, and each
  // inode's nlink is the number of entries that name it: the names are all in uc, and
  // a directory's "." is not counted (dir.cc).
  int fd = open("uc", O_RDONLY);
  CHECK(fd >= 0, "cannot open uc");
  struct {
    unsigned short inum;
    char name[14];
  } e;
  char path[32];
  unsigned short inums[NAMES];
  int entries = 0;
  while (read(fd, &e, sizeof(e)) == sizeof(e)) {
    if (e.inum == 0 || e.name[0] == '.') continue;
    CHECK(entries < NAMES, "uc holds more than %d names", NAMES);
    inums[entries++] = e.inum;
    strcpy(path, "uc/");
    memcpy(path + 3, e.name, 14);
    path[17] = '\0';
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.ino == e.inum, "entry %s does not lead to inode %d", path,
          e.inum);
  }
  close(fd);
  int found = 0;
  for (int i = 0; i < NAMES; i++) {
    struct stat st;
    if (stat(numbered(path, "uc/n", i), &st) != 0) continue;
    found++;
    int names = 0;
    for (int k = 0; k < entries; k++) names += inums[k] == st.ino;
    CHECK(names > 0, "%s leads to inode %u, which no entry of uc names", path, st.ino);
    CHECK(st.nlink == names, "inode %u has nlink %d but %d entries name it", st.ino, st.nlink,
          names);
  }
  CHECK(found == entries, "uc has %d entries but %d of its names lead anywhere", entries, found);
  for (int i = 0; i < NAMES; i++) unlink(numbered(path, "uc/n", i));
  CHECK(unlink("uc") == 0, "uc could not be removed after the workers finished");

  // Everyone creating one name at the same moment gets the same file.
  int p[2];
  CHECK(pipe(p) == 0, "pipe failed");
  for (int w = 0; w < WORKERS; w++) {
    pids[w] = spawn([&] {
      int fd2 = open("uc_same", O_CREATE | O_RDWR);
      CHECK(fd2 >= 0, "concurrent create failed");
      struct stat st;
      fstat(fd2, &st);
      unsigned ino = st.ino;
      write(p[1], &ino, sizeof(ino));
      close(fd2);
    });
  }
  unsigned inos[WORKERS];
  for (int w = 0; w < WORKERS; w++) read_exact(p[0], &inos[w], sizeof(inos[w]), "ino");
  expect_all_ok(pids, WORKERS, "creator");
  for (int w = 1; w < WORKERS; w++) {
    CHECK(inos[w] == inos[0], "concurrent creates of one name made inodes %u and %u", inos[0],
          inos[w]);
  }
  close(p[0]);
  close(p[1]);
  must_unlink("uc_same");
}

}  // namespace ut
