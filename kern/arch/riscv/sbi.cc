// SBI calls (see sbi.h).

#include "arch/riscv/sbi.h"

namespace sbi {

Result call(u64 eid, u64 fid, u64 a0, u64 a1, u64 a2) {
  register u64 r_a0 asm("a0") = a0;
  register u64 r_a1 asm("a1") = a1;
  register u64 r_a2 asm("a2") = a2;
  register u64 r_a6 asm("a6") = fid;
  register u64 r_a7 asm("a7") = eid;
  asm volatile("ecall" : "+r"(r_a0), "+r"(r_a1) : "r"(r_a2), "r"(r_a6), "r"(r_a7) : "memory");
  return Result{static_cast<long>(r_a0), static_cast<long>(r_a1)};
}

void timer::set_timer(u64 stime_value) { call(EID, 0, stime_value); }

Result hsm::hart_start(u64 hartid, u64 start, u64 opaque) {
  return call(EID, 0, hartid, start, opaque);
}

void srst::shutdown() {
  call(EID, 0, /*type: shutdown*/ 0, /*reason: none*/ 0);
  for (;;) asm volatile("wfi");
}

void legacy_putchar(int c) { call(0x01, 0, static_cast<u64>(c)); }

}  // namespace sbi
