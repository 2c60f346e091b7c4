"""The profile lab's grade tests (labs/profile/README.md): 100 points in three tasks.

Task 1, the profile(2) system call (kern/profile/sysprofile.cc, sys_profile): 33 points.
Task 2, /proc/profile (kern/profile/report.cc, profile_read): 41 points.
Task 3, `profile run` (user/bin/profile/run.cc, run) and the questions (labs/profile/answers.txt):
26 points.

Every test checks one behaviour and says in its first line what is wrong, then where to
look. The tests of a task use only what the earlier tasks built: the task 1 tests read the
profiler's state from /proc/profstat (written for you), never /proc/profile; the task 2
tests switch sampling on with `profile PID on`, never `profile run`.

Most tests share one machine (the `shared` fixture) and start from a clean profile
(`profile clear`, then a rate of their own). Each test is complete in itself, so any one of
them can be run alone (`pytest labs/profile/test_lab_profile.py -k read_sizes`) and the grader
may spread them over several machines.

Profiles go to the host through the shared machine's export disk (`expcopy /proc/profile`,
tools/tern/export_disk.py), not over the console, which moves about 150 KB a second.
Tests take a few dozen to a few thousand samples: each profiles until /proc/profstat counts
the samples it needs (wait_for_samples), not for a time. Before any copy, the file's length
is taken with `labread` with a limit: a /proc/profile that ignores the read offset never
ends, and the test should say so rather than wait for a timeout.

Nothing is judged by the host's clock: a busy host gives fewer samples a second, and the
tests wait for a count, within windows stretched by GRADE_TIMEOUT_SCALE on a slow host; the
cost of reading /proc/profile is counted in guest instructions, on a machine run under QEMU's
-icount.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tern import export_disk
from tern import jobs
from tern import profile_check as pc
from tern.fixtures import SharedMachine
from tern.machine import PANIC, REPO, TRAP, Machine, timeout_scale
from tern.profile_props import (BOTTOM, DESCEND, document_problems, name_problems, parse_openings,
                                seed_from_env, symbol_bytes)

SAMPLES_TIMEOUT = 30  # s: the longest wait for a profile to reach its samples
# s: the wait for the few samples a test needs at its rate, hundreds of periods even on a
# host that runs the guest a third of the time; a kernel that takes none fails after it.
SAMPLES_WINDOW = 10
PBADCALL_TIMEOUT = 30  # pbadcall may ask a zombie for 3 s (user/tests/pbadcall.cc)
RUN_TIMEOUT = 60  # `profile run` of a program of a fraction of a second, with its report
COPY_TIMEOUT = 120  # copying out /proc/profile, or reading it with labread
FILL_TIMEOUT = 240  # filling the sample array (under a second on the -icount machine)
FILL_SLEEPERS = 32  # processes asleep while it fills (NPROC is 64)
OVERFLOW = 1  # s for the first drop once full: thousands of samples are due in it
READ_LIMIT = 4_000_000  # bytes: more than any profile read whole here (psys's: under 3 MB)
RUN_REPORT = re.compile(r"profile: pid (\d+) \((\S+)\) exited with status (-?\d+)")
LABREAD = re.compile(r"labread: (\d+) bytes, fnv1a ([0-9a-f]{8}), (\d+) reads, (\d+) ticks")
LABREAD_LONGER = re.compile(r"labread: longer than (\d+) bytes, (\d+) ticks")
# One guest instruction is one nanosecond of virtual time: `time` ticks count instructions.
ICOUNT_ARGS = ("-icount", "shift=0,sleep=off")
# Reading the first COST_FAR bytes of a profile 4096 bytes at a time may cost at most
# COST_RATIO times as many instructions as reading the first COST_NEAR: 4 for a reader that
# carries on where the last read stopped, about 15 for one that renders from the start.
COST_NEAR, COST_FAR, COST_RATIO = 64 * 1024, 256 * 1024, 7.0
ANSWERS = REPO / "labs" / "profile" / "answers.txt"
ANSWER_PLACEHOLDER = "(write your answer here)"

points = pytest.mark.points  # the lab is this folder, labs/profile/


# --- Helpers ------------------------------------------------------------------------------


def status_of(m: Machine, cmd: str, timeout: float = 10) -> tuple[int, str]:
    """Run `cmd` under pstatus: (its exit status, what it printed before pstatus's line)."""
    out = m.run(f"pstatus {cmd}", timeout=timeout, failures=(PANIC, TRAP))
    match = re.search(r"pstatus: exit (-?\d+)\s*$", out)
    assert match, f"`pstatus {cmd}` printed no exit status:\n{out}"
    return int(match.group(1)), out[:match.start()]


def profstat(m: Machine) -> dict[str, str]:
    return pc.parse_profstat(m.run("profile status"))


def fresh_profile(m: Machine, rate: int) -> None:
    """Forget every sample and set the rate; both need profile(2) (task 1)."""
    status, out = status_of(m, "profile clear")
    assert status == 0, (
        f"profile(0, PROF_CLEAR, 0) returned -1, so this test cannot start from an empty "
        f"profile (`profile clear` printed {out.strip()!r}); see task 1")
    status, out = status_of(m, f"profile rate {rate}")
    assert status == 0, (
        f"profile(0, PROF_RATE, {rate}) returned -1 (`profile rate {rate}` printed "
        f"{out.strip()!r}); see task 1")


def profiling_after(m: Machine, call: str, expected: str, hint: str = "") -> dict[str, str]:
    """/proc/profstat, whose `profiling:` line must say `expected` after `call`."""
    stat = profstat(m)
    assert stat.get("profiling") == expected, (
        f"after {call}, /proc/profstat says `profiling: {stat.get('profiling')}` instead of "
        f"`profiling: {expected}`{hint}")
    return stat


def clear(m: Machine) -> None:
    """`profile clear`, which must succeed."""
    status, out = status_of(m, "profile clear")
    assert status == 0, f"profile(0, PROF_CLEAR, 0) returned -1: {out.strip()!r}"


def switch(m: Machine, pid: int, on: bool) -> None:
    """`profile PID on|off`, which must succeed."""
    word, cmd = ("on", "PROF_ON") if on else ("off", "PROF_OFF")
    status, out = status_of(m, f"profile {pid} {word}")
    assert status == 0, (
        f"profile({pid}, {cmd}, 0) returned -1 for a running process that "
        f"{'is not' if on else 'is'} being profiled (`profile {pid} {word}` printed "
        f"{out.strip()!r}); see task 1")


def wait_for_samples(m: Machine, at_least: int, within: float = SAMPLES_WINDOW,
                     on_cpu: bool = False, most: int | None = None) -> int:
    """Wait until /proc/profstat's `recorded:` reaches `at_least` (tern/profile_check.py's
    wait_for_recorded, which says why a count and not a time, and what `on_cpu` and `most`
    do), within SAMPLES_WINDOW seconds by default."""
    return pc.wait_for_recorded(m, at_least, within, on_cpu, most)


def profile_background(m: Machine, cmd: str, min_samples: int) -> int:
    """Start `cmd &` and profile it until /proc/profstat has recorded `min_samples` (within
    SAMPLES_WINDOW seconds), then stop and kill it. Returns its pid. `cmd` must run for
    longer than that."""
    with jobs.running(m, cmd) as pid:
        switch(m, pid, True)
        recorded = wait_for_samples(m, min_samples)
        switch(m, pid, False)
    assert recorded >= min_samples, (
        f"`{cmd}` was profiled for {SAMPLES_WINDOW * timeout_scale():.0f} s, but /proc/profstat "
        f"shows {recorded} samples recorded, fewer than {min_samples}: the sampler takes "
        f"samples of a process only if its Proc::profiled is set and prof::nprofiled counts it")
    return pid


@dataclass(frozen=True)
class Read:
    length: int
    fnv: str
    reads: int
    ticks: int


def labread(m: Machine, size: int, limit: int = READ_LIMIT,
            timeout: float = COPY_TIMEOUT) -> Read:
    """Read /proc/profile `size` bytes at a time, stopping after `limit` bytes."""
    out = m.run(f"labread /proc/profile {size} {limit}", timeout=timeout)
    assert "longer than" not in out, (
        f"reading /proc/profile {size} bytes at a time never ended: more than {limit} bytes "
        f"came back. Does profile_read() honour `off`? Each read must return the bytes from "
        f"`off` on, and 0 once `off` is at the end of the document")
    match = LABREAD.search(out)
    assert match, f"`labread /proc/profile {size}` failed: {out.strip()!r}"
    return Read(int(match.group(1)), match.group(2), int(match.group(3)), int(match.group(4)))


@pytest.fixture(scope="module")
def _shared_holder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedMachine]:
    """This file's `shared` machine (tern/fixtures.py) has an export disk, for profile_text."""
    image = tmp_path_factory.mktemp("export") / "export.img"
    holder = SharedMachine("test_lab_profile.py", extra_args=export_disk.drive_args(image))
    yield holder
    holder.close()


def profile_bytes(m: Machine) -> bytes:
    """The whole of /proc/profile, checked to end first, copied out through m's export
    disk (the shared machine has one: _shared_holder)."""
    labread(m, 4096)
    image = export_disk.image_of(m)
    assert image is not None, "profile_bytes() needs a machine with an export disk"
    return export_disk.copy_out(m, image, "/proc/profile", timeout=COPY_TIMEOUT)


def profile_text(m: Machine) -> str:
    """profile_bytes() as text (a byte that is not UTF-8 becomes U+FFFD)."""
    return profile_bytes(m).decode("utf-8", errors="replace")


def cat_profile(m: Machine) -> tuple[str, list[pc.Sample]]:
    """The whole of /proc/profile (profile_text), checked to be valid JSON."""
    text = profile_text(m)
    return text, pc.parse_profile(text)


SPIN_FUNCTIONS = ("hot", "middle", "outer")


def check_comm(samples: list[pc.Sample], program: str, functions: tuple[str, ...]) -> None:
    """Every sample taken in `program`'s own functions has "comm" `program`. (A sample of a
    process taken before its exec finished is in the program it was exec'd from.)"""
    mine = pc.taken_in(samples, functions)
    assert mine, (
        f"none of {len(samples)} samples names any of {program}'s functions "
        f"{', '.join(functions)}: {pc.common_chains(samples)}")
    assert_no_problems(pc.comm_problems(mine, program),
                       "\"comm\" should name the program the sample was taken in "
                       "(prof::image_name(s.image))")


def assert_no_problems(problems: list[str], what: str) -> None:
    if problems:
        shown = "\n  ".join(problems[:10])
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise AssertionError(f"{what}: {len(problems)} problem(s), the first: {problems[0]}"
                             f"\n  {shown}{more}")


# --- Task 1: the profile system call -----------------------------------------------------


@points(8)
def test_on_off_running_process(shared: Machine) -> None:
    with jobs.running(shared, "spin") as pid:
        status, out = status_of(shared, f"profile {pid} on")
        assert status == 0, (
            f"profile({pid}, PROF_ON, 0) returned -1 for a running process (spin, pid {pid}); "
            f"`profile {pid} on` printed {out.strip()!r}")
        fresh_profile(shared, 100)
        profiling_after(shared, f"profile({pid}, PROF_ON, 0)", str(pid),
                        ": the call must mark the process as profiled (Proc::profiled, "
                        "counted in prof::nprofiled)")
        wait_for_samples(shared, 5)
        status, out = status_of(shared, f"profile {pid} off")
        assert status == 0, (
            f"profile({pid}, PROF_OFF, 0) returned -1 for a process being profiled; "
            f"`profile {pid} off` printed {out.strip()!r}")
        stat = profiling_after(shared, f"profile({pid}, PROF_OFF, 0)", "none")
    recorded = int(stat.get("recorded", "0"))
    assert recorded >= 5, (
        f"spin ran for {SAMPLES_WINDOW * timeout_scale():.0f} s while profiled at 100 Hz, but "
        f"only {recorded} samples were recorded: the sampler takes samples of a process only "
        f"if its Proc::profiled is set and prof::nprofiled counts it (or all mode is on)")


LEGEND = ("on/pid N: PROF_ON for a pid no process has; off/pid N: PROF_OFF likewise; "
          "on/zombie, off/zombie: a child that has exited and not yet been waited for; "
          "on/killed: a child that has been killed; cmd N: an unknown command; "
          "off/self not on: PROF_OFF for a process that is not being profiled; "
          "off/all not on: PROF_OFF for all when all mode is off; rate N: "
          "PROF_RATE outside 10..10000; on/self, off/self, rate unchanged: good calls that "
          "must return 0")


@points(8)
def test_bad_arguments_return_minus_one(shared: Machine) -> None:
    out = shared.run("pbadcall", failures=(PANIC, TRAP), timeout=PBADCALL_TIMEOUT)
    failures = re.findall(r"pbadcall: FAIL (.*)", out)
    if failures:
        raise AssertionError(
            f"profile(2) answered {len(failures)} call(s) wrongly, first: {failures[0]}\n"
            f"pbadcall (user/tests/pbadcall.cc) reported:\n  " + "\n  ".join(failures)
            + f"\nThe cases: {LEGEND}")
    assert "pbadcall: all -1" in out, f"pbadcall did not finish: {out!r}"


@points(4)
def test_rate_limits_accepted(shared: Machine) -> None:
    try:
        for hz in (10, 10000, 250):
            status, out = status_of(shared, f"profile rate {hz}")
            assert status == 0, (
                f"profile(0, PROF_RATE, {hz}) returned -1: rates from PROF_MIN_HZ (10) to "
                f"PROF_MAX_HZ (10000), both included, are valid (`profile rate {hz}` printed "
                f"{out.strip()!r})")
            rate = profstat(shared).get("rate")
            assert rate == str(hz), (
                f"after profile(0, PROF_RATE, {hz}), /proc/profstat says `rate: {rate}`: the "
                f"call must set the sampler's rate (prof::set_rate)")
    finally:
        shared.run("profile rate 1000")


@points(6)
def test_all_mode(shared: Machine) -> None:
    fresh_profile(shared, 500)
    status, out = status_of(shared, "profile all on")
    assert status == 0, (
        f"profile(PROF_ALL_PIDS, PROF_ON, 0) returned -1 (`profile all on` printed "
        f"{out.strip()!r})")
    try:
        profiling_after(shared, "profile(-1, PROF_ON, 0)", "all", " (prof::all_mode)")
        assert "spin: done" in shared.run("spin 0.3", timeout=RUN_TIMEOUT)
    finally:
        status, out = status_of(shared, "profile all off")
    assert status == 0, (
        f"profile(PROF_ALL_PIDS, PROF_OFF, 0) returned -1 while all mode was on "
        f"(`profile all off` printed {out.strip()!r})")
    stat = profiling_after(shared, "profile(-1, PROF_OFF, 0)", "none")
    recorded = int(stat.get("recorded", "0"))
    assert recorded >= 5, (
        f"`spin 0.3`, started while all mode was on, should have been sampled about 150 times; "
        f"{recorded} samples were recorded")
    status, out = status_of(shared, "profile all off")
    assert status == 1, (
        f"profile(PROF_ALL_PIDS, PROF_OFF, 0) should return -1 when all mode is already off "
        f"(`profile all off` exited with status {status})")


@points(4)
def test_clear(shared: Machine) -> None:
    fresh_profile(shared, 100)
    profile_background(shared, "spin", 5)
    before = profstat(shared)
    assert int(before.get("recorded", "0")) > 0, (
        f"no samples were recorded while spin was profiled, so there is nothing to clear "
        f"(see test_on_off_running_process): {before}")
    clear(shared)
    after = profstat(shared)
    assert (after.get("recorded"), after.get("dropped")) == ("0", "0"), (
        f"after profile(0, PROF_CLEAR, 0) /proc/profstat says `recorded: "
        f"{after.get('recorded')}`, `dropped: {after.get('dropped')}`; both should be 0 "
        f"(prof::clear_samples)")


@points(3)
def test_exited_process_is_gone(shared: Machine) -> None:
    fresh_profile(shared, 100)
    with jobs.running(shared, "spin") as pid:
        switch(shared, pid, True)
    status, out = status_of(shared, f"profile {pid} off")
    # Both calls answering -1 is what makes the command say that the process is gone: that
    # it has exited and its samples are kept, or (with none kept) that there is no process.
    gone = f"process {pid} has exited" in out or f"no process {pid}" in out
    assert status == 1 and gone, (
        f"profile({pid}, PROF_OFF, 0) for a process that has exited should return -1, and "
        f"so should the PROF_ON the command then tries: `profile {pid} off` printed "
        f"{out.strip()!r} and exited with status {status}. Only processes that are alive "
        f"(not UNUSED, not ZOMBIE, not killed) can be named")
    profiling_after(shared, f"spin (pid {pid}) exited", "none",
                    ": an exited process is no longer profiled")


# --- Task 2: /proc/profile -----------------------------------------------------------------


@points(3)
def test_empty_profile_is_an_empty_array(shared: Machine) -> None:
    fresh_profile(shared, 100)
    # The document is 4 bytes: a read that goes on past 4 KiB has ignored the offset.
    read = labread(shared, 4096, limit=4096)
    text = shared.run("cat /proc/profile")
    assert read.length > 0, (
        "/proc/profile is empty: with no samples it should hold an empty JSON array, "
        "`[`, a newline, `]` and a newline")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise AssertionError(f"/proc/profile with no samples is not valid JSON ({err}): "
                             f"{text!r}") from None
    assert data == [], f"/proc/profile after `profile clear` should be `[]`, got {text!r}"
    want = b"[\n]\n"
    assert (read.length, read.fnv) == (len(want), f"{pc.fnv1a(want):08x}"), (
        f"/proc/profile with no samples should be exactly the {len(want)} bytes {want!r} "
        f"(`[`, a newline, `]`, a newline), but it is {read.length} bytes "
        f"({text.strip()!r} as the console shows it)")


@dataclass(frozen=True)
class SpinProfile:
    pid: int
    text: str
    cpus: int

    @property
    def samples(self) -> list[pc.Sample]:
        """Parsed in each test that asks, not in the fixture: a profile that is not valid
        JSON fails the test, on an assertion of its own, rather than erring in setup."""
        return pc.parse_profile(self.text)


@pytest.fixture(scope="module")
def spin_profile(_shared_holder) -> SpinProfile | str:
    """spin, profiled by pid at 2000 Hz until it has 250 samples: the
    profile as text and the pid. The shares of spin's functions are checked on these, so
    they must be many: with 46 samples, hot's share once fell below its threshold by chance.
    A failure here is returned, and reported by each test that uses it (spin_of), so that
    it fails on an assertion of its own rather than erring in setup."""
    m = _shared_holder.get()
    try:
        fresh_profile(m, 2000)
        pid = profile_background(m, "spin", 250)
        return SpinProfile(pid, profile_text(m), m.cpus)
    except AssertionError as err:  # a MachineError is an AssertionError too
        return f"profiling spin failed: {err}"


def spin_of(run: SpinProfile | str) -> SpinProfile:
    assert not isinstance(run, str), run
    return run


@points(3)
@pytest.mark.xdist_group("profile-lab-spin")
def test_profile_is_valid_json(spin_profile: SpinProfile | str) -> None:
    spin_profile = spin_of(spin_profile)
    samples = spin_profile.samples
    assert_no_problems(pc.schema_problems(samples),
                       "/proc/profile does not follow the schema of kern/profile/report.cc")
    check_comm(samples, "spin", SPIN_FUNCTIONS)
    assert_no_problems(pc.hart_problems(samples, spin_profile.cpus),
                       "\"hart\" should be the hart that took the sample")
    pids = {s["pid"] for s in samples}
    assert pids == {spin_profile.pid}, (
        f"only spin (pid {spin_profile.pid}) was profiled, but the samples name pids {pids}")
    assert len(samples) >= 10, (
        f"spin was profiled until /proc/profstat counted 250 samples, but /proc/profile holds "
        f"{len(samples)}")
    assert all(s["tid"] == s["pid"] for s in samples), "tid should equal pid (one thread each)"
    assert spin_profile.text.endswith("]\n"), "/proc/profile should end with `]` and a newline"


FIELDS_RATE = 100  # Hz: a period of 10 ms, a tenth of what raw `time` ticks would show
FIELDS_SAMPLES = 90  # of three spins: about 0.3 s of sampling


@points(2)
def test_sample_fields(shared: Machine) -> None:
    """Three spins at once on three harts: comm, hart and timestamp hold what they say."""
    fresh_profile(shared, FIELDS_RATE)
    with jobs.running_all(shared, "spin", 3) as pids:
        start = time.monotonic()
        for pid in pids:
            switch(shared, pid, True)
        all_on = time.monotonic()
        wait_for_samples(shared, FIELDS_SAMPLES)
        on_for = time.monotonic() - all_on  # every spin was sampled for at least this long
        for pid in pids:
            switch(shared, pid, False)
        elapsed = time.monotonic() - start
    _, samples = cat_profile(shared)
    samples = [s for s in samples if s.get("pid") in pids]
    assert len(samples) >= FIELDS_SAMPLES // 3, (
        f"three spins were profiled at {FIELDS_RATE} Hz for {on_for:.1f} s, but "
        f"/proc/profile holds only {len(samples)} of their samples")
    assert_no_problems(pc.schema_problems(samples),
                       "/proc/profile does not follow the schema of kern/profile/report.cc")
    check_comm(samples, "spin", SPIN_FUNCTIONS)
    assert_no_problems(pc.hart_problems(samples, shared.cpus, at_least=min(2, shared.cpus)),
                       "\"hart\" should be the hart that took the sample (Sample::hart)")
    # Sampling was on for at most the time between the first `on` and the last `off`
    # (guest time follows the host's clock), and for at least the wait for samples between.
    assert_no_problems(pc.timestamp_problems(samples, FIELDS_RATE, most_us=elapsed * 1e6 + 50_000,
                                             least_us=0.5 * on_for * 1e6),
                       "\"timestamp\" should be microseconds since boot")


@points(3)
def test_read_sizes_give_same_bytes(shared: Machine) -> None:
    fresh_profile(shared, 100)
    profile_background(shared, "spin", 20)
    data = profile_bytes(shared)  # as they are: the reads below are checked against them
    samples = pc.parse_profile(data.decode("utf-8", errors="replace"))
    assert samples, "spin was profiled for 20 samples, but /proc/profile holds none"
    want = (len(data), f"{pc.fnv1a(data):08x}")
    for size in (1, 7, 512, 4096):
        read = labread(shared, size, limit=4 * len(data) + 4096)
        assert (read.length, read.fnv) == want, (
            f"reading /proc/profile {size} byte(s) at a time gave {read.length} bytes with "
            f"checksum {read.fnv}, but the whole file copied out is {want[0]} bytes with "
            f"checksum {want[1]}: a read of [off, off+n) must return exactly those bytes of "
            f"the document, wherever off and n fall inside a sample")


@points(4)
@pytest.mark.xdist_group("profile-lab-spin")
def test_user_frames_symbolized(spin_profile: SpinProfile | str) -> None:
    spin_profile = spin_of(spin_profile)
    # Samples taken before spin's exec (it was started with `spin &`) are the shell's.
    samples = pc.of_program(spin_profile.samples, spin_profile.pid, "spin")
    hot = [s for s in samples if s["mode"] == "user" and pc.innermost_user(s) == "hot"]
    assert len(hot) >= 0.4 * len(samples), (
        f"spin spends about 70% of its time in hot, but only {len(hot)} of {len(samples)} "
        f"samples name hot first. Most common stacks: {pc.common_chains(samples)}")
    chain = ["hot", "middle", "outer", "main"]
    good = [s for s in hot if pc.names(pc.user_frames(s))[:4] == chain]
    assert len(good) >= 0.9 * len(hot), (
        f"a sample in hot should continue middle, outer, main; only {len(good)} of "
        f"{len(hot)} do. Most common stacks: {pc.common_chains(hot)}")
    problems = pc.address_problems(samples, pc.user_symbols("spin"), pc.kernel_symbols())
    assert_no_problems(problems, "frames named after a function that does not hold them")


def function_end(program: str, name: str) -> int:
    """The first address after function `name` in build/user/_PROGRAM."""
    syms = pc.user_symbols(program).by_name.get(name, [])
    assert len(syms) == 1, f"build/user/_{program} should have one function {name}"
    return syms[0].start + syms[0].size


@points(4)
def test_symbols_at_return_address(shared: Machine) -> None:
    fresh_profile(shared, 200)
    pid = profile_background(shared, "labret 60", 40)
    _, samples = cat_profile(shared)
    mine = [s for s in pc.of_pid(samples, pid)
            if s["mode"] == "user" and pc.innermost_user(s) == "finish"]
    assert len(mine) >= 5, (
        f"labret spends nearly all its time in finish(), but only {len(mine)} samples are "
        f"there: {pc.common_chains(pc.of_pid(samples, pid))}")
    after_call = function_end("labret", "ends_in_call")
    wrong = [s for s in mine if len(pc.user_frames(s)) < 2
             or pc.user_frames(s)[1]["symbol"] != "ends_in_call"]
    if wrong:
        frame = pc.user_frames(wrong[0])[1] if len(pc.user_frames(wrong[0])) > 1 else None
        named = frame["symbol"] if frame else "(missing)"
        raise AssertionError(
            f"finish()'s caller is named {named!r} instead of 'ends_in_call' in {len(wrong)} of "
            f"{len(mine)} samples. ends_in_call() ends with its call to finish(), so the "
            f"return address ({after_call:#x}) is the first byte of the next function: look "
            f"up every return address at address - 1 (only the pc is looked up as it is). "
            f"Example: {pc.describe(wrong[0])}")
    returns = {pc.user_frames(s)[1]["address"] for s in mine}
    assert returns == {after_call}, (
        f"labret is not built as this test expects: finish()'s return address should be "
        f"{after_call:#x}, the end of ends_in_call, but the samples show "
        f"{sorted(hex(a) for a in returns)}")


# psys waits for the disk and pipes, so most of its samples are wait samples, and how many
# depends on the host: 10-20% of them were taken on the CPU (nearly all in kernel mode) on a
# quiet one, 0.6% on a loaded one (2 of 354). So the tests below wait for samples taken on
# the CPU, not for a total: 20 of them, several times the 3 they need; or for PSYS_MOST
# samples in all (about 1 KB of JSON each, well under READ_LIMIT), which hold 15 on the CPU
# even at that 0.6%.
PSYS_RATE, PSYS_ON_CPU, PSYS_MOST = 1000, 20, 2500


@dataclass(frozen=True)
class PsysProfile:
    pid: int
    text: str  # /proc/profile, as profile_text() copied it out


@pytest.fixture(scope="module")
def psys_profile(_shared_holder) -> PsysProfile | str:
    """`psys 60`, profiled by pid at PSYS_RATE until PSYS_ON_CPU samples were taken on the
    CPU or PSYS_MOST in all: the profile that both tests of kernel frames read (they are one
    xdist_group, so the grader runs them on one worker, which profiles once). A failure is
    returned and reported by each test, as spin_profile's is."""
    m = _shared_holder.get()
    try:
        fresh_profile(m, PSYS_RATE)
        with jobs.running(m, "psys 60") as pid:
            switch(m, pid, True)
            wait_for_samples(m, PSYS_ON_CPU, on_cpu=True, most=PSYS_MOST)
            switch(m, pid, False)
        # No count is required here: the tests say what they found too little of.
        return PsysProfile(pid, profile_text(m))
    except AssertionError as err:  # a MachineError is an AssertionError too
        return f"profiling psys failed: {err}"


def psys_of(run: PsysProfile | str) -> tuple[int, list[pc.Sample]]:
    """The pid and the samples of a psys_profile, or the reason there are none."""
    assert not isinstance(run, str), run
    return run.pid, pc.parse_profile(run.text)


@points(4)
@pytest.mark.xdist_group("profile-lab-psys")
def test_kernel_frames(psys_profile: PsysProfile | str) -> None:
    pid, samples = psys_of(psys_profile)
    # Samples taken before psys's exec (it was started with `psys 60 &`) are the shell's.
    samples = pc.of_program(samples, pid, "psys")
    assert_no_problems(pc.schema_problems(samples),
                       "/proc/profile does not follow the schema of kern/profile/report.cc")
    in_kernel = [s for s in samples if s["mode"] == "kernel"]
    assert len(in_kernel) >= 3, (
        f"psys spends its time in system calls, but only {len(in_kernel)} of {len(samples)} "
        f"samples are in kernel mode (\"mode\":\"kernel\" when Sample::mode is Mode::Kernel)")
    bare = [s for s in in_kernel if not pc.kernel_frames(s) or not pc.user_frames(s)]
    assert not bare, (
        f"a kernel-mode sample should list the kernel frames (\"kernel\":true, the first "
        f"Sample::nkernel frames) and then the user frames under them: {pc.describe(bare[0])}")
    calls = {n for s in in_kernel for n in pc.names(pc.kernel_frames(s)) if n.startswith("sys_")}
    assert calls & {"sys_write", "sys_read"}, (
        f"psys mostly writes and reads, but its kernel frames name only {sorted(calls)} "
        f"among the sys_ functions; kernel addresses are named from the kernel's own table "
        f"(prof::symbolize with kernel = true)")
    problems = pc.address_problems(samples, pc.run_symbols("psys"), pc.kernel_symbols())
    assert_no_problems(problems, "frames named after a function that does not hold them")


@points(2)
@pytest.mark.xdist_group("profile-lab-psys")
def test_stub_caller_follows_pc(psys_profile: PsysProfile | str) -> None:
    pid, samples = psys_of(psys_profile)
    samples = pc.of_pid(samples, pid)
    table = pc.user_symbols("psys")
    in_stub = [s for s in samples if pc.user_frames(s)
               and pc.innermost_user(s) in ("write", "read")
               and table.holds(pc.innermost_user(s), pc.user_frames(s)[0]["address"])]
    assert len(in_stub) >= 3, (
        f"psys spends its time in write() and read(), but only {len(in_stub)} of "
        f"{len(samples)} samples have a user pc inside those stubs: "
        f"{pc.common_chains(samples)}")
    lost = pc.psys_stub_caller_lost(in_stub)
    assert not lost, (
        f"in {len(lost)} of {len(in_stub)} samples whose user pc is in a system-call stub, "
        f"the next frame is not the stub's caller ({', '.join(pc.PSYS_STUB_CALLERS)}), e.g. "
        f"{pc.describe(lost[0])}. A stub builds no frame record, so the walk skips its "
        f"caller; when prof::caller_in_ra(s.image, pc) says the user pc is in a stub, "
        f"Sample::user_ra (the caller) goes right after that pc")
    problems = pc.address_problems(in_stub, table, pc.kernel_symbols())
    assert_no_problems(problems, "frames named after a function that does not hold them")


# Samples the two tests of names wait for (taken on the CPU, in all mode): at least 10 of
# them must be spin's.
ENOUGH_NAMES = 40
NAMES_RATE = 500  # Hz


def spin_names_problems(samples: list[pc.Sample], pid: int, what: str) -> None:
    """spin's samples (pid) name spin and its functions, every one of them."""
    mine = pc.of_pid(samples, pid)
    assert len(mine) >= 10, (
        f"spin (pid {pid}) was profiled until /proc/profstat counted {ENOUGH_NAMES} samples "
        f"{what}, but /proc/profile holds {len(mine)} of its samples")
    assert_no_problems(pc.comm_problems(mine, "spin"),
                       f"spin's samples {what} do not name spin: is its executable "
                       f"registered (prof::attach_image)?")
    problems = pc.address_problems(mine, pc.user_symbols("spin"), pc.kernel_symbols())
    assert_no_problems(problems, f"spin's frames {what} are not named after spin's functions "
                                 f"(\"??\" or another program's names): is its executable "
                                 f"registered (prof::attach_image)?")
    hot = [s for s in mine if pc.innermost_user(s) == "hot"]
    assert len(hot) >= 0.3 * len(mine), (
        f"spin spends about 70% of its time in hot, but only {len(hot)} of its {len(mine)} "
        f"samples {what} name hot first: {pc.common_chains(mine)}")


@points(2)
def test_names_after_clear(shared: Machine) -> None:
    """PROF_CLEAR while a process is profiled: its later samples still name its functions."""
    fresh_profile(shared, NAMES_RATE)
    with jobs.running(shared, "spin") as pid:
        switch(shared, pid, True)
        # Past its exec, so that the samples after the clear are all of spin (not of the
        # shell it was forked from, nor "?" from inside exec: a starved host's disk once kept
        # spin in exec beyond the first five samples).
        jobs.wait_past_exec(shared, pid, "spin")
        wait_for_samples(shared, 5)
        clear(shared)
        wait_for_samples(shared, ENOUGH_NAMES)
        switch(shared, pid, False)
    _, samples = cat_profile(shared)
    spin_names_problems(samples, pid, "after a `profile clear` while it was profiled")


@points(2)
def test_names_in_all_mode(shared: Machine) -> None:
    """All mode names a process that was already running when it was switched on."""
    fresh_profile(shared, NAMES_RATE)
    with jobs.running(shared, "spin") as pid:
        # After spin's exec: all mode must register the program itself.
        jobs.wait_past_exec(shared, pid, "spin")
        status, out = status_of(shared, "profile all on")
        assert status == 0, f"profile(PROF_ALL_PIDS, PROF_ON, 0) returned -1: {out.strip()!r}"
        try:
            wait_for_samples(shared, ENOUGH_NAMES, on_cpu=True)
        finally:
            shared.run("profile all off")
    _, samples = cat_profile(shared)
    spin_names_problems(samples, pid, "in all mode, started before all mode was")


def first_sample(m: Machine) -> pc.Sample:
    """The first sample of /proc/profile, from the first bytes of the file alone."""
    out = m.run("labread /proc/profile 512 2048 print", timeout=COPY_TIMEOUT)
    # Each sample is one line of its own: "{...}" then "," or the end of the line.
    match = re.search(r"^(\{\"pid\":.*\}),?\r?$", out, re.M)
    assert match, f"no whole sample in the first 2048 bytes of /proc/profile: {out[:300]!r}"
    return json.loads(match.group(1))


@points(4)
def test_full_profile(boot) -> None:
    """Fill the sample array: the oldest samples stay, and reading it takes linear time.

    On one hart under -icount: the sleepers that fill the array leave the hart idle, and
    QEMU (sleep=off) jumps over the time a hart is idle, so the array fills in a fraction of
    a second of the host's time; and `time` counts instructions, for the cost of reading."""
    m = boot(1, extra_args=ICOUNT_ARGS)
    fresh_profile(m, 10000)
    capacity = int(profstat(m)["capacity"])
    # The first samples: a process profiled alone, then gone before the others start.
    first_pid = profile_background(m, "spin", 5)
    # Then sleepers, in all mode: each gives a wait sample every period.
    with jobs.running_all(m, "sleep 999999", FILL_SLEEPERS):
        try:
            status, out = status_of(m, "profile all on")
            assert status == 0, f"`profile all on` failed: {out.strip()!r}"
            limit = FILL_TIMEOUT * timeout_scale()
            deadline = time.monotonic() + limit
            while int((stat := profstat(m))["recorded"]) < capacity:
                assert time.monotonic() < deadline, (
                    f"the sample array did not fill ({capacity} samples) in {limit:.0f} s of "
                    f"sampling {FILL_SLEEPERS} sleeping processes and the shell at 10000 Hz "
                    f"in all mode: {stat}")
                time.sleep(pc.POLL)
            # Then more samples than fit, unless the counter never moves.
            overflow = time.monotonic() + OVERFLOW * timeout_scale()
            while int(profstat(m)["dropped"]) == 0 and time.monotonic() < overflow:
                time.sleep(pc.POLL)
        finally:
            m.run("profile all off")
    stat = profstat(m)
    assert int(stat["recorded"]) == capacity and int(stat["dropped"]) > 0, (
        f"with the sample array full, samples should be dropped and counted, not stored: "
        f"/proc/profstat says `recorded: {stat['recorded']}`, `dropped: {stat['dropped']}` "
        f"(capacity {capacity})")
    first = first_sample(m)
    assert first.get("pid") == first_pid, (
        f"the first sample of a full profile should be the oldest, from pid {first_pid} (the "
        f"first process profiled), but it is from pid {first.get('pid')}: when the array is "
        f"full, new samples must be dropped, never written over old ones")
    prefix_cost(m, COST_FAR)  # once first, so that both measured reads find names cached
    near, far = prefix_cost(m, COST_NEAR), prefix_cost(m, COST_FAR)
    assert far <= COST_RATIO * near, (
        f"reading the first {COST_FAR // 1024} KiB of /proc/profile 4096 bytes at a time cost "
        f"{far / near:.1f} times as many instructions as reading the first "
        f"{COST_NEAR // 1024} KiB ({far * 100:,} against {near * 100:,}, counted under "
        f"-icount): 4 times the bytes should cost about 4 times as much, not 16. Does every "
        f"read render the document from its start? Remember where the last read ended")


def prefix_cost(m: Machine, limit: int) -> int:
    """`time` ticks (100 instructions each under ICOUNT_ARGS) that labread spends reading
    the first `limit` bytes of /proc/profile, 4096 bytes at a time."""
    out = m.run(f"labread /proc/profile 4096 {limit}", timeout=COPY_TIMEOUT)
    match = LABREAD_LONGER.search(out)
    assert match and int(match.group(1)) == limit, (
        f"/proc/profile should be longer than {limit} bytes here, but `labread /proc/profile "
        f"4096 {limit}` printed {out.strip()!r}")
    return max(1, int(match.group(2)))


# Samples whose names escape to nearly a kilobyte each, 32 frames deep, through a second disk:
# the console is far too slow for them (see tools/tern/export_disk.py).
@dataclass(frozen=True)
class NamesProfile:
    pid: int
    data: bytes   # /proc/profile as copied out
    problem: str  # why there is no profile, if there is none


@pytest.fixture(scope="module")
def names_profile(tmp_path_factory: pytest.TempPathFactory) -> NamesProfile:
    """`pnames 40` (user/tests/pnames.cc) profiled at 200 Hz for 0.5 s in all mode, on a
    machine of its own with an export disk. A failure here fails each test that uses it."""
    image = tmp_path_factory.mktemp("export") / "export.img"
    try:
        with Machine(3, name="test_lab_profile.names",
                     extra_args=export_disk.drive_args(image)) as m:
            m.boot()
            fresh_profile(m, 200)
            status, out = status_of(m, "profile all on")
            assert status == 0, f"`profile all on` failed: {out.strip()!r}; see task 1"
            out = m.run("pnames 40 0.5", timeout=RUN_TIMEOUT)
            m.run("profile all off")
            assert "pnames: done" in out, f"pnames 40 0.5 failed: {out!r}"
            data = export_disk.copy_out(m, image, "/proc/profile")
    except AssertionError as err:  # MachineError is one too
        return NamesProfile(-1, b"", str(err))
    # The pid, without parsing: names_samples() says what is wrong with the JSON, if anything.
    pids = set(re.findall(rb'"pid":(\d+),"tid":\d+,"comm":"pnames"', data))
    return NamesProfile(int(pids.pop()) if len(pids) == 1 else -1, data, "")


def names_samples(p: NamesProfile) -> list[pc.Sample]:
    assert not p.problem, f"profiling pnames failed: {p.problem}"
    try:
        text = p.data.decode("ascii")
    except UnicodeDecodeError as err:
        raise AssertionError(
            f"/proc/profile holds a byte that is not ASCII at {err.start} (json::Writer escapes "
            f"every byte >= 0x7f of a name as \\u00XX)") from None
    samples = pc.parse_profile(text)
    mine = pc.of_pid(samples, p.pid)
    assert len(mine) >= 5, (
        f"expected samples of pnames (\"comm\":\"pnames\"), got {len(mine)}")
    return samples


@points(3)
@pytest.mark.xdist_group("profile-lab-names")
def test_long_escaped_names_at_full_depth(names_profile: NamesProfile) -> None:
    """32 frames of names that escape to nearly a kilobyte each still make valid JSON."""
    samples = names_samples(names_profile)
    problems = name_problems(samples, names_profile.pid, [DESCEND, BOTTOM])
    assert_no_problems(problems, (
        "pnames' long names are wrong (a name longer than the buffer of prof::symbolize is "
        "cut and ends in \"...\"; a sample's text must be rendered whole, whatever its "
        "names: size the buffer for MAX_FRAMES names of NAME_MAX - 1 bytes, each escaped)"))


@points(2)
@pytest.mark.xdist_group("profile-lab-names")
def test_at_most_32_frames_with_stub_caller(names_profile: NamesProfile) -> None:
    """A rendered sample holds at most MAX_FRAMES frames, the stub's caller included."""
    samples = pc.of_pid(names_samples(names_profile), names_profile.pid)
    over = [s for s in samples if len(s["samples"]) > pc.MAX_FRAMES]
    assert not over, (
        f"a sample of {len(over[0]['samples'])} frames: a rendered sample holds at most "
        f"MAX_FRAMES ({pc.MAX_FRAMES}) frames, including the caller of a system-call stub; "
        f"on a full stack the outermost frame gives way")
    in_stub = [s for s in samples if s["mode"] == "kernel" and pc.innermost_user(s) == "uptime"]
    assert in_stub, "no kernel-mode sample of pnames inside uptime(), which it calls all the time"
    with_caller = [s for s in in_stub if len(s["samples"]) == pc.MAX_FRAMES
                   and len(pc.user_frames(s)) >= 2
                   and symbol_bytes(pc.user_frames(s)[1]) == BOTTOM]
    assert with_caller, (
        f"no {pc.MAX_FRAMES}-frame sample inside uptime() names its caller right after it; "
        f"e.g. {pc.describe(in_stub[0])}")


@points(3)
def test_live_reads_end_with_one_document(shared: Machine) -> None:
    """While a process is sampled, each opening reads one document: nothing after its end."""
    seed = seed_from_env("LAB_READ_SEED")
    fresh_profile(shared, 100)
    with jobs.running(shared, "spin") as pid:
        switch(shared, pid, True)
        wait_for_samples(shared, 15)
        out = shared.run(f"labread -r {seed} 3 /proc/profile /profdoc", timeout=COPY_TIMEOUT)
        switch(shared, pid, False)
    openings = parse_openings(out, 3)
    last = shared.run("cat /profdoc", timeout=COPY_TIMEOUT).encode()
    shared.run("rm /profdoc")
    assert_no_problems(document_problems(openings, last), (
        f"LAB_READ_SEED={seed}: /proc/profile, opened three times and read with random sizes "
        f"while spin was sampled, does not read one document per opening (decide, at the "
        f"first read of an opening, which samples its document holds, and keep that in "
        f"`state`)"))


# --- Task 3: `profile run` and the questions -----------------------------------------------


def profile_run(m: Machine, cmd: str) -> tuple[re.Match[str], str]:
    out = m.run(f"profile run {cmd}", timeout=RUN_TIMEOUT)
    match = RUN_REPORT.search(out)
    assert match, (
        f"`profile run {cmd}` printed no `profile: pid N ({cmd.split()[0]}) exited with status "
        f"S` line; it printed:\n{out}")
    return match, out


@points(4)
def test_profile_run_report(shared: Machine) -> None:
    # 1000 Hz: even on a host that runs the guest a third of the time, about a hundred
    # samples, so that hot leads middle by far more than chance (31 samples once put middle
    # first).
    fresh_profile(shared, 1000)
    match, out = profile_run(shared, "spin 0.3")
    assert "spin: done" in out, f"`profile run spin 0.3` should run spin to its end:\n{out}"
    assert (match.group(2), match.group(3)) == ("spin", "0"), (
        f"spin exits with status 0, but the report line says {match.group(0)!r}")
    top = pc.parse_top(out)
    assert top.samples >= 10, (
        f"spin ran for 0.3 s at 1000 Hz, but its report counts {top.samples} samples: is "
        f"sampling switched on for the child (profile(pid, PROF_ON, 0)) before it execs?")
    assert top.rows and (top.rows[0].name, top.rows[0].kernel) == ("hot", False), (
        f"the report of `profile run spin 0.3` should name hot first:\n{out}")


START_RATE = 1000  # Hz: labstart's first 40 ms should get about 40 samples


@points(3)
def test_profile_run_samples_from_the_start(boot) -> None:
    # On one hart under -icount, where the `time` clock counts instructions: on a busy host
    # QEMU's timer can starve while the hart runs on, and labstart's 40 ms go unsampled
    # however right `profile run` is. Here they are 40 periods every time (the first few
    # go to arming the hart's clock). And from a RAM disk: under -icount a wait for the
    # virtio disk lasts as long in virtual time as the host's disk takes, and an exec that
    # waited 100 ms would let a `profile run` that switches sampling on late pass.
    m = boot(1, extra_args=ICOUNT_ARGS, ramdisk=True)
    fresh_profile(m, START_RATE)
    match, out = profile_run(m, "labstart 0.2")
    assert "labstart: done" in out and match.group(3) == "0", (
        f"`profile run labstart 0.2` should run labstart to its end:\n{out}")
    top = pc.parse_top(out)
    first = sum(r.self_count for r in top.rows if r.name == "first_steps" and not r.kernel)
    rest = sum(r.self_count for r in top.rows if r.name == "the_rest" and not r.kernel)
    assert rest >= 10, (
        f"labstart spent 0.2 s in the_rest() at {START_RATE} Hz, but the report counts "
        f"{rest} samples there:\n{out}")
    assert first >= 5, (
        f"labstart spends its first 40 ms in first_steps(), about {40 * START_RATE // 1000} "
        f"samples at {START_RATE} Hz, but the report counts {first}: sampling was switched "
        f"on after the command had started. The child must wait until the parent has called "
        f"profile(pid, PROF_ON, 0), and exec only then (a pipe is one way):\n{out}")


@points(3)
def test_profile_run_reports_its_process_only(shared: Machine) -> None:
    fresh_profile(shared, 100)
    other = profile_background(shared, "spin", 5)
    match, out = profile_run(shared, "labret 0.3")
    pid = int(match.group(1))
    top = pc.parse_top(out)
    names = {r.name for r in top.rows}
    assert not names & {"hot", "middle", "outer"}, (
        f"the report of `profile run labret 0.3` counts functions of spin (pid {other}), whose "
        f"samples were already in the profile: it should count pid {pid}'s samples only:\n{out}")
    _, samples = cat_profile(shared)
    assert pc.of_pid(samples, other), (
        f"`profile run` removed the samples of pid {other}, taken before it: it must leave "
        f"other processes' samples in the profile")
    # The report counts samples taken on the CPU; the child's wait for the go-ahead may
    # have given it wait samples too ("mode":"wait"), which it leaves out.
    on_cpu = pc.on_cpu(pc.of_pid(samples, pid))
    assert top.samples == len(on_cpu), (
        f"the report counts {top.samples} samples, but /proc/profile has {len(on_cpu)} of pid "
        f"{pid} taken on the CPU")


@points(3)
def test_profile_run_arguments_and_status(shared: Machine) -> None:
    fresh_profile(shared, 100)
    match, out = profile_run(shared, "echo one two three")
    assert "one two three" in out, (
        f"`profile run echo one two three` should pass the arguments to echo:\n{out}")
    match, out = profile_run(shared, "spin 1 2")
    assert match.group(3) == "1", (
        f"`spin 1 2` prints its usage and exits with status 1, but the report line says "
        f"{match.group(0)!r}: report the status wait() gives")


FOLLOW_RATE = 300  # Hz
LABFORKS_CHILDREN = re.compile(r"(?m)^labforks: children((?: \d+)+)$")


def labforks_children(out: str) -> list[int]:
    found = LABFORKS_CHILDREN.search(out)
    assert found, f"labforks printed no `labforks: children ...` line:\n{out}"
    return [int(p) for p in found.group(1).split()]


@points(3)
def test_profile_run_follows_children(shared: Machine) -> None:
    # labforks 2 0.3: two children spin 0.3 s in child_work() while the parent spins in
    # parent_work() (labs/profile/user/labforks.cc); at FOLLOW_RATE, about a hundred samples
    # each.
    fresh_profile(shared, FOLLOW_RATE)
    match, out = profile_run(shared, "labforks 2 0.3")
    assert "labforks: done" in out and match.group(3) == "0", (
        f"`profile run labforks 2 0.3` should run labforks to its end:\n{out}")
    root, children = int(match.group(1)), labforks_children(out)
    top = pc.parse_top(out)
    for child in children:
        assert any(r.pid == child and r.name == "child_work" for r in top.rows), (
            f"the report of `profile run labforks 2 0.3` has no child_work row of its child "
            f"{child}: `profile run` must follow the command's children (profile(pid, "
            f"PROF_FOLLOW, 1) before the go-ahead) and report them with it (top(10, pid, "
            f"true)):\n{out}")
        assert re.search(rf"(?m)^profile: pid {child} \(labforks\), forked by pid {root}\b",
                         out), (
            f"the report should name the followed process {child} on a line of its own "
            f"(`profile: pid {child} (labforks), ...`: top() prints it):\n{out}")
    assert any(r.pid == root and r.name == "parent_work" for r in top.rows), (
        f"the report should keep the command's own samples (parent_work of pid {root}):\n{out}")

    fresh_profile(shared, FOLLOW_RATE)
    match, out = profile_run(shared, "-n labforks 2 0.3")
    assert "labforks: done" in out and match.group(3) == "0", (
        f"`profile run -n labforks 2 0.3` should run labforks to its end:\n{out}")
    children = labforks_children(out)
    everyone = pc.parse_top(shared.run("profile top 40"))
    sampled = sorted({r.pid for r in everyone.rows if r.pid in children})
    assert not sampled, (
        f"with -n, `profile run` must not follow the command's children, but the profile has "
        f"samples of its children {sampled}: leave PROF_FOLLOW alone when `children` is "
        f"false:\n{everyone.rows}")


def answer_sections(text: str) -> dict[str, str]:
    """Question number -> the answer written under its `Answer:` line ('#' lines dropped)."""
    parts = re.split(r"(?m)^\[(\d+)\]", text)
    answers = {}
    for number, body in zip(parts[1::2], parts[2::2]):
        _, found, answer = body.partition("\nAnswer:")
        lines = [] if not found else [ln for ln in answer.splitlines()
                                      if not ln.lstrip().startswith("#")]
        answers[number] = "\n".join(lines).strip()
    return answers


@points(10)
def test_answers_written() -> None:
    assert ANSWERS.exists(), f"{ANSWERS.relative_to(REPO)} is missing"
    answers = answer_sections(ANSWERS.read_text())
    assert sorted(answers) == ["1", "2", "3"], (
        f"{ANSWERS.relative_to(REPO)} should keep its questions [1], [2] and [3], each with "
        f"an `Answer:` line; found questions {sorted(answers)}")
    for number, answer in sorted(answers.items()):
        assert answer and ANSWER_PLACEHOLDER not in answer, (
            f"question [{number}] of {ANSWERS.relative_to(REPO)} has no answer yet: write it "
            f"under its `Answer:` line, in place of {ANSWER_PLACEHOLDER}")
        words = len(answer.split())
        assert words >= 25, (
            f"the answer to question [{number}] has {words} words: explain what you measured "
            f"and why, in a few sentences")
