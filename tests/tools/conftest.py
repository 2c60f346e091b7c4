"""Fixtures for the tests of the profile tools (tools/prof/, tools/profconv, tools/profget).

Run them with `/usr/bin/python3 -m pytest tests/tools`. They need no QEMU and no build,
except:

* test_pprof_decode uses npm's pprof-format package as an independent reader of the pprof
  output. It is installed into build/tools-node/ on first use (about a second); the test
  is skipped only if npm is missing or cannot reach its registry, and fails then under
  `CI=true`.
* test_report's browser tests need Debian's `chromium` (`apt-get install -y chromium`) and
  are skipped, saying so, without it.
* test_profget boots tern, and is skipped unless the kernel and `expcopy` are built.

A skip fails the run under `CI=true` (grading/strict_skips.py), where everything these
tests need is installed.

The profiles used come in three kinds: data/spin.json, a real profile of `profile run
spin 2` at 200 Hz copied from the console; data/mixed.json, `profile all on` while spin and
psys ran together at 100 Hz; and synthetic ones (profile_synth.py) that reach corners
a short real run does not.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, List

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
DATA = Path(__file__).resolve().parent / "data"
PROFCONV = TOOLS / "profconv"

sys.path.insert(0, str(TOOLS))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import profile_synth  # noqa: E402


def _load_strict_skips() -> ModuleType:
    path = ROOT / "grading" / "strict_skips.py"
    spec = importlib.util.spec_from_file_location("strict_skips", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


strict_skips = _load_strict_skips()


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    outcome = yield
    strict_skips.fail_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    outcome = yield
    strict_skips.fail_skip(outcome.get_result())


PROFILES = ("spin", "mixed", "synthetic")


def load_tool(name: str) -> ModuleType:
    """The script tools/NAME (no .py suffix, so no plain import) loaded as a module."""
    loader = importlib.machinery.SourceFileLoader(name, str(TOOLS / name))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def profile_text(kind: str) -> str:
    if kind == "synthetic":
        return profile_synth.make_text(seed=1)
    return (DATA / f"{kind}.json").read_text(encoding="utf-8")


@pytest.fixture(params=PROFILES)
def any_profile(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Each profile in turn, as a file."""
    path = tmp_path / f"{request.param}.json"
    path.write_text(profile_text(request.param), encoding="utf-8")
    return path


@pytest.fixture
def spin_path() -> Path:
    return DATA / "spin.json"


@pytest.fixture
def mixed_path() -> Path:
    return DATA / "mixed.json"


def raw_samples(path: Path) -> List[Any]:
    """The samples of a profile file, read with nothing but the json module: the reference
    the converters' output is compared with."""
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def profconv() -> Callable[..., subprocess.CompletedProcess]:
    """Run tools/profconv with this interpreter; returns the completed process (bytes)."""
    def run(*args: Any, input: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(PROFCONV), *map(str, args)], input=input,
                              capture_output=True, timeout=120)
    return run
