"""The instruction clock (kern/profile/iclock.cc): `profile event instructions N` samples
every N retired instructions, through the Sscofpmf counter-overflow interrupt.

Under -icount shift=0 one guest instruction is one nanosecond, so the samples' timestamps
(microseconds) show the clock's period: while spin runs alone on the one hart, consecutive
samples lie N/1000 microseconds apart (plus what the trap and the re-arm retire beyond the
counted ones, about a microsecond). The timer's rate is set to 10 Hz first, so a sampler that
ignored the instruction clock would leave its samples 100,000 microseconds apart, and one
that kept both clocks would show both gaps.

A machine without Sscofpmf (`-cpu rv64`) says `instruction clock: none` at boot, and there
`profile event instructions N` fails with a message naming what is missing, while the timer
goes on working.
"""

from __future__ import annotations

import statistics
from typing import Iterator

import pytest

from tern import profile_check as pc
from tern.bench import icount
from tern.machine import Machine

EVERY = 5_000_000  # instructions a sample: 200 samples a second of emulated time
US_PER_SAMPLE = EVERY // 1000  # microseconds of emulated time, under -icount shift=0
RUN_TIMEOUT = 120


@pytest.fixture(scope="module")
def counted() -> Iterator[Machine]:
    with Machine(1, name="test_profile_iclock.icount", extra_args=icount.ICOUNT_ARGS) as m:
        m.boot()
        yield m


def test_boot_says_there_is_an_instruction_clock(counted: Machine) -> None:
    assert "tern: instruction clock: sscofpmf" in counted.boot_output, (
        f"QEMU runs with -cpu rv64,sscofpmf=true (Makefile CPU), so the kernel should find "
        f"the counter-overflow interrupt:\n{counted.boot_output[-2000:]}")


def test_samples_every_n_instructions(counted: Machine) -> None:
    m = counted
    assert m.run("profile rate 10") == ""
    assert m.run(f"profile event instructions {EVERY}") == ""
    stat = pc.parse_profstat(m.run("profile status"))
    assert stat.get("clock") == f"instructions {EVERY}", f"profstat: {stat}"
    assert m.run("profile clear") == ""
    out = m.run("profile run spin 1", timeout=RUN_TIMEOUT)
    assert "exited" in out, f"`profile run spin 1` gave no report:\n{out}"
    samples = sorted((s for s in pc.parse_profile(m.run("cat /proc/profile", timeout=RUN_TIMEOUT))
                      if s["comm"] == "spin"), key=lambda s: s["timestamp"])
    assert m.run("profile event timer") == ""
    assert pc.parse_profstat(m.run("profile status")).get("clock") == "timer"
    assert len(samples) >= 100, (
        f"spin ran about 1e9 instructions, which is {10**9 // EVERY} periods of {EVERY}; "
        f"only {len(samples)} samples came")
    gaps = [b["timestamp"] - a["timestamp"] for a, b in zip(samples, samples[1:])]
    median = statistics.median(gaps)
    assert US_PER_SAMPLE <= median <= US_PER_SAMPLE * 1.02, (
        f"samples should lie {US_PER_SAMPLE} us ({EVERY} instructions) apart, give or "
        f"take the re-arm; the median gap is {median} us (gaps {sorted(gaps)[:5]} ... "
        f"{sorted(gaps)[-5:]})")
    near = [g for g in gaps if g < US_PER_SAMPLE]
    assert not near, (f"{len(near)} gaps shorter than a period, so another clock took samples "
                      f"too: {near[:5]}")
    far = [g for g in gaps if g > 2 * US_PER_SAMPLE]
    assert not far, f"{len(far)} gaps of more than two periods: {far[:5]}"


def test_bad_counts_are_refused(counted: Machine) -> None:
    for arg in ("9999", "1000000001", "-5", "many", ""):
        out = counted.run(f"pstatus profile event instructions {arg}")
        assert "pstatus: exit 1" in out and "profile:" in out, (
            f"`profile event instructions {arg}` should fail with a message:\n{out}")
    stat = pc.parse_profstat(counted.run("profile status"))
    assert stat.get("clock") == "timer", f"a refused count changes nothing: {stat}"


def test_without_sscofpmf_the_clock_is_refused() -> None:
    with Machine(1, name="test_profile_iclock.plain", extra_args=("-cpu", "rv64")) as m:
        m.boot()
        assert "tern: instruction clock: none" in m.boot_output, m.boot_output[-2000:]
        out = m.run("pstatus profile event instructions 100000")
        assert "pstatus: exit 1" in out and "sscofpmf" in out, (
            f"the command should fail and say what the machine lacks:\n{out}")
        assert pc.parse_profstat(m.run("profile status")).get("clock") == "timer"
        m.assert_no_failures()
