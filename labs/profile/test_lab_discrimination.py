"""Proof that the profile lab's grade tests tell a right solution from wrong ones
(the checks are tern/discrimination.py's).

labs/profile/test_lab_profile.py gives our tree 100 points. That proves nothing about a student's
tree unless the same tests also fail the trees that are not right. Two kinds are checked:

* The starter (`make starter LAB=profile`, built in a temporary directory on our objects): it
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

This is slow: a build of what the starter changes and a run of the whole lab for the
starter (about a minute on a loaded two-core machine), then an incremental build, a boot and
one test for each mutant (5 to 35 s each). The cases are independent, so pytest-xdist
spreads them:

    /usr/bin/python3 -m pytest -n 2 labs/profile/test_lab_discrimination.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tern import discrimination as d

pytestmark = pytest.mark.slow

LAB_TESTS = "labs/profile/test_lab_profile.py"
MUTANTS = d.mutants(Path(__file__).resolve().parent)


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from d.starter_tree("profile", tmp_path_factory)


@pytest.mark.xdist_group("profile-starter")  # one build of the starter
def test_starter_passes_ordinary_tests(starter: Path, record_property) -> None:
    d.check_starter_passes(starter, d.STARTER_SMOKE, "starter-ordinary", record_property)


@pytest.mark.xdist_group("profile-starter")  # one build of the starter
def test_starter_fails_every_lab_test(starter: Path, record_property) -> None:
    d.check_starter_fails(starter, LAB_TESTS, "starter-lab", record_property)


@pytest.mark.parametrize("patch", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_mutant_loses_points(patch: Path, tmp_path: Path, record_property) -> None:
    d.check_mutant(patch, LAB_TESTS, tmp_path, record_property)
