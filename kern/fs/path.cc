// Path names: from "/usr/bin/ls" or "../x" to an inode.
//
// A path is a sequence of elements separated by one or more slashes. A path that starts
// with '/' is looked up from the root directory, any other from the current process's
// working directory. Each element is looked up in the directory the previous one named;
// every element but the last must therefore be a directory. An element longer than DIRSIZ
// bytes is cut to DIRSIZ, which is also all a directory entry stores.
//
// The walk holds one directory lock at a time: it locks a directory, looks up the next
// element (which returns a referenced but unlocked inode), and unlocks the directory
// before locking the next. Holding two would deadlock on "." (the same inode twice) and
// could deadlock two walks going opposite ways through "..". The reference it keeps on
// the current directory while it is unlocked stops it from being freed under the walk;
// a concurrent unlink may still remove it from its parent, in which case the walk simply
// finds no entries there.
//
// nameiparent stops one step early: it returns the directory that should contain the last
// element, and the element's name. Creating, linking and unlinking start from there.

#include "fs/fs.h"

#include "lib/string.h"
#include "proc/proc.h"

namespace {

// Copy the first element of path into name (DIRSIZ bytes, NUL-terminated only when
// shorter) and return the rest of the path with its leading slashes skipped, or nullptr
// when path holds no more elements.
//
//   next_element("a/bb/c", name) -> "bb/c", name = "a"
//   next_element("///a//bb", name) -> "bb", name = "a"
//   next_element("a", name) -> "", name = "a"
//   next_element("", name) = next_element("////", name) -> nullptr
const char *next_element(const char *path, char *name) {
  while (*path == '/') path++;
  if (*path == '\0') return nullptr;

  const char *start = path;
  while (*path != '/' && *path != '\0') path++;
  size_t len = static_cast<size_t>(path - start);
  if (len >= fsfmt::DIRSIZ) {
    memmove(name, start, fsfmt::DIRSIZ);
  } else {
    memmove(name, start, len);
    name[len] = '\0';
  }
  while (*path == '/') path++;
  return path;
}

// Walk path. With `parent`, stop at the directory holding the last element and copy that
// element into name. Returns a referenced, unlocked inode, or nullptr.
Inode *walk(const char *path, bool parent, char *name) {
  Inode *ip = (*path == '/') ? iget(ROOTDEV, fsfmt::ROOTINO) : idup(myproc()->cwd);
  if (ip == nullptr) return nullptr;

  while ((path = next_element(path, name)) != nullptr) {
    ilock(ip);
    if (ip->type != fsfmt::T_DIR) {
      iunlockput(ip);
      return nullptr;
    }
    if (parent && *path == '\0') {
      iunlock(ip);  // name is the last element: ip is its directory
      return ip;
    }
    // ".." of the root is the root. mkfs records it so, but we do not rely on the image.
    bool root_dotdot = ip->inum == fsfmt::ROOTINO && namecmp(name, "..") == 0;
    Inode *next = root_dotdot ? idup(ip) : dirlookup(ip, name, nullptr);
    iunlockput(ip);
    // Absent, or no room in the inode table to look at it: the walk fails either way, and
    // no caller acts on that as "the name is free" (create and link ask dirfind).
    if (next == nullptr) return nullptr;
    ip = next;
  }

  if (parent) {
    // The path had no elements ("/" or ""): there is no parent to return.
    iput(ip);
    return nullptr;
  }
  return ip;
}

}  // namespace

Inode *namei(const char *path) {
  char name[fsfmt::DIRSIZ];
  return walk(path, false, name);
}

Inode *nameiparent(const char *path, char *name) { return walk(path, true, name); }
