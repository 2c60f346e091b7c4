"""The speed lab's grade tests (labs/speed/README.md): 100 points for making three workloads
faster, judged by exact instruction counts.

Each workload of tools/tern/bench/speed.py (WORKLOADS) is counted in guest instructions on a
one-hart machine under QEMU's -icount, where a count repeats exactly from run to run. Its
speedup is the starter's count, recorded once in labs/speed/reference.toml, divided by this
tree's. Each workload has two tiers, each all or nothing: a first speedup that one good
change reaches, and one near what our own solution reaches (TIERS below).

Speed counts only in a kernel that still works. Before any speedup is looked at, the
`gate` fixture checks, on three-hart machines without -icount, in this order:

  * that the workloads and the measuring code are the ones the reference was measured with
    (each file of tools/tern/bench/speed.py's PROTECTED against reference.toml's digest;
    every file that differs is named);
  * the lab's own checks (labs/speed/user/spcheck.cc): pipes, sleep locks, copies, each from
    many processes at once, seeded (the seed is printed; SPEED_SEED=N replays one); the
    three run at once, each on a machine of its own;
  * `usertests -q`, once the checks pass: every test passes and no page is lost;
  * the profile lab's graded tests (labs/profile/test_lab_profile.py) but its written
    answers: the profiler a student measures with must still work. They run last, on two
    workers of their own if the grader has several, since they take longest.

If one fails, every speed test fails, and says which check it was and why. Run the checks
yourself in the guest (`spcheck pipes 42`, `usertests -q`) or alone here:

    /usr/bin/python3 -m pytest labs/speed/test_lab_speed.py -k gate
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import pytest

from tern import discrimination
from tern.bench import speed
from tern.fixtures import SharedMachine
from tern.machine import PANIC, REPO, TRAP, Machine, MachineError
from tern.profile_props import seed_from_env

points = pytest.mark.points  # the lab is this folder, labs/speed/

CHECKS = ("pipes", "locks", "copy")
CHECK_TIMEOUT = 30  # s for one spcheck (about 2 s when right): a lost wakeup never ends
CHECK_QUIET = 10  # s without a dot of its progress: a check that is stuck, not slow
CHECK_CPUS = 3
USERTESTS_TIMEOUT = 300
PROFILE_LAB_TESTS = "labs/profile/test_lab_profile.py"
# Its written answers are that lab's own business (the speed starter leaves them blank).
PROFILE_LAB_NOT_RUN = "labs/profile/test_lab_profile.py::test_answers_written"
PROFILE_LAB_TIMEOUT = 900  # s for the whole file (about 10 s when right)
CHECK_OK = re.compile(r"(?m)^spcheck: (\w+) ok \(seed (\d+), (\d+) cases\)")
USERTESTS_VERDICT = re.compile(r"(?m)^(ALL TESTS PASSED|FAILED:.*)$")
USERTESTS_FAILED = re.compile(r"(?m)^test (\S+): (FAILED.*)$")
PAGES = re.compile(r"(?m)^free pages: before (\d+) after (\d+)$")

# workload -> (speedup, points) for each tier. Our solution's speedups are about 3.2 (files),
# 5.8 (pipe) and 5.3 (copy); see the handout's table.
TIERS = {
    "files": ((1.3, 15), (2.7, 18)),
    "pipe": ((1.3, 15), (5.2, 18)),
    "copy": ((1.3, 15), (4.8, 19)),
}


def once_per_run(request: pytest.FixtureRequest, name: str, compute: Callable[[], Any]) -> Any:
    """compute() once per pytest run: the grader spreads the tests over xdist workers, and
    each would otherwise boot its own machines for the same answer. The first worker to ask
    computes it under a lock and leaves it in a file named after the run; the others wait
    for it and read it."""
    worker = getattr(request.config, "workerinput", None)
    if worker is None:
        return compute()
    path = REPO / "build" / "speed-lab" / f"{worker['testrunuid']}-{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return json.loads(path.read_text())
        value = compute()
        path.write_text(json.dumps(value))
        return value


# --- The correctness gate -------------------------------------------------------------------


def first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def run_check(check: str, seed: int, name: str) -> str:
    """`spcheck CHECK SEED` on a three-hart machine of its own: what failed, in words, or "".
    A machine that failed keeps its console log (Machine.error() saves it for a hang)."""
    with Machine(CHECK_CPUS, name=f"{name}-{check}") as m:
        try:
            m.boot()
        except Exception as e:  # a MachineError, or a QEMU that could not be started at all
            return f"the machine for spcheck {check} did not boot: {first_line(e)}"
        try:
            out = m.run(f"spcheck {check} {seed}", timeout=CHECK_TIMEOUT,
                        failures=(PANIC, TRAP), quiet=CHECK_QUIET)
        except MachineError as e:
            return (f"spcheck {check} {seed} did not finish ({first_line(e)}); a process "
                    "that waits for a wakeup that never comes looks like this")
        if CHECK_OK.search(out):
            return ""
        said = [line for line in out.splitlines() if "spcheck" in line][-1:]
        return (f"spcheck {check} {seed} failed: {' '.join(said) or out.strip()[-300:]} "
                f"(console log: {m.save_log()})")


def run_checks(holder: SharedMachine, seed: int) -> list[str]:
    """The lab's checks and usertests: what failed, in words (empty if nothing). The three
    checks run at once, each on a machine of its own, so that each failure is named (a copy
    that is broken may show first in the pipes, which copy too, and must still be named by
    the copy check), and a check that hangs costs its wait once, not once for each check
    after it. A check prints dots as it goes, so one whose dots stop for CHECK_QUIET seconds
    is stuck, and is named then, not at its timeout. usertests runs on the module's machine
    only once the checks pass: a lost wakeup would hang it for minutes."""
    with ThreadPoolExecutor(len(CHECKS)) as pool:
        found = pool.map(lambda check: run_check(check, seed, holder.factory.name), CHECKS)
        problems = [problem for problem in found if problem]
    if problems:
        return problems
    try:
        out = holder.get().run("usertests -q", timeout=USERTESTS_TIMEOUT,
                               failures=(PANIC, TRAP))
    except MachineError as e:
        return [f"usertests -q did not finish: {first_line(e)}"]
    verdict = USERTESTS_VERDICT.search(out)
    failed = [f"{name} {why}" for name, why in USERTESTS_FAILED.findall(out)]
    if verdict is None or verdict.group(1) != "ALL TESTS PASSED" or failed:
        return [f"usertests -q failed: {'; '.join(failed) or 'no verdict printed'}"]
    pages = PAGES.search(out)
    if pages is None or pages.group(1) != pages.group(2):
        return ["usertests -q lost pages: " + (pages.group(0) if pages else "no count printed")]
    return []


def profile_lab_problems() -> list[str]:
    """The profile lab's graded tests, run on this tree in a pytest of their own: those that
    did not pass, in words (empty if all did)."""
    # Two workers if the grader has several, one if it has one (`tools/grade -j 1`, as each
    # grade in labs/speed/test_lab_discrimination.py is, beside make test's other workers):
    # a second would only boot a machine more on cores kept busy already. loadgroup, as the
    # grader runs them: the tests that read one profile (an xdist_group) stay on one worker,
    # which takes that profile once.
    several = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1
    workers = ["-n", "2", "--dist", "loadgroup"] if several else ["-p", "no:xdist"]
    try:
        outcomes = discrimination.pytest_in(REPO, [PROFILE_LAB_TESTS], *workers,
                                            f"--deselect={PROFILE_LAB_NOT_RUN}",
                                            timeout=PROFILE_LAB_TIMEOUT)
    except (AssertionError, OSError, discrimination.subprocess.TimeoutExpired) as e:
        return [f"the profile lab's tests ({PROFILE_LAB_TESTS}) did not run: {first_line(e)}"]
    if not outcomes.results:
        return [f"the profile lab's tests ({PROFILE_LAB_TESTS}) did not run"]
    failed = outcomes.failed()
    if not failed:
        return []
    def reason(name: str) -> str:
        said = outcomes.reasons.get(name)
        return said.splitlines()[0][:160] if said else ""
    shown = "; ".join(f"{name} ({outcomes.results[name]}: {reason(name)})"
                      for name in failed[:3])
    more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
    return [f"the profile lab's tests fail, so the profiler is broken: {shown}{more} "
            f"(run `make grade LAB=profile`)"]


@pytest.fixture(scope="module")
def gate(request: pytest.FixtureRequest, _shared_holder) -> str:
    """Why speed does not count in this tree, or "" if it does (see the top)."""
    def compute() -> str:
        differ = speed.differences(speed.load_reference()["digest"])
        if differ:
            return ("protected files differ from the starter's: "
                    f"{', '.join(differ)}; put them back as they were")
        seed = seed_from_env("SPEED_SEED")
        problems = run_checks(_shared_holder, seed)
        if not problems:
            problems = profile_lab_problems()
        return "; ".join(problems)
    return once_per_run(request, "gate", compute)


def test_gate(gate: str) -> None:
    """Not graded by itself: the correctness gate alone, to run while you work."""
    assert not gate, f"speed does not count: {gate}"


# --- Speed ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def measured(request: pytest.FixtureRequest, gate: str) -> dict[str, Any]:
    """Every workload's count and the machine's platform (tools/tern/bench/speed.py); nothing
    in a kernel that failed the gate (a kernel that loses wakeups might never finish the
    measurement, which waits on pipes too)."""
    if gate:
        return {}
    def compute() -> dict[str, Any]:
        m = speed.measurement()
        return {"counts": m.counts, "platform": m.platform}
    return once_per_run(request, "measured", compute)


def speedup(workload: str, gate: str, measured: dict[str, Any], record_property) -> float:
    """The workload's speedup; its note says it, and says if this machine is not the one the
    reference was counted on (the handout's "Grading" says why that warns and counts)."""
    assert not gate, f"speed does not count until the kernel is right again: {gate}"
    reference = speed.load_reference()
    starter = reference["starter"][workload]
    count = measured["counts"][workload]
    ratio = starter / count
    note = speed.platform_note(reference["platform"], measured["platform"])
    said = (f"{speed.WORKLOADS[workload]}: {count:,} instructions, starter {starter:,}: "
            f"{ratio:.2f}x")
    record_property("grade_note", f"{note}: {said}" if note else said)
    print(f"{note}: {said}" if note else said)
    return ratio


def check_tier(workload: str, tier: int, gate: str, measured: dict[str, Any],
               record_property) -> None:
    ratio = speedup(workload, gate, measured, record_property)
    needed = TIERS[workload][tier][0]
    note = speed.platform_note(speed.load_reference()["platform"], measured["platform"])
    assert ratio >= needed, (
        f"{note + ': ' if note else ''}`{speed.WORKLOADS[workload]}` runs {ratio:.2f}x as "
        f"fast as in the starter ({measured['counts'][workload]:,} instructions), needs "
        f"{needed}x: profile it (labs/speed/README.md)")


@points(TIERS["files"][0][1])
def test_files_faster(gate, measured, record_property) -> None:
    check_tier("files", 0, gate, measured, record_property)


@points(TIERS["files"][1][1])
def test_files_fast(gate, measured, record_property) -> None:
    check_tier("files", 1, gate, measured, record_property)


@points(TIERS["pipe"][0][1])
def test_pipe_faster(gate, measured, record_property) -> None:
    check_tier("pipe", 0, gate, measured, record_property)


@points(TIERS["pipe"][1][1])
def test_pipe_fast(gate, measured, record_property) -> None:
    check_tier("pipe", 1, gate, measured, record_property)


@points(TIERS["copy"][0][1])
def test_copy_faster(gate, measured, record_property) -> None:
    check_tier("copy", 0, gate, measured, record_property)


@points(TIERS["copy"][1][1])
def test_copy_fast(gate, measured, record_property) -> None:
    check_tier("copy", 1, gate, measured, record_property)
