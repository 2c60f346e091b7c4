// malloc and free: a first-fit allocator over a free list, growing the heap with sbrk.
//
// The heap is one region above the stack that the kernel extends on request (sbrk). It is
// carved into blocks, each starting with a 16-byte header that records the block's size;
// the caller gets the bytes after the header. Free blocks are additionally chained in a
// list sorted by address, through the header's `next` field.
//
//   malloc: walk the list for the first free block big enough. A block with room to spare
//           is split, and the caller gets its upper end, so the lower part stays where it
//           is in the list. Nothing fits: ask sbrk for more and try again.
//   free:   put the block back in address order and merge it with a neighbour that ends
//           exactly where it starts (or starts where it ends). Merging is what lets freed
//           small blocks serve a large request later.
//
// Sizes are kept in multiples of 16 bytes, so every pointer returned is 16-byte aligned,
// enough for any type. When the kernel refuses to grow the heap, malloc returns 0.
#include "user.h"

namespace {

struct Header {
  Header *next;        // next free block, by address (only meaningful while free)
  unsigned long size;  // whole block in bytes, header included; a multiple of 16
};
static_assert(sizeof(Header) == 16, "blocks must stay 16-byte aligned");

constexpr unsigned long ALIGN = 16;
// Grow the heap in steps of at least this much, so that many small allocations don't
// each cost a system call.
constexpr unsigned long MIN_GROW = 16 * 4096;
// Larger requests are refused outright: sbrk takes an int.
constexpr unsigned long MAX_REQUEST = 1UL << 30;

constinit Header *free_list = nullptr;

// Returns the block to the free list, merging it with adjacent free blocks.
void insert_free(Header *block) {
  Header *prev = nullptr;
  Header *next = free_list;
  while (next != nullptr && next < block) {
    prev = next;
    next = next->next;
  }

  // Merge with the following block if they touch.
  char *end = reinterpret_cast<char *>(block) + block->size;
  if (next != nullptr && end == reinterpret_cast<char *>(next)) {
    block->size += next->size;
    block->next = next->next;
  } else {
    block->next = next;
  }

  // Merge with the preceding block if they touch; otherwise link it in after it.
  if (prev == nullptr) {
    free_list = block;
  } else if (reinterpret_cast<char *>(prev) + prev->size == reinterpret_cast<char *>(block)) {
    prev->size += block->size;
    prev->next = block->next;
  } else {
    prev->next = block;
  }
}

// Adds at least `bytes` of new memory to the free list. Returns false if sbrk failed.
bool grow(unsigned long bytes) {
  if (bytes < MIN_GROW) bytes = MIN_GROW;
  char *p = sbrk(static_cast<int>(bytes));
  if (p == reinterpret_cast<char *>(-1)) return false;
  Header *block = reinterpret_cast<Header *>(p);
  block->size = bytes;
  insert_free(block);
  return true;
}

}  // namespace

extern "C" {

void *malloc(uint n) {
  if (n == 0 || n > MAX_REQUEST) return nullptr;
  unsigned long need = sizeof(Header) + ((n + ALIGN - 1) & ~(ALIGN - 1));

  for (;;) {
    Header *prev = nullptr;
    for (Header *b = free_list; b != nullptr; prev = b, b = b->next) {
      if (b->size < need) continue;
      if (b->size - need >= 2 * sizeof(Header)) {
        // Split: the front part stays free, the caller gets the back part.
        b->size -= need;
        Header *taken = reinterpret_cast<Header *>(reinterpret_cast<char *>(b) + b->size);
        taken->size = need;
        return taken + 1;
      }
      // Too little left over to be worth a block of its own: hand out the whole block.
      if (prev == nullptr) {
        free_list = b->next;
      } else {
        prev->next = b->next;
      }
      return b + 1;
    }
    if (!grow(need)) return nullptr;
  }
}

void free(void *p) {
  if (p == nullptr) return;
  insert_free(static_cast<Header *>(p) - 1);
}

}  // extern "C"

// C++ allocation goes through the same heap. Programs are built without exceptions, so a
// failed `new` cannot throw: it returns 0 like malloc, and callers that use `new` must check.
void *operator new(unsigned long n) { return malloc(static_cast<uint>(n)); }
void *operator new[](unsigned long n) { return malloc(static_cast<uint>(n)); }
void operator delete(void *p) noexcept { free(p); }
void operator delete[](void *p) noexcept { free(p); }
void operator delete(void *p, unsigned long) noexcept { free(p); }
void operator delete[](void *p, unsigned long) noexcept { free(p); }
