"""The speed lab's guard on its measurement (tools/tern/bench/speed.py): the digest of the
protected files that labs/speed/reference.toml records, and what the grade says when a tree's
files differ from it.

Each test works on a small git repository holding a copy of this tree's protected files.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tern.bench import speed

ROOT = Path(__file__).resolve().parents[2]


def git(tree: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A repository with a copy of every protected file of this tree, committed."""
    out = tmp_path / "tree"
    for name in speed.protected_files(ROOT):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, out / name)
    git(out, "init", "-q")
    git(out, "add", "-A")
    git(out, "commit", "-q", "-m", "protected files")
    return out


def test_untracked_files_do_not_count(tree: Path) -> None:
    """A build output or an editor's backup beside a workload changes nothing."""
    before = speed.digest(tree)
    (tree / "labs/speed/user/spfiles.cc~").write_text("an editor's backup\n")
    (tree / "user/lib/string.o").write_bytes(b"\x7fELF an object file")
    (tree / "user/bench/bsys.cc.orig").write_text("a patch's leftover\n")
    assert speed.digest(tree) == before
    assert speed.differences(before, tree) == []


def test_differences_name_each_file(tree: Path) -> None:
    recorded = speed.digest(tree)
    with open(tree / "labs/speed/user/spfiles.cc", "a") as f:
        f.write("// changed\n")
    (tree / "user/bench/bsys.cc").unlink()
    (tree / "user/lib/fast.cc").write_text("int fast;\n")
    git(tree, "add", "user/lib/fast.cc")
    assert speed.differences(recorded, tree) == [
        "labs/speed/user/spfiles.cc (changed)",
        "user/bench/bsys.cc (missing)",
        "user/lib/fast.cc (added)",
    ]


def test_a_tree_without_git_is_checked_for_the_recorded_files(tree: Path) -> None:
    """An uploaded or copied tree has no repository: the recorded files are checked, and a
    source file beside them that the build would compile is named, a backup is not."""
    recorded = speed.digest(tree)
    copy = tree.parent / "copy"
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"))
    (copy / "user/lib/string.cc~").write_text("an editor's backup\n")
    assert speed.differences(recorded, copy) == []
    (copy / "labs/speed/user/sppipe.cc").write_text("int main() { return 0; }\n")
    assert speed.differences(recorded, copy) == ["labs/speed/user/sppipe.cc (changed)"]
    (copy / "user/lib/fast.cc").write_text("int fast;\n")
    assert speed.differences(recorded, copy) == ["labs/speed/user/sppipe.cc (changed)",
                                                 "user/lib/fast.cc (added)"]


def test_an_untracked_source_in_a_git_tree_is_named(tree: Path) -> None:
    """The build compiles every .cc of user/lib, tracked or not."""
    recorded = speed.digest(tree)
    (tree / "user/lib/fast.cc").write_text("int fast;\n")
    assert speed.differences(recorded, tree) == ["user/lib/fast.cc (added)"]


def test_reference_records_the_protected_files_of_this_tree() -> None:
    """Else `make grade LAB=speed` refuses our own tree."""
    reference = speed.load_reference(ROOT)
    assert list(reference["digest"]) == speed.protected_files(ROOT), (
        f"run `{speed.REFERENCE_COMMAND}`")
    differ = speed.differences(reference["digest"], ROOT)
    assert not differ, f"{differ}: run `{speed.REFERENCE_COMMAND}`"


# The programs the grade runs: the gate's (labs/speed/test_lab_speed.py), the measuring one,
# and the workloads.
GRADED_PROGRAMS = ("spcheck", "usertests", "bsys",
                   *(command.split()[0] for command in speed.WORKLOADS.values()))
PROGRAM_DIRS = ("user/bin", "user/tests", "user/demo", "user/bench", "labs/speed/user")
INCLUDE = re.compile(r'(?m)^#include "([^"]+)"')


def program_sources(name: str) -> list[Path]:
    """A user program's sources (the Makefile's rule: NAME.cc or a folder NAME/)."""
    for folder in PROGRAM_DIRS:
        if (ROOT / folder / f"{name}.cc").is_file():
            return [ROOT / folder / f"{name}.cc"]
        if (ROOT / folder / name).is_dir():
            return sorted((ROOT / folder / name).glob("*.*"))
    raise AssertionError(f"no sources of {name} in {PROGRAM_DIRS}")


def included(sources: list[Path]) -> set[Path]:
    """`sources` and every file they include, transitively (user programs look in their own
    folder, user/ and kern/)."""
    seen: set[Path] = set()
    todo = list(sources)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in INCLUDE.findall(path.read_text()):
            for base in (path.parent, ROOT / "user", ROOT / "kern"):
                if (base / name).is_file():
                    todo.append((base / name).resolve())
                    break
    return seen


@pytest.mark.parametrize("program", GRADED_PROGRAMS)
def test_what_the_grade_runs_is_protected(program: str) -> None:
    """A program the gate or the measurement runs, and every header it is compiled with
    (kern/abi/param.h's NPROC among them), is in the digest: else a student could make the
    gate easier or the workload lighter instead of the kernel faster."""
    protected = set(speed.protected_files(ROOT))
    sources = included(program_sources(program) + sorted((ROOT / "user/lib").glob("*.cc")))
    loose = sorted(p.relative_to(ROOT).as_posix() for p in sources
                   if p.relative_to(ROOT).as_posix() not in protected)
    assert not loose, f"{program} is compiled from files PROTECTED leaves out: {loose}"


def test_the_kernel_limits_are_protected() -> None:
    """NPROC sizes the process table that wakeup() scans: fewer slots, a cheaper scan."""
    assert "kern/abi/param.h" in speed.protected_files(ROOT)


# What a boot on QEMU 7.2 with Sstc printed (OpenSBI's banner, then the kernel's), cut short.
BOOT = """
OpenSBI v1.1
   ____                    _____ ____ _____
Boot HART ISA Extensions  : time,sstc

tern: booting on hart 0
tern: timer: sstc
tern: 1 harts, 128 MiB memory
"""
VERSION = "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\nCopyright...\n"


def test_platform_is_read_from_the_version_and_the_boot() -> None:
    assert speed.platform(VERSION, BOOT) == {
        "qemu": "7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)", "opensbi": "v1.1",
        "timer": "sstc"}
    no_sstc = BOOT.replace("tern: timer: sstc", "tern: timer: sbi")
    assert speed.platform("", no_sstc) == {"qemu": "unknown", "opensbi": "v1.1",
                                           "timer": "sbi"}


def test_reference_records_the_platform() -> None:
    recorded = speed.load_reference(ROOT)["platform"]
    assert set(recorded) == set(speed.PLATFORM)
    assert "unknown" not in recorded.values(), recorded


def test_another_platform_is_named_in_the_note() -> None:
    recorded = speed.platform(VERSION, BOOT)
    assert speed.platform_note(recorded, dict(recorded)) == ""
    home = dict(recorded, qemu="8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)", timer="sbi")
    note = speed.platform_note(recorded, home)
    assert note == ("NOTE: another machine than the reference's (QEMU 8.2.2 (Debian "
                    "1:8.2.2+ds-0ubuntu1), not 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3); "
                    "timer sbi, not sstc)")


def test_a_machine_without_git_checks_the_recorded_files(tree: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A grading machine may have no git: the tree is then checked as one without a
    repository, not refused with an error."""
    recorded = speed.digest(tree)
    (tree / "user/bench/bsys.cc").write_text("int main() { return 0; }\n")
    monkeypatch.setenv("PATH", str(tree / "no-such-folder"))
    assert speed.differences(recorded, tree) == ["user/bench/bsys.cc (changed)"]
