"""The profile lab's grade tests (labs/profile/README.md): 100 points in three tasks.

Task 1, the profile(2) system call (kern/profile/sysprofile.cc, sys_profile): 33 points.
Task 2, /proc/profile (kern/profile/report.cc, profile_read): 41 points.
Task 3, `profile run` (user/profile.cc, run) and the questions (labs/profile/answers.txt):
26 points.

Every test checks one behaviour and says in its first line what is wrong, then where to
look. The tests of a task use only what the earlier tasks built: the task 1 tests read the
profiler's state from /proc/profstat (written for you), never /proc/profile; the task 2
tests switch sampling on with `profile PID on`, never `profile run`.

Most tests share one machine (the `shared` fixture) and start from a clean profile
(`profile clear`, then a rate of their own). Each test is complete in itself, so any one of
them can be run alone (`pytest grading/test_lab_profile.py -k read_sizes`) and the grader
may spread them over several machines.

Profiles go to the host over the console with `cat /proc/profile`, a few tens of KB a
second, so tests profile at low rates for a second or two. Before any `cat`, the file's
length is taken with `labread` with a limit: a /proc/profile that ignores the read offset
never ends, and the test should say so rather than wait for a timeout.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

import pytest

import export_disk
import jobs
import profile_check as pc
from machine import PANIC, REPO, TRAP, Machine, MachineError, timeout_scale
from profile_props import (BOTTOM, DESCEND, document_problems, name_problems, parse_openings,
                           seed_from_env, symbol_bytes)

LAB = "profile"
RUN_TIMEOUT = 60  # `profile run` of a program of a second or two, with its report
CAT_TIMEOUT = 120  # `cat /proc/profile` of a profile of a few hundred samples
FULL_READ_TIMEOUT = 120  # reading the first FULL_READ_BYTES of a full profile
FULL_READ_BYTES = 6_000_000  # a linear reader takes seconds; one that starts over each
                             # time (quadratic) would take hours
FILL_TIMEOUT = 240  # filling the sample array (about 20 s on a loaded two-core host)
READ_LIMIT = 4_000_000  # bytes: no profile taken here comes near it
RUN_REPORT = re.compile(r"profile: pid (\d+) \((\S+)\) exited with status (-?\d+)")
LABREAD = re.compile(r"labread: (\d+) bytes, fnv1a ([0-9a-f]{8}), (\d+) reads")
ANSWERS = REPO / "labs" / "profile" / "answers.txt"
ANSWER_PLACEHOLDER = "(write your answer here)"

points = pytest.mark.points


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


def switch(m: Machine, pid: int, on: bool) -> None:
    """`profile PID on|off`, which must succeed."""
    word, cmd = ("on", "PROF_ON") if on else ("off", "PROF_OFF")
    status, out = status_of(m, f"profile {pid} {word}")
    assert status == 0, (
        f"profile({pid}, {cmd}, 0) returned -1 for a running process that "
        f"{'is not' if on else 'is'} being profiled (`profile {pid} {word}` printed "
        f"{out.strip()!r}); see task 1")


def profile_background(m: Machine, cmd: str, seconds: float) -> int:
    """Start `cmd &`, profile it for `seconds`, stop, kill it. Returns its pid."""
    pid = jobs.start_background(m, cmd)
    try:
        switch(m, pid, True)
        time.sleep(seconds)
        switch(m, pid, False)
    finally:
        jobs.kill_and_wait_gone(m, pid)
    return pid


@dataclass(frozen=True)
class Read:
    length: int
    fnv: str
    reads: int


def labread(m: Machine, size: int, limit: int = READ_LIMIT, timeout: float = CAT_TIMEOUT) -> Read:
    """Read /proc/profile `size` bytes at a time, stopping after `limit` bytes."""
    out = m.run(f"labread /proc/profile {size} {limit}", timeout=timeout)
    assert "longer than" not in out, (
        f"reading /proc/profile {size} bytes at a time never ended: more than {limit} bytes "
        f"came back. Does profile_read() honour `off`? Each read must return the bytes from "
        f"`off` on, and 0 once `off` is at the end of the document")
    match = LABREAD.search(out)
    assert match, f"`labread /proc/profile {size}` failed: {out.strip()!r}"
    return Read(int(match.group(1)), match.group(2), int(match.group(3)))


def cat_profile(m: Machine) -> tuple[str, list[pc.Sample]]:
    """The whole of /proc/profile, checked to end and to be valid JSON."""
    labread(m, 4096)
    text = m.run("cat /proc/profile", timeout=CAT_TIMEOUT)
    return text, pc.parse_profile(text)


def assert_no_problems(problems: list[str], what: str) -> None:
    if problems:
        shown = "\n  ".join(problems[:10])
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise AssertionError(f"{what}: {len(problems)} problem(s), the first: {problems[0]}"
                             f"\n  {shown}{more}")


# --- Task 1: the profile system call -----------------------------------------------------


@points(8, lab=LAB)
def test_on_off_running_process(shared: Machine) -> None:
    pid = jobs.start_background(shared, "spin")
    try:
        status, out = status_of(shared, f"profile {pid} on")
        assert status == 0, (
            f"profile({pid}, PROF_ON, 0) returned -1 for a running process (spin, pid {pid}); "
            f"`profile {pid} on` printed {out.strip()!r}")
        fresh_profile(shared, 100)
        stat = profstat(shared)
        assert stat.get("profiling") == str(pid), (
            f"after profile({pid}, PROF_ON, 0), /proc/profstat says `profiling: "
            f"{stat.get('profiling')}` instead of `profiling: {pid}`: the call must mark the "
            f"process as profiled (Proc::profiled, counted in prof::nprofiled)")
        time.sleep(1)
        status, out = status_of(shared, f"profile {pid} off")
        assert status == 0, (
            f"profile({pid}, PROF_OFF, 0) returned -1 for a process being profiled; "
            f"`profile {pid} off` printed {out.strip()!r}")
        stat = profstat(shared)
    finally:
        jobs.kill_and_wait_gone(shared, pid)
    assert stat.get("profiling") == "none", (
        f"after profile({pid}, PROF_OFF, 0), /proc/profstat says `profiling: "
        f"{stat.get('profiling')}` instead of `profiling: none`")
    recorded = int(stat.get("recorded", "0"))
    assert recorded >= 5, (
        f"spin ran for a second while profiled at 100 Hz, but only {recorded} samples were "
        f"recorded: the sampler takes samples of a process only if its Proc::profiled is set "
        f"and prof::nprofiled counts it (or all mode is on)")


LEGEND = ("on/pid N: PROF_ON for a pid no process has; off/pid N: PROF_OFF likewise; "
          "cmd N: an unknown command; off/self not on: PROF_OFF for a process that is not "
          "being profiled; off/all not on: PROF_OFF for all when all mode is off; rate N: "
          "PROF_RATE outside 10..10000; on/self, off/self, rate unchanged: good calls that "
          "must return 0")


@points(8, lab=LAB)
def test_bad_arguments_return_minus_one(shared: Machine) -> None:
    out = shared.run("pbadcall", failures=(PANIC, TRAP))
    failures = re.findall(r"pbadcall: FAIL (.*)", out)
    if failures:
        raise AssertionError(
            f"profile(2) answered {len(failures)} call(s) wrongly, first: {failures[0]}\n"
            f"pbadcall (user/pbadcall.cc) reported:\n  " + "\n  ".join(failures)
            + f"\nThe cases: {LEGEND}")
    assert "pbadcall: all -1" in out, f"pbadcall did not finish: {out!r}"


@points(4, lab=LAB)
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


@points(6, lab=LAB)
def test_all_mode(shared: Machine) -> None:
    fresh_profile(shared, 100)
    status, out = status_of(shared, "profile all on")
    assert status == 0, (
        f"profile(PROF_ALL_PIDS, PROF_ON, 0) returned -1 (`profile all on` printed "
        f"{out.strip()!r})")
    try:
        stat = profstat(shared)
        assert stat.get("profiling") == "all", (
            f"after profile(-1, PROF_ON, 0), /proc/profstat says `profiling: "
            f"{stat.get('profiling')}` instead of `profiling: all` (prof::all_mode)")
        assert "spin: done" in shared.run("spin 1", timeout=RUN_TIMEOUT)
    finally:
        status, out = status_of(shared, "profile all off")
    assert status == 0, (
        f"profile(PROF_ALL_PIDS, PROF_OFF, 0) returned -1 while all mode was on "
        f"(`profile all off` printed {out.strip()!r})")
    stat = profstat(shared)
    assert stat.get("profiling") == "none", (
        f"after profile(-1, PROF_OFF, 0), /proc/profstat says `profiling: "
        f"{stat.get('profiling')}` instead of `profiling: none`")
    recorded = int(stat.get("recorded", "0"))
    assert recorded >= 5, (
        f"`spin 1`, started while all mode was on, should have been sampled about 100 times; "
        f"{recorded} samples were recorded")
    status, out = status_of(shared, "profile all off")
    assert status == 1, (
        f"profile(PROF_ALL_PIDS, PROF_OFF, 0) should return -1 when all mode is already off "
        f"(`profile all off` exited with status {status})")


@points(4, lab=LAB)
def test_clear(shared: Machine) -> None:
    fresh_profile(shared, 100)
    profile_background(shared, "spin", 0.7)
    before = profstat(shared)
    assert int(before.get("recorded", "0")) > 0, (
        f"no samples were recorded while spin was profiled, so there is nothing to clear "
        f"(see test_on_off_running_process): {before}")
    status, out = status_of(shared, "profile clear")
    assert status == 0, f"profile(0, PROF_CLEAR, 0) returned -1: {out.strip()!r}"
    after = profstat(shared)
    assert (after.get("recorded"), after.get("dropped")) == ("0", "0"), (
        f"after profile(0, PROF_CLEAR, 0) /proc/profstat says `recorded: "
        f"{after.get('recorded')}`, `dropped: {after.get('dropped')}`; both should be 0 "
        f"(prof::clear_samples)")


@points(3, lab=LAB)
def test_exited_process_is_gone(shared: Machine) -> None:
    fresh_profile(shared, 100)
    pid = jobs.start_background(shared, "spin")
    try:
        switch(shared, pid, True)
    finally:
        jobs.kill_and_wait_gone(shared, pid)
    status, out = status_of(shared, f"profile {pid} off")
    assert status == 1 and f"no process {pid}" in out, (
        f"profile({pid}, PROF_OFF, 0) for a process that has exited should return -1, and "
        f"so should the PROF_ON the command then tries: `profile {pid} off` printed "
        f"{out.strip()!r} and exited with status {status}. Only processes that are alive "
        f"(not UNUSED, not ZOMBIE, not killed) can be named")
    stat = profstat(shared)
    assert stat.get("profiling") == "none", (
        f"an exited process is no longer profiled, but /proc/profstat says `profiling: "
        f"{stat.get('profiling')}`")


# --- Task 2: /proc/profile -----------------------------------------------------------------


@points(3, lab=LAB)
def test_empty_profile_is_an_empty_array(shared: Machine) -> None:
    fresh_profile(shared, 100)
    read = labread(shared, 4096)
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
    assert text.endswith("\n"), "/proc/profile should end with a newline"


@dataclass(frozen=True)
class SpinProfile:
    pid: int
    text: str
    samples: list[pc.Sample]


@pytest.fixture(scope="module")
def spin_profile(_shared_holder) -> SpinProfile:
    """spin, profiled by pid at 50 Hz for two seconds: the profile as text and as samples."""
    m = _shared_holder.get()
    fresh_profile(m, 50)
    pid = profile_background(m, "spin", 2)
    text, samples = cat_profile(m)
    return SpinProfile(pid, text, samples)


@points(6, lab=LAB)
def test_profile_is_valid_json(spin_profile: SpinProfile) -> None:
    samples = spin_profile.samples
    assert_no_problems(pc.schema_problems(samples),
                       "/proc/profile does not follow the schema of kern/profile/report.cc")
    pids = {s["pid"] for s in samples}
    assert pids == {spin_profile.pid}, (
        f"only spin (pid {spin_profile.pid}) was profiled, but the samples name pids {pids}")
    assert len(samples) >= 10, (
        f"spin ran for 2 s profiled at 50 Hz, but /proc/profile holds {len(samples)} samples")
    assert all(s["tid"] == s["pid"] for s in samples), "tid should equal pid (one thread each)"
    assert spin_profile.text.endswith("]\n"), "/proc/profile should end with `]` and a newline"


@points(4, lab=LAB)
def test_read_sizes_give_same_bytes(shared: Machine) -> None:
    fresh_profile(shared, 20)
    profile_background(shared, "spin", 1.5)
    text, samples = cat_profile(shared)
    assert samples, "spin was profiled for 1.5 s, but /proc/profile holds no samples"
    data = text.encode()
    want = (len(data), f"{pc.fnv1a(data):08x}")
    for size in (1, 7, 512, 4096):
        read = labread(shared, size, limit=4 * len(data) + 4096)
        assert (read.length, read.fnv) == want, (
            f"reading /proc/profile {size} byte(s) at a time gave {read.length} bytes with "
            f"checksum {read.fnv}, but `cat` read {want[0]} bytes with checksum {want[1]}: a "
            f"read of [off, off+n) must return exactly those bytes of the document, wherever "
            f"off and n fall inside a sample")


@points(5, lab=LAB)
def test_user_frames_symbolized(spin_profile: SpinProfile) -> None:
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


@points(5, lab=LAB)
def test_symbols_at_return_address(shared: Machine) -> None:
    fresh_profile(shared, 50)
    pid = profile_background(shared, "labret 5", 1.5)
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


@points(5, lab=LAB)
def test_kernel_frames(shared: Machine) -> None:
    fresh_profile(shared, 100)
    pid = profile_background(shared, "psys 10", 2)
    _, samples = cat_profile(shared)
    # Samples taken before psys's exec (it was started with `psys 10 &`) are the shell's.
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


def first_sample(m: Machine) -> pc.Sample:
    """The first sample of /proc/profile, from the first bytes of the file alone."""
    out = m.run("labread /proc/profile 512 2048 print", timeout=CAT_TIMEOUT)
    match = re.search(r"\{\"pid\":.*?\]\}", out)
    assert match, f"no whole sample in the first 2048 bytes of /proc/profile: {out[:300]!r}"
    return json.loads(match.group(0))


@points(5, lab=LAB)
def test_full_profile(shared: Machine) -> None:
    """Fill the sample array: the oldest samples stay, and reading it takes linear time."""
    fresh_profile(shared, 10000)
    capacity = int(profstat(shared)["capacity"])
    # The first samples: a process profiled alone, then gone before the others start.
    first_pid = profile_background(shared, "spin", 0.3)
    pids = [jobs.start_background(shared, "spin") for _ in range(3)]
    try:
        status, out = status_of(shared, "profile all on")
        assert status == 0, f"`profile all on` failed: {out.strip()!r}"
        limit = FILL_TIMEOUT * timeout_scale()
        deadline = time.monotonic() + limit
        while int((stat := profstat(shared))["recorded"]) < capacity:
            assert time.monotonic() < deadline, (
                f"the sample array did not fill ({capacity} samples) in {limit:.0f} s of "
                f"sampling three processes at 10000 Hz: {stat}")
            time.sleep(0.5)
        # Then more samples than fit: a second or two, unless the counter never moves.
        overflow = time.monotonic() + 5 * timeout_scale()
        while int(profstat(shared)["dropped"]) == 0 and time.monotonic() < overflow:
            time.sleep(0.3)
    finally:
        shared.run("profile all off")
        for pid in pids:
            jobs.kill_and_wait_gone(shared, pid)
    stat = profstat(shared)
    assert int(stat["recorded"]) == capacity and int(stat["dropped"]) > 0, (
        f"with the sample array full, samples should be dropped and counted, not stored: "
        f"/proc/profstat says `recorded: {stat['recorded']}`, `dropped: {stat['dropped']}` "
        f"(capacity {capacity})")
    first = first_sample(shared)
    assert first.get("pid") == first_pid, (
        f"the first sample of a full profile should be the oldest, from pid {first_pid} (the "
        f"first process profiled), but it is from pid {first.get('pid')}: when the array is "
        f"full, new samples must be dropped, never written over old ones")
    try:
        out = shared.run(f"labread /proc/profile 4096 {FULL_READ_BYTES}",
                         timeout=FULL_READ_TIMEOUT)
    except MachineError as err:
        raise AssertionError(
            f"reading the first {FULL_READ_BYTES:,} bytes of a full profile ({capacity} "
            f"samples) 4096 bytes at a time did not finish in {FULL_READ_TIMEOUT} s: does "
            f"every read render the document from its start? Reading the file should take "
            f"time proportional to the bytes read (remember where the last read ended)") from err
    # labread stops at the limit and says the file goes on; a full profile is far longer.
    assert f"labread: longer than {FULL_READ_BYTES} bytes" in out, (
        f"a full profile of {capacity} samples should be longer than {FULL_READ_BYTES:,} "
        f"bytes: `labread /proc/profile 4096 {FULL_READ_BYTES}` printed {out.strip()!r}")


# Samples whose names escape to nearly a kilobyte each, 32 frames deep, through a second disk:
# the console is far too slow for them (see grading/export_disk.py).
@dataclass(frozen=True)
class NamesProfile:
    pid: int
    data: bytes   # /proc/profile as copied out
    problem: str  # why there is no profile, if there is none


@pytest.fixture(scope="module")
def names_profile(tmp_path_factory: pytest.TempPathFactory) -> NamesProfile:
    """`pnames 40` (user/pnames.cc) profiled at 20 Hz for two seconds in all mode, on a
    machine of its own with an export disk. A failure here fails each test that uses it."""
    image = tmp_path_factory.mktemp("export") / "export.img"
    try:
        with Machine(3, name="test_lab_profile.names",
                     extra_args=export_disk.drive_args(image)) as m:
            m.boot()
            fresh_profile(m, 20)
            status, out = status_of(m, "profile all on")
            assert status == 0, f"`profile all on` failed: {out.strip()!r}; see task 1"
            out = m.run("pnames 40 2", timeout=RUN_TIMEOUT)
            m.run("profile all off")
            assert "pnames: done" in out, f"pnames 40 2 failed: {out!r}"
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


@points(3, lab=LAB)
def test_long_escaped_names_at_full_depth(names_profile: NamesProfile) -> None:
    """32 frames of names that escape to nearly a kilobyte each still make valid JSON."""
    samples = names_samples(names_profile)
    problems = name_problems(samples, names_profile.pid, [DESCEND, BOTTOM])
    assert_no_problems(problems, (
        "pnames' long names are wrong (a name longer than the buffer of prof::symbolize is "
        "cut and ends in \"...\"; a sample's text must be rendered whole, whatever its "
        "names: size the buffer for MAX_FRAMES names of NAME_MAX - 1 bytes, each escaped)"))


@points(2, lab=LAB)
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


@points(3, lab=LAB)
def test_live_reads_end_with_one_document(shared: Machine) -> None:
    """While a process is sampled, each opening reads one document: nothing after its end."""
    seed = seed_from_env("LAB_READ_SEED")
    fresh_profile(shared, 20)
    pid = jobs.start_background(shared, "spin")
    try:
        switch(shared, pid, True)
        time.sleep(1)
        out = shared.run(f"labread -r {seed} 3 /proc/profile /profdoc", timeout=CAT_TIMEOUT)
        switch(shared, pid, False)
    finally:
        jobs.kill_and_wait_gone(shared, pid)
    openings = parse_openings(out, 3)
    last = shared.run("cat /profdoc", timeout=CAT_TIMEOUT).encode()
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


@points(8, lab=LAB)
def test_profile_run_report(shared: Machine) -> None:
    fresh_profile(shared, 100)
    match, out = profile_run(shared, "spin 1")
    assert "spin: done" in out, f"`profile run spin 1` should run spin to its end:\n{out}"
    assert (match.group(2), match.group(3)) == ("spin", "0"), (
        f"spin exits with status 0, but the report line says {match.group(0)!r}")
    top = pc.parse_top(out)
    assert top.samples >= 10, (
        f"spin ran for a second at 100 Hz, but its report counts {top.samples} samples: is "
        f"sampling switched on for the child (profile(pid, PROF_ON, 0)) before it execs?")
    assert top.rows and (top.rows[0].name, top.rows[0].kernel) == ("hot", False), (
        f"the report of `profile run spin 1` should name hot first:\n{out}")


@points(4, lab=LAB)
def test_profile_run_reports_its_process_only(shared: Machine) -> None:
    fresh_profile(shared, 100)
    other = profile_background(shared, "spin", 1)
    match, out = profile_run(shared, "labret 1")
    pid = int(match.group(1))
    top = pc.parse_top(out)
    names = {r.name for r in top.rows}
    assert not names & {"hot", "middle", "outer"}, (
        f"the report of `profile run labret 1` counts functions of spin (pid {other}), whose "
        f"samples were already in the profile: it should count pid {pid}'s samples only:\n{out}")
    _, samples = cat_profile(shared)
    assert pc.of_pid(samples, other), (
        f"`profile run` removed the samples of pid {other}, taken before it: it must leave "
        f"other processes' samples in the profile")
    assert top.samples == len(pc.of_pid(samples, pid)), (
        f"the report counts {top.samples} samples, but /proc/profile has "
        f"{len(pc.of_pid(samples, pid))} of pid {pid}")


@points(4, lab=LAB)
def test_profile_run_arguments_and_status(shared: Machine) -> None:
    fresh_profile(shared, 100)
    match, out = profile_run(shared, "echo one two three")
    assert "one two three" in out, (
        f"`profile run echo one two three` should pass the arguments to echo:\n{out}")
    match, out = profile_run(shared, "spin 1 2")
    assert match.group(3) == "1", (
        f"`spin 1 2` prints its usage and exits with status 1, but the report line says "
        f"{match.group(0)!r}: report the status wait() gives")


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


@points(10, lab=LAB)
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
