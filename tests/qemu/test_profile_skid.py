"""Skid made visible: each sample says how late it was taken, and whether interrupts were off.

The sampling clock is a timer interrupt, and interrupts are off under every spinlock and from
an ecall until usertrap() turns them on: a deadline that passes there is taken late, where
interrupts come back on (lectures/README.md, section 7). Each sample of /proc/profile carries
"late" (microseconds after its deadline) and "irqoff":true when its interrupt had been held off
(kern/profile/profiler.h, Sample::late).

Both programs run on one hart under -icount, where time is counted in instructions, so what
is checked (shares and bounds, not exact counts: bytewise's first reads wait for the disk)
does not depend on how busy the host is:

* bytewise 32 (user/demo/bytewise.cc) reads a file a byte per read(): it lives in system
  calls and spinlocks. Most samples whose innermost frame is pop_off() were held off (the
  skid of a lock: POP_OFF_HELD_SHARE or more), so were most of those in the user stub
  `read` (the return from the kernel, taken at the first user instruction), and no sample
  is marked anywhere but where interrupts come back on: pop_off(), usertrap(), the user
  instruction after an ecall (the return from the kernel), or the return from a kernel trap.
  That last one is at whatever pc the trap interrupted (a tick that came due while a
  preempted bytewise waited to run again is taken there), so those samples cannot be told
  apart by their place: at most TRAP_RETURNS of them (0 or 1 in a run) may be elsewhere.
* pstall (user/tests/pstall.cc) has the kernel keep interrupts off for 1 ms at a time: the
  samples at the pop_off() that ends each stall were held off and are late by most of a
  millisecond, where every sample taken on time is late by less than STALL_ON_TIME_US.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from tern import export_disk
from tern import profile_check as pc
from tern.bench import icount
from tern.machine import Machine

RUN_TIMEOUT = 300
RATE = 10_000  # a period of 100 us: many samples in a short run
BYTEWISE = "bytewise 32"
# The places interrupts come back on, where a held-off interrupt is taken.
ENABLE_POINTS = ("pop_off", "usertrap")
# Of pop_off's samples, at least this share held off. The others are ticks that came due on
# time in the few instructions after it turned interrupts on (97% held off when written).
POP_OFF_HELD_SHARE = 0.75
STALLS, STALL_US, STALL_GAP_US = 20, 1000, 2000
STALL_ON_TIME_US = 20  # no sample taken on time is later than this
# Marked samples away from the enable points, held off by a kernel trap and taken at its
# return (a mark that outlived its tick would put one on most of bytewise's samples).
TRAP_RETURNS = 3


def run_profiled(m: Machine, image: Path, command: str, done: str) -> list[pc.Sample]:
    assert m.run("profile clear") == ""
    assert m.run(f"profile rate {RATE}") == ""
    out = m.run(command, timeout=RUN_TIMEOUT)
    assert done in out, f"`{command}` failed:\n{out}"
    samples = export_disk.profile_samples(m, image)
    problems = pc.schema_problems(samples)
    assert not problems, "\n".join(problems[:10])
    return samples


def profiles(tmp_path: Path) -> tuple[list[pc.Sample], list[pc.Sample]]:
    image = tmp_path / "export.img"
    with Machine(1, name="test_profile_skid",
                 extra_args=icount.ICOUNT_ARGS + export_disk.drive_args(image)) as m:
        m.boot()
        bytewise = run_profiled(m, image, f"profile run {BYTEWISE}", "profile: pid")
        stalled = run_profiled(m, image, f"pstall {STALLS} {STALL_US} {STALL_GAP_US}",
                               "pstall: done")
        m.assert_no_failures()
    return bytewise, stalled


def innermost(s: pc.Sample) -> str:
    """The innermost function's name, without a C++ name's parameters."""
    return s["samples"][0]["symbol"].split("(")[0]


def held(s: pc.Sample) -> bool:
    return s.get("irqoff") is True


def at_enable_point(s: pc.Sample) -> bool:
    """Taken where interrupts come back on: in the kernel at pop_off() or usertrap(), or in
    user mode (the return from the kernel, which turns them on at the first user
    instruction)."""
    return s["mode"] == "user" or innermost(s) in ENABLE_POINTS


def describe(samples: list[pc.Sample], n: int = 5) -> str:
    return "\n  ".join(f"late {s['late']} irqoff {held(s)}: {pc.describe(s)}"
                       for s in samples[:n])


def held_share(samples: list[pc.Sample], where: str, why: str) -> float:
    """The share of `samples` marked "irqoff", which must be POP_OFF_HELD_SHARE or more."""
    share = sum(map(held, samples)) / len(samples)
    assert share >= POP_OFF_HELD_SHARE, (
        f"only {share:.0%} of the {len(samples)} samples {where} are marked \"irqoff\": "
        f"{why}:\n  {describe([s for s in samples if not held(s)])}")
    return share


def test_samples_at_pop_off_are_the_held_off_ones(tmp_path: Path) -> None:
    bytewise, stalled = profiles(tmp_path)

    # bytewise: the skid of its locks is marked, and nothing else is.
    mine = [s for s in bytewise if s.get("comm") == BYTEWISE.split()[0]]
    assert len(mine) >= 200, f"expected hundreds of samples of bytewise, got {len(mine)}"
    at_pop_off = [s for s in mine if s["mode"] == "kernel" and innermost(s) == "pop_off"]
    assert len(at_pop_off) >= 20, (
        f"bytewise takes spinlocks on every read(): expected samples at pop_off, got "
        f"{len(at_pop_off)} of {len(mine)}")
    share = held_share(at_pop_off, "at pop_off()", "a sample there is the skid of a lock, "
                       "taken when interrupts came back on")
    elsewhere = [s for s in mine if held(s) and not at_enable_point(s)]
    assert len(elsewhere) <= TRAP_RETURNS, (
        f"{len(elsewhere)} samples marked \"irqoff\" away from where interrupts come back on "
        f"(pop_off, usertrap, the return to user mode; at most {TRAP_RETURNS} at the return "
        f"from a kernel trap):\n  {describe(elsewhere)}")
    # In user mode, in the stub `read` (user/lib: li a7; ecall; ret): the tick that came due
    # on the way back from the kernel, taken at the first user instruction.
    returned = [s for s in mine if s["mode"] == "user" and innermost(s) == "read"]
    assert len(returned) >= 10, (
        f"expected samples in the stub `read`, where the way back from each read() is "
        f"charged, got {len(returned)}")
    share_returned = held_share(returned, "in the stub `read`", "a tick that comes due while "
                                "the kernel returns to user mode is taken at the first user "
                                "instruction")
    others = [s for s in mine if not at_enable_point(s)]
    assert others, "bytewise should have samples inside its system calls, not only at their edges"
    print(f"bytewise: {len(mine)} samples, {len(at_pop_off)} at pop_off ({share:.0%} held "
          f"off), {len(returned)} in the stub read ({share_returned:.0%} held off), "
          f"{sum(map(held, mine))} held off in all; {len(others)} elsewhere, {len(elsewhere)} "
          f"of them held off")

    # pstall: the samples at the end of each stall are late by most of the stall.
    pids = {s["pid"] for s in stalled if s.get("comm") == "pstall"}
    assert len(pids) == 1, f"expected samples of one pstall, got pids {pids}"
    mine = pc.of_pid(stalled, pids.pop())
    late = [s for s in mine if held(s) and s["mode"] == "kernel" and innermost(s) == "pop_off"
            and s["late"] >= STALL_US - 2 * 1_000_000 // RATE]
    assert len(late) >= STALLS // 2, (
        f"the kernel kept interrupts off {STALLS} times for {STALL_US} us: expected a sample "
        f"at pop_off() late by {STALL_US - 2 * 1_000_000 // RATE} us or more after most of "
        f"them, got {len(late)}:\n  {describe(sorted(mine, key=lambda s: -s['late']))}")
    on_time = [s for s in mine if not held(s)]
    assert len(on_time) >= 100, f"expected pstall's spinning to be sampled, got {len(on_time)}"
    too_late = [s for s in on_time if s["late"] > STALL_ON_TIME_US]
    assert not too_late, (
        f"{len(too_late)} samples not marked \"irqoff\" are late by more than "
        f"{STALL_ON_TIME_US} us:\n  {describe(too_late)}")
    print(f"pstall: {len(late)} samples at pop_off late by a median "
          f"{statistics.median(s['late'] for s in late)} us; {len(on_time)} on time, late by "
          f"at most {max(s['late'] for s in on_time)} us")
