// Programs kept for symbolization.
//
// A sample holds raw addresses; naming them needs the symbol table of the program that was
// running, which is only looked up when /proc/profile is read. By then the process may have
// exited, or exec'd another program, and its file may have been unlinked. So when a process
// starts being profiled, and whenever a profiled process execs, what symbolization needs of
// its executable is copied here, into memory the profiler owns (symbolize.cc makes the copy):
//
//   - its symbol table, in the kernel's own format (lib/symtab.h), a name longer than
//     NAME_MAX - 1 bytes cut to that and marked with "...", as symbolize() gives it;
//   - the addresses of its ecall instructions, for stub_at().
//
// The file itself is not kept. Holding its inode would take one of the file system's NINODE
// in-memory inodes per program (32 of 50), so that ordinary programs ran out of them, and an
// executable unlinked after its run would keep its disk blocks until `profile clear`.
//
// The copies are placed one after another in a fixed arena (ARENA_BYTES, 128 KiB), emptied
// only by release_images() (`profile clear`), and each program may take at most IMAGE_BUDGET
// (16 KiB) of it, so one huge table cannot crowd out the rest. A symbol takes 16 bytes and
// its name with a NUL, at most NAME_MAX, so the budget holds 81 symbols of the longest names
// beside a full list of 256 ecalls; the programs built here need far less: pnames, whose
// 169-byte name is cut to 159, takes 2.2 KiB, and the largest, usertests, 4.7 KiB. A table
// that does not fit is cut after its last whole symbol: the symbols left out print as "??",
// never as another function's name. Each sample records the index of the image that was
// running, so samples before and after an exec resolve against the right program.
//
// The table is small and fixed. Registering a program already registered (the same inode
// number and size on the same device) returns the same index; a program whose inode was
// freed and reused by another of the same size would be mistaken for it until the next
// clear. When the table is full, new images get NO_IMAGE and their user frames print as
// unknown.
//
// Locking: attach_image() and release_images() run under the profiler's sleep lock
// (prof::lock(), held by on_exec and profile(2)), as does the reader of /proc/profile, so
// a copy is never changed while it is read. images_lock guards the slots while they are
// written. image_symbols() and image_name() read them without it: their callers hold
// prof::lock(), under which every slot is written, and the reader calls them for every
// sample, where a spinlock's push_off and pop_off would cost more than the lookup.

#include "fs/fs.h"
#include "fs/log.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "proc/proc.h"
#include "profile/profiler.h"

namespace prof {

namespace {

constexpr u32 ARENA_BYTES = 128 * 1024;
constexpr u32 IMAGE_BUDGET = 16 * 1024;

struct Image {
  bool used = false;
  u32 dev = 0;
  u32 inum = 0;
  u32 size = 0;
  char name[16] = {};
  ImageSymbols symbols;
};

constinit Spinlock images_lock("profimages");
constinit Image images[NIMAGE];
alignas(8) constinit u8 arena[ARENA_BYTES] = {};
constinit u32 arena_used = 0;

// The slot already holding this program, or NO_IMAGE.
int find(u32 dev, u32 inum, u32 size) {
  SpinGuard g(images_lock);
  for (int i = 0; i < NIMAGE; i++) {
    const Image &im = images[i];
    if (im.used && im.dev == dev && im.inum == inum && im.size == size) return i;
  }
  return NO_IMAGE;
}

// Take a free slot for the program in ip (locked), with no symbols yet; NO_IMAGE when
// the table is full.
int reserve(Inode *ip, const char *name) {
  SpinGuard g(images_lock);
  for (int i = 0; i < NIMAGE; i++) {
    Image &im = images[i];
    if (im.used) continue;
    im = Image{};
    im.used = true;
    im.dev = ip->dev;
    im.inum = ip->inum;
    im.size = ip->size;
    safestrcpy(im.name, name, sizeof(im.name));
    return i;
  }
  return NO_IMAGE;
}

// Copy what symbolization needs of ip (locked) into the arena, for slot.
void fill(int slot, Inode *ip) {
  u32 room = ARENA_BYTES - arena_used;
  ImageSymbols symbols;
  u32 used =
      load_symbols(ip, arena + arena_used, room < IMAGE_BUDGET ? room : IMAGE_BUDGET, &symbols);
  arena_used += (used + 7) & ~7u;  // keep every copy 8-byte aligned
  SpinGuard g(images_lock);
  images[slot].symbols = symbols;
}

}  // namespace

void attach_image(Proc *p) {
  // p may be another process, in the middle of exec or exit: its exe is read, and its
  // prof.image written, under its lock, the lock exec and exit change exe under.
  Inode *exe = nullptr;  // our own reference while we read the file, dropped at the end
  char name[sizeof(Image::name)];
  {
    SpinGuard g(p->lock);
    if (p->exe == nullptr) {
      p->prof.image = NO_IMAGE;
      return;
    }
    exe = idup(p->exe);
    safestrcpy(name, p->name, sizeof(name));
  }
  ilock(exe);
  int slot = find(exe->dev, exe->inum, exe->size);
  bool fresh = slot == NO_IMAGE;
  if (fresh) slot = reserve(exe, name);
  {
    // Unless p exec'd meanwhile: then its exec registers the new program itself. Set before
    // the copy is made, so that samples taken while it is read already carry the slot; they
    // are named only when /proc/profile is read, under prof::lock(), which we hold.
    SpinGuard g(p->lock);
    if (p->exe == exe) p->prof.image = slot;
  }
  if (fresh && slot != NO_IMAGE) fill(slot, exe);
  iunlock(exe);
  begin_op();
  iput(exe);
  end_op();
}

const ImageSymbols *image_symbols(int image) {
  if (image < 0 || image >= NIMAGE) return nullptr;
  return images[image].used ? &images[image].symbols : nullptr;
}

const char *image_name(int image) {
  if (image < 0 || image >= NIMAGE) return "?";
  return images[image].used ? images[image].name : "?";
}

void release_images() {
  SpinGuard g(images_lock);
  for (Image &im : images) im = Image{};
  arena_used = 0;
}

}  // namespace prof
