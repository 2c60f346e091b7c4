// What the profiler keeps in each process (Proc::prof): whether it is sampled, and its forks
// with it, which of the profiler's images holds its program's symbols, and the sampler's
// translation cache.
#pragma once

#include "lib/types.h"

namespace prof {
inline constexpr int NO_IMAGE = -1;  // an image index that names no image
}

struct ProfState {
  // 1 while the process is sampled. Written only with p->lock held, together with
  // prof::nprofiled (kern/profile/sysprofile.cc says when), and read without a lock by the
  // timer trap on the hart running the process.
  volatile int profiled = 0;
  // 1 while the process's forks are sampled too (PROF_FOLLOW): set only while `profiled` is,
  // cleared with it. Written with p->lock held; read by fork() in the process itself.
  volatile int follow = 0;
  // The index of the process's exe in the profiler's image table, or prof::NO_IMAGE.
  // Written with p->lock held (kern/profile/images.cc).
  int image = prof::NO_IMAGE;
  // The sampler's translation cache: the user page its last walk read, and the address of
  // the page-table entry that maps it (the entry is read afresh each time, so unmapping
  // needs no notice). Page-table pages live as long as the page table, so only replacing
  // the page table (exec, freeproc) resets it. Used only by the sampler, with the process
  // unable to run meanwhile: in a timer trap on the hart running it, or by the wait sweep
  // on any hart while it is asleep and the sweep holds p->lock; and by reset().
  u64 walk_page = ~0ull;
  pte_t *walk_pte = nullptr;

  // A new program (exec) or a freed slot (freeproc): no image, nothing cached. `profiled`
  // and `follow` stay as they are: only profile(2), fork and exit change them, and they keep
  // nprofiled with them.
  // Caller holds p->lock.
  void reset() {
    image = prof::NO_IMAGE;
    walk_page = ~0ull;
    walk_pte = nullptr;
  }
};
