#!/usr/bin/env python3
"""The grader: run the tests that are worth points, and say what each one earned.

    tools/grade                      every graded test: labs/*/ and tests/qemu/
    tools/grade --lab profile        one lab's tests (`make grade LAB=profile`)
    tools/grade --test pid           tests whose name contains "pid" (`make grade TEST=pid`)
    tools/grade --list               what would run, with points (`make grade-list`)
    tools/grade --repeat 3           run three times and compare (`make grade-flaky N=3`)

A test is graded when it carries `@pytest.mark.points(n)`. A lab is a folder, labs/NAME/,
and the tests in it count for lab NAME; `--lab NAME` collects that folder. The system tests
in tests/qemu/ carry points too, in pseudo-labs they name (`points(n, lab="boot")`), and
`--lab boot` picks those out of tests/qemu/. Tests without a marker only run under
`make test`. A run goes like this:

1. Collect (plugin.py): pytest lists the graded tests, and the lab and substring
   chosen on the command line narrow the list.
2. Build: `make -s all` in the tree, GRADE_JOBS files at a time. A build that fails is a
   result, not a crash: the compiler's last lines are printed and every test scores zero.
3. Run: pytest runs exactly those tests, spread over GRADE_JOBS pytest-xdist workers (by
   default one per core it may use: its CPU affinity, capped by the CPU quotas of its
   cgroup and those above it, as a container on a grading service has). Every machine
   boots from a private copy of fs.img, so workers cannot see each other's files (tests
   of one file may share a machine: tern/fixtures.py).
   Each result is printed as soon as it is known:

       profile: call rejects a bad pid: OK (1.3s) 5/5
       profile: reads at any offset: FAIL (4.0s) 0/10 -- timed out after 10 s waiting ...

4. Report: for each failure the reason, the command that was running and the last console
   lines; then where the console logs, the Gradescope results.json and the JUnit XML were
   written; and last `Score: N/M`. The exit status is 0 only for a full score.

Everything a run writes goes to build/grade/ (or --out): results.json, junit.xml, logs/
and pytest.log. The folder is locked for the run; a second grader started meanwhile in the
same tree writes to build/grade-2/ and says so. --time-limit stops a run that takes too
long and grades the tests that finished (the Gradescope bundle uses it).

Timeouts in the tests are multiplied by GRADE_TIMEOUT_SCALE. If it is not set, the grader
sets it from the machine's load (between 1 and 3), so a busy machine gets more time
without anyone editing a test. A run never leaves a process behind (see procs.py),
even when interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Iterator, Sequence, TextIO

from tern import REPO
from tern.grade import procs as grade_procs
from tern.grade.results import (GradedTest, Result, gradescope_json, junit_xml, number,
                                one_line, outcome_signature, report_line, score_of)

# The folder that holds the package: what pytest's workers need on their path.
TOOLS = Path(__file__).resolve().parents[2]
LABS = "labs"  # labs/NAME/ holds lab NAME's graded tests
SYSTEM_TESTS = "tests/qemu"  # the system tests, some graded in pseudo-labs (boot, fs, ...)

BUILD_TAIL = 25  # compiler lines shown for a failed build
CONSOLE_TAIL = 12  # console lines shown under a failure in the terminal
MAX_AUTO_SCALE = 3.0


@dataclass
class Settings:
    root: Path  # the tree to build
    tests: list[Path]  # the folders pytest collects from
    out: Path  # results.json, junit.xml, logs/, pytest.log
    labs: list[str]
    substring: str
    marks: str
    jobs: int
    build: bool
    timeout_scale: str
    scale_origin: str
    time_limit: float | None = None
    log_dir: Path | None = None  # console logs of this run's failed tests (default out/logs)

    @property
    def rootdir(self) -> Path:
        """pytest's root: node ids are relative to it."""
        return Path(os.path.commonpath([str(t) for t in self.tests]))

    @property
    def logs(self) -> Path:
        return self.log_dir or self.out / "logs"


class GraderError(Exception):
    """pytest itself failed (a usage error, a file that does not import): not a test result."""


class TimeLimitReached(Exception):
    """The run took longer than --time-limit; the tests still running were stopped."""


# --- Command line --------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="grade", description="Run the graded tests and report points per test.")
    parser.add_argument("testdir", nargs="?", help="directory of tests (default: the labs' and tests/qemu/)")
    parser.add_argument("--lab", action="append", default=[],
                        help="only this lab's tests (repeat or separate with commas)")
    parser.add_argument("--test", default="", metavar="SUBSTRING",
                        help="only tests whose name or node id contains SUBSTRING")
    parser.add_argument("-m", "--mark", default="", metavar="EXPR",
                        help="pytest marker expression, e.g. 'not slow'")
    parser.add_argument("--list", action="store_true", help="list the tests and points; run none")
    parser.add_argument("-j", "--jobs", default=os.environ.get("GRADE_JOBS", "auto"),
                        help="parallel workers, or 'auto' for one per core it may use "
                             "(GRADE_JOBS)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run N times and check the results are identical")
    parser.add_argument("--no-build", action="store_true", help="do not run `make all` first")
    parser.add_argument("--root", help="the tree to build (default: the one this grader is in)")
    parser.add_argument("--out", help="where results go (default: ROOT/build/grade)")
    parser.add_argument("--time-limit", type=float, metavar="SECONDS",
                        help="stop the tests after this long and grade what finished")
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace) -> Settings:
    root = Path(args.root).resolve() if args.root else REPO
    out = Path(args.out).resolve() if args.out else root / "build" / "grade"
    labs = [lab.strip() for value in args.lab for lab in value.split(",") if lab.strip()]
    tests = ([Path(args.testdir).resolve()] if args.testdir
             else test_folders(root, labs))
    scale, origin = timeout_scale()
    return Settings(root=root, tests=tests, out=out, labs=labs, substring=args.test,
                    marks=args.mark, jobs=worker_count(str(args.jobs)), build=not args.no_build,
                    timeout_scale=scale, scale_origin=origin, time_limit=args.time_limit)


def test_folders(root: Path, labs: list[str]) -> list[Path]:
    """Where the graded tests of `labs` are (of every lab if none is named): a lab's own
    folder, or tests/qemu/ for a pseudo-lab of the system tests."""
    if not labs:
        return sorted(p for p in (root / LABS).iterdir() if p.is_dir()) + [root / SYSTEM_TESTS]
    folders: list[Path] = []
    for lab in labs:
        folder = root / LABS / lab
        folder = folder if folder.is_dir() else root / SYSTEM_TESTS
        if folder not in folders:
            folders.append(folder)
    return folders


def claim_output(out: Path) -> tuple[Path, IO[str]]:
    """Lock an output folder for this run: `out`, or out-2, out-3... if a grader running at
    the same time in the same tree holds it. The lock ends with the process, however it ends.
    """
    for n in range(1, 100):
        folder = out if n == 1 else out.with_name(f"{out.name}-{n}")
        folder.mkdir(parents=True, exist_ok=True)
        lock = open(folder / ".lock", "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        return folder, lock
    raise GraderError(f"{out} and 98 folders beside it are all in use by other graders")


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[None]:
    """Graders sharing a tree build it one at a time (make is not safe to run twice at once)."""
    (root / "build").mkdir(exist_ok=True)
    with open(root / "build" / ".grade-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def quota_cores(membership: Path = Path("/proc/self/cgroup"),
                mount: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The whole cores (at least one) that the CPU quotas of this process's cgroup and of the
    groups above it allow: the smallest, as each limits what is under it (a shared server's
    per-user slice, say). None if none has a quota or none can be read. Inside a container
    the mount is the container's own group, so the mount itself is read too."""
    try:
        lines = membership.read_text(errors="replace").splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, group = parts
        v2 = controllers == ""  # cgroup v2: one hierarchy, named by an empty list
        if not v2 and "cpu" not in controllers.split(","):
            continue
        base = mount if v2 else mount / controllers
        here = PurePosixPath(group.lstrip("/"))
        for folder in {base / g for g in (here, *here.parents)}:
            cores = cores_allowed(folder, v2)
            if cores is not None:
                limits.append(cores)
    return min(limits, default=None)


def cores_allowed(folder: Path, v2: bool) -> int | None:
    """The whole cores a cgroup's own quota allows, at least one, or None if it has none.
    v2 keeps it in cpu.max ("150000 100000": 1.5 cores; "max 100000": no quota), v1 in
    cpu.cfs_quota_us over cpu.cfs_period_us (-1: none)."""
    try:
        if v2:
            quota, period = (folder / "cpu.max").read_text().split()
        else:
            quota = (folder / "cpu.cfs_quota_us").read_text()
            period = (folder / "cpu.cfs_period_us").read_text()
        us, per = int(quota), int(period)
    except (OSError, ValueError):  # no such file, "max", or not numbers
        return None
    return max(1, us // per) if us > 0 and per > 0 else None


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity (taskset, a container's cpuset),
    no more than its cgroup's CPU quota allows."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = quota_cores()  # at least 1, as is the affinity
    return min(cores, quota) if quota is not None else cores


def worker_count(value: str) -> int:
    if value in ("", "auto"):
        return usable_cores()
    try:
        return max(1, int(value))
    except ValueError:
        raise SystemExit(f"grade: GRADE_JOBS must be a number or 'auto', not {value!r}")


def timeout_scale() -> tuple[str, str]:
    """GRADE_TIMEOUT_SCALE if set; otherwise a factor from the load per core (1 to 3)."""
    given = os.environ.get("GRADE_TIMEOUT_SCALE", "").strip()
    if given:
        return given, "GRADE_TIMEOUT_SCALE"
    try:
        load = os.getloadavg()[0] / max(1, os.cpu_count() or 1)  # the host's, as the load is
    except OSError:
        return "1", "default"
    scale = min(MAX_AUTO_SCALE, max(1.0, round(load * 2) / 2))
    return f"{scale:g}", "from the load average; set GRADE_TIMEOUT_SCALE to choose"


# --- Running pytest ------------------------------------------------------------------------


def pytest_env(settings: Settings, run_id: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(TOOLS)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env[grade_procs.RUN_VARIABLE] = run_id
    env["GRADE_LOG_DIR"] = str(settings.logs)
    env["GRADE_BUILT"] = "1"  # tern/fixtures.py: the grader has built the tree already
    env["GRADE_TIMEOUT_SCALE"] = settings.timeout_scale
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def pytest_argv(settings: Settings, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "tern.grade.plugin", "-p", "no:cacheprovider",
            f"--rootdir={settings.rootdir}", "--color=no", "-q", *extra]


def collect(settings: Settings, run_id: str) -> tuple[list[GradedTest], list[dict[str, str]]]:
    """The graded tests the selection names, and any test files that failed to load."""
    settings.out.mkdir(parents=True, exist_ok=True)
    listing = settings.out / "collected.json"
    listing.unlink(missing_ok=True)
    argv = pytest_argv(settings, "--collect-only", f"--grade-collect={listing}",
                       *(["-m", settings.marks] if settings.marks else []),
                       *map(str, settings.tests))
    result = subprocess.run(argv, cwd=settings.rootdir, env=pytest_env(settings, run_id),
                            stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if not listing.exists():
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-BUILD_TAIL:])
        raise GraderError(f"pytest could not list the tests (exit status "
                          f"{result.returncode}):\n{tail}")
    data = json.loads(listing.read_text())
    tests = [GradedTest(t["nodeid"], t["lab"], t["points"], t["title"], t["slow"])
             for t in data["tests"]]
    return [t for t in tests if selected(t, settings)], data["errors"]


def selected(test: GradedTest, settings: Settings) -> bool:
    if settings.labs and test.lab not in settings.labs:
        return False
    wanted = settings.substring.lower()
    return not wanted or wanted in test.name.lower() or wanted in test.nodeid.lower()


def run_tests(settings: Settings, tests: list[GradedTest], run_id: str,
              on_result: "ResultPrinter", results: dict[str, Result]) -> None:
    """Run the tests, adding each to `results` (by node id) and passing it to `on_result` as
    it finishes. Raises Interrupted or TimeLimitReached, with the tests stopped, if the run
    is cut short; `results` then holds the tests that finished."""
    events = settings.out / "events.jsonl"
    events.unlink(missing_ok=True)
    events.touch()
    jobs = min(settings.jobs, len(tests))
    # loadgroup: the tests of an xdist_group (those sharing one expensive module fixture)
    # go to one worker, which computes the fixture once; the others as with plain `load`.
    parallel = ["-n", str(jobs), "--dist", "loadgroup"] if jobs > 1 else ["-p", "no:xdist"]
    order = long_tests_first(tests, load_durations(settings), jobs)
    argv = pytest_argv(settings, f"--grade-events={events}", *parallel,
                       *[f"{settings.rootdir}/{t.nodeid}" for t in order])
    by_id = {t.nodeid: t for t in tests}
    deadline = time.monotonic() + settings.time_limit if settings.time_limit else None
    with open(settings.out / "pytest.log", "wb") as log, open(events, "rb") as feed:
        child = grade_procs.spawn(argv, cwd=settings.rootdir,
                                  env=pytest_env(settings, run_id), output=log)
        try:
            pending = b""
            while True:
                finished = child.poll() is not None
                chunk = feed.read()
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    entry = json.loads(line)
                    test = by_id.get(entry["nodeid"])
                    if test is None or test.nodeid in results:
                        continue
                    result = Result(test, entry["outcome"], entry["duration"],
                                    entry["reason"], entry["details"], entry["logs"],
                                    entry.get("note", ""))
                    results[test.nodeid] = result
                    on_result(result)
                if finished and not chunk:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeLimitReached()
                if not chunk:
                    time.sleep(0.1)
        finally:
            grade_procs.stop_group(child, grace=0 if child.poll() is not None else 5)


def durations_file(settings: Settings) -> Path:
    return settings.out / "durations.json"


def load_durations(settings: Settings) -> dict[str, float]:
    try:
        return {k: float(v) for k, v in json.loads(durations_file(settings).read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def save_durations(settings: Settings, results: list[Result]) -> None:
    known = load_durations(settings)
    known.update({r.test.nodeid: round(r.duration, 2) for r in results if r.status != "not run"})
    durations_file(settings).write_text(json.dumps(known, indent=0, sort_keys=True))


def long_tests_first(tests: list[GradedTest], durations: dict[str, float],
                     jobs: int) -> list[GradedTest]:
    """The order to hand the tests to the workers.

    xdist gives out tests in the order it gets them, so a test that takes a third of the
    run, given out last, makes the whole run wait for it while the other workers sit idle.
    Tests that took longer than an even share of a worker's time last time go first,
    longest first; the others keep their order, so the tests of one file stay together
    and share their file's machine.
    """
    if jobs <= 1 or not durations:
        return tests
    share = sum(durations.get(t.nodeid, 0.0) for t in tests) / jobs
    long = [t for t in tests if durations.get(t.nodeid, 0.0) > share / 4]
    long.sort(key=lambda t: -durations[t.nodeid])
    return long + [t for t in tests if t not in long]


# --- Reporting -----------------------------------------------------------------------------


class ResultPrinter:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, result: Result) -> None:
        self.line(report_line(result))

    def line(self, text: str = "") -> None:
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except BrokenPipeError:
            # The reader went away (`| head`); the run still finishes and writes its files.
            self.stream = open(os.devnull, "w")


def shown(path: Path | str) -> str:
    """A path as the user should type it: relative to the current directory if inside it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def console_tail(details: str) -> list[str] | None:
    """The last console lines in a MachineError message, or None if it is not one."""
    lines = details.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("--- last ")), None)
    end = next((i for i, l in enumerate(lines) if l == "--- end of console ---"), None)
    if start is None or end is None or end <= start:
        return None
    tail = lines[start + 1:end]
    while tail and not tail[-1].strip():
        tail.pop()
    return tail[-CONSOLE_TAIL:]


def print_failures(out: ResultPrinter, results: list[Result]) -> None:
    failed = [r for r in results if not r.passed and r.status != "not run"]
    for r in failed:
        out.line()
        out.line(f"--- {r.test.name} ({r.test.nodeid})")
        out.line(r.reason or "(no reason given)")
        tail = console_tail(r.details)
        if tail:
            out.line(f"last {len(tail)} console line{'s' * (len(tail) != 1)}:")
            for line in tail:
                out.line(f"    {line}")
        elif tail is not None:
            out.line("the console stayed empty: nothing was printed")
        elif r.details and r.details.strip() != r.reason.strip():
            for line in r.details.splitlines()[1:CONSOLE_TAIL + 1]:
                out.line(f"    {line}")
        for log in r.logs:
            out.line(f"console log: {shown(log)}")


def write_results(settings: Settings, results: list[Result], *, output: str = "",
                  extra: list[dict[str, object]] | None = None, elapsed: float | None = None
                  ) -> tuple[Path, Path]:
    settings.out.mkdir(parents=True, exist_ok=True)
    extra = extra or []
    gradescope = settings.out / "results.json"
    junit = settings.out / "junit.xml"
    gradescope.write_text(gradescope_json(results, output=output, extra=extra,
                                          execution_time=elapsed))
    junit.write_text(junit_xml(results, extra_failures=[(str(e["name"]), str(e["output"]))
                                                        for e in extra]))
    return gradescope, junit


def log_tail(path: Path, lines: int = BUILD_TAIL) -> list[str]:
    try:
        return path.read_text(errors="replace").rstrip().splitlines()[-lines:]
    except OSError:
        return []


def not_run(tests: list[GradedTest], reason: str) -> list[Result]:
    return [Result(t, "not run", reason=reason) for t in tests]


# --- The steps -----------------------------------------------------------------------------


def build(settings: Settings, run_id: str) -> tuple[bool, str, float]:
    """`make -s all` in the tree, GRADE_JOBS files at a time (a fresh tree, as on Gradescope,
    builds in 20 s instead of 30 s on two cores): (succeeded, the output's last lines,
    seconds). A parallel build that fails is run once more one file at a time, which compiles again
    only what failed and stops at the first file that does: its errors are the tail shown,
    the same on every run, where the parallel build's would mix the errors of the files it
    had started in whatever order they ended."""
    start = time.monotonic()
    env = dict(os.environ)
    env[grade_procs.RUN_VARIABLE] = run_id
    try:
        with build_lock(settings.root):
            result = make_all(settings, env, f"-j{settings.jobs}")
            if result.returncode != 0 and settings.jobs > 1:
                result = make_all(settings, env)
    except OSError as error:
        return False, f"could not run make: {error}", time.monotonic() - start
    lines = (result.stdout + result.stderr).rstrip().splitlines()
    return result.returncode == 0, "\n".join(lines[-BUILD_TAIL:]), time.monotonic() - start


def make_all(settings: Settings, env: dict[str, str],
             *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-s", *flags, "all"], cwd=settings.root, capture_output=True,
                          text=True, errors="replace", stdin=subprocess.DEVNULL, env=env)


def describe_selection(settings: Settings, tests: list[GradedTest]) -> str:
    labs = sorted({t.lab for t in tests})
    _, total = score_of(Result(t, "passed") for t in tests)
    jobs = min(settings.jobs, len(tests))
    return (f"grading {len(tests)} test{'s' * (len(tests) != 1)} "
            f"({number(total)} point{'s' * (total != 1)}; lab{'s' * (len(labs) != 1)} "
            f"{', '.join(labs)}) "
            f"with {jobs} worker{'s' * (jobs != 1)}; timeouts x{settings.timeout_scale} "
            f"({settings.scale_origin})")


def list_tests(out: ResultPrinter, tests: list[GradedTest]) -> None:
    width = max((len(t.name) for t in tests), default=0)
    for t in tests:
        slow = " (slow)" if t.slow else ""
        out.line(f"{t.name:<{width}}  {number(t.points):>3} pts  {t.nodeid}{slow}")
    labs: dict[str, list[GradedTest]] = {}
    for t in tests:
        labs.setdefault(t.lab, []).append(t)
    for lab, members in labs.items():
        points = sum(t.points for t in members)
        out.line(f"lab {lab}: {len(members)} tests, {number(points)} points")


def grade_once(settings: Settings, tests: list[GradedTest], run_id: str,
               out: ResultPrinter) -> list[Result]:
    start = time.monotonic()
    logs = settings.logs
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True, exist_ok=True)
    interrupted: grade_procs.Interrupted | None = None
    cut_short = ""
    finished: dict[str, Result] = {}
    try:
        run_tests(settings, tests, run_id, out, finished)
    except grade_procs.Interrupted as stop:
        grade_procs.ignore_stop_signals()
        interrupted = stop
        cut_short = "interrupted"
    except TimeLimitReached:
        cut_short = f"stopped: the run's time limit of {settings.time_limit:g} s was reached"
    reason = cut_short or "did not run (see pytest.log)"
    results = [finished.get(t.nodeid) or Result(t, "not run", reason=reason) for t in tests]
    missing = [r for r in results if r.status == "not run"]
    if missing and cut_short and not interrupted:
        for r in missing:
            out(r)
    if missing and not cut_short:
        for r in missing:
            out(r)
        out.line("pytest stopped before running them; the end of its output:")
        for line in log_tail(settings.out / "pytest.log"):
            out.line(f"    {line}")
    print_failures(out, results)
    elapsed = time.monotonic() - start
    gradescope, junit = write_results(settings, results, elapsed=elapsed, output=cut_short)
    save_durations(settings, results)
    out.line()
    if any(not r.passed for r in results):
        out.line(f"Console logs of failed tests: {shown(logs)}/")
    out.line(f"Results: {shown(gradescope)} (Gradescope), {shown(junit)} (JUnit); "
             f"pytest's own output: {shown(settings.out / 'pytest.log')}")
    out.line(f"Time: {elapsed:.1f}s")
    if interrupted:
        raise interrupted
    return results


def report_build_failure(settings: Settings, tests: list[GradedTest], text: str,
                         seconds: float, out: ResultPrinter) -> None:
    out.line(f"build: make all: FAIL ({seconds:.1f}s) -- the tree does not build; its last "
             "lines:")
    for line in text.splitlines():
        out.line(f"    {line}")
    results = not_run(tests, "not run: the build failed")
    build_entry: dict[str, object] = {"name": "build: make all", "score": 0, "max_score": 0,
                                      "status": "failed", "output": text}
    gradescope, junit = write_results(settings, results, extra=[build_entry],
                                      output="The build failed, so no test ran.\n" + text)
    out.line(f"Results: {shown(gradescope)} (Gradescope), {shown(junit)} (JUnit)")


def report_load_errors(errors: list[dict[str, str]], out: ResultPrinter) -> None:
    for error in errors:
        last = error["details"].strip().splitlines()[-1] if error["details"].strip() else ""
        first = one_line(re.sub(r"^E\s+", "", last))  # pytest marks error lines with "E"
        out.line(f"{error['nodeid']}: FAIL -- the test file does not load: {first}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    settings = settings_from(args)
    out = ResultPrinter(sys.stdout)
    run_id = grade_procs.new_run_id()
    grade_procs.install_stop_handlers()
    try:
        wanted = settings.out
        settings.out, _lock = claim_output(wanted)
        if settings.out != wanted:
            out.line(f"grade: {shown(wanted)} is in use by another grader; this run writes to "
                     f"{shown(settings.out)}/")
        return grade(settings, args, run_id, out)
    except grade_procs.Interrupted as stop:
        grade_procs.ignore_stop_signals()
        out.line(f"grade: interrupted by {stop}; every QEMU of this run has been stopped")
        return 130
    except GraderError as error:
        out.line(f"grade: {error}")
        return 2
    finally:
        grade_procs.ignore_stop_signals()
        left = grade_procs.sweep(run_id)
        if left:
            out.line(f"grade: stopped {len(left)} leftover process(es) of this run")


def grade(settings: Settings, args: argparse.Namespace, run_id: str,
          out: ResultPrinter) -> int:
    tests, errors = collect(settings, run_id)
    if args.list:
        list_tests(out, tests)
        report_load_errors(errors, out)
        return 0 if not errors else 1
    if not tests:
        out.line("grade: no graded test matches"
                 + (f" LAB={','.join(settings.labs)}" if settings.labs else "")
                 + (f" TEST={settings.substring}" if settings.substring else "")
                 + "; `make grade-list` shows them all")
        report_load_errors(errors, out)
        return 2
    out.line(describe_selection(settings, tests))
    if settings.build:
        ok, text, seconds = build(settings, run_id)
        if not ok:
            report_build_failure(settings, tests, text, seconds, out)
            out.line(f"Score: 0/{number(score_of(not_run(tests, ''))[1])}")
            return 1
        out.line(f"build: make all: OK ({seconds:.1f}s)")
    report_load_errors(errors, out)
    signatures = []
    shutil.rmtree(settings.out / "logs", ignore_errors=True)  # only this run's logs are kept
    for attempt in range(1, max(1, args.repeat) + 1):
        if args.repeat > 1:
            out.line(f"=== run {attempt} of {args.repeat}")
            settings.log_dir = settings.out / "logs" / f"run-{attempt}"
        results = grade_once(settings, tests, run_id, out)
        earned, total = score_of(results)
        out.line(f"Score: {number(earned)}/{number(total)}")
        signatures.append(outcome_signature(results))
    if args.repeat > 1 and not report_flakiness(out, signatures, tests):
        return 1
    full = earned == total and total > 0 and not errors
    return 0 if full else 1


def report_flakiness(out: ResultPrinter, signatures: list[list[tuple[str, str, float]]],
                     tests: list[GradedTest]) -> bool:
    """Print whether every run gave the same results; return True if they did."""
    if all(s == signatures[0] for s in signatures):
        out.line(f"Flakiness check: all {len(signatures)} runs gave identical results")
        return True
    out.line(f"Flakiness check: the {len(signatures)} runs differ:")
    names = {t.nodeid: t.name for t in tests}
    per_test: dict[str, list[str]] = {}
    for signature in signatures:
        for nodeid, status, _score in signature:
            per_test.setdefault(nodeid, []).append(status)
    for nodeid, statuses in per_test.items():
        if len(set(statuses)) > 1:
            out.line(f"    {names.get(nodeid, nodeid)}: {' '.join(statuses)}")
    return False

