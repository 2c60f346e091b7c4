// usertests: the file system's behaviour. Files, links, directories, names and paths.
//
// A file is an inode; a name is a directory entry pointing at it; an inode counts its
// names (nlink) and is freed when the count is zero and no open file refers to it any
// more. A directory is an inode whose contents are 16-byte entries, starting with "." and
// "..". The rules checked here:
//
//   * what is written is read back, at any offset, through any descriptor to the file;
//   * link adds a name, unlink removes one, and an open file outlives its last name;
//   * directories cannot be written as files, linked, or removed while they hold entries,
//     and "." and ".." cannot be removed;
//   * ".." of the root is the root;
//   * a name element is at most DIRSIZ (14) bytes: a longer one is cut to 14, both when it
//     is created and when it is looked up, so the two spellings name the same file;
//   * a path, with its terminating NUL, fits in MAXPATH (128) bytes, or the call fails;
//   * several processes creating and removing names in one directory at once leave it
//     consistent (run at CPUS=3 for this to mean something).
#include "usertests.h"

namespace ut {

namespace {

char fill_byte(int file, int i) { return static_cast<char>((file * 31 + i * 7) & 0xff); }

}  // namespace

// Create, write, read back and remove many files of different sizes.
void test_fsmany() {
  constexpr int FILES = 40;
  char name[32];
  for (int f = 0; f < FILES; f++) {
    int size = (f * 1371) % 5000;
    for (int i = 0; i < size; i++) scratch[i] = fill_byte(f, i);
    make_file(numbered(name, "uf_", f), scratch, size);
  }
  for (int f = 0; f < FILES; f++) {
    int size = (f * 1371) % 5000;
    int fd = open(numbered(name, "uf_", f), O_RDONLY);
    CHECK(fd >= 0, "cannot open %s", name);
    struct stat st;
    CHECK(fstat(fd, &st) == 0, "fstat %s failed", name);
    CHECK(st.type == T_FILE && st.nlink == 1 && st.size == static_cast<unsigned long>(size),
          "%s: type %d nlink %d size %lu, expected a file of %d bytes", name, st.type, st.nlink,
          st.size, size);
    int n = read(fd, scratch2, sizeof(scratch2));
    CHECK(n == size, "%s: read %d bytes of %d", name, n, size);
    for (int i = 0; i < size; i++) {
      CHECK(scratch2[i] == fill_byte(f, i), "%s: byte %d is wrong", name, i);
    }
    close(fd);
  }
  for (int f = 0; f < FILES; f++) must_unlink(numbered(name, "uf_", f));
  for (int f = 0; f < FILES; f++) {
    CHECK(open(numbered(name, "uf_", f), O_RDONLY) == -1, "%s still opens after unlink", name);
  }
}

// Offsets: each open has its own; dup and fork share one; writes extend, reads stop at end.
void test_fsoffsets() {
  const char *path = "uo_file";
  make_file(path, "0123456789", 10);
  int a = open(path, O_RDWR);
  int b = open(path, O_RDONLY);
  CHECK(a >= 0 && b >= 0, "cannot open %s twice", path);
  char buf[16];
  read_exact(a, buf, 4, "fd a");
  read_exact(b, buf, 2, "fd b");
  CHECK(memcmp(buf, "01", 2) == 0, "the second open does not start at offset 0");
  int c = dup(a);
  read_exact(c, buf, 2, "dup of a");
  CHECK(memcmp(buf, "45", 2) == 0, "a dup does not share its original's offset");
  // A child shares the offset too: it reads "67", after which we read "89".
  int pid = spawn([&] { read_exact(a, buf, 2, "child's a"); });
  expect_ok(pid, "offset child");
  read_exact(a, buf, 2, "fd a after the child");
  CHECK(memcmp(buf, "89", 2) == 0, "a forked child does not share the offset");
  CHECK(read(a, buf, 5) == 0, "read at the end of the file did not return 0");
  // Writing at the end extends the file; the other descriptor sees it.
  write_exact(a, "abc", 3, "append");
  read_exact(b, buf, 11, "fd b");
  CHECK(memcmp(buf, "23456789abc", 11) == 0, "fd b does not see the appended bytes");
  // Overwriting in the middle through a fresh descriptor.
  int d = open(path, O_WRONLY);
  write_exact(d, "XY", 2, "overwrite");
  close(d);
  close(b);
  b = open(path, O_RDONLY);
  read_exact(b, buf, 13, "whole file");
  CHECK(memcmp(buf, "XY23456789abc", 13) == 0, "overwrite went wrong");
  struct stat st;
  CHECK(fstat(b, &st) == 0 && st.size == 13, "file size is %lu, expected 13", st.size);
  close(a);
  close(b);
  close(c);
  // O_TRUNC empties it; O_RDONLY cannot write; O_WRONLY cannot read.
  a = open(path, O_RDWR | O_TRUNC);
  CHECK(fstat(a, &st) == 0 && st.size == 0, "O_TRUNC left %lu bytes", st.size);
  close(a);
  a = open(path, O_RDONLY);
  CHECK(write(a, "x", 1) == -1, "write through O_RDONLY did not fail");
  close(a);
  a = open(path, O_WRONLY);
  CHECK(read(a, buf, 1) == -1, "read through O_WRONLY did not fail");
  close(a);
  must_unlink(path);
}

// Links: names of one inode, nlink counts, and a file that outlives its names while open.
void test_fslinks() {
  make_file("ul_a", "hello", 5);
  CHECK(link("ul_a", "ul_b") == 0, "link ul_a ul_b failed");
  CHECK(link("ul_b", "ul_c") == 0, "link ul_b ul_c failed");
  struct stat sa, sc;
  CHECK(stat("ul_a", &sa) == 0 && stat("ul_c", &sc) == 0, "stat failed");
  CHECK(sa.ino == sc.ino, "links have different inodes (%u, %u)", sa.ino, sc.ino);
  CHECK(sa.nlink == 3, "nlink is %d after two links, expected 3", sa.nlink);
  // Writing through one name is seen through another.
  int fd = open("ul_c", O_WRONLY);
  write_exact(fd, "J", 1, "ul_c");
  close(fd);
  char buf[8];
  fd = open("ul_a", O_RDONLY);
  read_exact(fd, buf, 5, "ul_a");
  CHECK(memcmp(buf, "Jello", 5) == 0, "a write through one link is not seen through another");
  close(fd);
  // What link must refuse.
  CHECK(link("ul_a", "ul_b") == -1, "link onto an existing name succeeded");
  CHECK(link("ul_missing", "ul_d") == -1, "link of a missing file succeeded");
  CHECK(link("ul_a", "ul_nodir/x") == -1, "link into a missing directory succeeded");
  CHECK(link(".", "ul_dot") == -1, "link of a directory succeeded");
  CHECK(link("/", "ul_root") == -1, "link of the root succeeded");
  // Remove names one by one; the last unlink of an open file keeps it readable.
  must_unlink("ul_a");
  must_unlink("ul_b");
  CHECK(stat("ul_c", &sc) == 0 && sc.nlink == 1, "nlink is %d after two unlinks", sc.nlink);
  CHECK(unlink("ul_a") == -1, "second unlink of ul_a succeeded");
  fd = open("ul_c", O_RDWR);
  must_unlink("ul_c");
  CHECK(open("ul_c", O_RDONLY) == -1, "ul_c opens after its last unlink");
  read_exact(fd, buf, 5, "unlinked open file");
  CHECK(memcmp(buf, "Jello", 5) == 0, "an unlinked open file lost its data");
  memset(scratch, 'w', 3000);
  write_exact(fd, scratch, 3000, "unlinked open file");
  struct stat st;
  CHECK(fstat(fd, &st) == 0 && st.nlink == 0 && st.size == 3005,
        "unlinked open file: nlink %d size %lu, expected 0 and 3005", st.nlink, st.size);
  close(fd);  // frees the inode and its blocks
  // The same name can be made again, as a new, empty file.
  fd = open("ul_c", O_CREATE | O_RDWR);
  CHECK(fd >= 0, "cannot re-create ul_c");
  CHECK(fstat(fd, &st) == 0 && st.size == 0, "re-created ul_c is not empty");
  close(fd);
  must_unlink("ul_c");
  CHECK(unlink("ul_missing") == -1, "unlink of a missing file succeeded");
}

// Directories are not files: they cannot be written, linked, or removed while not empty.
void test_fsdirs() {
  CHECK(mkdir("ud") == 0, "mkdir ud failed");
  CHECK(mkdir("ud") == -1, "mkdir of an existing directory succeeded");
  CHECK(open("ud", O_RDWR) == -1, "open of a directory for O_RDWR succeeded");
  CHECK(open("ud", O_WRONLY) == -1, "open of a directory for O_WRONLY succeeded");
  CHECK(open("ud", O_CREATE | O_RDWR) == -1, "open(O_CREATE) of a directory succeeded");
  CHECK(mknod("ud", 1, 0) == -1, "mknod over a directory succeeded");
  int fd = open("ud", O_RDONLY);
  CHECK(fd >= 0, "open of a directory for reading failed");
  struct stat st;
  CHECK(fstat(fd, &st) == 0 && st.type == T_DIR, "fstat of a directory: type %d", st.type);
  // Its contents are entries; the first two are "." and "..".
  struct {
    unsigned short inum;
    char name[14];
  } entries[2];
  read_exact(fd, entries, sizeof(entries), "directory");
  CHECK(strcmp(entries[0].name, ".") == 0 && entries[0].inum == st.ino,
        "the first entry is not \".\"");
  CHECK(strcmp(entries[1].name, "..") == 0, "the second entry is not \"..\"");
  CHECK(write(fd, "x", 1) == -1, "write to a directory succeeded");
  close(fd);

  make_file("ud/f", "data", 4);
  CHECK(unlink("ud") == -1, "unlink of a non-empty directory succeeded");
  CHECK(unlink("ud/.") == -1, "unlink of ud/. succeeded");
  CHECK(unlink("ud/..") == -1, "unlink of ud/.. succeeded");
  // A file is not a directory.
  CHECK(open("ud/f/x", O_CREATE | O_RDWR) == -1, "create under a file succeeded");
  CHECK(mkdir("ud/f/x") == -1, "mkdir under a file succeeded");
  CHECK(chdir("ud/f") == -1, "chdir to a file succeeded");
  CHECK(mkdir("ud/missing/x") == -1, "mkdir under a missing directory succeeded");
  CHECK(mkdir("/") == -1, "mkdir / succeeded");
  CHECK(unlink("/") == -1, "unlink / succeeded");
  // Nested directories count their subdirectories' ".." as links.
  CHECK(mkdir("ud/sub") == 0, "mkdir ud/sub failed");
  CHECK(stat("ud", &st) == 0, "stat ud failed");
  short links = st.nlink;
  CHECK(mkdir("ud/sub2") == 0, "mkdir ud/sub2 failed");
  CHECK(stat("ud", &st) == 0 && st.nlink == links + 1,
        "a new subdirectory did not add a link to its parent (%d, then %d)", links, st.nlink);
  must_unlink("ud/sub2");
  CHECK(stat("ud", &st) == 0 && st.nlink == links,
        "removing a subdirectory did not remove its link (%d, expected %d)", st.nlink, links);
  // chdir and relative paths.
  int pid = spawn([] {
    CHECK(chdir("ud/sub") == 0, "chdir ud/sub failed");
    make_file("g", "gg", 2);
    struct stat s1, s2;
    CHECK(stat("../f", &s1) == 0 && stat("/ud/f", &s2) == 0 && s1.ino == s2.ino,
          "../f from ud/sub is not /ud/f");
    CHECK(chdir("..") == 0 && stat("sub/g", &s1) == 0, "chdir .. went somewhere else");
  });
  expect_ok(pid, "chdir child");
  must_unlink("ud/sub/g");
  must_unlink("ud/sub");
  must_unlink("ud/f");
  CHECK(unlink("ud") == 0, "unlink of the emptied directory failed");
  CHECK(stat("ud", &st) == -1, "ud still exists");
}

// A directory removed while it is some process's working directory.
void test_fsrmcwd() {
  CHECK(mkdir("ur") == 0, "mkdir ur failed");
  int pid = spawn([] {
    CHECK(chdir("ur") == 0, "chdir ur failed");
    CHECK(unlink("/ur") == 0, "unlink of our own (empty) working directory failed");
    // Nothing can be created in it any more: the entries would be lost with it.
    CHECK(open("x", O_CREATE | O_RDWR) == -1, "create in a removed directory succeeded");
    CHECK(mkdir("y") == -1, "mkdir in a removed directory succeeded");
    struct stat st;
    CHECK(stat(".", &st) == 0 && st.type == T_DIR, "the removed working directory is gone");
    CHECK(chdir("/") == 0, "chdir / from a removed directory failed");
  });
  expect_ok(pid, "rmcwd child");
  struct stat st;
  CHECK(stat("ur", &st) == -1, "ur still exists");
}

// ".." of the root is the root, however often it is repeated.
void test_fsrootdotdot() {
  struct stat root, st;
  CHECK(stat("/", &root) == 0 && root.ino == 1 && root.type == T_DIR, "/ is not directory inode 1");
  CHECK(stat("/..", &st) == 0 && st.ino == root.ino, "/.. is inode %u, not the root", st.ino);
  CHECK(stat("/../../..", &st) == 0 && st.ino == root.ino, "/../../.. is not the root");
  CHECK(stat("/../README", &st) == 0 && st.type == T_FILE, "/../README does not exist");
  CHECK(chdir("/") == 0 && chdir("..") == 0 && stat(".", &st) == 0 && st.ino == root.ino,
        "chdir .. from / left the root");
  // A subdirectory's ".." is its parent, and the root's is the root.
  CHECK(mkdir("/ur_sub") == 0, "mkdir failed");
  CHECK(stat("/ur_sub/..", &st) == 0 && st.ino == root.ino, "/ur_sub/.. is not the root");
  CHECK(stat("/ur_sub/../ur_sub/./..", &st) == 0 && st.ino == root.ino, "a dotted path");
  must_unlink("/ur_sub");
}

// Names of DIRSIZ bytes and longer: cut to DIRSIZ, both when made and when looked up.
void test_fslongname() {
  const char *exact = "un_abcdefghijk";  // 14 bytes
  static_assert(sizeof("un_abcdefghijk") == 15);
  make_file(exact, "14", 2);
  struct stat a, b;
  CHECK(stat(exact, &a) == 0, "a 14-byte name does not exist after creation");
  CHECK(stat("un_abcdefghijkXYZ", &b) == 0 && b.ino == a.ino,
        "a 17-byte name does not find the file of its first 14 bytes");
  CHECK(stat("un_abcdefghij", &b) == -1, "a 13-byte prefix finds the 14-byte name");
  // Creating with a long name stores its first 14 bytes, "un_0123456789a".
  const char *stored = "un_0123456789a";
  static_assert(sizeof("un_0123456789a") == 15);
  make_file("un_0123456789a_tail", "19", 2);
  CHECK(stat(stored, &b) == 0, "a 19-byte name was not stored as its first 14");
  int same = open("un_0123456789aOTHER", O_CREATE | O_RDWR);
  CHECK(same >= 0, "O_CREATE of a name equal in its first 14 bytes failed");
  CHECK(fstat(same, &a) == 0 && a.ino == b.ino, "O_CREATE of an equal long name made a new file");
  close(same);
  CHECK(stat(exact, &a) == 0, "stat of the 14-byte name failed");
  // The directory holds exactly those 14 bytes, without a NUL.
  int fd = open(".", O_RDONLY);
  struct {
    unsigned short inum;
    char name[14];
  } e;
  bool found = false;
  while (read(fd, &e, sizeof(e)) == sizeof(e)) {
    if (e.inum != 0 && memcmp(e.name, stored, 14) == 0) found = true;
  }
  close(fd);
  CHECK(found, "no directory entry holds the first 14 bytes of the long name");
  // A long element in the middle of a path is cut too.
  CHECK(mkdir("un_dirdirdirdirdir") == 0, "mkdir with a long name failed");
  make_file("un_dirdirdirdirdir/f", "x", 1);
  CHECK(stat("un_dirdirdirdi/f", &b) == 0, "a long directory name was not cut to 14");
  must_unlink("un_dirdirdirdi/f");
  must_unlink("un_dirdirdirdirXX");
  must_unlink("un_abcdefghijkLONGER");
  must_unlink(stored);
  CHECK(stat(exact, &a) == -1, "unlink by the long name did not remove the file");
}

// Paths: 127 bytes (with its NUL, MAXPATH) work; 128 and more fail.
void test_fsmaxpath() {
  char *path = scratch;
  // "./" repeated, then a name: "././.../up_long" of exactly `len` bytes.
  auto build = [path](int len) {
    const char *name = "up_long";
    int prefix = len - static_cast<int>(strlen(name));
    for (int i = 0; i < prefix; i++) path[i] = (i % 2 == 0) ? '.' : '/';
    if (prefix % 2 == 1) path[prefix - 1] = '/';  // "..//" would break the pattern
    strcpy(path + prefix, name);
    CHECK(static_cast<int>(strlen(path)) == len, "test bug: path of %d bytes", len);
  };
  build(MAXPATH - 1);
  int fd = open(path, O_CREATE | O_RDWR);
  CHECK(fd >= 0, "open(O_CREATE) of a %d-byte path failed", MAXPATH - 1);
  close(fd);
  struct stat st;
  CHECK(stat("up_long", &st) == 0, "the %d-byte path did not name ./up_long", MAXPATH - 1);
  CHECK(stat(path, &st) == 0, "stat of a %d-byte path failed", MAXPATH - 1);
  constexpr int TOO_LONG[] = {MAXPATH, MAXPATH + 1, 300, 4000};
  for (int len : TOO_LONG) {
    build(len);
    CHECK(open(path, O_RDONLY) == -1, "open of a %d-byte path succeeded", len);
    CHECK(unlink(path) == -1, "unlink of a %d-byte path succeeded", len);
    CHECK(mkdir(path) == -1, "mkdir of a %d-byte path succeeded", len);
    CHECK(chdir(path) == -1, "chdir to a %d-byte path succeeded", len);
  }
  must_unlink("up_long");
  // A long path through real directories, every element a full 14 bytes.
  char deep[MAXPATH];
  deep[0] = '\0';
  int depth = 0;
  while (strlen(deep) + 15 < MAXPATH - 1) {
    strcpy(deep + strlen(deep), depth == 0 ? "up_dddddddddd0" : "/up_dddddddddd0");
    deep[strlen(deep) - 1] = static_cast<char>('0' + depth);
    CHECK(mkdir(deep) == 0, "mkdir %s failed", deep);
    depth++;
  }
  CHECK(chdir(deep) == 0, "chdir to a %d-byte path failed", static_cast<int>(strlen(deep)));
  CHECK(chdir("/") == 0, "chdir / failed");
  while (depth > 0) {
    must_unlink(deep);
    char *slash = deep + strlen(deep);
    while (slash > deep && *slash != '/') slash--;
    *slash = '\0';
    depth--;
  }
}

}  // namespace ut
