"""The sampling profiler: profile(2), /proc/profile, /proc/profstat and the `profile` command.

Each test profiles a program whose call stacks are known and checks what comes back:

* spin (main -> outer -> middle -> hot): valid JSON, `hot` innermost in most samples with
  middle, outer, main below it, `profile top` naming hot first, and every address lying
  inside the function it is named after in the program's own symbol table (checked on the
  host with nm, return addresses at address - 1).
* psys, which lives in system calls: kernel-mode samples with kernel frames (sys_write,
  sys_read...) on top of the user frames, and the caller of the system-call stub kept.
* plong: a function whose demangled name is 82 characters must be named whole.
* pdeep N: exact chains for a shallow recursion, and the 32-frame cut for deep ones.
* pentry: samples in a function's prologue or epilogue keep its caller.
* pbadfp KIND: a corrupt user frame pointer (kernel address, unmapped, a self-loop,
  misaligned, the guard page) must give short user chains and never crash anything.
* two processes at once, a process killed while profiled, "all" mode, read sizes, bad
  arguments (through `pstatus`, since the shell has no `$?`, and `pbadcall`, which calls
  profile(2) directly).

The profile is copied out with `cat /proc/profile` over the console, which is slow (about
150 KB/s), so every test sets a low sampling rate and keeps its runs short. Tests on the shared
machine start with `profile clear` so each reads only its own samples.

Every test runs twice, at CPUS=3 and at CPUS=1 (the one that needs two spinning processes
beside the shell is skipped on one hart).

Not tested here: a full sample buffer (`dropped:` counting) needs 65536 samples, which takes
minutes at the rates QEMU delivers on a loaded machine; test_profile_capacity.py fills a
small-capacity build instead.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterator

import pytest

from tern import jobs
from tern import profile_check as pc
from tern.bench import icount
from tern.fixtures import SharedMachine
from tern.machine import LOG_DIR, Machine

# These are the project's own, deeper checks of the profiler; the lab is graded by
# test_lab_profile.py alone, so nothing here carries points.

CAT_TIMEOUT = 180  # seconds for `cat /proc/profile`: the console moves about 150 KB a second
RUN_TIMEOUT = 60
RUN_REPORT = re.compile(r"profile: pid (\d+) \((\S+)\) exited with status (-?\d+)")
SPIN_CHAIN = ["hot", "middle", "outer", "main"]


# --- Helpers ------------------------------------------------------------------------------


def cat_profile(m: Machine) -> list[pc.Sample]:
    return pc.parse_profile(m.run("cat /proc/profile", timeout=CAT_TIMEOUT))


def fresh_profile(m: Machine, rate: int) -> None:
    """Forget earlier samples and set the rate, checking that both commands are silent."""
    assert m.run("profile clear") == "", "`profile clear` should print nothing"
    assert m.run(f"profile rate {rate}") == "", f"`profile rate {rate}` should print nothing"


@dataclass
class RunResult:
    pid: int
    status: int
    output: str  # everything `profile run` printed: the command's output, then the report
    top: pc.Top


def profile_run(m: Machine, cmd: str) -> RunResult:
    out = m.run(f"profile run {cmd}", timeout=RUN_TIMEOUT)
    match = RUN_REPORT.search(out)
    assert match, f"`profile run {cmd}` printed no `profile: pid N (...) exited` line:\n{out}"
    return RunResult(int(match.group(1)), int(match.group(3)), out, pc.parse_top(out))


def run_samples(m: Machine, rate: int, cmd: str,
                done: str = "") -> tuple[RunResult, list[pc.Sample]]:
    """`profile run cmd` from a fresh profile at `rate` Hz. The program must print `done`
    (by default `NAME: done`, NAME being the program's) and exit 0. Returns the run and its
    samples, checked against the schema."""
    done = done or f"{cmd.split()[0]}: done"
    fresh_profile(m, rate)
    run = profile_run(m, cmd)
    assert done in run.output and run.status == 0, (
        f"`{cmd}` should print {done!r} and exit with status 0:\n{run.output}")
    samples = pc.of_pid(cat_profile(m), run.pid)
    assert_no_problems(pc.schema_problems(samples), "/proc/profile schema")
    return run, samples


def run_until(m: Machine, rate: int, cmd: str, enough: Callable[[list[pc.Sample]], bool],
              done: str = "", tries: int = 5) -> tuple[list[RunResult], list[pc.Sample]]:
    """run_samples, again (up to `tries` runs) until the samples of all the runs together
    are `enough`. A program that runs half a second on a host that gives the guest little
    of a core can leave a handful of samples; the checks hold for every sample, however
    many runs they come from. Returns the runs and the samples."""
    runs, samples = [], []
    for _ in range(tries):
        run, more = run_samples(m, rate, cmd, done)
        runs.append(run)
        samples += more
        if enough(samples):
            break
    return runs, samples


def assert_no_problems(problems: list[str], what: str) -> None:
    if problems:
        shown = "\n  ".join(problems[:15])
        more = f"\n  ... and {len(problems) - 15} more" if len(problems) > 15 else ""
        raise AssertionError(f"{what}: {len(problems)} problem(s):\n  {shown}{more}")


def profstat(m: Machine) -> dict[str, str]:
    return pc.parse_profstat(m.run("profile status"))


# --- spin, profiled by pid, shared by several tests ------------------------------------------


SPIN_SAMPLES = 100


@dataclass
class SpinProfile:
    pid: int
    text: str  # the console text of `cat /proc/profile`
    top: str  # the output of `profile top`


@pytest.fixture(scope="module", params=[3, 1], ids=["cpus3", "cpus1"])
def _shared_holder(request: pytest.FixtureRequest) -> Iterator[SharedMachine]:
    """This file's `shared` machine, twice: every test runs at CPUS=3 and again at CPUS=1."""
    holder = SharedMachine(f"test_profile.cpus{request.param}", request.param)
    yield holder
    holder.close()


@pytest.fixture(scope="module", params=[3, 1], ids=["cpus3", "cpus1"])
def spin_profile(request: pytest.FixtureRequest) -> Iterator[SpinProfile]:
    """`spin &`, `profile PID on` at 200 Hz until SPIN_SAMPLES are recorded (two seconds at
    most, stretched on a loaded host), `profile PID off`, then the profile and top: at
    CPUS=3, and at CPUS=1, where spin shares its one hart with the shell."""
    cpus = request.param
    m = Machine(cpus, name=f"test_profile.spin_profile.cpus{cpus}",
                log_path=LOG_DIR / f"test_profile.spin.cpus{cpus}.log")
    try:
        m.boot()
        pid = jobs.start_background(m, "spin")
        fresh_profile(m, 200)
        assert m.run(f"profile {pid} on") == "", f"`profile {pid} on` should print nothing"
        pc.wait_for_recorded(m, SPIN_SAMPLES, 2)
        assert m.run(f"profile {pid} off") == "", f"`profile {pid} off` should print nothing"
        text = m.run("cat /proc/profile", timeout=CAT_TIMEOUT)
        top = m.run("profile top", timeout=RUN_TIMEOUT)
        jobs.kill_and_wait_gone(m, pid)
        m.assert_no_failures()
    except BaseException:
        m.save_log()
        m.close()
        raise
    yield SpinProfile(pid, text, top)
    m.close()


def spin_samples(p: SpinProfile) -> list[pc.Sample]:
    samples = pc.parse_profile(p.text)
    assert_no_problems(pc.schema_problems(samples), "/proc/profile schema")
    pids = {s["pid"] for s in samples}
    assert pids == {p.pid}, f"only spin (pid {p.pid}) was profiled, but samples name pids {pids}"
    assert len(samples) >= 20, (f"spin was profiled until /proc/profstat counted {SPIN_SAMPLES} "
                                f"samples, but /proc/profile holds {len(samples)}")
    return samples


def test_spin_profile_is_valid(spin_profile: SpinProfile) -> None:
    samples = spin_samples(spin_profile)
    assert spin_profile.text.endswith("]\n"), "the document should end with `]` and a newline"
    assert all(s["tid"] == s["pid"] for s in samples), "tid should equal pid (one thread each)"


def test_spin_hot_chain(spin_profile: SpinProfile) -> None:
    spin_samples(spin_profile)
    samples = pc.of_program(pc.parse_profile(spin_profile.text), spin_profile.pid, "spin")
    hot = [s for s in samples if pc.innermost_user(s) == "hot" and s["mode"] == "user"]
    assert len(hot) >= 0.4 * len(samples), (
        f"hot does about 70% of spin's work, but only {len(hot)} of {len(samples)} samples "
        f"have it innermost. Most common chains: {pc.common_chains(samples)}")
    good = [s for s in hot if pc.names(pc.user_frames(s))[:4] == SPIN_CHAIN]
    assert len(good) >= 0.9 * len(hot), (
        f"samples with hot innermost should continue middle, outer, main; only {len(good)} "
        f"of {len(hot)} do. Most common chains: {pc.common_chains(hot)}")


def test_spin_top_names_hot_first(spin_profile: SpinProfile) -> None:
    samples = spin_samples(spin_profile)
    top = pc.parse_top(spin_profile.top)
    assert top.rows, f"`profile top` printed no rows:\n{spin_profile.top}"
    first = top.rows[0]
    assert (first.name, first.kernel) == ("hot", False), (
        f"`profile top` should name hot first, got:\n{spin_profile.top}")
    # `profile top` counts samples taken on the CPU: a wait sample of spin (its exec's last
    # steps may sleep, after the shell announced it) is not one of them.
    on_cpu = pc.on_cpu(samples)
    assert top.samples == len(on_cpu), (
        f"`profile top` counted {top.samples} samples, /proc/profile has {len(on_cpu)} on the "
        f"CPU")
    assert top.dropped == 0, f"nothing should be dropped:\n{spin_profile.top}"
    assert len(top.rows) <= 10, "`profile top` shows 10 functions by default"
    by_name = {r.name: r for r in top.rows if not r.kernel}
    assert "main" in by_name and by_name["main"].incl_pct >= 80, (
        f"main is on nearly every stack of spin; its inclusive share should be >= 80%:\n"
        f"{spin_profile.top}")
    for r in top.rows:
        assert r.self_count <= r.incl_count, f"self > inclusive for {r.name}:\n{spin_profile.top}"


def test_spin_addresses_in_symbol_ranges(spin_profile: SpinProfile) -> None:
    spin_samples(spin_profile)
    # Samples taken before spin's exec (it was started with `spin &`) are the shell's.
    samples = pc.of_program(pc.parse_profile(spin_profile.text), spin_profile.pid, "spin")
    problems = pc.address_problems(samples, pc.user_symbols("spin"), pc.kernel_symbols())
    assert_no_problems(problems, "spin's addresses against build/user/_spin and the kernel")


# --- Kernel frames: psys ------------------------------------------------------------------


def test_psys_kernel_frames(shared: Machine) -> None:
    # psys waits for the disk much of its time, and how much depends on the host: on a busy
    # one a half-second run can hold a single sample. So it runs again (up to 5 times) until
    # its samples include 3 taken in the kernel; the checks below hold for every sample.
    runs, samples = run_until(shared, 200, "psys 0.5",
                              lambda ss: sum(s["mode"] == "kernel" for s in ss) >= 3)
    in_kernel = [s for s in samples if s["mode"] == "kernel"]
    assert len(in_kernel) >= 3, (
        f"expected kernel-mode samples of psys, got {len(in_kernel)} of {len(samples)} in "
        f"{len(runs)} runs of 0.5 s")
    assert any(r.kernel for run in runs for r in run.top.rows), (
        f"psys spends its time in system calls; its report should show [k] functions:\n"
        f"{runs[-1].output}")
    for s in in_kernel:
        assert pc.kernel_frames(s), f"a kernel-mode sample without kernel frames: {pc.describe(s)}"
        # (A sample in exit, called by _start after main returned, or in the exec that
        # `profile run` makes, has no main under it.)
        if pc.innermost_user(s) in ("write", "read"):
            assert "main" in pc.names(pc.user_frames(s)), (
                f"a write or read's sample should show the user stack (down to main) under "
                f"the kernel frames: {pc.describe(s)}")
    syscalls = {n for s in in_kernel for n in pc.names(pc.kernel_frames(s)) if n.startswith("sys_")}
    assert syscalls & {"sys_write", "sys_read"}, (
        f"psys mostly writes and reads; its kernel frames name only {sorted(syscalls)}")
    problems = pc.address_problems(samples, pc.run_symbols("psys"), pc.kernel_symbols())
    assert_no_problems(problems, "psys's addresses against build/user/_psys and the kernel")
    shared.assert_no_failures()


def test_syscall_stub_caller_in_chain(shared: Machine) -> None:
    """A sample taken inside a system call must name the function that made the call.

    psys calls write() and read() from fill_file, read_file and pipe_round; the user stub
    (`write`, `read`: user/lib/usys.S) is the innermost user frame, and the next one must be
    the stub's caller, not main.
    """
    def in_stubs(samples: list[pc.Sample]) -> list[pc.Sample]:
        return [s for s in samples if pc.innermost_user(s) in ("write", "read")]
    _, samples = run_until(shared, 200, "psys 0.5", lambda ss: len(in_stubs(ss)) >= 3)
    stubs = in_stubs(samples)
    assert stubs, f"no samples inside write() or read(): {pc.common_chains(samples)}"
    lost = pc.psys_stub_caller_lost(stubs)
    assert not lost, (
        f"{len(lost)} of {len(stubs)} samples inside a system-call stub skip the stub's "
        f"caller, e.g. {pc.describe(lost[0])}. The stubs in user/lib/usys.S build no frame "
        f"record, so the frame-pointer walk goes from the stub straight to its caller's "
        f"caller (the caller's return address is only in the saved ra register). Either the "
        f"stubs should build a frame record or the sampler should use the trapframe's ra for "
        f"a pc inside a frameless stub.")


# --- pdeep: exact chains and the 32-frame cut -----------------------------------------------


@pytest.mark.parametrize("depth", [8, 32, 64])
def test_pdeep_chain(shared: Machine, depth: int) -> None:
    # Deep samples are long in JSON (about 60 bytes a frame): few of them, at 80 or 40 Hz for
    # 0.5 s.
    def bottom(samples: list[pc.Sample]) -> list[pc.Sample]:
        return [s for s in samples if s["mode"] == "user" and pc.innermost_user(s) == "bottom"]
    _, samples = run_until(shared, 80 if depth == 8 else 40, f"pdeep {depth} 0.5",
                           lambda ss: len(bottom(ss)) >= 5)
    at_bottom = bottom(samples)
    assert len(at_bottom) >= 5, (
        f"pdeep spends nearly all its time in bottom, but only {len(at_bottom)} of "
        f"{len(samples)} samples are there: {pc.common_chains(samples)}")
    full = ["bottom"] + ["descend"] * depth + ["main", "_start"]
    expected = full if len(full) <= pc.MAX_FRAMES else full[:pc.MAX_FRAMES]
    wrong = [s for s in at_bottom if pc.names(pc.user_frames(s)) != expected]
    assert len(wrong) <= 0.1 * len(at_bottom), (
        f"with {depth} descend frames the chain should be bottom, descend x "
        f"{expected.count('descend')}, {'main, _start' if expected == full else '(cut at 32 frames)'}; "
        f"{len(wrong)} of {len(at_bottom)} samples differ, e.g. "
        f"{pc.describe(wrong[0]) if wrong else ''}")
    problems = pc.address_problems(samples, pc.run_symbols("pdeep"), pc.kernel_symbols())
    assert_no_problems(problems, "pdeep's addresses")


def test_long_names_whole(shared: Machine) -> None:
    _, samples = run_samples(shared, 50, "plong 1")
    table = pc.user_symbols("plong")
    full = next(n for n in table.by_name if "spin_in_a_function_with_a_long_name" in n)
    inner = [pc.user_frames(s)[0] for s in samples if s["mode"] == "user" and pc.user_frames(s)]
    spinning = [f for f in inner if table.holds(full, f["address"])]
    assert len(spinning) >= 10, (
        f"plong spins in {full!r}; only {len(spinning)} of {len(samples)} samples are there: "
        f"{pc.common_chains(samples)}")
    wrong = Counter(f["symbol"] for f in spinning if f["symbol"] != full)
    assert not wrong, (
        f"the function's name is {full!r} ({len(full)} characters), but samples name it "
        f"{dict(wrong)}: names should not be cut short (the profile report allows 95 "
        f"characters; a shorter buffer on the way, such as the symbolizer's cache, cuts them)")


# --- Prologues and epilogues ----------------------------------------------------------------


def test_prologue_and_epilogue_keep_the_caller(shared: Machine) -> None:
    """pentry calls tiny() over and over; many samples fall where tiny's s0 is still (or
    again) caller's, and the walk alone would give `tiny <- main`. The caller comes back
    from ra when the frames are named (kern/profile/prologue.h)."""
    run, samples = run_samples(shared, 50, "pentry 2")
    in_tiny = [s for s in samples if pc.innermost_user(s) == "tiny"]
    assert len(in_tiny) >= 10, (
        f"pentry spends most of its time in and around tiny; only {len(in_tiny)} of "
        f"{len(samples)} samples are there: {pc.common_chains(samples)}")
    wrong = [s for s in in_tiny if pc.names(pc.user_frames(s))[:3] != ["tiny", "caller", "main"]]
    assert not wrong, (
        f"{len(wrong)} of {len(in_tiny)} samples in tiny lose its caller: "
        f"{pc.common_chains(wrong)}; e.g. {pc.describe(wrong[0])}")
    problems = pc.address_problems(samples, pc.run_symbols("pentry"), pc.kernel_symbols())
    assert_no_problems(problems, "pentry's addresses")
    shared.assert_no_failures()


# --- PROF_STALL's budget --------------------------------------------------------------------


def test_stall_budget() -> None:
    """PROF_STALL keeps a hart's interrupts off, so a hart grants at most 200 ms of it in
    any second (kern/abi/profile.h): 30 stalls of 10 ms in a row must meet a refusal. Under
    -icount the stalls and the second are counted in instructions, so this does not depend
    on how fast the host is."""
    with Machine(1, name="test_profile.stall_budget", extra_args=icount.ICOUNT_ARGS) as m:
        m.boot()
        out = m.run("pstatus pstall 30 10000 0", timeout=RUN_TIMEOUT)
        assert "refused a stall" in out and "pstatus: exit 1" in out, (
            f"30 stalls of 10 ms within a second should exceed the hart's budget:\n{out}")
        m.assert_no_failures()


# --- Corrupt frame pointers -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["kernel", "unmapped", "self", "misaligned", "guard"])
def test_pbadfp(shared: Machine, kind: str) -> None:
    # Only a sample taken in spin_with_fp's loop sees the corrupt s0: one at its first or
    # last instructions sees the real frame pointer (and, before the prologue has run, a
    # chain that skips main), which is not what this test is about.
    loop = pc.loop_addresses("pbadfp", "spin_with_fp")
    def in_loop(samples: list[pc.Sample]) -> list[pc.Sample]:
        return [s for s in samples
                if pc.user_frames(s) and pc.user_frames(s)[0]["address"] in loop]
    runs, samples = run_until(shared, 200, f"pbadfp {kind} 0.5",
                              lambda ss: len(in_loop(ss)) >= 10, f"pbadfp {kind}: done")
    for run in runs:
        assert "killed pid" not in run.output, f"pbadfp makes no bad access itself:\n{run.output}"
    assert shared.run("echo up").strip() == "up", "the system should stay up"
    spinning = in_loop(samples)
    assert len(spinning) >= 10, (
        f"pbadfp spends much of its time in spin_with_fp's loop ({loop.start:#x} to "
        f"{loop.stop - 1:#x}); only {len(spinning)} of {len(samples)} samples are there: "
        f"{pc.common_chains(samples)}")
    assert all(pc.innermost_user(s) == "spin_with_fp" for s in spinning), (
        f"the loop lies in spin_with_fp: {pc.common_chains(spinning)}")
    long_chains = [s for s in spinning if len(pc.user_frames(s)) > 2]
    assert not long_chains, (
        f"with s0 corrupt ({kind}) the user chain must stop at once (the pc, at most one "
        f"more frame), got e.g. {pc.describe(long_chains[0])}")
    leaked = [s for s in samples
              if any(f["address"] >= pc.KERNEL_BASE for f in pc.user_frames(s))]
    assert not leaked, f"a kernel address among user frames: {pc.describe(leaked[0])}"
    if kind == "self":
        expected = ["spin_with_fp", "record_target"]
        odd = [s for s in spinning if pc.names(pc.user_frames(s)) != expected]
        assert not odd, (f"the self-referencing record holds one return address (in "
                         f"record_target) and must end the walk: {pc.describe(odd[0])}")
    problems = pc.address_problems(samples, pc.run_symbols("pbadfp"), pc.kernel_symbols())
    assert_no_problems(problems, "pbadfp's addresses")
    shared.assert_no_failures()


# --- Several processes, exits, "all" mode ------------------------------------------------


@pytest.mark.min_cpus(3)  # two spinning processes and the shell: not run at CPUS=1
def test_two_processes_at_once(shared: Machine) -> None:
    fresh_profile(shared, 200)
    with jobs.running_all(shared, "spin", 2) as pids:
        for pid in pids:
            assert shared.run(f"profile {pid} on") == ""
        assert sorted(profstat(shared)["profiling"].split()) == sorted(str(p) for p in pids), (
            "/proc/profstat should list both profiled pids")
        pc.wait_for_recorded(shared, 150, 1.5)
        for pid in pids:
            assert shared.run(f"profile {pid} off") == ""
    samples = cat_profile(shared)
    assert_no_problems(pc.schema_problems(samples), "/proc/profile schema")
    for pid in pids:
        mine = pc.of_pid(samples, pid)
        assert len(mine) >= 10, f"pid {pid} has only {len(mine)} samples; both should have ~75"
        assert any(pc.innermost_user(s) == "hot" for s in mine), (
            f"pid {pid} (spin) has no sample in hot: {pc.common_chains(mine)}")
    assert {s["pid"] for s in samples} == set(pids), "only the two spins were profiled"


def test_process_killed_while_profiled(shared: Machine) -> None:
    fresh_profile(shared, 200)
    with jobs.running(shared, "spin") as pid:
        assert shared.run(f"profile {pid} on") == ""
        pc.wait_for_recorded(shared, 50, 1)
    out = shared.run(f"profile {pid} off")
    assert f"process {pid} has exited" in out and f"no process {pid}" not in out, (
        f"`profile {pid} off` after the kill should say it exited (its samples are kept), "
        f"printed {out!r}")
    assert profstat(shared)["profiling"] == "none", "an exited process is no longer profiled"
    samples = pc.of_program(cat_profile(shared), pid, "spin")
    assert len(samples) >= 10, f"the killed process's samples should stay, got {len(samples)}"
    assert any(pc.innermost_user(s) == "hot" for s in samples), (
        f"samples of an exited process should still be symbolized: {pc.common_chains(samples)}")
    problems = pc.address_problems(samples, pc.user_symbols("spin"), pc.kernel_symbols())
    assert_no_problems(problems, "the killed spin's addresses")


def test_all_mode(shared: Machine) -> None:
    fresh_profile(shared, 200)
    assert shared.run("profile all on") == ""
    try:
        assert profstat(shared)["profiling"] == "all"
        assert "spin: done" in shared.run("spin 0.3", timeout=RUN_TIMEOUT)
    finally:
        assert shared.run("profile all off") == ""
    assert profstat(shared)["profiling"] == "none"
    out = shared.run("pstatus profile all off")
    assert "pstatus: exit 1" in out and "profile:" in out, (
        f"`profile all off` when not on should explain and exit 1, printed {out!r}")
    top = pc.parse_top(shared.run("profile top 3", timeout=RUN_TIMEOUT))
    assert len(top.rows) == 3 and top.rows[0].name == "hot", (
        f"`profile top 3` after spin in all mode should show 3 rows, hot first: {top.rows}")


# --- Reading /proc/profile ------------------------------------------------------------------


def test_read_sizes_give_same_bytes(shared: Machine) -> None:
    fresh_profile(shared, 70)
    run = profile_run(shared, "spin 0.3")
    assert run.status == 0, run.output
    text = shared.run("cat /proc/profile", timeout=CAT_TIMEOUT)
    pc.parse_profile(text)
    data = text.encode()
    expected = f"labread: {len(data)} bytes, fnv1a {pc.fnv1a(data):08x}"
    for size in (1, 7, 4096):
        out = shared.run(f"labread /proc/profile {size}", timeout=CAT_TIMEOUT).strip()
        out = re.sub(r", \d+ reads, \d+ ticks$", "", out)  # how it read, not what
        assert out == expected, (
            f"reading /proc/profile {size} byte(s) at a time gave {out!r}; `cat` gave "
            f"{expected!r}")


def test_profstat(shared: Machine) -> None:
    stat = profstat(shared)
    for key in ("profiling", "rate", "recorded", "dropped", "capacity"):
        assert key in stat, f"/proc/profstat has no `{key}:` line: {stat}"
    assert int(stat["capacity"]) >= 60000, f"capacity {stat['capacity']} is under 60000"
    assert shared.run("profile rate 250") == ""
    assert profstat(shared)["rate"] == "250"
    assert shared.run("profile rate 1000") == ""
    assert profstat(shared)["rate"] == "1000"
    assert shared.run("profile clear") == ""
    stat = profstat(shared)
    assert (stat["recorded"], stat["dropped"]) == ("0", "0"), f"after clear: {stat}"
    assert shared.run("cat /proc/profile").strip() == "[\n]", "an empty profile is `[` `]`"


# --- Bad arguments ------------------------------------------------------------------------


def test_pbadcall(shared: Machine) -> None:
    out = shared.run("pbadcall", timeout=30)  # a zombie may be asked for 3 s
    assert "pbadcall: all -1" in out, f"pbadcall reported:\n{out}"


BAD_COMMANDS = [
    # (arguments, what the message must contain); every one must exit with status 1
    ("", "usage"),
    ("{pid}", "usage"),
    ("{pid} sideways", "usage"),
    ("{pid} on extra", "usage"),
    ("x1 on", "usage"),
    ("top 0", "usage"),
    ("top many", "usage"),
    ("run", "usage"),
    ("999 on", "no process 999"),
    ("{pid} off", "not being profiled"),
    ("rate 0", "rate"),
    ("rate 9", "rate"),
    ("rate 100000", "rate"),
    ("rate fast", "rate"),
]


def test_bad_arguments(shared: Machine) -> None:
    with jobs.running(shared, "spin") as pid:
        problems = []
        for args, needle in BAD_COMMANDS:
            cmd = f"pstatus profile {args.format(pid=pid)}".rstrip()
            out = shared.run(cmd)
            if "pstatus: exit 1" not in out or needle not in out:
                problems.append(f"`{cmd[8:]}` should print {needle!r} and exit 1, "
                                f"printed {out!r}")
        # And the good forms succeed silently.
        for cmd in (f"profile {pid} on", f"profile {pid} off"):
            out = shared.run(f"pstatus {cmd}")
            if out.strip() != "pstatus: exit 0":
                problems.append(f"`{cmd}` should print nothing and exit 0, printed {out!r}")
        assert_no_problems(problems, "`profile` with bad arguments")


def test_on_off_open_cases(shared: Machine) -> None:
    """PROF_ON and PROF_OFF in the cases labs/profile/README.md specifies beyond its table
    (user/tests/profon.cc): on twice, all mode twice, leaving all mode, a zombie, a killed
    process."""
    out = shared.run("profon", timeout=RUN_TIMEOUT)
    failures = re.findall(r"(?m)^profon: FAIL .*$", out)
    assert not failures and re.search(r"(?m)^profon: ok, \d+ checks$", out), (
        "profile(2) answered wrongly:\n" + ("\n".join(failures) or out))
    stat = profstat(shared)
    assert stat["profiling"] == "none" and stat["profiled"] == stat["flagged"] == "0", (
        f"profon leaves nothing profiled, but /proc/profstat says {stat}")
