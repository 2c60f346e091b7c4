"""Orphans are reaped as fast as they are made, even when the host is busy.

xv6's own `usertests -q` once failed on tern at CPUS=3 on a loaded host, in `reparent`: a
child's fork() of a grandchild returned -1. `usertests orphanstorm` has the same shape
(hundreds of children that fork a grandchild and exit at once, the grandchild exiting at once
too, while the master waits for each child), so every round leaves an orphan that only init's
wait() frees. Here it runs 50 times in a row at CPUS=3 while a process on the host spins, so
that QEMU's harts are descheduled at random moments; every run must pass, and the kernel's
free-page count must come back.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Iterator

import pytest

from tern.machine import PANIC, TRAP, Machine

pytestmark = pytest.mark.slow  # about two and a half minutes

RUNS = 50
RESULT = re.compile(r"(?m)^test orphanstorm: (OK|FAILED.*)$")
PAGES = re.compile(r"(?m)^free pages: before (\d+) after (\d+)$")


@pytest.fixture
def host_busy() -> Iterator[None]:
    """A process that spins on the host for the length of the test."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def test_orphanstorm_50_times_on_a_busy_host(boot, host_busy: None) -> None:
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
