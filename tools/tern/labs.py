"""The labs of the course: each is a folder, labs/NAME/, and says what it needs in lab.toml.

A lab's folder holds its handout (README.md), the files a student fills in (such as
answers.txt), its graded tests and their checks, its helper programs (user/) and anything
that only makes sense beside the solution (mutants/, the test that they are caught). Its
lab.toml names the files of the folder that need a rule:

    withheld = ["mutants", "test_lab_discrimination.py"]   # not in the student's starter
    student = ["answers.txt"]                              # a submission's copy is graded

The folder is a Python package (an `__init__.py`, as labs/ itself has), so that two labs may
each have a test file of the same name (test_lab_discrimination.py) and pytest still
collects both. Everything else in the folder goes to the student and, in a Gradescope submission, always
comes from the starter (so a student cannot edit the tests). tools/mkstarter and the
Gradescope bundle (tern/grade/autograder.py) read this; the grader finds a lab's tests by
its folder alone.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from tern import REPO

LABS = "labs"
DESCRIPTION = "lab.toml"


class LabError(Exception):
    """No such lab, or its lab.toml is malformed; the message says which."""


@dataclass(frozen=True)
class Lab:
    name: str
    folder: str  # relative to the tree, e.g. "labs/profile"
    withheld: tuple[str, ...]  # relative to the tree
    student: tuple[str, ...]  # relative to the tree

    def protected(self, files: list[str]) -> list[str]:
        """The lab's files among `files` (relative paths) that are not the student's."""
        return [f for f in files if f.startswith(self.folder + "/")
                and not any(f == s or f.startswith(s + "/") for s in self.student)]


def load(name: str, root: Path = REPO) -> Lab:
    """Lab NAME of the tree at `root`."""
    folder = root / LABS / name
    path = folder / DESCRIPTION
    if not path.is_file():
        known = ", ".join(names(root)) or "none"
        raise LabError(f"no lab {name!r}: {path.relative_to(root)} does not exist "
                       f"(labs: {known})")
    if not (folder / "__init__.py").is_file():
        raise LabError(f"{folder.relative_to(root)}/ has no __init__.py: each lab's folder is a "
                       "package, so that pytest tells its tests from another lab's of the "
                       "same name")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise LabError(f"{path.relative_to(root)}: {error}") from None
    lists = {}
    for key in ("withheld", "student"):
        value = data.pop(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise LabError(f"{path.relative_to(root)}: {key} must be a list of file names")
        # Withheld files are absent from a starter, by design; a student file never is.
        missing = [v for v in value if key == "student" and not (folder / v).exists()]
        if missing:
            raise LabError(f"{path.relative_to(root)}: {key} names {', '.join(missing)}, "
                           f"not in {folder.relative_to(root)}/")
        lists[key] = tuple(f"{LABS}/{name}/{v}" for v in value)
    if data:
        raise LabError(f"{path.relative_to(root)}: unknown keys {', '.join(sorted(data))}")
    return Lab(name, f"{LABS}/{name}", lists["withheld"], lists["student"])


def names(root: Path = REPO) -> list[str]:
    """The labs of the tree: the folders of labs/ that have a lab.toml."""
    base = root / LABS
    return sorted(p.parent.name for p in base.glob(f"*/{DESCRIPTION}")) if base.is_dir() else []
