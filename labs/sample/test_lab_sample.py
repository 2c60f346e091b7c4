"""The sample lab's grade tests (labs/sample/README.md): 100 points in four tasks.

Task 1, the sampling clock (kern/profile/sampler.cc, tick; kern/trap/timer.cc, timer_rearm):
25 points. Task 2, the walks (kern/profile/walk.h, walk; sampler.cc, UserReader and
walk_kernel): 35 points. Task 3, the record (sampler.cc, record and clear_samples): 25 points.
Task 4, the cost, counted in instructions under -icount: 15 points.

Every test checks one promise and says in its first line what is wrong, then where to look.
The profile lab's pieces (the profile system call, /proc/profile, `profile run`) are given,
so these tests switch sampling on with `profile PID on` or `profile all on` and read the
samples back as JSON.

Big profiles leave the machine through its export disk (tern/export_disk.py), not the
console. Timing on the host is never judged: where time matters, it is the guest's clock
(the samples' timestamps), or a machine under -icount, where one guest instruction is one
nanosecond and a count is the same on every run.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

from tern import export_disk
from tern import jobs
from tern import profile_check as pc
from tern import toolchain
from tern.bench import icount
from tern.gdbstub import GdbStub, GdbStubError
from tern.machine import PANIC, REPO, TRAP, Machine, timeout_scale
from tern.ports import free_port

points = pytest.mark.points  # the lab is this folder, labs/sample/

MAX_HZ = 10000  # PROF_MAX_HZ, kern/abi/profile.h
RUN_TIMEOUT = 60
FILL_TIMEOUT = 240  # filling the sample array (a few seconds on a loaded two-core host)
FILL_STILL = 2  # ... in which `recorded:` never stays the same this long (it rises each ms)
FILL_SLEEPERS = 32  # processes asleep while it fills (NPROC is 64)
OVERFLOW = 1  # s for the first drop once full: thousands of samples are due in it
FILLERS = f"three spinning and {FILL_SLEEPERS} sleeping processes"
SAMPLES_TIMEOUT = 30
# The cost budget for the sampler's own work (`sample cost ns` of /proc/profstat: the
# instructions of tick() on a sampled tick, from its first line to the end of record(), so the
# clock's, the record's and the walks' code all count) on an 8-frame user stack, under
# -icount. Our solution takes 286 (the same as tools/bench's prof.sample.8.own); full points
# up to BUDGET, a second tier up to twice it.
COST_BUDGET = 350
COST_FRAMES = 8
COST_UNITS = 1000  # bsys prof: 80,000 instructions a unit, so 80 M instructions of work
COST_HZ = 1000
QUANTUM_NS = 10_000_000  # QUANTUM_US, kern/trap/timer.h, in instructions under -icount
# The hostile programs (user/tests/pbadfp.cc) and the user chain each must give: the pc alone
# when the frame pointer leads out of user memory, one more frame where the first record is
# real but its caller's frame pointer must not be followed. Each PC_ONLY kind also spins in
# spin_one_up, with its bad frame pointer one good record up: the pc and record_target.
PC_ONLY = ("kernel", "unmapped", "hole", "guard", "misaligned", "trapframe", "trampoline")
ONE_RECORD = ("self", "descend")
DEEP = (3, 6, 9)  # pdeep depths profiled at once: each process's chain is its own


# --- Helpers ------------------------------------------------------------------------------


def profstat(m: Machine) -> dict[str, str]:
    return pc.parse_profstat(m.run("profile status"))


def fresh_profile(m: Machine, rate: int) -> None:
    for cmd in ("profile clear", f"profile rate {rate}"):
        out = m.run(f"pstatus {cmd}")
        assert "pstatus: exit 0" in out, f"`{cmd}` failed: {out!r}"


def switch(m: Machine, target: str, on: bool) -> None:
    out = m.run(f"pstatus profile {target} {'on' if on else 'off'}")
    assert "pstatus: exit 0" in out, f"`profile {target}` failed: {out!r}"


def assert_no_problems(problems: list[str], what: str) -> None:
    if problems:
        shown = "\n  ".join(problems[:10])
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise AssertionError(f"{what}: {len(problems)} problem(s), the first: {problems[0]}"
                             f"\n  {shown}{more}")


def export_machine(tmp: Path, name: str, cpus: int = 3) -> tuple[Machine, Path]:
    image = tmp / f"{name}.img"
    m = Machine(cpus, name=f"test_lab_sample.{name}", extra_args=export_disk.drive_args(image))
    m.boot()
    return m, image


def wait_for_files(m: Machine, files: dict[str, str], timeout: float) -> dict[str, str]:
    """Wait until each file holds the `done` line of the background program writing it;
    returns what each holds."""
    deadline = time.monotonic() + timeout * timeout_scale()
    while True:
        got = {f: m.run(f"cat {f}", failures=(PANIC, TRAP)) for f in files}
        if all(done in got[f] for f, done in files.items()):
            return got
        missing = [f for f, done in files.items() if done not in got[f]]
        assert time.monotonic() < deadline, (
            f"background programs did not finish in {timeout} s: {missing} hold "
            f"{[got[f] for f in missing]}")
        time.sleep(0.2)


def user_names(s: pc.Sample) -> list[str]:
    return pc.names(pc.user_frames(s))


def no_kernel_words(samples: list[pc.Sample]) -> list[str]:
    return [f"a kernel address among the user frames: {pc.describe(s)}" for s in samples
            if any(f["address"] >= pc.KERNEL_BASE for f in pc.user_frames(s))]


def chain_problems(samples: list[pc.Sample], depth: int) -> list[str]:
    """Samples of `pdeep depth` whose chain, from the first descend, is not descend x depth,
    main, _start: frames of another process, or of another moment of this one."""
    problems = []
    for s in samples:
        names = user_names(s)
        if "descend" not in names or names[-1:] != ["_start"]:
            continue  # not yet in descend, or cut at 32 frames
        tail = names[names.index("descend"):]
        if tail != ["descend"] * depth + ["main", "_start"]:
            problems.append(f"pid {s['pid']} (pdeep {depth}): {pc.describe(s)}")
    return problems


def count_problems(stat: dict[str, str], slack: int) -> list[str]:
    """recorded + dropped must account for every call of record() (`taken:`), but for at
    most `slack` that met a clear."""
    taken, recorded, dropped = (int(stat[k]) for k in ("taken", "recorded", "dropped"))
    if not taken - slack <= recorded + dropped <= taken:
        return [f"record() ran {taken} times, but {recorded} samples are recorded and "
                f"{dropped} dropped: samples were lost without being counted (two harts in "
                f"one slot?), or counted twice"]
    return []


# --- Task 1: the sampling clock ----------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    """One `bsys prof 8 UNITS HZ` under -icount at CPUS=1 (user/bench/bsys.cc)."""

    insns: int
    samples: int
    cost: int  # instructions in record() per sample
    frames: float  # frames per sample


@pytest.fixture(scope="module")
def cost_run() -> Iterator[Cost | str]:
    """A one-hart machine under -icount runs bsys prof once; a failure here is reported by
    each test that uses it."""
    try:
        with Machine(1, name="test_lab_sample.icount", extra_args=icount.ICOUNT_ARGS) as m:
            m.boot()
            line = icount.Session(m).one(f"prof {COST_FRAMES} {COST_UNITS} {COST_HZ}", "prof")
    except (AssertionError, icount.Unavailable) as err:  # MachineError is an AssertionError
        yield f"bsys prof under -icount failed: {err}"
        return
    samples = line["samples"]
    yield Cost(line["insns"], samples, line["cost_ns"],
               line["frames_total"] / samples if samples else 0.0)


def cost_of(run: Cost | str) -> Cost:
    assert not isinstance(run, str), run
    return run


@points(8)
def test_rate_follows_the_sampling_clock(cost_run: Cost | str) -> None:
    run = cost_of(cost_run)
    # -icount: one instruction is one nanosecond. The first deadline is set at the first
    # timer interrupt after profiling starts, at most a time slice (QUANTUM_US) later.
    most = run.insns * COST_HZ / 1e9
    least = (run.insns - QUANTUM_NS) * COST_HZ / 1e9
    assert least - 2 <= run.samples <= most + 2, (
        f"{run.insns:,} instructions of work profiled at {COST_HZ} Hz under -icount should "
        f"take {least:.0f} to {most:.0f} samples, got {run.samples}: the sampling deadline "
        f"(Cpu::next_sample) must advance by one period a sample and timer_rearm() must arm "
        f"the timer for it, not only for the time slice")


@dataclass(frozen=True)
class Stalled:
    pid: int
    stat: dict[str, str]
    samples: list[pc.Sample]
    rate: int
    periods: int  # sampling periods that passed while interrupts were off


# pstall (user/tests/pstall.cc) profiles itself and STALLS times spins in user mode for
# STALL_GAP_US, then has the kernel keep interrupts off for STALL_US (profile(2)'s PROF_STALL),
# on a one-hart machine under -icount: each stall is exactly STALL_US * 1000 instructions, in
# which the sampling clock's deadline passes STALL_US * STALL_RATE / 1e6 times, and the late
# tick comes at its end, in the kernel, with pstall still on its hart. The stalls are short
# beside the 10 ms time slice, so that a stall does not also end pstall's time slice, and its
# late tick only samples, without sending the hart through the scheduler as well.
STALLS, STALL_US, STALL_GAP_US, STALL_RATE = 20, 1000, 2000, MAX_HZ


@pytest.fixture(scope="module")
def stalled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stalled | str]:
    """pstall profiled at 10,000 Hz on one hart under -icount: 20 times the kernel keeps
    interrupts off for 1 ms, ten sampling periods."""
    image = tmp_path_factory.mktemp("stalled") / "stalled.img"
    try:
        with Machine(1, name="test_lab_sample.stalled",
                     extra_args=icount.ICOUNT_ARGS + export_disk.drive_args(image)) as m:
            m.boot()
            fresh_profile(m, STALL_RATE)
            out = m.run(f"pstall {STALLS} {STALL_US} {STALL_GAP_US}", timeout=RUN_TIMEOUT)
            assert "pstall: done" in out, f"pstall failed: {out!r}"
            stat = profstat(m)
            samples = export_disk.profile_samples(m, image)
            m.assert_no_failures()
    except AssertionError as err:
        yield f"profiling pstall across interrupts-off stretches failed: {err}"
        return
    pids = {s["pid"] for s in samples if s.get("comm") == "pstall"}
    yield Stalled(pids.pop() if len(pids) == 1 else -1, stat, samples, STALL_RATE,
                  STALLS * STALL_US * STALL_RATE // 1_000_000)


def stalled_of(run: Stalled | str) -> Stalled:
    assert not isinstance(run, str), run
    mine = pc.of_pid(run.samples, run.pid)
    assert len(mine) >= 100, (
        f"pstall was profiled at {run.rate} Hz for {STALLS * (STALL_US + STALL_GAP_US) / 1000:.0f}"
        f" ms of guest time, but only {len(mine)} of its samples came back")
    return run


def bursts(steps: list[int], short: float) -> int:
    """Runs of two or more consecutive steps shorter than `short`."""
    runs, length = 0, 0
    for step in steps + [int(short) + 1]:
        if step < short:
            length += 1
            continue
        runs += length >= 2
        length = 0
    return runs


@points(9)
def test_late_ticks_not_sampled_in_a_burst(stalled: Stalled | str) -> None:
    run = stalled_of(stalled)
    period_us = 1e6 / run.rate
    steps = pc.same_hart_steps(pc.of_pid(run.samples, run.pid))
    found = bursts(steps, period_us / 5)
    # Under -icount a right clock gives no short step at all; the margin is for a sample
    # that a tick held off while the hart switched processes may bring close to another.
    assert found <= 2, (
        f"{found} times, three or more samples of pstall came less than {period_us / 5:.0f} "
        f"us apart on one hart at {run.rate} Hz (a period is {period_us:.0f} us): after a "
        f"late timer interrupt (the kernel kept interrupts off for {STALL_US} us, {STALLS} "
        f"times), the skipped periods were sampled in a burst. tick() must move the deadline "
        f"past `now`, not one period at a time")


@points(8)
def test_late_ticks_counted_as_missed(stalled: Stalled | str) -> None:
    run = stalled_of(stalled)
    missed = int(run.stat.get("missed", "0"))
    assert missed >= run.periods // 2, (
        f"the kernel kept interrupts off {STALLS} times for {STALL_US} us while pstall ran "
        f"profiled at {run.rate} Hz: about {run.periods} sampling periods passed unseen, but "
        f"/proc/profstat says `missed: {missed}`. tick() must add the periods it skips to "
        f"`missed`")


# --- Task 2: the walks ---------------------------------------------------------------------


LEAF_SAMPLES = 150  # of spin, about 70% of them in hot()


@points(8)
def test_leaf_frame_rule(shared: Machine) -> None:
    fresh_profile(shared, 1000)
    pid = jobs.start_background(shared, "spin 30")
    try:
        switch(shared, str(pid), True)
        pc.wait_for_recorded(shared, LEAF_SAMPLES, 1.5)
        switch(shared, str(pid), False)
    finally:
        jobs.kill_and_wait_gone(shared, pid)
    samples = pc.of_program(pc.parse_profile(shared.run("cat /proc/profile", timeout=120)),
                            pid, "spin")
    hot = [s for s in samples if s["mode"] == "user" and pc.innermost_user(s) == "hot"]
    assert len(hot) >= 20, (
        f"spin spends most of its time in hot(), but only {len(hot)} of {len(samples)} user "
        f"samples name it innermost: {pc.common_chains(samples)}")
    good = [s for s in hot if user_names(s)[:5] == ["hot", "middle", "outer", "main", "_start"]]
    assert len(good) >= 0.9 * len(hot), (
        f"hot() is a leaf (GCC saves only s0, at fp-8, and keeps ra in its register), so its "
        f"callers are middle, outer, main, _start; only {len(good)} of {len(hot)} samples say "
        f"so. Most common: {pc.common_chains(hot)}. Apply the leaf rule in the first frame "
        f"(walk.h)")
    pc_problems = pc.address_problems(samples, pc.user_symbols("spin"), pc.kernel_symbols())
    assert_no_problems(pc_problems, "spin's frames against its symbols")


def run_until(m: Machine, rate: int, cmd: str, program: str,
              enough: Callable[[list[pc.Sample]], bool], tries: int = 3) -> list[pc.Sample]:
    """`profile run cmd` from a fresh profile at `rate` Hz, again (up to `tries` runs) until
    the samples of `program` from all the runs are `enough`: a run of half a second on a
    host that gives the guest a small share of a core can hold only a few. A run that brings
    no sample of `program` at all ends the repeats: a sampler that took none in half a second
    takes none. The checks hold for every sample, whichever run it comes from."""
    samples: list[pc.Sample] = []
    for _ in range(tries):
        fresh_profile(m, rate)
        out = m.run(f"profile run {cmd}", timeout=RUN_TIMEOUT)
        assert f"{program}: done" in out, f"{cmd} failed:\n{out}"
        these = [s for s in pc.parse_profile(m.run("cat /proc/profile", timeout=120))
                 if s.get("comm") == program]
        samples += these
        if not these or enough(samples):
            break
    return samples


@points(5)
def test_deep_chains_and_the_cut(shared: Machine) -> None:
    def user(samples: list[pc.Sample]) -> list[pc.Sample]:
        return [s for s in samples if s["mode"] == "user"]
    for depth in (8, 40):
        # About 35 samples in 0.5 s at 70 Hz: deep ones are long for the console.
        samples = user(run_until(shared, 70, f"pdeep {depth} 0.5", "pdeep",
                                 lambda ss: len(user(ss)) >= 5))
        full = ["descend"] * depth + ["main", "_start"]
        right = [s for s in samples if "descend" in user_names(s) and
                 (user_names(s)[user_names(s).index("descend"):] == full
                  or len(pc.user_frames(s)) == pc.MAX_FRAMES and
                  set(user_names(s)[user_names(s).index("descend"):]) == {"descend"})]
        assert len(samples) >= 5 and len(right) >= 0.9 * len(samples), (
            f"pdeep {depth}: {len(right)} of {len(samples)} user samples have the chain "
            f"... descend x {depth}, main, _start (or the first {pc.MAX_FRAMES} frames of it): "
            f"{pc.common_chains(samples)}")


@points(6)
def test_kernel_chain(shared: Machine) -> None:
    def in_kernel(samples: list[pc.Sample]) -> list[pc.Sample]:
        return [s for s in samples if s["mode"] == "kernel"]
    # At 1000 Hz: psys waits for the disk much of the time, and longer on a loaded host (in
    # the profile lab's tests, once, 2 of its 354 samples were taken in the kernel, against
    # 10-20% on a quiet host): up to eight runs, which stop once five kernel samples are in.
    samples = run_until(shared, 1000, "psys 0.5", "psys", lambda ss: len(in_kernel(ss)) >= 5,
                        tries=8)
    kernel = in_kernel(samples)
    assert len(kernel) >= 5, (
        f"psys lives in system calls, but only {len(kernel)} of {len(samples)} samples were "
        f"taken in the kernel")
    with_chain = [s for s in kernel if any(n.startswith("sys_") for n in
                                           pc.names(pc.kernel_frames(s)))]
    assert len(with_chain) >= 0.8 * len(kernel), (
        f"a sample taken in a system call should walk the kernel chain up to the sys_ "
        f"function that serves it; {len(with_chain)} of {len(kernel)} do: "
        f"{pc.common_chains(kernel)}. walk_kernel() starts from the KernelFrame's registers")
    with_user = [s for s in kernel if "main" in user_names(s)]
    assert len(with_user) >= 0.8 * len(kernel), (
        f"under the kernel frames comes the user chain (from the trapframe); only "
        f"{len(with_user)} of {len(kernel)} kernel samples reach main")
    assert_no_problems(pc.address_problems(samples, pc.run_symbols("psys"), pc.kernel_symbols()),
                       "psys's frames against the symbols")


@dataclass(frozen=True)
class Hostile:
    pids: dict[str, list[int]]  # kind -> its pid in each round
    samples: list[pc.Sample]
    console: str


# The loops the hostile tests look into, and the fewest samples they need in each (spinning).
HOSTILE_LOOPS = {kind: ("spin_with_fp", "spin_one_up") for kind in PC_ONLY} | {
    kind: ("spin_with_fp",) for kind in ONE_RECORD}
LOOP_SAMPLES = 10
HOSTILE_ROUNDS = 4


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile | str]:
    """Every kind of pbadfp at once on three harts, sampled in all mode at the highest rate
    for half a second: hundreds of samples of each in its loops, or more. Ten programs share
    three harts, and a host that starves them can leave one with a few (6 of `self`'s 1,109
    samples in its loop, once: the rest waited for its output file), so the round is
    repeated, up to HOSTILE_ROUNDS times, until each kind has LOOP_SAMPLES in each loop the
    tests look into; a round with no sample of pbadfp at all ends the repeats."""
    kinds = PC_ONLY + ONE_RECORD + ("shrink",)
    pids: dict[str, list[int]] = {k: [] for k in kinds}
    samples: list[pc.Sample] = []
    try:
        m, image = export_machine(tmp_path_factory.mktemp("hostile"), "hostile")
        with m:
            for n in range(HOSTILE_ROUNDS):
                if n > 0:  # the last round's outputs, which say "done" already
                    m.run("rm " + " ".join(f"bad.{k}" for k in kinds))
                fresh_profile(m, MAX_HZ)
                switch(m, "all", True)
                for k in kinds:
                    pids[k].append(jobs.start_background(m, f"pbadfp {k} 0.5 > bad.{k}"))
                wait_for_files(m, {f"bad.{k}": f"pbadfp {k}: done" for k in kinds}, RUN_TIMEOUT)
                switch(m, "all", False)
                data = export_disk.copy_out(m, image, "/proc/profile")
                these = pc.parse_profile(data.decode("ascii", "replace"))
                samples += these
                if (not any(s.get("comm") == "pbadfp" for s in these)
                        or all(len(in_loop(samples, pids[k], loop)) >= LOOP_SAMPLES
                               for k, loops in HOSTILE_LOOPS.items() for loop in loops)):
                    break
            m.assert_no_failures()
            console = m.output
    except AssertionError as err:
        yield f"running the hostile programs failed: {err}"
        return
    yield Hostile(pids, samples, console)


def hostile_of(run: Hostile | str) -> Hostile:
    assert not isinstance(run, str), run
    assert "killed pid" not in run.console, (
        "a hostile program was killed, but none makes a bad access itself: "
        + re.findall(r"killed pid.*", run.console)[0])
    return run


def in_loop(samples: list[pc.Sample], pids: list[int], loop: str) -> list[pc.Sample]:
    """The user-mode samples of pbadfp processes `pids` whose pc is in the loop of `loop`."""
    at = pc.loop_addresses("pbadfp", loop)
    return [s for s in samples if s.get("pid") in pids and s["mode"] == "user"
            and pc.user_frames(s) and pc.user_frames(s)[0]["address"] in at]


def spinning(run: Hostile, kind: str, loop: str = "spin_with_fp") -> list[pc.Sample]:
    """pbadfp's samples taken in the loop of `loop`, where s0 holds what `kind` puts there
    (one taken at the function's first or last instructions sees the real frame pointer)."""
    spins = in_loop(run.samples, run.pids[kind], loop)
    mine = [s for s in run.samples if s.get("pid") in run.pids[kind]]
    assert len(spins) >= LOOP_SAMPLES, (
        f"pbadfp {kind} spins in {loop} much of the time, but only {len(spins)} of its "
        f"{len(mine)} samples are in its loop: {pc.common_chains(mine)}")
    return spins


@points(10)
def test_hostile_frame_pointers_end_the_walk(hostile: Hostile | str) -> None:
    run = hostile_of(hostile)
    assert_no_problems(no_kernel_words(run.samples), "user frames")
    for kind in PC_ONLY:
        spins = spinning(run, kind)
        long = [s for s in spins if len(pc.user_frames(s)) > 1]
        assert len(long) <= 0.05 * len(spins), (
            f"pbadfp {kind}: s0 leads out of the user's readable memory, so the user chain is "
            f"the pc alone, but {len(long)} of {len(spins)} samples have more, e.g. "
            f"{pc.describe(long[0])}. Read user words only through the page table: valid, "
            f"user and readable, below the trapframe (UserReader, walk.h's checks)")
        # The positive control: the same bad frame pointer one record up. The good record
        # is walked, and the walk ends where the chain goes bad.
        ups = spinning(run, kind, "spin_one_up")
        odd = [s for s in ups if user_names(s) != ["spin_one_up", "record_target"]]
        assert len(odd) <= 0.05 * len(ups), (
            f"pbadfp {kind}: in spin_one_up s0 points at a good record (a return address in "
            f"record_target) whose caller's frame pointer is the bad one, so the user chain is "
            f"spin_one_up, record_target; {len(odd)} of {len(ups)} samples differ, e.g. "
            f"{pc.describe(odd[0]) if odd else ''}. A walk must follow the frames before the "
            f"corruption, and stop at it")


@points(6)
def test_hostile_chains_go_up_the_stack(hostile: Hostile | str) -> None:
    run = hostile_of(hostile)
    for kind in ONE_RECORD:
        spins = spinning(run, kind)
        odd = [s for s in spins if user_names(s) != ["spin_with_fp", "record_target"]]
        assert len(odd) <= 0.05 * len(spins), (
            f"pbadfp {kind}: the first record holds a return address in record_target, and its "
            f"caller's frame pointer ({'the record itself' if kind == 'self' else 'lower down'}) "
            f"must end the walk: frame pointers only rise. {len(odd)} of {len(spins)} samples "
            f"differ, e.g. {pc.describe(odd[0]) if odd else ''}")
    shrink = spinning(run, "shrink")
    odd = [s for s in shrink if user_names(s) not in (["spin_with_fp"],
                                                      ["spin_with_fp", "record_target"])]
    assert len(odd) <= 0.05 * len(shrink), (
        f"pbadfp shrink: a record on a heap page that comes and goes gives the pc and "
        f"record_target, or the pc alone; {len(odd)} of {len(shrink)} samples differ, e.g. "
        f"{pc.describe(odd[0]) if odd else ''}")


# --- Task 3: the record --------------------------------------------------------------------


def run_deep(m: Machine, image: Path, samples: int, most: float,
             clears: int) -> tuple[dict, list, dict]:
    """pdeep at each of DEEP at once, profiled at the highest rate, with `clears` clears
    meanwhile, and then until `samples` are recorded (or `most` seconds, for a kernel that
    records none). Returns pids by depth, the samples and /proc/profstat."""
    fresh_profile(m, MAX_HZ)
    pids = {d: jobs.start_background(m, f"pdeep {d} 20 > deep.{d}") for d in DEEP}
    try:
        for pid in pids.values():
            switch(m, str(pid), True)
        for _ in range(clears):
            out = m.run("pstatus profile clear", failures=(PANIC, TRAP))
            assert "pstatus: exit 0" in out, f"`profile clear` failed: {out!r}"
        pc.wait_for_recorded(m, samples, most)
        for pid in pids.values():
            switch(m, str(pid), False)
        stat = profstat(m)
    finally:
        for pid in pids.values():
            jobs.kill_and_wait_gone(m, pid)
    samples = export_disk.profile_samples(m, image)
    m.assert_no_failures()
    return pids, samples, stat


def whole_problems(pids: dict[int, int], samples: list[pc.Sample]) -> list[str]:
    problems = pc.schema_problems(samples)
    for depth, pid in pids.items():
        mine = pc.of_pid(samples, pid)
        if len(mine) < 20:
            problems.append(f"pdeep {depth} (pid {pid}) has only {len(mine)} samples")
        problems += chain_problems(mine, depth)
    problems += pc.address_problems([s for s in samples if s.get("comm") == "pdeep"],
                                    pc.user_symbols("pdeep"), pc.kernel_symbols())
    return problems


@points(10)
def test_concurrent_samples_whole(tmp_path: Path) -> None:
    m, image = export_machine(tmp_path, "concurrent")
    with m:
        pids, samples, stat = run_deep(m, image, 10000, 1.0, clears=0)
    assert_no_problems(count_problems(stat, 0), "/proc/profstat's counts")
    assert_no_problems(whole_problems(pids, samples),
                       f"three processes (pdeep {', '.join(map(str, DEEP))}) sampled at "
                       f"{MAX_HZ} Hz on three harts: every sample must be one process's "
                       f"whole chain. Does each hart claim its own slot, with one atomic "
                       f"operation, and commit (seq) last?")


def kernel_address(symbol: str) -> int:
    out = subprocess.run([toolchain.tool("nm"), str(REPO / "build" / "kernel.elf")],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(rf"^([0-9a-f]+) \S {re.escape(symbol)}$", out, re.M)
    assert match, f"no {symbol} in build/kernel.elf"
    return int(match.group(1), 16)


CLEAR_WAIT = 1  # s that a clear must stay blocked while a sample is in flight
FIRST_WRITE = 3  # s for the first sample's write: thousands of periods


def clear_with_a_sample_in_flight() -> str | None:
    """On two harts, stop one (through QEMU's gdb stub) at its first write to the sample
    array's first slot, inside record(), and clear on the other: clear_samples() must not
    return while that sample is in flight, and must once the hart goes on. None if so, else
    what went wrong. Races need luck to show; a hart held still shows every time.

    Nothing here depends on how fast the host is. The clear is caught at the first
    instruction of clear_samples() (a breakpoint), and from there the clearing hart alone
    runs with a watchpoint on `generation`, which clear_samples() writes once it stops
    waiting: a clear that does not wait gets there in a few dozen instructions, well inside
    CLEAR_WAIT seconds however busy the host, and one that waits never does."""
    slot = kernel_address("_ZN4prof7samplesE") + 8  # samples[0].pid and .image
    entry = kernel_address("_ZN4prof13clear_samplesEv")
    generation = kernel_address("_ZN4prof12_GLOBAL__N_110generationE")
    port = free_port()
    with Machine(2, name="test_lab_sample.clear_stopped",
                 extra_args=("-gdb", f"tcp:127.0.0.1:{port}")) as m:
        m.boot()
        fresh_profile(m, MAX_HZ)
        pid = jobs.start_background(m, "pdeep 6 30")
        # Never asleep from here on, so no wait sample of it (the sweep holds the sleeper's
        # p->lock while it records one: a hart stopped there would leave the other spinning
        # on that lock).
        jobs.wait_past_exec(m, pid, "pdeep")
        with GdbStub(port) as gdb:
            gdb.drain()  # the guest stopped when the stub was connected
            gdb.set_watchpoint(slot, 8)
            gdb.resume()
            exits = m.output.count("pstatus: exit")
            m.sendline(f"pstatus profile {pid} on")
            try:
                stop = gdb.wait_stop(FIRST_WRITE * timeout_scale(), idle=lambda: m.pump(0.05))
            except GdbStubError:
                return (f"pdeep was profiled at {MAX_HZ} Hz for {FIRST_WRITE} s, but no hart "
                        f"wrote to the first slot of the sample array (prof::samples[0])")
            # pdeep is past its exec and never sleeps, so the writer is an on-CPU sample's
            # record(), holding no lock.
            hit = re.match(r"T05thread:(?:p[0-9a-f]+\.)?([0-9a-f]+);", stop)
            assert hit, f"the gdb stub stopped the guest for another reason: {stop!r}"
            stopped = int(hit.group(1), 16)
            other = 2 if stopped == 1 else 1
            gdb.clear_watchpoint(slot, 8)
            gdb.resume(other)  # the other hart alone
            # The `on` command may not have finished when the sample began: wait for its
            # exit line, so that the next one can only be the clear's, and for the prompt
            # after it, so that the clear is not typed ahead of the prompt (whose `$ ` would
            # then come between the clear's echo and its exit line).
            def on_done() -> bool:
                out = m.output
                return (out.count("pstatus: exit") > exits
                        and "\n$ " in out[out.rfind("pstatus: exit"):])
            settle = time.monotonic() + 60 * timeout_scale()
            while not on_done() and time.monotonic() < settle:
                m.pump(0.1)
            assert on_done(), (
                f"`pstatus profile {pid} on` did not finish while one hart was stopped: "
                f"{m.output[-500:]!r}")
            gdb.interrupt(10 * timeout_scale(), idle=lambda: m.pump(0.05))
            gdb.set_breakpoint(entry)
            gdb.resume(other)
            m.sendline("pstatus profile clear")
            try:
                stop = gdb.wait_stop(60 * timeout_scale(), idle=lambda: m.pump(0.05))
            except GdbStubError:
                return ("`pstatus profile clear` did not reach clear_samples() in 60 s while "
                        f"hart {stopped - 1} was stopped in record(); the console's last "
                        f"lines:\n{m.output[-800:]}")
            hit = re.match(r"T05thread:(?:p[0-9a-f]+\.)?([0-9a-f]+);", stop)
            assert hit and int(hit.group(1), 16) == other, (
                f"the guest should have stopped at clear_samples() on hart {other - 1}: {stop!r}")
            gdb.clear_breakpoint(entry)
            gdb.set_watchpoint(generation, 4)
            gdb.resume(other)
            try:
                stop = gdb.wait_stop(CLEAR_WAIT * timeout_scale(), idle=lambda: m.pump(0.05))
            except GdbStubError:
                stop = ""  # still waiting: right
            if "watch" in stop:
                return (f"clear_samples() started a new generation while hart {stopped - 1} "
                        f"was stopped in record(), in the middle of a sample (it had written "
                        f"to samples[0]): clear_samples() must wait for samples in flight")
            if stop == "":
                gdb.interrupt(10 * timeout_scale(), idle=lambda: m.pump(0.05))
            gdb.clear_watchpoint(generation, 4)
            gdb.resume()
            m.expect(r"pstatus profile clear\npstatus: exit 0", timeout=30 * timeout_scale())
        m.assert_no_failures()  # pdeep ends with the machine
    return None


@points(7)
def test_clear_while_sampling(tmp_path: Path) -> None:
    problem = clear_with_a_sample_in_flight()
    assert problem is None, problem
    m, image = export_machine(tmp_path, "clear")
    with m:
        pids, samples, stat = run_deep(m, image, 5000, 0.5, clears=8)
    assert_no_problems(count_problems(stat, 3), "/proc/profstat's counts after clears")
    assert_no_problems(whole_problems(pids, samples),
                       f"samples recorded after 8 clears made while three processes were "
                       f"sampled at {MAX_HZ} Hz: clear_samples() must wait for samples in "
                       f"flight")


@points(8)
def test_full_array_keeps_the_first_samples(shared: Machine) -> None:
    fresh_profile(shared, MAX_HZ)
    capacity = int(profstat(shared)["capacity"])
    first = jobs.start_background(shared, "spin 30")
    try:
        switch(shared, str(first), True)
        taken = pc.wait_for_recorded(shared, 20, 1.0)
        switch(shared, str(first), False)
        assert taken > 0, (
            f"spin (pid {first}) was profiled at {MAX_HZ} Hz, but /proc/profstat counts no "
            f"sample recorded: record() must claim a slot and commit it")
    finally:
        jobs.kill_and_wait_gone(shared, first)
    pids: list[int] = []
    try:
        jobs.start_copies(shared, "spin 600", 3, pids)
        # Sleepers too: in all mode each gives a wait sample every period, so that the array
        # fills in a fraction of a second, while the three spins keep every hart recording.
        jobs.start_copies(shared, "sleep 999999", FILL_SLEEPERS, pids)
        switch(shared, "all", True)
        deadline = time.monotonic() + FILL_TIMEOUT * timeout_scale()
        still = FILL_STILL * timeout_scale()
        highest, rose = -1, time.monotonic()
        while (recorded := int((stat := profstat(shared))["recorded"])) < capacity:
            now = time.monotonic()
            if recorded > highest:
                highest, rose = recorded, now
            assert now - rose < still, (
                f"`recorded:` stayed at {recorded} for {still:.0f} s while {FILLERS} were "
                f"sampled at {MAX_HZ} Hz, with the sample array ({capacity}) not full: no new "
                f"sample is being committed. Does record() claim a slot and commit it? {stat}")
            assert now < deadline, (
                f"the sample array ({capacity}) did not fill in {FILL_TIMEOUT} s of "
                f"sampling {FILLERS} at {MAX_HZ} Hz: {stat}")
            time.sleep(0.05)
        # Then more samples than fit, unless the counter never moves.
        overflow = time.monotonic() + OVERFLOW * timeout_scale()
        while int(profstat(shared)["dropped"]) == 0 and time.monotonic() < overflow:
            time.sleep(0.05)
        switch(shared, "all", False)
    finally:
        jobs.kill_all_and_wait_gone(shared, pids)
    stat = profstat(shared)
    assert int(stat["recorded"]) == capacity and int(stat["dropped"]) > 0, (
        f"with the array full, new samples are dropped and counted: /proc/profstat says "
        f"`recorded: {stat['recorded']}`, `dropped: {stat['dropped']}` (capacity {capacity})")
    assert_no_problems(count_problems(stat, 0), "/proc/profstat's counts")
    out = shared.run("labread /proc/profile 512 2048 print", timeout=120)
    match = re.search(r"\{\"pid\":(\d+),", out)
    assert match and int(match.group(1)) == first, (
        f"the first sample of a full profile should still be the first one taken, of pid "
        f"{first}, but it is {match.group(0) if match else out[:200]!r}: a full array must "
        f"drop new samples, never write over old ones")


# --- Task 4: the cost ----------------------------------------------------------------------


def cost_figure(run: Cost) -> str:
    return (f"the sampler (tick() with a sample, record() in it) took {run.cost} "
            f"instructions a sample for an {COST_FRAMES}-frame user "
            f"stack ({run.samples} samples under -icount, {run.frames:.1f} frames each); "
            f"the budget is {COST_BUDGET}")


def whole_cost_run(cost_run: Cost | str) -> Cost:
    run = cost_of(cost_run)
    print(cost_figure(run))
    assert run.samples >= 20, f"too few samples to count the cost: {run.samples}"
    assert abs(run.frames - COST_FRAMES) < 0.05, (
        f"the cost counts only for whole samples: bsys's samples should hold {COST_FRAMES} "
        f"user frames each, they hold {run.frames:.2f} on average")
    return run


@points(8)
def test_cost_within_twice_the_budget(cost_run: Cost | str) -> None:
    run = whole_cost_run(cost_run)
    assert run.cost <= 2 * COST_BUDGET, (
        f"{cost_figure(run)}: more than twice that. What does each frame cost? Translate a "
        f"page once, not once a word (see the README's hints on UserReader)")


@points(7)
def test_cost_within_the_budget(cost_run: Cost | str) -> None:
    run = whole_cost_run(cost_run)
    assert run.cost <= COST_BUDGET, f"{cost_figure(run)}: over it"
