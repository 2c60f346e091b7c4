"""Fixtures for the tests of the profile tools (tools/tern/prof/, tools/profconv, tools/profget).

Run them with `/usr/bin/python3 -m pytest tests/tools`. They need no QEMU and no build,
except:

* test_pprof_decode uses npm's pprof-format package as an independent reader of the pprof
  output. It is installed into build/tools-node/ on first use (about a second); the test
  is skipped only if npm is missing or cannot reach its registry, and fails then under
  `CI=true`.
* test_report's browser tests need Debian's `chromium` (`apt-get install -y chromium`) and
  are skipped, saying so, without it. They share one Chromium, driven over the DevTools
  protocol (browser.py), each check in a tab of its own.
* test_profget boots tern, and is skipped unless the kernel and `expcopy` are built.

A skip fails the run under `CI=true` (tools/tern/strict_skips.py), where everything these
tests need is installed.

The profiles used come in four kinds: data/spin.json, a real profile of `profile run
spin 2` at 200 Hz copied from the console; data/mixed.json, `profile all on` while spin and
psys ran together at 100 Hz; data/waits.json, 80 consecutive samples of `profile run psys 2`
at 1000 Hz on three harts, most of them wait samples ("mode":"wait", "wchan":"disk");
data/bytewise.json, the first samples of `profile run bytewise 32` at 10,000 Hz on one hart
under -icount (tests/qemu/test_profile_skid.py's run), half of them held off by disabled
interrupts ("irqoff"); and synthetic ones (profile_synth.py) that reach corners a short real
run does not. The exports' tests (export_profile) take data/waits.json too, and the
`profconv` fixture converts every sample (`--cpu both`), so that each output can be checked
against the whole JSON.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from samples import DATA, EXPORT_PROFILES, PROFCONV, PROFILES, profile_text



@pytest.fixture(params=PROFILES)
def any_profile(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Each profile in turn, as a file."""
    path = tmp_path / f"{request.param}.json"
    path.write_text(profile_text(request.param), encoding="utf-8")
    return path


@pytest.fixture(params=EXPORT_PROFILES)
def export_profile(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Each profile in turn, and one with wait samples, as a file: for the exports."""
    path = tmp_path / f"{request.param}.json"
    path.write_text(profile_text(request.param), encoding="utf-8")
    return path


@pytest.fixture
def spin_path() -> Path:
    return DATA / "spin.json"


@pytest.fixture
def mixed_path() -> Path:
    return DATA / "mixed.json"


@pytest.fixture
def bytewise_path() -> Path:
    return DATA / "bytewise.json"


@pytest.fixture
def profconv() -> Callable[..., subprocess.CompletedProcess]:
    """Run tools/profconv with this interpreter; returns the completed process (bytes)."""
    def run(*args: Any, input: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(PROFCONV), "--cpu", "both", *map(str, args)],
                              input=input, capture_output=True, timeout=120)
    return run
