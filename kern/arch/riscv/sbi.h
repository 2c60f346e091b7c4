// Calls into the SBI firmware (OpenSBI) below us, per the RISC-V SBI specification v1.0.
//
// An SBI call is an `ecall` from S-mode: extension id in a7, function id in a6, arguments in
// a0..a5; the firmware returns an error code in a0 and a value in a1. One namespace per
// extension, named after the spec's chapter.
#pragma once

#include "lib/types.h"

namespace sbi {

struct Result {
  long error;  // 0 = success, negative = SBI_ERR_*
  long value;
};

Result call(u64 eid, u64 fid, u64 a0 = 0, u64 a1 = 0, u64 a2 = 0, u64 a3 = 0, u64 a4 = 0);

// Chapter 4: Base extension.
namespace base {
inline constexpr u64 EID = 0x10;
[[nodiscard]] bool probe_extension(u64 eid);  // is extension `eid` implemented?
}  // namespace base

// Chapter 6: Timer extension ("TIME").
namespace timer {
inline constexpr u64 EID = 0x54494D45;
void set_timer(u64 stime_value);
}  // namespace timer

// Chapter 9: Hart state management extension ("HSM").
namespace hsm {
inline constexpr u64 EID = 0x48534D;
// Start hart `hartid` at physical address `start` in S-mode, a0 = hartid, a1 = opaque.
Result hart_start(u64 hartid, u64 start, u64 opaque);
}  // namespace hsm

// Chapter 11: Performance monitoring unit extension ("PMU"). A counter is named by its
// index; the calls take a base index and a mask of the indexes above it.
namespace pmu {
inline constexpr u64 EID = 0x504D55;
inline constexpr u64 HW_INSTRUCTIONS = 2;  // event index: hardware event, retired instructions
inline constexpr u64 CFG_CLEAR_VALUE = 1 << 1;
inline constexpr u64 CFG_SET_MINH = 1 << 7;  // do not count in M-mode (the firmware itself)
inline constexpr u64 START_SET_INIT_VALUE = 1 << 0;
[[nodiscard]] long num_counters();
// Finds a counter among [base, base + 64) chosen by `mask` that can count `event` and
// configures it: its index, or a negative SBI error.
[[nodiscard]] long config_matching(u64 base, u64 mask, u64 flags, u64 event);
[[nodiscard]] long start(u64 index, u64 initial);  // counting up from `initial`; 0 or an SBI error
[[nodiscard]] long stop(u64 index);                // 0 or an SBI error
}  // namespace pmu

// Chapter 10: System reset extension ("SRST").
namespace srst {
inline constexpr u64 EID = 0x53525354;
[[noreturn]] void shutdown();
}  // namespace srst

// Chapter 5: legacy console putchar, for output before the UART is set up.
void legacy_putchar(int c);

}  // namespace sbi
