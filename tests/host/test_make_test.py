"""`make test` runs every Python test in one pytest: the folders it names must collect together.

The folders have no __init__.py, so pytest imports each test file under its bare name, and two
files of one name in two folders would stop the whole collection ("import file mismatch").
This asks `make -n test` for the folders and collects them as that pytest would.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def pytest_folders() -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    dry = subprocess.run(["make", "--no-print-directory", "-n", "test"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    text = dry.stdout.replace("\\\n", " ")
    runs = [line for line in text.splitlines() if " -m pytest " in line]
    assert len(runs) == 1, runs
    return [word for word in runs[0].split() if (ROOT / word).is_dir()]


def test_one_pytest_collects_every_test_file() -> None:
    folders = pytest_folders()
    assert {"tests/host", "tests/qemu", "labs"} <= set(folders), folders
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}  # no -k, -m here
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                             "-p", "no:xdist", "-p", "no:cacheprovider", *folders],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    collected = {m.group(1) for m in re.finditer(r"(?m)^([^\s:]+\.py)::", result.stdout)}
    expected = {str(p.relative_to(ROOT)) for folder in folders
                for p in (ROOT / folder).rglob("test_*.py")}
    print(f"{len(expected)} test files in {folders}")
    assert collected == expected, (sorted(expected - collected), sorted(collected - expected))
