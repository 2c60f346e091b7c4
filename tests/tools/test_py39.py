"""The tools must run on any Python from 3.9 on, though the machines here have 3.11.

A newer interpreter happily runs code that an older one rejects, so these checks look at the
source instead: every module parses with Python 3.9's grammar, annotations are never
evaluated at run time (so `int | None` in one is harmless), and none of the newer library
features that are easy to reach for by habit is used.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import List

import pytest

from samples import TOOLS

PACKAGE = TOOLS / "tern"
SOURCES: List[Path] = ([PACKAGE / "__init__.py"] + sorted((PACKAGE / "prof").glob("*.py"))
                       + [TOOLS / "profconv"])
# The scripts that boot QEMU need more of the library (and pexpect), but the same Python.
SCRIPTS: List[Path] = [TOOLS / "demo", TOOLS / "profget", PACKAGE / "demo.py",
                       PACKAGE / "profget.py"]

# Library features newer than 3.9, found by their spelling.
NEWER = {
    r"\bzip\([^)]*strict=": "zip(strict=) is 3.10",
    r"dataclass\([^)]*\b(slots|kw_only)=": "dataclass(slots=, kw_only=) is 3.10",
    r"\.bit_count\(": "int.bit_count() is 3.10",
    r"\bimport tomllib\b": "tomllib is 3.11",
    r"\bExceptionGroup\b|\bexcept\*": "exception groups are 3.11",
    r"\bfrom typing import[^\n]*\b(TypeAlias|ParamSpec|Self|Never)\b": "typing names of 3.10+",
    r"\bpairwise\(": "itertools.pairwise is 3.10",
}


@pytest.mark.parametrize("path", SOURCES + SCRIPTS, ids=lambda p: str(p.relative_to(TOOLS)))
def test_python39_compatible(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=str(path), feature_version=(3, 9))
    for node in ast.walk(tree):
        assert not isinstance(node, getattr(ast, "Match", ())), f"{path}: match is 3.10"
    has_annotations = any(
        isinstance(n, (ast.AnnAssign, ast.arg)) and getattr(n, "annotation", None) is not None
        or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns is not None
        for n in ast.walk(tree))
    if has_annotations and path.suffix == ".py":
        assert "from __future__ import annotations" in text, \
            f"{path}: annotations must not be evaluated (3.9 cannot evaluate `X | None`)"
    for pattern, why in NEWER.items():
        assert not re.search(pattern, text), f"{path}: {why}"


def optional_imports(tree: ast.AST) -> set:
    """The import statements inside a `try` that catches ImportError: the code works
    without them (lines.py without pyelftools: no source lines)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                for h in node.handlers):
            out.update(id(n) for b in node.body for n in ast.walk(b))
    return out


def test_standard_library_only() -> None:
    """The package imports nothing outside the standard library (and itself), except
    pyelftools where its absence is caught."""
    allowed = {"__future__", "argparse", "bisect", "collections", "dataclasses", "gzip",
               "html", "json", "math", "os", "pathlib", "random", "statistics", "struct",
               "sys", "time", "typing", "zlib"}
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        optional = optional_imports(tree)
        for node in ast.walk(tree):
            if id(node) in optional and isinstance(node, ast.ImportFrom) and \
                    (node.module or "").split(".")[0] == "elftools":
                continue
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [(node.module or "").split(".")[0]]
            else:
                continue
            for name in names:
                assert name in allowed or name == "tern", f"{path}: imports {name}"
