"""The habits the Makefile enforces: `make format-check` finds unformatted C++ and names it,
`make format` fixes it, and `make compdb` (tools/compdb) writes a compile_commands.json that
covers every C++ and assembly file of the tree with flags that really compile it.

The compile check tries a random sample of the entries (with -fsyntax-only, so nothing is
written); the seed is TERN_TEST_SEED if set, else random, and is printed with the sample size.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = 8

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


def sources() -> set[str]:
    """Every file the build compiles: .cc and .S in the kernel, user programs, lab programs,
    mkfs, and the GoogleTest tests."""
    found = set()
    for folder in ["kern", "user", "mkfs", *[str(p) for p in ROOT.glob("labs/*/user")]]:
        for suffix in ("*.cc", "*.S"):
            found |= {str(p) for p in (ROOT / folder).rglob(suffix)}
    found |= {str(p) for p in (ROOT / "tests/host").glob("*_test.cc")}
    return found


def test_compdb_covers_every_source_with_flags_that_compile_it(tmp_path: Path) -> None:
    out = tmp_path / "compile_commands.json"
    r = subprocess.run([str(ROOT / "tools/compdb"), str(out)], cwd=ROOT, text=True,
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    db = json.loads(out.read_text())
    files = [e["file"] for e in db]
    assert len(files) == len(set(files)), "a file has two entries"
    assert set(files) == sources()

    # The kernel's and the user programs' flags differ where it matters: each sees its own lib/.
    by_file = {e["file"]: e for e in db}
    assert "-Iuser" in by_file[str(ROOT / "user/bin/cat.cc")]["arguments"]
    assert "-Iuser" not in by_file[str(ROOT / "kern/fs/fs.cc")]["arguments"]

    seed = int(os.environ.get("TERN_TEST_SEED") or random.randrange(1 << 32))
    print(f"seed {seed} (TERN_TEST_SEED={seed} repeats it), {SAMPLE} of {len(db)} entries")
    for e in random.Random(seed).sample(db, SAMPLE):
        # The entry's own command, told to write nothing: no object, no dependency file.
        args, words = [], iter(e["arguments"])
        for word in words:
            if word in ("-o", "-MF"):
                next(words)
            elif word not in ("-c", "-MMD", "-MP"):
                args.append(word)
        r = subprocess.run([*args, "-fsyntax-only"], cwd=e["directory"], text=True,
                           capture_output=True, timeout=300)
        assert r.returncode == 0, f"{e['file']}: {' '.join(args)}\n{r.stderr[-2000:]}"
