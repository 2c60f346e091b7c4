"""tern/discrimination.py's grade_in: the grader it runs in a lab's starter or mutant waits as
long as this suite's own tests do (GRADE_TIMEOUT_SCALE, 1 if unset), not by the load-average
factor a grader alone on a host would take. Checked with a fake tools/grade that reports the
scale it was given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tern import discrimination

FAKE_GRADER = """\
import json, os, sys
out = sys.argv[sys.argv.index("--out") + 1]
os.makedirs(out, exist_ok=True)
scale = os.environ.get("GRADE_TIMEOUT_SCALE", "(unset)")
test = {"name": "scale", "score": 0, "max_score": 1, "output": scale}
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump({"score": 0, "tests": [test]}, f)
"""


def scale_seen(tree: Path) -> str:
    (tree / "tools").mkdir(exist_ok=True)
    (tree / "tools" / "grade").write_text(FAKE_GRADER)
    return discrimination.grade_in(tree, "fake", timeout=60).tests["scale"]["output"]


def test_grader_gets_one_when_the_suite_has_no_scale(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRADE_TIMEOUT_SCALE", raising=False)
    assert scale_seen(tmp_path) == "1"


@pytest.mark.parametrize("given, passed", [("2.5", "2.5"), ("3", "3"), ("nonsense", "1")])
def test_grader_gets_the_suites_scale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      given: str, passed: str) -> None:
    monkeypatch.setenv("GRADE_TIMEOUT_SCALE", given)
    assert scale_seen(tmp_path) == passed
    assert os.environ["GRADE_TIMEOUT_SCALE"] == given  # this process's own is left alone
