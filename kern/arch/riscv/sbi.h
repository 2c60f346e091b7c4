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

Result call(u64 eid, u64 fid, u64 a0 = 0, u64 a1 = 0, u64 a2 = 0);

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

// Chapter 10: System reset extension ("SRST").
namespace srst {
inline constexpr u64 EID = 0x53525354;
[[noreturn]] void shutdown();
}  // namespace srst

// Chapter 5: legacy console putchar, for output before the UART is set up.
void legacy_putchar(int c);

}  // namespace sbi
