// ls: lists files, one per line: name, type (1 directory, 2 file, 3 device), inode number
// and size in bytes, as xv6's ls does.
//
// For a directory, every entry in it is listed; for anything else, just that one name.
// A directory is an ordinary file of 16-byte entries (fsfmt::DirEntry: an inode number and
// a 14-byte name), so ls reads it with read() like any file and stats each entry by path.
#include "abi/fs_format.h"
#include "lib/user.h"

namespace {

using fsfmt::DirEntry;
using fsfmt::DIRSIZ;

// The last component of a path: "a/b/c" -> "c".
const char *basename(const char *path) {
  const char *last = path;
  for (const char *p = path; *p != '\0'; p++) {
    if (*p == '/' && p[1] != '\0') last = p + 1;
  }
  return last;
}

void print_entry(const char *name, const struct stat &st) {
  printf("%-14s %d %d %lu\n", name, st.type, st.ino, st.size);
}

// Lists one directory whose open fd is given. Returns false if some entry failed.
bool list_dir(int fd, const char *path) {
  char full[MAXPATH];
  uint dirlen = strlen(path);
  // Room for "path/", a full 14-byte name and the terminating NUL.
  if (dirlen + 1 + DIRSIZ + 1 > sizeof(full)) {
    fprintf(2, "ls: path too long: %s\n", path);
    return false;
  }
  strcpy(full, path);
  char *name = full + dirlen;
  if (dirlen == 0 || full[dirlen - 1] != '/') *name++ = '/';

  bool ok = true;
  DirEntry de;
  while (read(fd, &de, sizeof(de)) == sizeof(de)) {
    if (de.inum == 0) continue;  // free slot
    // A name of exactly DIRSIZ bytes has no NUL on disk.
    memmove(name, de.name, DIRSIZ);
    name[DIRSIZ] = '\0';
    struct stat st;
    if (stat(full, &st) < 0) {
      fprintf(2, "ls: cannot stat %s\n", full);
      ok = false;
      continue;
    }
    print_entry(name, st);
  }
  return ok;
}

bool list(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    fprintf(2, "ls: cannot open %s\n", path);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) {
    fprintf(2, "ls: cannot stat %s\n", path);
    close(fd);
    return false;
  }
  bool ok = true;
  if (st.type == T_DIR) {
    ok = list_dir(fd, path);
  } else {
    print_entry(basename(path), st);
  }
  close(fd);
  return ok;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return list(".") ? 0 : 1;
  int status = 0;
  for (int i = 1; i < argc; i++) {
    if (!list(argv[i])) status = 1;
  }
  return status;
}
