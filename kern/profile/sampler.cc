// The sampler: what runs in the timer trap.
//
// Every hart's timer also serves a sampling deadline (Cpu::next_sample) while anything is
// being profiled. When it passes, and the process this hart is running is profiled, record()
// stores one Sample in the static array:
//
//   - the slot: an atomic fetch-and-add on the cursor hands out slots in order, so harts
//     never share one and no lock is taken. When the cursor passes CAPACITY the sample is
//     dropped and counted: old samples are never overwritten.
//   - the frames: from a trap in supervisor mode (the process was in a system call or
//     handling a fault), first the kernel chain from the registers kernelvec saved, then
//     in every case the user chain from the trapframe's pc, s0 and ra. Kernel words are
//     read only inside the current kernel stack; user words only through the process's page
//     table, if mapped, user-accessible and aligned (walk.h has the rules).
//   - the commit: `seq` is stored last, with release ordering; readers take a slot only if
//     its seq matches (generation, index).
//
// clear_samples() starts a new generation. It raises `clearing`, waits until no hart is
// inside record() (each hart flags itself while it is), resets the cursor and lowers it.

#include "profile/profiler.h"

#include "abi/param.h"
#include "arch/riscv/memlayout.h"
#include "lib/backtrace.h"
#include "mm/vm.h"
#include "proc/proc.h"
#include "profile/walk.h"
#include "trap/trap.h"

namespace prof {

__attribute__((section(".profsamples"))) Sample samples[CAPACITY];

volatile bool all_mode = false;
volatile int nprofiled = 0;

namespace {

constinit volatile u32 cursor = 0;
constinit volatile u64 dropped = 0;
constinit volatile u64 missed = 0;
constinit volatile u32 generation = 1;
constinit volatile bool clearing = false;
constinit volatile bool inside[NCPU] = {};
constinit volatile u64 period = TIMEBASE_HZ / PROF_DEFAULT_HZ;
constinit volatile u32 hz = PROF_DEFAULT_HZ;

constexpr u64 tag(u32 gen, u32 index) { return (u64(gen) << 32) | (u64(index) + 1); }

// Reads user memory through a page table: a word is readable only if its page is mapped
// valid, readable and user-accessible, and the word is aligned. One translation is cached,
// since consecutive frames are usually on the same page.
class UserReader {
 public:
  explicit UserReader(pagetable_t pt) : m_pt(pt) {}
  bool read(u64 va, u64 *out) {
    if ((va & 7) != 0 || va >= riscv::MAXVA) return false;
    u64 page = riscv::pg_round_down(va);
    if (page != m_page) {
      pte_t *pte = walk(m_pt, page, false);
      constexpr u64 need = riscv::PTE_V | riscv::PTE_U | riscv::PTE_R;
      if (pte == nullptr || (*pte & need) != need) return false;
      m_page = page;
      m_pa = riscv::pte_to_pa(*pte);
    }
    *out = *reinterpret_cast<const u64 *>(m_pa + (va - page));
    return true;
  }

 private:
  pagetable_t m_pt;
  u64 m_page = ~0ull;
  u64 m_pa = 0;
};

// Reads the current kernel stack; the walker's bounds keep it inside [lo, hi].
// The 32-bit instruction word at va (2-byte aligned), read through the page table.
bool read_insn(UserReader &ur, u64 va, u32 *insn) {
  if ((va & 1) != 0) return false;
  u64 lo_word, hi_word;
  u64 base = va & ~7ull;
  if (!ur.read(base, &lo_word)) return false;
  u64 shift = (va - base) * 8;
  if (shift <= 32) {
    *insn = static_cast<u32>(lo_word >> shift);
    return true;
  }
  if (!ur.read(base + 8, &hi_word)) return false;
  *insn = static_cast<u32>((lo_word >> shift) | (hi_word << (64 - shift)));
  return true;
}

constexpr u32 ECALL = 0x00000073;

struct KernelReader {
  bool read(u64 va, u64 *out) {
    *out = *reinterpret_cast<const u64 *>(va);
    return true;
  }
};

}  // namespace

bool active() { return all_mode || nprofiled > 0; }

void record(Proc *p, KernelFrame *kf, u64 now) {
  int hart = cpuid();
  inside[hart] = true;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (clearing) {
    inside[hart] = false;
    return;
  }
  u32 gen = generation;
  u32 index = __atomic_fetch_add(&cursor, 1u, __ATOMIC_RELAXED);
  if (index >= CAPACITY) {
    __atomic_store_n(&cursor, CAPACITY, __ATOMIC_RELAXED);  // keep it from wrapping
    __atomic_fetch_add(&dropped, 1ull, __ATOMIC_RELAXED);
    inside[hart] = false;
    return;
  }

  Sample &s = samples[index];
  s.pid = static_cast<u32>(p->pid);
  s.image = p->prof_image;
  s.time_us = now / (TIMEBASE_HZ / 1'000'000);
  s.hart = static_cast<u16>(hart);
  int n = 0;
  if (kf != nullptr) {
    s.mode = Mode::Kernel;
    u64 lo, hi;
    if (kernel_stack_bounds(reinterpret_cast<u64>(kf), &lo, &hi)) {
      KernelReader kr;
      profwalk::Registers regs{kf->record_ra, kf->s0, kf->ra};
      n = profwalk::walk(kr, regs, profwalk::Bounds{lo, hi}, in_kernel_text, s.frames,
                         MAX_FRAMES);
    }
  } else {
    s.mode = Mode::User;
  }
  s.nkernel = static_cast<u8>(n);

  // The user context: live registers from the trapframe (saved on entry to the kernel).
  Trapframe *tf = p->trapframe;
  u64 text_end = p->text_end;
  UserReader ur(p->pagetable);
  profwalk::Registers uregs{tf->epc, tf->s0, tf->ra};
  // A pc just after an ecall is inside a system-call stub, which keeps no frame: its caller
  // is in ra. (During a system call, epc already points past the ecall.)
  u32 insn;
  uregs.frameless = tf->epc >= 4 && read_insn(ur, tf->epc - 4, &insn) && insn == ECALL;
  n += profwalk::walk(ur, uregs, profwalk::Bounds{0, mem::TRAPFRAME},
                      [text_end](u64 pc) { return pc < text_end; }, s.frames + n,
                      MAX_FRAMES - n);
  s.nframes = static_cast<u8>(n);

  __atomic_store_n(&s.seq, tag(gen, index), __ATOMIC_RELEASE);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  inside[hart] = false;
}

void tick(KernelFrame *kf, u64 now) {
  Cpu *c = mycpu();
  if (!active()) {
    c->next_sample = 0;
    return;
  }
  if (c->next_sample == 0) {
    c->next_sample = now + period;
    return;
  }
  if (now < c->next_sample) return;
  c->next_sample += period;
  if (c->next_sample <= now) {
    // The timer fired late (interrupts were off, or the host was busy): the periods in
    // between are skipped, and counted, rather than sampled in a burst.
    __atomic_fetch_add(&missed, (now - c->next_sample) / period + 1, __ATOMIC_RELAXED);
    c->next_sample = now + period;
  }
  Proc *p = c->proc;
  if (p != nullptr && (all_mode || p->profiled)) record(p, kf, now);
}

Counters counters() {
  Counters c;
  c.generation = generation;
  u32 n = __atomic_load_n(&cursor, __ATOMIC_ACQUIRE);
  if (n > CAPACITY) n = CAPACITY;
  // Only the committed prefix counts: a slot still being written ends it. Within a
  // generation the prefix only grows, so the scan resumes where the last one stopped.
  static constinit u32 hint_generation = 0, hint = 0;
  u32 i = hint_generation == c.generation && hint <= n ? hint : 0;
  while (i < n && __atomic_load_n(&samples[i].seq, __ATOMIC_ACQUIRE) == tag(c.generation, i)) i++;
  hint_generation = c.generation;
  hint = i;
  c.recorded = i;
  c.dropped = dropped;
  c.missed = missed;
  return c;
}

const Sample *sample(u32 index) {
  if (index >= CAPACITY) return nullptr;
  const Sample &s = samples[index];
  if (__atomic_load_n(&s.seq, __ATOMIC_ACQUIRE) != tag(generation, index)) return nullptr;
  return &s;
}

void set_rate(u32 new_hz) {
  hz = new_hz;
  period = TIMEBASE_HZ / new_hz;
}

u32 rate() { return hz; }

void clear_samples() {
  clearing = true;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  for (int h = 0; h < NCPU; h++)
    while (inside[h]) {
    }
  generation = generation + 1;
  cursor = 0;
  dropped = 0;
  missed = 0;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  clearing = false;
}

}  // namespace prof
