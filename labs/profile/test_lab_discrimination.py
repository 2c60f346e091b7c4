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

import shutil
from pathlib import Path
from typing import Iterator

import pytest

from tern.discrimination import (SUMMARY_DIR, apply_patch, build, copy_tree, expected_catcher,
                                 make_starter, pytest_in, record)
from tern.machine import REPO

pytestmark = pytest.mark.slow

LAB_TESTS = "labs/profile/test_lab_profile.py"
MUTANTS = sorted((Path(__file__).resolve().parent / "mutants").glob("*.patch"))
# Ordinary tests that a starter must pass: it boots, and the shell and utilities work.
STARTER_SMOKE = ["tests/qemu/test_boot.py", "tests/qemu/test_utils.py"]


# --- The starter ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    dest = make_starter("profile", tmp_path_factory.mktemp("lab") / "starter")
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
