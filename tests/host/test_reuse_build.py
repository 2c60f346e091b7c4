"""tern/discrimination.py's reuse_build: a tree written from ours (a lab's starter) gets our
build, so that only what it changes is compiled, and never an output that could hold code of
a source file it lacks. Checked on a small fake tree standing for ours."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tern import discrimination

OLD = 1_000_000_000  # our files' time, in seconds: long before the trees are written

OURS = {
    "Makefile": "all:\n",
    "kern/a.cc": "int a;\n",
    "kern/b.cc": "int b;\n",
    "kern/entry.S": "nop\n",
    "kern/kernel.ld": "SECTIONS {}\n",
    "user/bin/p.cc": "int main() {}\n",
    "user/bin/q/a.cc": "int main() {}\n",
    "user/bin/q/b.cc": "int b;\n",
    "user/lib/u.cc": "int u;\n",
    "labs/l/user/r.cc": "int main() {}\n",
    "mkfs/mkfs.cc": "int main() {}\n",
    "mkfs/image.cc": "int image;\n",
    "build/kern/a.cc.o": "a object",
    "build/kern/a.cc.d": "a deps",
    "build/kern/b.cc.o": "b object",
    "build/user/_p": "program",
    "build/user/_p.elf": "program elf",
    "build/kernel.elf": "kernel",
    "build/ksyms.bin": "symbols",
    "build/mkfs.d": "mkfs deps",
    "mkfs/mkfs": "host program",
    "fs.img": "image",
}


def write(root: Path, files: dict[str, str], when: int | None = None) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if when is not None:
            os.utime(path, (when, when))


@pytest.fixture
def ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ours"
    write(root, OURS, OLD)
    monkeypatch.setattr(discrimination, "REPO", root)
    return root


def tree_of(tmp_path: Path, changes: dict[str, str | None]) -> Path:
    """Our sources, written now, with `changes` (None: the file is left out)."""
    tree = tmp_path / "tree"
    sources = {n: t for n, t in OURS.items()
               if not n.startswith("build/") and n not in ("mkfs/mkfs", "fs.img")}
    sources.update(changes)
    write(tree, {n: t for n, t in sources.items() if t is not None})
    return tree


def test_same_sources_get_the_linked_outputs_too(ours: Path, tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"kern/a.cc": "int a = 1;\n"})
    discrimination.reuse_build(tree)
    for name in ("build/kern/a.cc.o", "build/kern/a.cc.d", "build/user/_p",
                 "build/user/_p.elf", "build/kernel.elf", "build/ksyms.bin", "build/mkfs.d",
                 "mkfs/mkfs"):
        assert (tree / name).read_text() == OURS[name], name
        assert (tree / name).stat().st_mtime == OLD, f"{name} keeps our time"
    assert not (tree / "fs.img").exists(), "fs.img is always made afresh"
    # The same files take our time; the changed one stays newer than every output.
    assert (tree / "kern/b.cc").stat().st_mtime == OLD
    assert (tree / "kern/a.cc").stat().st_mtime > OLD


# Each kind of file that goes into a link: a kernel source (C++ or assembly), the kernel's
# linker script, a library file every program links, one file of a program made of several,
# a lab's program, a file of mkfs.
LESS = ["kern/b.cc", "kern/entry.S", "kern/kernel.ld", "user/lib/u.cc", "user/bin/q/b.cc",
        "labs/l/user/r.cc", "mkfs/image.cc"]


@pytest.mark.parametrize("changes", [{name: None} for name in LESS]
                         + [{"kern/c.cc": "int c;\n"}],
                         ids=[f"without-{name}" for name in LESS] + ["a-file-more"])
def test_other_sources_get_objects_only(ours: Path, tmp_path: Path, changes: dict) -> None:
    """A tree without one of our files would keep that file's code in our output of it,
    whose time make takes as current. A tree with a file more would be linked again anyway
    (the file's object is newer than our outputs); it is turned away to keep the rule one
    line."""
    tree = tree_of(tmp_path, changes)
    discrimination.reuse_build(tree)
    assert (tree / "build/kern/a.cc.o").read_text() == OURS["build/kern/a.cc.o"]
    for name in ("build/user/_p", "build/user/_p.elf", "build/kernel.elf", "build/ksyms.bin",
                 "build/mkfs.d", "mkfs/mkfs"):
        assert not (tree / name).exists(), f"{name} was copied into a tree of other sources"


def test_another_makefile_gets_nothing(ours: Path, tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {"Makefile": "all:\n\techo other\n"})
    discrimination.reuse_build(tree)
    assert not (tree / "build").exists() and not (tree / "mkfs/mkfs").exists()
    assert (tree / "kern/a.cc").stat().st_mtime > OLD
