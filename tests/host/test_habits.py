"""The habits the Makefile enforces: `make format-check` finds unformatted C++ and names it,
and `make format` fixes it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# One function, written as no formatter would leave it.
UNFORMATTED = "int   add(int a,int b){return a+\n b;}\n"


def make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)


def test_format_check_names_the_unformatted_file_and_format_fixes_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cc"
    good = tmp_path / "good.cc"
    bad.write_text(UNFORMATTED)
    good.write_text("int add(int a, int b) { return a + b; }\n")

    r = make("format-check", f"FORMAT_SRCS={good}")
    assert r.returncode == 0, r.stderr

    r = make("format-check", f"FORMAT_SRCS={good} {bad}")
    assert r.returncode != 0
    assert str(bad) in r.stderr and str(good) not in r.stderr, r.stderr
    assert "make format" in r.stderr

    r = make("format", f"FORMAT_SRCS={bad}")
    assert r.returncode == 0, r.stderr
    assert bad.read_text() == good.read_text()
    assert make("format-check", f"FORMAT_SRCS={bad}").returncode == 0


def test_the_tree_is_formatted() -> None:
    r = make("format-check")
    assert r.returncode == 0, r.stderr[-3000:]
