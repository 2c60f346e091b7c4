"""Proof that the profile lab's grade tests tell a right solution from wrong ones.

labs/profile/test_lab_profile.py gives our tree 100 points. That proves nothing about a student's
tree unless the same tests also fail the trees that are not right. Two kinds are checked:

* The starter (`make starter LAB=profile`, built from scratch in a temporary directory): it
  must build and boot, pass a few ordinary tests (the boot, some utilities), and fail every
  lab test, with the lab's tests copied unchanged into it.
* Mutants (labs/profile/mutants/*.patch): each patch makes one mistake a student could make, in a
  copy of our tree (the file ignores the read offset, the call accepts a pid that does not
  exist, return addresses looked up as they are, a full array overwriting old samples, no
  comma between samples, ...). A patch names the lab test that must catch it (`Caught by:
  test_...`), and is applied with `git apply`. That test alone runs, and the mutant counts
  as caught only if it fails on one of its own checks: an assertion. An error (a machine
  that did not boot or a command that timed out, a fixture that failed, a skip) proves
  nothing about the mutant, and fails this check with its reason; so does a named test
  that passes.

The result of each case goes in the terminal summary (through tools/tern/fixtures.py's tallies):

    mutant ra-lookup (caught by test_symbols_at_return_address): 1/1

(0/1 when the named test passed the mutant or did not reach a verdict on it)

and in build/grade-logs/lab-discrimination/, one file per case.

This is slow: a build from scratch and a run of the whole lab for the starter (about three
minutes on a loaded two-core machine), then an incremental build, a boot and one test for each
mutant (15 to 60 s each). The cases are independent, so pytest-xdist spreads them:

    /usr/bin/python3 -m pytest -n 2 labs/profile/test_lab_discrimination.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import pytest

from tern.machine import LOG_DIR, REPO

pytestmark = pytest.mark.slow

LAB_TESTS = "labs/profile/test_lab_profile.py"
MUTANTS = sorted((Path(__file__).resolve().parent / "mutants").glob("*.patch"))
# Ordinary tests that a starter must pass: it boots, and the shell and utilities work.
STARTER_SMOKE = ["tests/qemu/test_boot.py", "tests/qemu/test_utils.py"]
# The directories of build/ that copy_tree copies: the objects of `make all`. The others
# (logs, other builds, benchmarks) are not needed to build.
BUILD_KEEP = {"kern", "user"}
SUMMARY_DIR = LOG_DIR / "lab-discrimination"


# --- Running builds and tests in another tree ----------------------------------------------


def clean_env() -> dict[str, str]:
    """This process's environment without what an outer make or pytest put there. CI is
    dropped too: under CI=true a skip is reported as a failure (strict_skips.py), and here
    a skip must stay a skip, which proves nothing."""
    drop = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PYTEST_CURRENT_TEST", "CI")
    return {k: v for k, v in os.environ.items()
            if k not in drop and not k.startswith("PYTEST_XDIST")}


def run(cmd: Sequence[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), cwd=cwd, env=clean_env(), capture_output=True, text=True,
                          timeout=timeout)


def build(tree: Path, timeout: float = 900) -> None:
    result = run(["make", "-s", "all"], tree, timeout)
    assert result.returncode == 0, (
        f"`make all` failed in {tree}:\n{(result.stdout + result.stderr)[-3000:]}")


@dataclass(frozen=True)
class Outcomes:
    results: dict[str, str]  # test name -> passed, failed, error or skipped
    reasons: dict[str, str]  # test name -> why it failed, erred or was skipped
    output: str

    def failed(self) -> list[str]:
        return [name for name, result in self.results.items() if result != "passed"]

    def table(self) -> str:
        return "\n".join(f"  {result:7} {name}" + (f": {self.reasons[name][:300]}"
                                                   if self.reasons.get(name) else "")
                         for name, result in self.results.items())


def verdict(phases: list[dict]) -> tuple[str, str]:
    """One test's result from its phases (tern/fixtures.py's --outcomes lines): "failed" only for
    an assertion of the test's own in the call phase; "error" for any other exception or a
    failure in setup or teardown; "skipped"; else "passed". With the reason."""
    for phase in phases:
        if phase["outcome"] == "skipped":
            return "skipped", phase["message"]
        if phase["outcome"] != "failed":
            continue
        if phase["when"] == "call" and phase["assertion"]:
            return "failed", phase["message"]
        return "error", f"{phase['exception']} in {phase['when']}: {phase['message']}"
    return "passed", ""


def pytest_in(tree: Path, files: Sequence[str], *args: str, timeout: float = 1200) -> Outcomes:
    """Run pytest on `files` of `tree` (its own tests and build), results per test."""
    record = tree / "build" / "discrimination-outcomes.jsonl"
    record.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-build",
           f"--outcomes={record}", *files, *args]
    result = run(cmd, tree, timeout)
    output = result.stdout + result.stderr
    assert record.exists(), f"pytest wrote no results in {tree}:\n{output[-3000:]}"
    phases: dict[str, list[dict]] = {}
    for line in record.read_text().splitlines():
        entry = json.loads(line)
        phases.setdefault(entry["name"], []).append(entry)
    results, reasons = {}, {}
    for name, entries in phases.items():
        results[name], reasons[name] = verdict(entries)
    return Outcomes(results, reasons, output)


def copy_tree(dest: Path) -> Path:
    """Our tree, with its build outputs (so that builds in the copy are incremental)."""
    def ignore(directory: str, names: list[str]) -> set[str]:
        skip = {".git", "__pycache__", ".pytest_cache"} & set(names)
        if Path(directory) == REPO / "build":
            skip |= {n for n in names if (REPO / "build" / n).is_dir() and n not in BUILD_KEEP}
        return skip
    shutil.copytree(REPO, dest, symlinks=True, ignore=ignore)
    return dest


def record(record_property, case: str, line: str) -> None:
    """One line of the summary: in the terminal (a tern/fixtures.py tally) and in SUMMARY_DIR."""
    record_property("tally", (line, True))
    SUMMARY_DIR.mkdir(parents=True, exist_ok=True)
    (SUMMARY_DIR / f"{case}.txt").write_text(line + "\n")


# --- The starter ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    dest = tmp_path_factory.mktemp("lab") / "starter"
    result = run(["make", "-s", "--no-print-directory", "starter", "LAB=profile", f"DEST={dest}"],
                 REPO, 300)
    assert result.returncode == 0, f"`make starter` failed:\n{result.stdout}{result.stderr}"
    build(dest)
    yield dest
    shutil.rmtree(dest, ignore_errors=True)


def test_starter_passes_ordinary_tests(starter: Path, record_property) -> None:
    outcomes = pytest_in(starter, STARTER_SMOKE)
    assert outcomes.results, f"no tests ran in the starter:\n{outcomes.output[-3000:]}"
    assert not outcomes.failed(), (
        f"the starter fails ordinary tests {outcomes.failed()}:\n{outcomes.table()}\n"
        f"{outcomes.output[-3000:]}")
    record(record_property, "starter-ordinary",
           f"starter: {len(outcomes.results)} ordinary tests pass")


def test_starter_fails_every_lab_test(starter: Path, record_property) -> None:
    ours = (REPO / LAB_TESTS).read_bytes()
    assert (starter / LAB_TESTS).read_bytes() == ours, "the starter's lab tests differ from ours"
    outcomes = pytest_in(starter, [LAB_TESTS])
    assert outcomes.results, f"no lab tests ran in the starter:\n{outcomes.output[-3000:]}"
    passed = [name for name, result in outcomes.results.items() if result == "passed"]
    assert not passed, (
        f"lab tests that the starter passes, so they prove nothing: {passed}\n{outcomes.table()}")
    record(record_property, "starter-lab", f"starter: all {len(outcomes.results)} lab tests fail")


# --- Mutants ----------------------------------------------------------------------------------


def expected_catcher(patch: Path) -> str | None:
    match = re.search(r"(?m)^Caught by: (\w+)", patch.read_text())
    return match.group(1) if match else None


def apply_patch(patch: Path, tree: Path) -> None:
    """`git apply` (git is all a minimal Debian has; `patch` is not there), which works in
    a folder that is no repository, and reads past the patch's header lines."""
    applied = run(["git", "apply", "-p1", str(patch)], tree, 60)
    assert applied.returncode == 0, (
        f"{patch.name} no longer applies to the solution; make the same mistake again in a "
        f"fresh patch:\n{applied.stdout}{applied.stderr}")


@pytest.mark.parametrize("patch", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_mutant_loses_points(patch: Path, tmp_path: Path, record_property) -> None:
    expected = expected_catcher(patch)
    assert expected is not None, f"{patch.name} names no test on a `Caught by: test_...` line"
    label = f"mutant {patch.stem} (caught by {expected})"
    record_property("tally", label)  # counted as caught if this test passes
    tree = copy_tree(tmp_path / "tree")
    apply_patch(patch, tree)
    build(tree)
    outcomes = pytest_in(tree, [f"{LAB_TESTS}::{expected}"])
    shutil.rmtree(tree, ignore_errors=True)
    result = outcomes.results.get(expected)
    reason = outcomes.reasons.get(expected, "")
    assert result is not None, (
        f"{expected} did not run on mutant {patch.stem} (is it a test of {LAB_TESTS}?):\n"
        f"{outcomes.output[-3000:]}")
    assert result != "passed", (
        f"mutant {patch.stem} loses no points: {expected}, named to catch it, passes it")
    assert result == "failed", (
        f"{expected} did not reach a verdict on mutant {patch.stem} ({result}), which proves "
        f"nothing about the mutant: {reason}\n{outcomes.output[-3000:]}")
    SUMMARY_DIR.mkdir(parents=True, exist_ok=True)
    (SUMMARY_DIR / f"mutant-{patch.stem}.txt").write_text(f"{label}: {reason[:500]}\n")
