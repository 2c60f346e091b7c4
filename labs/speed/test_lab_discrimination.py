"""Proof that the speed lab's grade tests tell a fast and right kernel from the others.

labs/speed/test_lab_speed.py gives our tree 100 points (`make grade LAB=speed`). Here:

* The starter (`make starter LAB=speed`, built on our objects): the grader gives it 0, every
  test failing on its speedup (about 1.0x), not on the correctness gate: the starter is
  slow but right. Its counts, measured in the starter with its own copy of the measuring
  code, equal those recorded in labs/speed/reference.toml, and so does its digest: the
  reference is current (remake it with `tools/speed --reference` when this fails).
* Our tree counts the same twice: two runs, each on a freshly booted machine.
* Mutants (labs/speed/mutants/*.patch), applied to a copy of our tree: each header says the
  score the grader must give it (`Score: N`), and for a mutant that breaks the kernel or the
  measurement, what every failing test must say (`Says: ...`, such as the name of the check
  that failed). So a wakeup that loses a waiter scores 0 and says which check caught it, and
  a partial fix scores part of the points.

The results go to the terminal summary and to build/grade-logs/lab-discrimination/.
Slow (a starter built, then a build and a grader run per mutant):

    /usr/bin/python3 -m pytest -n 2 labs/speed/test_lab_discrimination.py
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from tern.bench import speed
from tern.discrimination import (SUMMARY_DIR, apply_patch, copy_tree, grade_in, header,
                                 record, run, starter_tree)
from tern.machine import REPO

pytestmark = pytest.mark.slow

LAB_TESTS = "labs/speed/test_lab_speed.py"
MUTANTS = sorted((Path(__file__).resolve().parent / "mutants").glob("*.patch"))
# What a speed test says when the gate let it through and the speedup fell short.
SHORT = "needs"


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from starter_tree("speed", tmp_path_factory)


@pytest.mark.xdist_group("speed-starter")  # one build of the starter
def test_starter_scores_zero(starter: Path, record_property) -> None:
    assert (starter / LAB_TESTS).read_bytes() == (REPO / LAB_TESTS).read_bytes(), (
        "the starter's lab tests differ from ours")
    grade = grade_in(starter, "speed")
    assert grade.tests, f"no lab tests ran in the starter:\n{grade.output[-3000:]}"
    assert grade.score == 0, f"the starter scores {grade.score}:\n{grade.output[-3000:]}"
    wrong = {name: t["output"] for name, t in grade.tests.items() if SHORT not in t["output"]}
    assert not wrong, f"starter tests that failed for another reason than speed: {wrong}"
    record(record_property, "starter-speed",
           f"starter: 0/100, all {len(grade.tests)} speed tests short of their speedup")


@pytest.mark.xdist_group("speed-starter")  # one build of the starter
def test_reference_is_current(starter: Path, record_property) -> None:
    reference = speed.load_reference()
    assert list(reference["digest"]) == speed.protected_files(), (
        "the reference's digest is not of the files PROTECTED names: "
        f"run `{speed.REFERENCE_COMMAND}`")
    differ = speed.differences(reference["digest"], starter)
    assert not differ, (
        f"the starter's protected files differ from the reference's digest: {differ}: "
        f"run `{speed.REFERENCE_COMMAND}`")
    result = run([str(starter / "tools" / "speed"), "--print"], starter, 600)
    assert result.returncode == 0, f"tools/speed failed in the starter:\n{result.stderr}"
    measured = json.loads(result.stdout)
    counts = measured["counts"]
    assert measured["platform"] == reference["platform"], (
        f"this machine is not the one the reference was counted on: "
        f"{speed.platform_note(reference['platform'], measured['platform'])}; run "
        f"`{speed.REFERENCE_COMMAND}` if the course's machine changed")
    assert counts == reference["starter"], (
        f"the starter counts {counts}, the reference says {reference['starter']}: run "
        f"`{speed.REFERENCE_COMMAND}` (the kernel changed outside the lab's regions?)")
    record(record_property, "reference", f"reference: the starter counts {counts} again")


def test_counts_repeat(record_property) -> None:
    first, second = speed.measure(name="speed-repeat-1"), speed.measure(name="speed-repeat-2")
    assert first == second, f"two runs of our tree counted differently: {first} and {second}"
    record(record_property, "repeat", f"our counts, twice: {first}")


@pytest.mark.parametrize("patch", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_mutant_scores(patch: Path, tmp_path: Path, record_property) -> None:
    expected = header(patch, "Score")
    assert expected is not None, f"{patch.name} has no `Score: N` line"
    says = header(patch, "Says")
    label = f"mutant {patch.stem} (scores {expected}" + (f", says {says!r})" if says else ")")
    record_property("tally", label)  # counted as right if this test passes
    tree = copy_tree(tmp_path / "tree")
    apply_patch(patch, tree)
    grade = grade_in(tree, "speed")
    shutil.rmtree(tree, ignore_errors=True)
    summary = "\n".join(f"  {t['score']}/{t['max_score']} {name}: {t['output'][:300]}"
                        for name, t in grade.tests.items())
    assert grade.score == float(expected), (
        f"mutant {patch.stem} scores {grade.score}, not {expected}:\n{summary}")
    if says is not None:
        silent = [name for name, t in grade.tests.items()
                  if t["score"] < t["max_score"] and says not in t["output"]]
        assert not silent, f"tests that do not say {says!r}: {silent}\n{summary}"
    SUMMARY_DIR.mkdir(parents=True, exist_ok=True)
    (SUMMARY_DIR / f"speed-mutant-{patch.stem}.txt").write_text(f"{label}:\n{summary}\n")
