"""Orphans are reaped as fast as they are made, and a fork waits for init when only orphans'
zombies fill the table.

xv6's own `usertests -q` once failed on tern at CPUS=3 on a loaded host, in `reparent`: a
child's fork() of a grandchild returned -1, because zombies whose parent had exited filled the
table faster than init reaped them. The kernel's fix is a fork that finds the table full
while such zombies exist waits for init to reap one (kern/proc/proc.cc, allocproc_for_fork).

* `tforkfull` (user/tests/tforkfull.cc) proves the fix: on one hart it fills the table, zombie
  orphans among it, exactly, and its fork must succeed. Without the wait it fails every time.
* `usertests orphanstorm` is the stress of the original failure's shape (hundreds of children
  that fork a grandchild and exit at once, the grandchild exiting at once too, while the master
  waits for each child): here it runs RUNS times in a row at CPUS=3 while a process on the host
  spins (or the suite's other workers run), so that QEMU's harts are descheduled at random
  moments; every run must pass, and the kernel's free-page count must come back. It does not
  prove the fix: with the wait taken out, `usertests orphanstorm` passed 15 times of 15 on a
  two-core host with the spinner.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Iterator

import pytest

from tern.bench.icount import ICOUNT_ARGS
from tern.grade.grader import usable_cores
from tern.machine import PANIC, TRAP, Machine


RUNS = 10
RESULT = re.compile(r"(?m)^test orphanstorm: (OK|FAILED.*)$")
PAGES = re.compile(r"(?m)^free pages: before (\d+) after (\d+)$")


@pytest.fixture
def host_busy() -> Iterator[None]:
    """A process that spins on the host for the length of the test, unless pytest runs as
    many workers as this process may use cores or more (`make test` does): the others keep
    the host busy then, and a spinner would only take their CPU (15 to 19 s of it)."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) >= usable_cores():
        yield
        return
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


@pytest.mark.slow  # about half a minute
def test_orphanstorm_on_a_busy_host(boot, host_busy: None) -> None:
    m: Machine = boot(3)
    for run in range(1, RUNS + 1):
        out = m.run("usertests orphanstorm", timeout=180, failures=(PANIC, TRAP))
        result = RESULT.search(out)
        assert result is not None, f"run {run} of {RUNS}: no result line:\n{out}"
        assert result.group(1) == "OK", f"run {run} of {RUNS}: {result.group(0)}"
        pages = PAGES.search(out)
        assert pages is not None and pages.group(1) == pages.group(2), (
            f"run {run} of {RUNS}: pages were lost: {pages.group(0) if pages else out}")
    print(f"usertests orphanstorm passed {RUNS} times in a row at CPUS=3 with the host busy")
    m.assert_no_failures()


def test_fork_waits_for_init_on_a_table_full_of_zombie_orphans() -> None:
    """user/tests/tforkfull.cc on one hart under -icount, where it can arrange the case
    exactly: a fork that finds every slot taken, some by zombies only init can free, waits for
    init and succeeds; one that finds the table full of live processes fails at once. Under
    -icount the time slices end at the same instructions on every run, so no preemption
    the host caused can let init reap first. Unlike the storm, this fails every time
    without the wait (allocproc_for_fork)."""
    with Machine(1, name="test_orphans.tforkfull", extra_args=ICOUNT_ARGS) as m:
        m.boot()
        out = m.run("tforkfull", timeout=60, failures=(PANIC, TRAP))
        assert "tforkfull: FAIL" not in out and re.search(r"(?m)^tforkfull: ok$", out), out
        m.assert_no_failures()
