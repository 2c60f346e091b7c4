"""`make help` tells the truth: every target it lists is a rule of the Makefile, every
target the Makefile marks for users is listed, and every `make TARGET` the README and CI
name is one of them."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make(*args: str) -> str:
    # As typed at a shell: not as a sub-make of the `make test` that runs this (whose flags,
    # such as -j and -w, would change what make prints).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, text=True, env=env,
                          capture_output=True, check=True, timeout=60).stdout


def helped() -> dict[str, str]:
    lines = make("help").splitlines()
    assert lines[0].startswith("make TARGET")
    found = {}
    for line in lines[1:]:
        target, _, text = line.strip().partition(" ")
        found[target] = text.strip()
    return found


def rules() -> set[str]:
    """The Makefile's explicit targets, from make's own database (nothing is run)."""
    database = subprocess.run(["make", "-pRrq", "--no-print-directory", "-f", "Makefile",
                               "no-such-target-here"], cwd=ROOT, text=True,
                              capture_output=True, timeout=60).stdout
    targets, not_target = set(), False
    for line in database.splitlines():
        if line.startswith("# Not a target"):
            not_target = True
            continue
        found = re.match(r"^([a-z][a-z0-9-]*):", line)
        if found and not not_target:
            targets.add(found.group(1))
        not_target = False
    return targets


def test_help_lists_real_targets_with_text() -> None:
    listed, real = helped(), rules()
    assert {"qemu", "test", "deps", "help", "clean", "all"} <= set(listed)
    assert set(listed) <= real, set(listed) - real
    assert all(listed.values()), listed


def test_named_targets_are_listed() -> None:
    """`make X` in the README, the Makefile's own comments and .ci/run names a listed target."""
    listed = set(helped())
    for path in (ROOT / "README.md", ROOT / ".ci" / "run", ROOT / "Makefile"):
        named = set(re.findall(r"\bmake ([a-z][a-z0-9-]*)\b", path.read_text()))
        named -= {"a", "the", "it", "sure", "its", "each"}  # English after the word "make"
        assert named <= listed, (path.name, named - listed)
