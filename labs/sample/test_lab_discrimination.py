"""Proof that the sample lab's grade tests tell a right solution from wrong ones (the checks
are tern/discrimination.py's, the same as the profile lab's).

* The starter (`make starter LAB=sample`, built on our objects): it builds and boots, passes
  the ordinary tests of the boot, the utilities and the shell, and fails every test of
  labs/sample/test_lab_sample.py. Its sampler takes no sample, so it scores 0.
* Mutants (labs/sample/mutants/*.patch), one mistake each, in the clock (late ticks not
  counted, or sampled in a burst, the deadline not armed), the walks (no leaf rule, a caller's frame
  pointer followed down the stack, a page-table entry used unchecked, kernel-only pages
  read), the record (a slot claimed without an atomic, a full array overwritten or its
  drops not counted, a clear that does not wait for samples in flight) and the cost (a
  page walk for every word). Each names the test that catches it (`Caught by: test_...`),
  and that test must fail on one of its own assertions.

The late ticks are made by the guest, repeatably: on a one-hart machine under -icount,
pstall has the kernel keep interrupts off for 1 ms at a time (profile(2)'s PROF_STALL), so
the burst mutant meets the same late ticks on every run, whatever the host's load.

Each case's line is in the terminal summary and in build/grade-logs/lab-discrimination/
(files named sample-...). Slow, like the profile lab's; spread it with

    /usr/bin/python3 -m pytest -n 2 labs/sample/test_lab_discrimination.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tern import discrimination as d

pytestmark = pytest.mark.slow

LAB_TESTS = "labs/sample/test_lab_sample.py"
MUTANTS = d.mutants(Path(__file__).resolve().parent)
STARTER_SMOKE = d.STARTER_SMOKE + ["tests/qemu/test_shell.py"]


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from d.starter_tree("sample", tmp_path_factory)


@pytest.mark.xdist_group("sample-starter")  # one build of the starter
def test_starter_passes_ordinary_tests(starter: Path, record_property) -> None:
    d.check_starter_passes(starter, STARTER_SMOKE, "sample-starter-ordinary", record_property)


@pytest.mark.xdist_group("sample-starter")  # one build of the starter
def test_starter_fails_every_lab_test(starter: Path, record_property) -> None:
    d.check_starter_fails(starter, LAB_TESTS, "sample-starter-lab", record_property)


@pytest.mark.parametrize("patch", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_mutant_loses_points(patch: Path, tmp_path: Path, record_property) -> None:
    d.check_mutant(patch, LAB_TESTS, tmp_path, record_property, case_prefix="sample-")
