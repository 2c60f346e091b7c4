// RISC-V supervisor-mode registers and instructions, as inline functions.
//
// Names follow the RISC-V privileged specification. Only what the kernel uses is here.
#pragma once

#include "lib/types.h"

#define CSR_READ(name)                           \
  ({                                             \
    u64 v__;                                     \
    asm volatile("csrr %0, " #name : "=r"(v__)); \
    v__;                                         \
  })
#define CSR_WRITE(name, val) asm volatile("csrw " #name ", %0" : : "r"((u64)(val)))
#define CSR_SET(name, bits) asm volatile("csrs " #name ", %0" : : "r"((u64)(bits)))
#define CSR_CLEAR(name, bits) asm volatile("csrc " #name ", %0" : : "r"((u64)(bits)))

namespace riscv {

// sstatus bits.
inline constexpr u64 SSTATUS_SPP = 1ull << 8;   // Previous mode, 1=Supervisor, 0=User
inline constexpr u64 SSTATUS_SPIE = 1ull << 5;  // Supervisor Previous Interrupt Enable
inline constexpr u64 SSTATUS_SIE = 1ull << 1;   // Supervisor Interrupt Enable
inline constexpr u64 SSTATUS_SUM = 1ull << 18;  // Supervisor may access User memory
inline constexpr u64 SSTATUS_FS = 3ull << 13;   // Floating-point unit state

// sie / sip bits.
inline constexpr u64 SIE_SSIE = 1ull << 1;     // software
inline constexpr u64 SIE_STIE = 1ull << 5;     // timer
inline constexpr u64 SIE_SEIE = 1ull << 9;     // external
inline constexpr u64 SIE_LCOFIE = 1ull << 13;  // local counter overflow (Sscofpmf)
inline constexpr u64 SIP_LCOFIP = SIE_LCOFIE;  // its pending bit, which S-mode clears
inline constexpr u64 SIP_STIP = SIE_STIE;      // the timer's pending bit

// scause values.
inline constexpr u64 SCAUSE_INTERRUPT = 1ull << 63;
enum class Cause : u64 {
  InsnMisaligned = 0,
  InsnAccessFault = 1,
  IllegalInsn = 2,
  Breakpoint = 3,
  LoadMisaligned = 4,
  LoadAccessFault = 5,
  StoreMisaligned = 6,
  StoreAccessFault = 7,
  UserEcall = 8,
  SupervisorEcall = 9,
  InsnPageFault = 12,
  LoadPageFault = 13,
  StorePageFault = 15,
  SoftwareInterrupt = SCAUSE_INTERRUPT | 1,
  TimerInterrupt = SCAUSE_INTERRUPT | 5,
  ExternalInterrupt = SCAUSE_INTERRUPT | 9,
  CounterOverflowInterrupt = SCAUSE_INTERRUPT | 13,
};

// Sv39 paging.
inline constexpr u64 PGSIZE = 4096;
inline constexpr u64 PGSHIFT = 12;
inline constexpr u64 SATP_SV39 = 8ull << 60;
inline constexpr u64 PTE_V = 1 << 0;
inline constexpr u64 PTE_R = 1 << 1;
inline constexpr u64 PTE_W = 1 << 2;
inline constexpr u64 PTE_X = 1 << 3;
inline constexpr u64 PTE_U = 1 << 4;
inline constexpr u64 PTE_A = 1 << 6;
inline constexpr u64 PTE_D = 1 << 7;
// One beyond the highest possible virtual address. MAXVA is actually one bit less than the
// max allowed by Sv39, to avoid having to sign-extend virtual addresses that have the high
// bit set.
inline constexpr u64 MAXVA = 1ull << (9 + 9 + 9 + 12 - 1);

constexpr u64 pg_round_up(u64 a) { return (a + PGSIZE - 1) & ~(PGSIZE - 1); }
constexpr u64 pg_round_down(u64 a) { return a & ~(PGSIZE - 1); }
constexpr u64 pa_to_pte(u64 pa) { return (pa >> 12) << 10; }
constexpr u64 pte_to_pa(pte_t pte) { return (pte >> 10) << 12; }
constexpr u64 pte_flags(pte_t pte) { return pte & 0x3ff; }
constexpr u64 px(int level, u64 va) { return (va >> (PGSHIFT + 9 * level)) & 0x1ff; }
constexpr u64 make_satp(pagetable_t pt) { return SATP_SV39 | (reinterpret_cast<u64>(pt) >> 12); }

inline u64 r_tp() {
  u64 x;
  asm volatile("mv %0, tp" : "=r"(x));
  return x;
}
inline void w_tp(u64 x) { asm volatile("mv tp, %0" : : "r"(x)); }
inline u64 r_fp() {
  u64 x;
  asm volatile("mv %0, s0" : "=r"(x));
  return x;
}
inline u64 r_sp() {
  u64 x;
  asm volatile("mv %0, sp" : "=r"(x));
  return x;
}
inline u64 r_time() {
  u64 x;
  asm volatile("rdtime %0" : "=r"(x));
  return x;
}
// Instructions retired (OpenSBI's mcounteren lets S-mode read it). Under QEMU's -icount it
// counts guest instructions exactly; without -icount QEMU derives it from the host's cycle
// counter, and it means little.
inline u64 r_instret() {
  u64 x;
  asm volatile("rdinstret %0" : "=r"(x));
  return x;
}

inline void intr_on() { CSR_SET(sstatus, SSTATUS_SIE); }
inline void intr_off() { CSR_CLEAR(sstatus, SSTATUS_SIE); }
inline bool intr_get() { return (CSR_READ(sstatus) & SSTATUS_SIE) != 0; }

inline void sfence_vma() { asm volatile("sfence.vma zero, zero"); }
inline void wfi() { asm volatile("wfi"); }

}  // namespace riscv
