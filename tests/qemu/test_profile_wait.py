"""Off-CPU samples: a profiled process that is asleep is sampled too ("mode":"wait").

psys (user/demo/psys.cc) writes a file, reads it back and pipes data to itself, and prints
how long its main() ran and how that time divided between the three phases, from the
`time` CSR. A sampler that sees only the processor gets a small part of its lifetime in
samples: it spends most of it asleep, waiting for the disk. With wait samples, once a
sampling period for each profiled sleeper, the on-CPU and wait samples together must
account for its whole lifetime at the sampling rate, and each phase's share of the samples
must be its share of the time.

The machine runs under -icount (one instruction, one nanosecond of guest time), on one hart
(QEMU's -icount runs harts in turn, and two take minutes to boot): the guest's clock then
does not depend on how busy the host is, except while it waits for the disk, where QEMU
jumps from timer deadline to timer deadline for as long as the host's disk takes (and the
sweep samples each period it jumps over). There psys runs with small files (ICOUNT_RUN), and
the profile comes out through the export disk. That the sweep runs once a period, not once a
hart, is checked on three harts without -icount, from above only (a busy host can only
cost samples, never add them). Lifetime is
psys's own measure of main() (rdtime at its first and last line); samples counted against it
are those with main in their user chain (exec and exit lie outside both). Tolerance: 5% of
the expected count for the whole, 5 percentage points for each phase's share. Nothing here
is random.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Iterator

import pytest

from tern import export_disk
from tern import profile_check as pc
from tern.bench import icount
from tern.machine import REPO, Machine

RATE = 1000  # Hz
SECONDS = 2
# Under -icount, psys 1 8: one second, files of 8 KiB. While the hart waits for the disk,
# QEMU (sleep=off) jumps to the next timer deadline, and the sweep takes a wait sample at
# each, as many as the host's disk takes: each request can cost hundreds of periods on a
# busy host. Small files keep that within the sample array and the export disk.
ICOUNT_RUN = "psys 1 8"
ALL_WAITS = "wait samples in /proc/profile"  # the fixture's own entry in the profstat dict
RUN_TIMEOUT = 300
PHASES = {"fill_file": "write", "read_file": "read", "pipe_round": "pipe"}
TOTAL_TOLERANCE = 0.05
SHARE_TOLERANCE = 0.05
TIMING = re.compile(r"psys: (\d+) us: write (\d+) us, read (\d+) us, pipe (\d+) us")


def profile_of(m: Machine, image: Path, command: str) -> tuple[str, list[pc.Sample],
                                                                dict[str, str]]:
    """`profile run COMMAND` at RATE: its output, the samples (through the export disk: a
    profile of thousands of deep samples is megabytes) and /proc/profstat."""
    assert m.run(f"profile rate {RATE}") == ""
    assert m.run("profile clear") == ""
    out = m.run(f"profile run {command}", timeout=RUN_TIMEOUT)
    stat = pc.parse_profstat(m.run("profile status"))
    samples = export_disk.profile_samples(m, image)
    m.assert_no_failures()
    assert int(stat["dropped"]) == 0, f"the sample array filled: {stat}"
    return out, samples, stat


@pytest.fixture(scope="module")
def psys_run(tmp_path_factory) -> Iterator[tuple[str, list[pc.Sample], dict[str, str]]]:
    image = tmp_path_factory.mktemp("wait") / "export.img"
    with Machine(1, name="test_profile_wait.icount",
                 extra_args=icount.ICOUNT_ARGS + export_disk.drive_args(image)) as m:
        m.boot()
        out, samples, stat = profile_of(m, image, ICOUNT_RUN)
    # What profstat's counter counts: every wait sample, also those of `profile run`'s child
    # before its exec of psys (reading psys from the disk, it waits too, as "profile").
    stat[ALL_WAITS] = str(sum(s["mode"] == "wait" for s in samples))
    yield out, [s for s in samples if s["comm"] == "psys"], stat


def phase_of(sample: pc.Sample) -> str | None:
    """The phase of psys a sample was taken in, by its user chain."""
    for name in pc.names(pc.user_frames(sample)):
        if name in PHASES:
            return PHASES[name]
    return None


def test_samples_account_for_the_whole_lifetime(psys_run) -> None:
    out, samples, stat = psys_run
    match = TIMING.search(out)
    assert match, f"psys printed no timing:\n{out}"
    lifetime_us = int(match.group(1))
    in_main = [s for s in samples if "main" in pc.names(pc.user_frames(s))]
    expected = lifetime_us * RATE / 1_000_000
    modes = Counter(s["mode"] for s in in_main)
    print(f"psys main(): {lifetime_us} us, {expected:.0f} periods at {RATE} Hz; samples "
          f"{len(in_main)}: {dict(modes)}; profstat wait samples {stat.get('wait samples')}")
    assert abs(len(in_main) - expected) <= TOTAL_TOLERANCE * expected, (
        f"psys's main() ran {lifetime_us} us, {expected:.0f} sampling periods at {RATE} Hz, "
        f"but it has {len(in_main)} samples ({dict(modes)}): on-CPU and wait samples "
        f"together should account for its whole lifetime, within "
        f"{TOTAL_TOLERANCE:.0%}")
    assert stat["wait samples"] == stat[ALL_WAITS], (
        f"profstat's `wait samples` should count the wait samples in /proc/profile: {stat}")


def test_each_phase_gets_its_share(psys_run) -> None:
    out, samples, _ = psys_run
    match = TIMING.search(out)
    assert match, f"psys printed no timing:\n{out}"
    total = int(match.group(1))
    spent = dict(zip(("write", "read", "pipe"), map(int, match.groups()[1:])))
    phased = [s for s in samples if phase_of(s) is not None]
    assert phased, "no sample of psys in any of its phases"
    counts = Counter(phase_of(s) for s in phased)
    waits = Counter((phase_of(s), s.get("wchan")) for s in phased if s["mode"] == "wait")
    print(f"time: {spent} of {total} us; samples: {dict(counts)}; waits: {dict(waits)}")
    for phase, us in spent.items():
        time_share = us / total
        sample_share = counts[phase] / len(in_main_of(samples))
        assert abs(sample_share - time_share) <= SHARE_TOLERANCE, (
            f"psys spent {time_share:.1%} of its time in the {phase} phase, but "
            f"{sample_share:.1%} of its samples are there: {dict(counts)}; waits {dict(waits)}")
    # What the waits wait on: writing the file waits for the disk (the log's commit at
    # close); the pipe phase waits for nothing (psys's 512-byte pieces fit in the pipe, and
    # it touches no file), so it has next to no wait samples of any kind.
    disk = waits[("write", "disk")]
    assert disk >= 0.5 * counts["write"], (
        f"psys's write phase is mostly waiting for the disk; its waits: {dict(waits)}")
    assert sum(n for (phase, _), n in waits.items() if phase == "pipe") <= 0.05 * max(
        counts["pipe"], 1) + 1, f"psys's pipe phase waits for nothing, yet: {dict(waits)}"


def in_main_of(samples: list[pc.Sample]) -> list[pc.Sample]:
    return [s for s in samples if "main" in pc.names(pc.user_frames(s))]


def test_wait_samples_are_well_formed(psys_run) -> None:
    _, samples, _ = psys_run
    waits = [s for s in samples if s["mode"] == "wait"]
    assert waits, "psys sleeps most of its life, but has no wait samples"
    problems = pc.schema_problems(samples)
    assert not problems, "\n".join(problems[:10])
    for s in waits:
        assert "sleep(void*, Spinlock&)" in pc.names(pc.kernel_frames(s)), (
            f"a wait sample's kernel chain goes through sleep(): {pc.describe(s)}")


def wait_kinds() -> list[tuple[str, str]]:
    """kern/profile/report.cc's WAIT_KINDS, in order: (kernel function, what a sleeper under
    it waits for)."""
    text = (REPO / "kern" / "profile" / "report.cc").read_text()
    table = re.search(r"WAIT_KINDS\[\] = \{(.*?)\n\};", text, re.S)
    assert table, "kern/profile/report.cc has no WAIT_KINDS table"
    kinds = re.findall(r'\{"([^"]+)", "([^"]+)"\}', table.group(1))
    assert kinds, "WAIT_KINDS is empty"
    return kinds


@pytest.fixture(scope="module")
def many_waits() -> list[pc.Sample]:
    """Wait samples of several kinds: all mode at 100 Hz while `sleep 5 | cat` runs (cat
    waits on the pipe, sleep in sleep(), the shell and init in wait()); copied out over the
    console (tens of KB)."""
    with Machine(1, name="test_profile_wait.many") as m:
        m.boot()
        assert m.run("profile rate 100") == ""
        assert m.run("profile all on") == ""
        m.run("sleep 5 | cat", timeout=RUN_TIMEOUT)
        assert m.run("profile all off") == ""
        return pc.parse_profile(m.run("cat /proc/profile", timeout=RUN_TIMEOUT))


def wchan_problems(samples: list[pc.Sample]) -> tuple[Counter[str], list[str]]:
    """The wait samples' "wchan"s, and each one that is not what its kernel frames say."""
    kinds = wait_kinds()

    def says(name: str) -> str | None:
        return next((wait for function, wait in kinds
                     if name == function or name.startswith(function + "(")), None)

    waits = [s for s in samples if s["mode"] == "wait"]
    wrong = []
    for s in waits:
        expected = next((w for w in map(says, pc.names(pc.kernel_frames(s))) if w), "other")
        if s.get("wchan") != expected:
            wrong.append(f"wchan {s.get('wchan')!r}, its frames say {expected!r}: "
                         f"{pc.describe(s)}")
    return Counter(s.get("wchan") for s in waits), wrong


def test_wchan_is_what_the_kernel_frames_say(psys_run, many_waits) -> None:
    """Every wait sample's "wchan" is what the innermost of its kernel frames that names a
    function of WAIT_KINDS waits for, or "other": the kernel decides it from names it keeps,
    and those must be the names the sample itself shows. Over psys's disk waits and a mix
    of pipe, sleep and wait waits."""
    psys, psys_wrong = wchan_problems(psys_run[1])
    mixed, mixed_wrong = wchan_problems(many_waits)
    print(f"wchans: psys {dict(psys)}; mixed {dict(mixed)}")
    assert psys["disk"] > 0, f"psys waits for the disk, but its wchans are {dict(psys)}"
    assert {"pipe", "sleep", "wait"} <= set(mixed), (
        f"the mixed run should wait on a pipe, in sleep() and in wait(): {dict(mixed)}")
    wrong = psys_wrong + mixed_wrong
    assert not wrong, f"{len(wrong)} wait samples:\n" + "\n".join(wrong[:5])


def test_one_sweep_a_period_on_three_harts(tmp_path: Path) -> None:
    image = tmp_path / "export.img"
    with Machine(3, name="test_profile_wait.cpus3",
                 extra_args=export_disk.drive_args(image)) as m:
        m.boot()
        out, samples, _ = profile_of(m, image, f"psys {SECONDS}")
    match = TIMING.search(out)
    assert match, f"psys printed no timing:\n{out}"
    expected = int(match.group(1)) * RATE / 1_000_000
    in_main = in_main_of([s for s in samples if s["comm"] == "psys"])
    modes = Counter(s["mode"] for s in in_main)
    print(f"{len(in_main)} samples for {expected:.0f} periods: {dict(modes)}")
    assert modes["wait"] > 0, f"psys has no wait samples on three harts: {dict(modes)}"
    assert len(in_main) <= (1 + TOTAL_TOLERANCE) * expected, (
        f"psys ran {expected:.0f} sampling periods but has {len(in_main)} samples "
        f"({dict(modes)}): is the wait sweep taken once a period, or once a hart?")


def test_console_top_shows_the_cpu(psys_run) -> None:
    """`profile top` (the table `profile run` prints) counts the samples taken on the CPU:
    the console's reports leave the waits to the host tools (profconv --cpu)."""
    out, samples, _ = psys_run
    top = pc.parse_top(out)
    on_cpu = sum(1 for s in samples if s["mode"] != "wait")
    assert top.samples == on_cpu, (
        f"`profile top` counted {top.samples} samples; psys has {on_cpu} on the CPU and "
        f"{len(samples) - on_cpu} wait samples:\n{out}")
    assert all(r.name != "sched()" for r in top.rows[:1]), f"waits in `profile top`:\n{out}"
