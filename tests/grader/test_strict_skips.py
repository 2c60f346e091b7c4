"""Skips fail under CI=true and say why otherwise (tools/tern/strict_skips.py, a pytest plugin
that the root conftest.py loads for every folder).

Two folders, this one and tests/tools, have a probe test that skips when STRICT_SKIPS_PROBE=1 and passes at
once otherwise. Here each probe runs in a pytest of its own, with and without CI=true: with
it the run must fail and give the skip's reason; without it the run passes and `-rs` prints
the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tern.machine import REPO

PROBE_REASON = "the probe skips on purpose"
PROBES = {
    "tests/grader": ["--no-build", "tests/grader/test_strict_skips.py::test_probe"],
    "tests/tools": ["tests/tools/test_strict_skips_probe.py::test_probe"],
}


def test_probe() -> None:
    if os.environ.get("STRICT_SKIPS_PROBE") == "1":
        pytest.skip(PROBE_REASON)


@pytest.mark.parametrize("ci", [False, True], ids=["local", "ci"])
@pytest.mark.parametrize("folder", sorted(PROBES))
def test_skip_fails_only_under_ci(folder: str, ci: bool) -> None:
    env = {k: v for k, v in os.environ.items()
           if k != "CI" and not k.startswith(("PYTEST_", "MAKE", "MFLAGS"))}
    env["STRICT_SKIPS_PROBE"] = "1"
    if ci:
        env["CI"] = "true"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *PROBES[folder]],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    if ci:
        assert result.returncode == 1, f"a skip under CI=true should fail the run:\n{output}"
        assert f"skips fail the run under CI=true: {PROBE_REASON}" in output, output
    else:
        assert result.returncode == 0, f"a skip outside CI should pass the run:\n{output}"
        assert "1 skipped" in output and PROBE_REASON in output, (
            f"-rs should print the skip's reason:\n{output}")
