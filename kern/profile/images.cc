// Executables kept for symbolization.
//
// A sample holds raw addresses; naming them needs the symbol table of the program that was
// running, which is only looked up when /proc/profile is read. By then the process may have
// exited, or exec'd another program, and its file may even have been unlinked. So when a
// process starts being profiled, and whenever a profiled process execs, its executable's
// inode is registered here: the table holds its own reference (idup), which keeps the inode
// and its blocks alive until the profile is cleared. Each sample records the index of the
// image that was running, so samples before and after an exec resolve against the right
// program.
//
// The table is small and fixed; registering the same inode twice returns the same index.
// When it is full, new images get NO_IMAGE and their user frames print as unknown.

#include "fs/fs.h"
#include "fs/log.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "proc/proc.h"
#include "profile/profiler.h"

namespace prof {

namespace {

constexpr int NIMAGE = 32;

struct Image {
  Inode *ip = nullptr;
  char name[16] = {};
};

constinit Spinlock images_lock("profimages");
constinit Image images[NIMAGE];

}  // namespace

void attach_image(Proc *p) {
  // p may be another process, in the middle of exec or exit: its exe is read, and its
  // prof_image written, under its lock, the lock exec and exit change exe under.
  Inode *extra = nullptr;  // our own reference to the executable; dropped if not needed
  char name[sizeof(Image::name)];
  {
    SpinGuard g(p->lock);
    if (p->exe == nullptr) {
      p->prof_image = NO_IMAGE;
      return;
    }
    extra = idup(p->exe);
    safestrcpy(name, p->name, sizeof(name));
  }
  int found = NO_IMAGE;
  bool used_extra = false;
  {
    SpinGuard g(images_lock);
    int free_slot = NO_IMAGE;
    for (int i = 0; i < NIMAGE; i++) {
      if (images[i].ip == extra) {
        found = i;
        break;
      }
      if (images[i].ip == nullptr && free_slot == NO_IMAGE) free_slot = i;
    }
    if (found == NO_IMAGE && free_slot != NO_IMAGE) {
      images[free_slot].ip = extra;
      safestrcpy(images[free_slot].name, name, sizeof(images[free_slot].name));
      found = free_slot;
      used_extra = true;
    }
  }
  {
    // Unless p exec'd meanwhile: then its exec registers the new program itself.
    SpinGuard g(p->lock);
    if (p->exe == extra) p->prof_image = found;
  }
  if (!used_extra) {
    begin_op();
    iput(extra);
    end_op();
  }
}

Inode *image_inode(int image) {
  if (image < 0 || image >= NIMAGE) return nullptr;
  SpinGuard g(images_lock);
  return images[image].ip;
}

const char *image_name(int image) {
  if (image < 0 || image >= NIMAGE || images[image].ip == nullptr) return "?";
  return images[image].name;
}

void release_images() {
  Inode *drop[NIMAGE];
  {
    SpinGuard g(images_lock);
    for (int i = 0; i < NIMAGE; i++) {
      drop[i] = images[i].ip;
      images[i].ip = nullptr;
      images[i].name[0] = 0;
    }
  }
  // One transaction per inode: dropping the last reference to an unlinked file frees all
  // its blocks, which may fill a transaction on its own.
  for (Inode *ip : drop) {
    if (ip == nullptr) continue;
    begin_op();
    iput(ip);
    end_op();
  }
}

}  // namespace prof
