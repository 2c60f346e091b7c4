"""`make bench-smoke` inside the suite: every benchmark of tools/bench runs once, with small
sizes, so that none stops working unseen.

The smoke pass asserts nothing about the figures (tools/tern/bench/run.py); it fails when a
benchmark could not run, and so does this test, with what the bench said. It runs here, on a
worker of `make test`'s pytest, rather than after it, so that its 15 s or so of one core
fill the workers' gaps. Its figures go to build/bench/results-smoke.json.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tern.machine import REPO, timeout_scale

pytestmark = pytest.mark.slow  # started early, beside the other long tests

SMOKE_TIMEOUT = 900  # s: about 15 s alone, longer beside a full suite
# The bench's waits are fixed windows of wall time, meant for a machine it has to itself;
# beside the suite's other tests it gets a third of them or less.
SMOKE_TIMEOUT_SCALE = 3


def test_every_benchmark_runs_once() -> None:
    scale = timeout_scale() * SMOKE_TIMEOUT_SCALE
    env = {**os.environ, "BENCH_COMMAND": "make bench-smoke", "GRADE_TIMEOUT_SCALE": str(scale)}
    result = subprocess.run([sys.executable, str(REPO / "tools" / "bench"), "--smoke",
                             "--no-build"], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=SMOKE_TIMEOUT * timeout_scale())
    said = (result.stdout + result.stderr)[-4000:]
    assert result.returncode == 0, f"tools/bench --smoke exited {result.returncode}:\n{said}"
