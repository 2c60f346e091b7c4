"""The pytest plugin of the tests that boot tern: their machines, logs and outcomes.

The root pytest.ini loads it for every test (`-p tern.fixtures`); the tests that boot machines
are those of tests/qemu/, of each lab (labs/NAME/) and of the grader (tests/grader/).

Three ways to get a machine, from cheapest to most isolated:

* `shared` (module scope, CPUS=3): one machine for all the tests of a file that only run
  commands and do not disturb each other. If a test leaves it broken (a panic, a hung
  command, QEMU gone), the next test that asks gets a freshly booted one, so one failure
  does not cascade through the file.
* `machine` (per test, CPUS=3): a fresh machine, booted, for tests that need a known state,
  such as the first process id after boot.
* `boot` (per test): a factory, `boot(cpus=1)`, for tests that choose the number of harts,
  extra QEMU arguments, or the RAM disk (`ramdisk=True`, see machine.py). Machines it made
  are closed after the test.

After each test (and each module, for the shared machine), every private disk image a
machine of it used has been read by the file-system checker as the machine was closed
(machine.DISK_PROBLEMS); any inconsistency fails the test at teardown, and the image is kept
beside the console logs.

When a test fails, the whole console log of each machine it used is written to
build/grade-logs/<test>.log and the path is printed with the failure. Logs are overwritten,
never cleaned up: only the paths printed by this run belong to it.

The marker `@pytest.mark.points(n, lab="...")` records what a test is worth for the course's
autograder; tools/grade (`make grade`) runs the tests that carry it and adds up the
points. An optional `name="..."` gives the title the grader prints instead of the function's.

By default the session starts with `make all` so the kernel and fs.img are current; pass
--no-build to skip that. Under `make test` it is skipped too: make has just built them.

`--outcomes=FILE` writes each test's result with the class of the exception that ended it,
so a caller can tell an assertion that failed from a machine that did not boot
(test_lab_discrimination.py).

Under `CI=true` a skipped test counts as failed (strict_skips.py). A test that needs more
harts than its module's machine has is marked `min_cpus(n)` and deselected there instead.

Tests marked `slow` run first (pytest_collection_modifyitems), so that parallel workers
finish together.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable, Iterator

import pytest

from tern import machine as machine_mod
from tern import strict_skips
from tern.machine import REPO, Machine, log_path_for

DEFAULT_CPUS = 3


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--no-build", action="store_true",
                     help="do not run `make all` before the tests")
    parser.addoption("--outcomes", metavar="FILE",
                     help="append each test's result and the exception that ended it to FILE "
                          "(one line of JSON per test phase)")


# The folders whose tests boot the system, so a session that reaches them builds it first.
BOOTING = ("tests/qemu", "tests/grader", "labs")


def boots(config: pytest.Config) -> bool:
    """Whether the session's arguments reach tests that boot the system."""
    folders = [REPO / name for name in BOOTING]
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if any(path == f or f in path.parents or path in f.parents for f in folders):
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not boots(config):
        return  # an xdist worker: the controller has already built everything
    if config.getoption("--no-build") or "MAKELEVEL" in os.environ:
        return  # asked not to, or run by `make test`, which has just built everything
    if os.environ.get("GRADE_BUILT"):
        return  # run by tools/grade, which builds first and reports a failed build
    result = subprocess.run(["make", "-s", "all"], cwd=REPO, capture_output=True, text=True)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip().splitlines()[-30:]
        pytest.exit("`make all` failed; the tests need build/kernel.elf and fs.img:\n"
                    + "\n".join(output), returncode=2)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for mark in item.iter_markers("points"):
            if len(mark.args) != 1 or not isinstance(mark.args[0], int):
                raise pytest.UsageError(f"{item.nodeid}: use @pytest.mark.points(n, lab=...)")
    # A test marked min_cpus(n) is not run (deselected, not skipped: skips fail CI) in its
    # variants whose module machine (the `_shared_holder` parameter) has fewer harts.
    kept, dropped = [], []
    for item in items:
        mark = item.get_closest_marker("min_cpus")
        params = getattr(getattr(item, "callspec", None), "params", {})
        cpus = params.get("_shared_holder")
        too_few = mark is not None and isinstance(cpus, int) and cpus < mark.args[0]
        (dropped if too_few else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    # The tests marked slow (minutes each: the labs' mutants, the platforms, usertests) go
    # first, in their order, then the rest. pytest-xdist hands out tests in this order, so
    # the workers of a parallel run end on short tests and finish together, instead of
    # one waiting while the other runs a long test it was handed last.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# --- Fixtures ------------------------------------------------------------------------------


class MachineFactory:
    """Boots machines for one test or module and closes them all at the end."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.machines: list[Machine] = []

    def __call__(self, cpus: int = DEFAULT_CPUS, extra_args: tuple[str, ...] = (),
                 timeout: float = 60, ramdisk: bool = False) -> Machine:
        suffix = f"-{len(self.machines)}" if self.machines else ""
        m = Machine(cpus, name=f"{self.name}{suffix}", extra_args=extra_args, ramdisk=ramdisk)
        self.machines.append(m)
        m.boot(timeout)
        return m

    def close(self) -> None:
        for m in self.machines:
            m.close()


class SharedMachine:
    """A module's machine, rebooted when a test has left it unusable."""

    def __init__(self, name: str, cpus: int = DEFAULT_CPUS,
                 extra_args: tuple[str, ...] = ()) -> None:
        self.factory = MachineFactory(name)
        self.cpus = cpus
        self.extra_args = extra_args
        self.current: Machine | None = None

    def get(self) -> Machine:
        m = self.current
        if m is None or not m.alive or not m.at_prompt:
            if m is not None:
                m.close()
            self.current = self.factory(self.cpus, self.extra_args)
        return self.current

    def close(self) -> None:
        self.factory.close()


@pytest.fixture
def boot(request: pytest.FixtureRequest) -> Iterator[Callable[..., Machine]]:
    """A factory: `boot(cpus=1)` returns a booted machine, closed after the test."""
    factory = MachineFactory(Path(request.node.nodeid).name)
    yield factory
    factory.close()


@pytest.fixture
def machine(boot: MachineFactory) -> Machine:
    """A freshly booted machine with CPUS=3, for this test alone."""
    return boot(DEFAULT_CPUS)


@pytest.fixture(scope="module")
def _shared_holder(request: pytest.FixtureRequest) -> Iterator[SharedMachine]:
    holder = SharedMachine(Path(request.node.nodeid).name)
    yield holder
    holder.close()


@pytest.fixture
def shared(_shared_holder: SharedMachine) -> Machine:
    """The module's machine (CPUS=3), at a shell prompt."""
    return _shared_holder.get()


# --- Disks left inconsistent -------------------------------------------------------------


def _fail_on_new_disk_problems(start: int) -> None:
    found = machine_mod.DISK_PROBLEMS[start:]
    if not found:
        return
    del machine_mod.DISK_PROBLEMS[start:]  # reported once, here
    lines = []
    for name, problems, saved in found:
        shown = "\n    ".join(problems[:20])
        more = f"\n    ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        lines.append(f"machine {name} left an inconsistent disk (kept as {saved}):\n"
                     f"    {shown}{more}")
    pytest.fail("\n".join(lines), pytrace=False)


@pytest.fixture(autouse=True)
def _check_disks() -> Iterator[None]:
    """Fail the test if a machine it closed left its disk inconsistent."""
    start = len(machine_mod.DISK_PROBLEMS)
    yield
    _fail_on_new_disk_problems(start)


@pytest.fixture(scope="module", autouse=True)
def _check_module_disks() -> Iterator[None]:
    """The same for machines closed when the module ends (the shared machine)."""
    start = len(machine_mod.DISK_PROBLEMS)
    yield
    _fail_on_new_disk_problems(start)


# --- Logs of failed tests ------------------------------------------------------------------


def _machines_of(item: pytest.Item) -> list[Machine]:
    found: list[Machine] = []
    for value in getattr(item, "funcargs", {}).values():
        if isinstance(value, Machine):
            found.append(value)
        elif isinstance(value, MachineFactory):
            found.extend(value.machines)
        elif isinstance(value, SharedMachine) and value.current is not None:
            found.append(value.current)
    unique: list[Machine] = []
    for m in found:
        if all(m is not other for other in unique):
            unique.append(m)
    return unique


def _write_outcome(item: pytest.Item, call: pytest.CallInfo[None],
                   report: pytest.TestReport) -> None:
    path = item.config.getoption("outcomes")
    if not path:
        return
    exc = call.excinfo.value if call.excinfo is not None else None
    classes = [c.__name__ for c in type(exc).__mro__] if exc is not None else []
    if report.skipped:
        message = strict_skips.skip_reason(report)
    elif exc is not None:
        message = str(exc)
    else:
        message = str(report.longrepr or "")
    entry = {"name": item.name, "nodeid": item.nodeid, "when": report.when,
             "outcome": report.outcome, "exception": classes[0] if classes else None,
             # A MachineError is an AssertionError too, but says that the machine failed
             # (a boot or a command timed out), not that the test's check did.
             "assertion": "AssertionError" in classes and "MachineError" not in classes,
             "message": message.strip()[:2000]}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    outcome = yield
    report = outcome.get_result()
    _write_outcome(item, call, report)
    if not report.failed:
        return
    machines = _machines_of(item)
    paths = []
    for i, m in enumerate(machines):
        base = log_path_for(item.nodeid)
        path = base if i == 0 else base.with_name(f"{base.stem}-{i}{base.suffix}")
        try:
            paths.append(m.save_log(path))
        except OSError:
            continue
    if paths:
        report.sections.append(("console logs", "\n".join(str(p) for p in paths)))


# --- Tallies in the terminal summary -------------------------------------------------------
# A test counts itself under a label with `record_property("tally", label)`; the summary at
# the end of the session prints "label: passed/total" (for example "crash cycles survived:
# 24/24"). With `record_property("tally", (label, flag))` it counts the flag instead: how many
# of the tests that recorded the label set it true. Properties travel with each test's report,
# so this works under xdist too.


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    tallies: dict[str, list[int]] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key != "tally":
                    continue
                label, counted = (value if isinstance(value, (tuple, list))
                                  else (value, report.passed))
                entry = tallies.setdefault(str(label), [0, 0])
                entry[0] += 1 if counted else 0
                entry[1] += 1
    for label, (hits, total) in tallies.items():
        terminalreporter.write_line(f"{label}: {hits}/{total}")
