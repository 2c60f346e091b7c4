// The file-system calls: the user's view of files, directories, pipes and exec.
//
// Each handler fetches its arguments from the saved user registers (syscall.h), checks
// them, and calls the layers below. Anything wrong with the arguments (a descriptor that
// is not open, a pointer the process cannot access, a path that is too long or names
// nothing) makes the call return -1; no user input can make the kernel panic.
//
// Every call that may change the disk runs between begin_op() and end_op(), so its
// changes are committed together or not at all. That includes calls that only drop a
// reference (close, chdir): the last reference to an unlinked file frees it.
//
// Lock order. When two inodes must be locked together, the directory is locked before
// the inode it contains (create, link, unlink), which is also the order a path walk
// uses. That single order is what keeps these calls free of deadlocks.
//
// Return values are u64 because they travel back in a register; -1 is all ones (ERR).

#include "abi/fcntl.h"
#include "arch/riscv/riscv.h"
#include "fs/file.h"
#include "fs/fs.h"
#include "fs/log.h"
#include "fs/pipe.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/kalloc.h"
#include "mm/vm.h"
#include "proc/proc.h"
#include "syscall/syscall.h"

namespace {

u64 result(int r) { return static_cast<u64>(static_cast<i64>(r)); }

// The open File behind descriptor argument n, or nullptr.
File *arg_file(int n, int *fd_out = nullptr) {
  int fd = argint(n);
  if (fd < 0 || fd >= NOFILE) return nullptr;
  File *f = myproc()->ofile[fd];
  if (f != nullptr && fd_out != nullptr) *fd_out = fd;
  return f;
}

// Give f the lowest free descriptor of the current process; -1 if all are in use. The
// descriptor takes over the caller's reference to f.
int fd_alloc(File *f) {
  Proc *p = myproc();
  for (int fd = 0; fd < NOFILE; fd++) {
    if (p->ofile[fd] == nullptr) {
      p->ofile[fd] = f;
      return fd;
    }
  }
  return -1;
}

// Fetch path argument n into buf (MAXPATH bytes). False if the pointer is bad or the
// path does not fit.
bool arg_path(int n, char (&buf)[MAXPATH]) { return argstr(n, buf, MAXPATH) >= 0; }

// Make a new inode of the given type named by path, and return it locked. If the name
// exists already, open(O_CREATE) of a file or device is allowed to use it; anything else
// fails. Runs inside a transaction.
Inode *create(const char *path, i16 type, i16 major, i16 minor) {
  char name[fsfmt::DIRSIZ];
  Inode *dp = nameiparent(path, name);
  if (dp == nullptr) return nullptr;
  ilock(dp);
  if (dp->nlink == 0) {
    // The directory has been removed (it lives on only as someone's working directory).
    // An entry added now would vanish with it and leave its inode allocated forever.
    iunlockput(dp);
    return nullptr;
  }

  if (u32 inum = dirfind(dp, name, nullptr); inum != 0) {
    // The name exists. If there is no room to look at its inode, fail: going on as if the
    // name were free would write it a second time.
    Inode *existing = iget(dp->dev, inum);
    iunlockput(dp);
    if (existing == nullptr) return nullptr;
    ilock(existing);
    bool reusable = type == fsfmt::T_FILE &&
                    (existing->type == fsfmt::T_FILE || existing->type == fsfmt::T_DEVICE);
    if (reusable) return existing;
    iunlockput(existing);
    return nullptr;
  }

  Inode *ip = ialloc(dp->dev, type);
  if (ip == nullptr) {
    iunlockput(dp);
    return nullptr;
  }
  ilock(ip);
  ip->major = major;
  ip->minor = minor;
  ip->nlink = 1;
  iupdate(ip);

  // A directory starts with "." and "..". Its "." does not count as a link (see dir.cc).
  bool ok =
      type != fsfmt::T_DIR || (dirlink(ip, ".", ip->inum) == 0 && dirlink(ip, "..", dp->inum) == 0);
  ok = ok && dirlink(dp, name, ip->inum) == 0;
  if (!ok) {
    // Out of disk space (or the directory is full). Unlinking the half-made inode lets
    // iput free it, within this same transaction.
    ip->nlink = 0;
    iupdate(ip);
    iunlockput(ip);
    iunlockput(dp);
    return nullptr;
  }
  if (type == fsfmt::T_DIR) {
    dp->nlink++;  // for the new directory's ".."
    iupdate(dp);
  }
  iunlockput(dp);
  return ip;
}

// The body of open(), inside a transaction. Returns the new descriptor or -1.
//
// The open file and the descriptor are taken first: once create() has written a new name,
// a full open-file table must not make the call fail with the file made anyway.
int open_locked(const char *path, int omode) {
  File *f = filealloc();
  if (f == nullptr) return -1;
  int fd = fd_alloc(f);
  if (fd < 0) {
    fileclose(f);  // not yet set up, so this only frees the slot
    return -1;
  }

  Inode *ip;
  if (omode & O_CREATE) {
    ip = create(path, fsfmt::T_FILE, 0, 0);
  } else {
    ip = namei(path);
    if (ip != nullptr) ilock(ip);
  }

  bool wants_write = (omode & (O_WRONLY | O_RDWR)) != 0;
  bool bad = ip == nullptr || (ip->type == fsfmt::T_DIR && wants_write) ||
             (ip->type == fsfmt::T_DEVICE && (ip->major < 0 || ip->major >= NDEV));
  if (bad) {
    myproc()->ofile[fd] = nullptr;
    fileclose(f);
    if (ip != nullptr) iunlockput(ip);
    return -1;
  }

  if (ip->type == fsfmt::T_DEVICE) {
    f->type = File::Type::Device;
    f->major = ip->major;
    f->minor = ip->minor;
  } else {
    f->type = File::Type::Inode;
    f->off = 0;
  }
  f->ip = ip;
  f->readable = (omode & O_WRONLY) == 0;
  f->writable = wants_write;
  if ((omode & O_TRUNC) && ip->type == fsfmt::T_FILE) itrunc(ip);
  iunlock(ip);
  return fd;
}

// The body of link(), inside a transaction.
int link_locked(const char *old_path, const char *new_path) {
  Inode *ip = namei(old_path);
  if (ip == nullptr) return -1;
  // Directories may not be linked: that could make cycles in the tree. Check before
  // locking the parent below, so that the lock order (directory, then what it holds) is
  // kept. The type of an inode we hold a reference to cannot change.
  ilock(ip);
  bool is_dir = ip->type == fsfmt::T_DIR;
  iunlock(ip);
  if (is_dir) {
    iput(ip);
    return -1;
  }

  char name[fsfmt::DIRSIZ];
  Inode *dp = nameiparent(new_path, name);
  if (dp == nullptr) {
    iput(ip);
    return -1;
  }
  ilock(dp);
  ilock(ip);
  int r = -1;
  // nlink is 16 bits on disk: one more link than it holds would wrap it, and the inode
  // would be freed while names still point at it. An inode with no links left was unlinked
  // after the lookup above: old_path names nothing now, and a removed file is not revived.
  if (dp->dev == ip->dev && dp->nlink > 0 && ip->nlink > 0 && ip->nlink < INT16_MAX &&
      dirlink(dp, name, ip->inum) == 0) {
    ip->nlink++;
    iupdate(ip);
    r = 0;
  }
  iunlockput(ip);
  iunlockput(dp);
  return r;
}

// The body of unlink(), inside a transaction.
int unlink_locked(const char *path) {
  char name[fsfmt::DIRSIZ];
  Inode *dp = nameiparent(path, name);
  if (dp == nullptr) return -1;
  ilock(dp);

  // Removing "." or ".." would break the tree's structure.
  u32 off = 0;
  u32 inum = 0;
  if (namecmp(name, ".") != 0 && namecmp(name, "..") != 0) inum = dirfind(dp, name, &off);
  // Absent, or no room in the inode table to look at it: either way nothing is removed.
  Inode *ip = inum == 0 ? nullptr : iget(dp->dev, inum);
  if (ip == nullptr) {
    iunlockput(dp);
    return -1;
  }
  ilock(ip);
  if (ip->nlink < 1) panic("unlink: inode %u has no links but is named", ip->inum);
  if (ip->type == fsfmt::T_DIR && !dir_is_empty(ip)) {
    iunlockput(ip);
    iunlockput(dp);
    return -1;
  }

  fsfmt::DirEntry empty{};
  if (writei(dp, false, reinterpret_cast<u64>(&empty), off, sizeof(empty)) != sizeof(empty)) {
    panic("unlink: cannot clear an entry of directory %u", dp->inum);
  }
  if (ip->type == fsfmt::T_DIR) {
    dp->nlink--;  // the removed directory's ".." no longer refers to dp
    iupdate(dp);
  }
  iunlockput(dp);

  ip->nlink--;
  iupdate(ip);
  iunlockput(ip);  // frees the inode if nothing else refers to it
  return 0;
}

// Free the kalloc'd argument copies of exec, up to the first null.
void free_args(char *(&argv)[MAXARG + 1]) {
  for (char *&arg : argv) {
    if (arg == nullptr) break;
    kfree(arg);
    arg = nullptr;
  }
}

}  // namespace

extern "C" u64 sys_dup() {
  File *f = arg_file(0);
  if (f == nullptr) return ERR;
  int fd = fd_alloc(f);
  if (fd < 0) return ERR;
  filedup(f);
  return result(fd);
}

extern "C" u64 sys_read() {
  File *f = arg_file(0);
  UserAddr buf = argaddr(1);
  int n = argint(2);
  if (f == nullptr || n < 0) return ERR;
  return result(fileread(f, buf, n));
}

extern "C" u64 sys_write() {
  File *f = arg_file(0);
  UserAddr buf = argaddr(1);
  int n = argint(2);
  if (f == nullptr || n < 0) return ERR;
  return result(filewrite(f, buf, n));
}

extern "C" u64 sys_close() {
  int fd;
  File *f = arg_file(0, &fd);
  if (f == nullptr) return ERR;
  myproc()->ofile[fd] = nullptr;
  fileclose(f);
  return 0;
}

extern "C" u64 sys_fstat() {
  File *f = arg_file(0);
  UserAddr st = argaddr(1);
  if (f == nullptr) return ERR;
  return result(filestat(f, st));
}

extern "C" u64 sys_open() {
  char path[MAXPATH];
  if (!arg_path(0, path)) return ERR;
  int omode = argint(1);
  begin_op();
  int fd = open_locked(path, omode);
  end_op();
  return result(fd);
}

extern "C" u64 sys_link() {
  char old_path[MAXPATH], new_path[MAXPATH];
  if (!arg_path(0, old_path) || !arg_path(1, new_path)) return ERR;
  begin_op();
  int r = link_locked(old_path, new_path);
  end_op();
  return result(r);
}

extern "C" u64 sys_unlink() {
  char path[MAXPATH];
  if (!arg_path(0, path)) return ERR;
  begin_op();
  int r = unlink_locked(path);
  end_op();
  return result(r);
}

extern "C" u64 sys_mkdir() {
  char path[MAXPATH];
  if (!arg_path(0, path)) return ERR;
  begin_op();
  Inode *ip = create(path, fsfmt::T_DIR, 0, 0);
  if (ip != nullptr) iunlockput(ip);
  end_op();
  return ip != nullptr ? 0 : ERR;
}

extern "C" u64 sys_mknod() {
  char path[MAXPATH];
  if (!arg_path(0, path)) return ERR;
  i16 major = static_cast<i16>(argint(1));
  i16 minor = static_cast<i16>(argint(2));
  begin_op();
  Inode *ip = create(path, fsfmt::T_DEVICE, major, minor);
  if (ip != nullptr) iunlockput(ip);
  end_op();
  return ip != nullptr ? 0 : ERR;
}

extern "C" u64 sys_chdir() {
  char path[MAXPATH];
  if (!arg_path(0, path)) return ERR;
  Proc *p = myproc();
  begin_op();
  Inode *ip = namei(path);
  if (ip == nullptr) {
    end_op();
    return ERR;
  }
  ilock(ip);
  if (ip->type != fsfmt::T_DIR) {
    iunlockput(ip);
    end_op();
    return ERR;
  }
  iunlock(ip);
  iput(p->cwd);
  end_op();
  p->cwd = ip;
  return 0;
}

extern "C" u64 sys_pipe() {
  UserAddr fds = argaddr(0);
  Proc *p = myproc();
  File *rf, *wf;
  if (pipealloc(&rf, &wf) < 0) return ERR;

  int fd0 = fd_alloc(rf);
  int fd1 = fd0 < 0 ? -1 : fd_alloc(wf);
  bool ok = fd1 >= 0 && copyout(p->pagetable, fds, fd0) == 0 &&
            copyout(p->pagetable, fds + sizeof(int), fd1) == 0;
  if (!ok) {
    if (fd0 >= 0) p->ofile[fd0] = nullptr;
    if (fd1 >= 0) p->ofile[fd1] = nullptr;
    fileclose(rf);
    fileclose(wf);
    return ERR;
  }
  return 0;
}

extern "C" u64 sys_exec() {
  char path[MAXPATH];
  if (!arg_path(0, path)) return ERR;
  UserAddr uargv = argaddr(1);

  // Each argument string is copied into a page of its own; the array ends with a null.
  char *argv[MAXARG + 1] = {};
  bool ok = false;
  for (int i = 0; i <= MAXARG; i++) {
    u64 uarg;
    if (fetchaddr(uargv + u64(i) * sizeof(u64), &uarg) < 0) break;
    if (uarg == 0) {
      ok = true;  // the terminating null: argv[i] is already null
      break;
    }
    if (i == MAXARG) break;  // too many arguments
    argv[i] = static_cast<char *>(kalloc_nozero());
    if (argv[i] == nullptr) break;
    if (fetchstr(UserAddr(uarg), argv[i], static_cast<int>(riscv::PGSIZE)) < 0) break;
  }

  int r = ok ? exec(path, argv) : -1;
  free_args(argv);
  return result(r);
}
