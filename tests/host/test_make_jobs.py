"""How many jobs `make test` gives the makes it starts: TEST_JOBS when typed alone (by default
one more than the usable cores), and the outer make's own job server under `make -jN test`,
without make's "-jN forced in submake" warning (a second make with a -j of its own leaves the
job server)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def dry_run(*args: str) -> subprocess.CompletedProcess[str]:
    """`make -n ARGS` as typed at a shell, not as a sub-make of the `make test` running this
    (nor with a TEST_JOBS of the caller's: ARGS may set one)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "TEST_JOBS")}
    return subprocess.run(["make", "--no-print-directory", "-n", *args], cwd=ROOT, text=True,
                          env=env, capture_output=True, check=True, timeout=120)


def second_makes(output: str) -> list[str]:
    """The commands that start the build and the host tests' make."""
    return [line for line in output.splitlines()
            if re.match(r"^make .*( all| -C tests/host run)", line)]


def test_typed_alone_the_second_makes_take_test_jobs() -> None:
    # A variable on the command line whose value holds a -j is no -j option of make's.
    for jobs, extra in (("2", "PYTEST_ARGS=-x -jfoo"), ("3", "PYTEST_ARGS=")):
        lines = second_makes(dry_run("test-host", f"TEST_JOBS={jobs}", extra).stdout)
        assert len(lines) == 2, lines
        assert all(f" -j{jobs} " in line for line in lines), lines


def test_under_make_j_they_share_its_jobs_without_a_warning() -> None:
    run = dry_run("-j3", "test-host")
    assert "forced in submake" not in run.stderr, run.stderr
    lines = second_makes(run.stdout)
    assert len(lines) == 2, lines
    assert not any(re.search(r" -j\d", line) for line in lines), lines


def test_by_default_one_job_more_than_usable_cores() -> None:
    """TEST_JOBS defaults to the cores the grader would count (affinity, cgroup quota) plus one:
    a worker that waits on a hang or a timeout leaves its core to the others."""
    sys.path.insert(0, str(ROOT / "tools"))
    from tern.grade.grader import usable_cores
    jobs = usable_cores() + 1
    lines = second_makes(dry_run("test-host").stdout)
    assert len(lines) == 2 and all(f" -j{jobs} " in line for line in lines), (jobs, lines)
