// SBI calls (see sbi.h).

#include "arch/riscv/sbi.h"

namespace sbi {

Result call(u64 eid, u64 fid, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4) {
  register u64 r_a0 asm("a0") = a0;
  register u64 r_a1 asm("a1") = a1;
  register u64 r_a2 asm("a2") = a2;
  register u64 r_a3 asm("a3") = a3;
  register u64 r_a4 asm("a4") = a4;
  register u64 r_a6 asm("a6") = fid;
  register u64 r_a7 asm("a7") = eid;
  asm volatile("ecall"
               : "+r"(r_a0), "+r"(r_a1)
               : "r"(r_a2), "r"(r_a3), "r"(r_a4), "r"(r_a6), "r"(r_a7)
               : "memory");
  return Result{static_cast<long>(r_a0), static_cast<long>(r_a1)};
}

bool base::probe_extension(u64 eid) {
  Result r = call(EID, 3, eid);
  return r.error == 0 && r.value != 0;
}

long pmu::num_counters() {
  Result r = call(EID, 0);
  return r.error != 0 ? r.error : r.value;
}

long pmu::config_matching(u64 base, u64 mask, u64 flags, u64 event) {
  Result r = call(EID, 2, base, mask, flags, event, 0);
  return r.error != 0 ? r.error : r.value;
}

long pmu::start(u64 index, u64 initial) {
  return call(EID, 3, index, 1, START_SET_INIT_VALUE, initial).error;
}

long pmu::stop(u64 index) { return call(EID, 4, index, 1, 0).error; }

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
