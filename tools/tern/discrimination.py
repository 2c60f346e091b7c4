"""What the labs' discrimination tests share (labs/*/test_lab_discrimination.py): building
and testing another tree, a starter or a copy of ours with a mutant applied, and reading what
its tests did.

A lab's graded tests prove something about a student's tree only if they also fail the trees
that are not right. Each lab's test_lab_discrimination.py checks that of its starter (made
with `make starter`, built on our objects) and of its mutants (labs/LAB/mutants/*.patch, each
one mistake, applied to a copy of our tree with `git apply`), with these helpers. Results go
to the terminal summary (tern/fixtures.py's tallies) and to build/grade-logs/lab-discrimination/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import pytest

from tern.machine import LOG_DIR, REPO, timeout_scale

# Ordinary tests that a starter must pass: it boots, and the shell and utilities work.
STARTER_SMOKE = ["tests/qemu/test_boot.py", "tests/qemu/test_utils.py"]
# The directories of build/ that copy_tree and reuse_build copy: the objects and programs
# of `make all`. The others (logs, other builds, benchmarks) are not needed to build.
BUILD_KEEP = {"kern", "user", "labs"}
SUMMARY_DIR = LOG_DIR / "lab-discrimination"


# --- Running builds and tests in another tree ----------------------------------------------


def clean_env() -> dict[str, str]:
    """This process's environment without what an outer make or pytest put there. CI is
    dropped too: under CI=true a skip is reported as a failure (strict_skips.py), and here
    a skip must stay a skip, which proves nothing."""
    drop = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PYTEST_CURRENT_TEST", "CI")
    return {k: v for k, v in os.environ.items()
            if k not in drop and not k.startswith("PYTEST_XDIST")}


def run(cmd: Sequence[str], cwd: Path, timeout: float,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`cmd` in `cwd`, in clean_env() with `env` added."""
    return subprocess.run(list(cmd), cwd=cwd, env={**clean_env(), **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


def build(tree: Path, timeout: float = 900) -> None:
    result = run(["make", "-s", "all"], tree, timeout)
    assert result.returncode == 0, (
        f"`make all` failed in {tree}:\n{(result.stdout + result.stderr)[-3000:]}")


@dataclass(frozen=True)
class Outcomes:
    results: dict[str, str]  # test name -> passed, failed, error or skipped
    reasons: dict[str, str]  # test name -> why it failed, erred or was skipped
    output: str

    def failed(self) -> list[str]:
        return [name for name, result in self.results.items() if result != "passed"]

    def table(self) -> str:
        return "\n".join(f"  {result:7} {name}" + (f": {self.reasons[name][:300]}"
                                                   if self.reasons.get(name) else "")
                         for name, result in self.results.items())


def verdict(phases: list[dict]) -> tuple[str, str]:
    """One test's result from its phases (tern/fixtures.py's --outcomes lines): "failed" only for
    an assertion of the test's own in the call phase; "error" for any other exception or a
    failure in setup or teardown; "skipped"; else "passed". With the reason."""
    for phase in phases:
        if phase["outcome"] == "skipped":
            return "skipped", phase["message"]
        if phase["outcome"] != "failed":
            continue
        if phase["when"] == "call" and phase["assertion"]:
            return "failed", phase["message"]
        return "error", f"{phase['exception']} in {phase['when']}: {phase['message']}"
    return "passed", ""


def pytest_in(tree: Path, files: Sequence[str], *args: str, timeout: float = 1200) -> Outcomes:
    """Run pytest on `files` of `tree` (its own tests and build), results per test."""
    record = tree / "build" / "discrimination-outcomes.jsonl"
    record.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-build",
           f"--outcomes={record}", *files, *args]
    result = run(cmd, tree, timeout)
    output = result.stdout + result.stderr
    assert record.exists(), f"pytest wrote no results in {tree}:\n{output[-3000:]}"
    phases: dict[str, list[dict]] = {}
    for line in record.read_text().splitlines():
        entry = json.loads(line)
        phases.setdefault(entry["name"], []).append(entry)
    results, reasons = {}, {}
    for name, entries in phases.items():
        results[name], reasons[name] = verdict(entries)
    return Outcomes(results, reasons, output)


def copy_tree(dest: Path) -> Path:
    """Our tree, with its build outputs (so that builds in the copy are incremental)."""
    def ignore(directory: str, names: list[str]) -> set[str]:
        skip = {".git", "__pycache__", ".pytest_cache"} & set(names)
        if Path(directory) == REPO / "build":
            skip |= {n for n in names if (REPO / "build" / n).is_dir() and n not in BUILD_KEEP}
        return skip
    shutil.copytree(REPO, dest, symlinks=True, ignore=ignore)
    return dest


def record(record_property, case: str, line: str) -> None:
    """One line of the summary: in the terminal (a tern/fixtures.py tally) and in SUMMARY_DIR."""
    record_property("tally", (line, True))
    SUMMARY_DIR.mkdir(parents=True, exist_ok=True)
    (SUMMARY_DIR / f"{case}.txt").write_text(line + "\n")


def make_starter(lab: str, dest: Path) -> Path:
    """`make starter LAB=lab DEST=dest`, built: the tree a student of `lab` starts from. It
    is built on our build (reuse_build), so only what the starter changes is compiled and
    linked again; tests/grader/test_grader.py's test_bundle_on_the_starter builds a starter
    from scratch."""
    result = run(["make", "-s", "--no-print-directory", "starter", f"LAB={lab}", f"DEST={dest}"],
                 REPO, 300)
    assert result.returncode == 0, f"`make starter` failed:\n{result.stdout}{result.stderr}"
    reuse_build(dest)
    build(dest)
    return dest


# What reuse_build also copies, beside BUILD_KEEP's folders whole, when a tree has the same
# source files as ours: the kernel's link outputs at the top of build/, and the host's mkfs
# with its dependency list. fs.img never: it is cheap to make, and lists the programs by name.
LINKED = tuple(Path("build", name) for name in (
    "kernel.pass1", "ksyms.bin", "ksyms.o", "kernel.elf", "kernel.asm", "syms.pass1",
    "syms.pass2", "mkfs.d")) + (Path("mkfs", "mkfs"),)
# Where the Makefile finds what it compiles and links (KSRCS, ULIBSRCS, UPROGSRCS, MKFSSRCS,
# the linker scripts), and the kinds of file it takes from there.
SOURCE_DIRS = ("kern", "user", "labs", "mkfs")
SOURCE_SUFFIXES = (".cc", ".S", ".h", ".ld")


def source_files(tree: Path) -> set[Path]:
    """The files of `tree` that a build compiles or links (by name, relative to it)."""
    return {path.relative_to(tree) for folder in SOURCE_DIRS if (tree / folder).is_dir()
            for path in (tree / folder).rglob("*")
            if path.suffix in SOURCE_SUFFIXES and path.is_file()}


def reuse_build(tree: Path) -> None:
    """Give a tree written from ours (a starter: every file new) our build, and to each of
    its files that is the same as ours, our file's time. make then takes our outputs from
    such files as up to date, and compiles only the files that differ, which are newer than
    any output of ours, and links again what they go into. Objects (`.o`) and their
    dependency lists (`.d`) are copied. Programs, the kernel and mkfs are copied only
    when the tree has exactly our source files: a file the tree lacked would otherwise
    leave its code in an output that make takes as current. Objects do not depend on the
    Makefile's flags, so a tree whose Makefile differs from ours is built from scratch."""
    if (tree / "Makefile").read_bytes() != (REPO / "Makefile").read_bytes():
        return
    for path in tree.rglob("*"):
        rel = path.relative_to(tree)
        if rel.parts[0] in (".git", "build") or not path.is_file() or path.is_symlink():
            continue
        ours = REPO / rel
        if ours.is_file() and ours.read_bytes() == path.read_bytes():
            st = ours.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    linked = source_files(tree) == source_files(REPO)

    def not_objects(directory: str, names: list[str]) -> set[str]:
        return {n for n in names
                if not (Path(directory) / n).is_dir() and not n.endswith((".o", ".d"))}
    for name in BUILD_KEEP:
        if (REPO / "build" / name).is_dir():
            shutil.copytree(REPO / "build" / name, tree / "build" / name, symlinks=True,
                            ignore=None if linked else not_objects, dirs_exist_ok=True)
    if linked:
        for rel in LINKED:
            if (REPO / rel).is_file():
                (tree / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / rel, tree / rel)


# --- Mutants ----------------------------------------------------------------------------------


def expected_catcher(patch: Path) -> str | None:
    match = re.search(r"(?m)^Caught by: (\w+)", patch.read_text())
    return match.group(1) if match else None


def apply_patch(patch: Path, tree: Path) -> None:
    """`git apply` (git is all a minimal Debian has; `patch` is not there), which works in
    a folder that is no repository, and reads past the patch's header lines."""
    applied = run(["git", "apply", "-p1", str(patch)], tree, 60)
    assert applied.returncode == 0, (
        f"{patch.name} no longer applies to the solution; make the same mistake again in a "
        f"fresh patch:\n{applied.stdout}{applied.stderr}")


def mutants(folder: Path) -> list[Path]:
    """The mutants of the lab whose folder is `folder`, in order."""
    return sorted((folder / "mutants").glob("*.patch"))


def header(patch: Path, key: str) -> str | None:
    """The value of a `Key: value` line of a mutant's header (the text before its diff)."""
    head = patch.read_text().split("\ndiff --git ", 1)[0]
    match = re.search(rf"(?m)^{re.escape(key)}: (.+)$", head)
    return match.group(1).strip() if match else None


@dataclass(frozen=True)
class Grade:
    score: float
    tests: dict[str, dict]  # test name -> its entry of results.json (score, status, output)
    output: str  # what the grader printed


def grade_in(tree: Path, lab: str, timeout: float = 1200) -> Grade:
    """`tools/grade --lab LAB` in `tree` (it builds first), with one worker: the score and each
    test's result, from the grader's own results.json.

    The grader's waits are stretched by this run's GRADE_TIMEOUT_SCALE (1 if unset), as
    every other test's are, not by the factor the grader takes from the load average when
    it is not set: that factor is for a grader with the host to itself, and here the load
    is this very suite's, the one its own waits are sized for. (Under `make test` it came
    to 3, and a mutant that loses a wakeup kept a worker waiting 30 s for its check's
    silence instead of 10.)"""
    out = tree / "build" / "discrimination-grade"
    shutil.rmtree(out, ignore_errors=True)
    result = run([sys.executable, str(tree / "tools" / "grade"), "--lab", lab, "-j", "1",
                  "--out", str(out)], tree, timeout,
                 env={"GRADE_TIMEOUT_SCALE": f"{timeout_scale():g}"})
    path = out / "results.json"
    assert path.exists(), (f"the grader wrote no results in {tree}:\n"
                           f"{(result.stdout + result.stderr)[-3000:]}")
    data = json.loads(path.read_text())
    return Grade(data["score"], {t["name"]: t for t in data["tests"]},
                 result.stdout + result.stderr)


# --- The checks, as each lab's test_lab_discrimination.py calls them ------------------------


def starter_tree(lab: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The body of a module fixture: lab's starter, written and built in a temporary folder."""
    dest = make_starter(lab, tmp_path_factory.mktemp("lab") / "starter")
    yield dest
    shutil.rmtree(dest, ignore_errors=True)


def check_starter_passes(starter: Path, tests: Sequence[str], case: str,
                         record_property) -> None:
    """The starter passes the ordinary `tests`."""
    outcomes = pytest_in(starter, tests)
    assert outcomes.results, f"no tests ran in the starter:\n{outcomes.output[-3000:]}"
    assert not outcomes.failed(), (
        f"the starter fails ordinary tests {outcomes.failed()}:\n{outcomes.table()}\n"
        f"{outcomes.output[-3000:]}")
    record(record_property, case, f"starter: {len(outcomes.results)} ordinary tests pass")


def check_starter_fails(starter: Path, lab_tests: str, case: str, record_property) -> None:
    """The starter fails every test of `lab_tests`, which it holds unchanged: each on an
    assertion of its own ("failed"), not by an error or a skip."""
    ours = (REPO / lab_tests).read_bytes()
    assert (starter / lab_tests).read_bytes() == ours, "the starter's lab tests differ from ours"
    outcomes = pytest_in(starter, [lab_tests])
    assert outcomes.results, f"no lab tests ran in the starter:\n{outcomes.output[-3000:]}"
    passed = [name for name, result in outcomes.results.items() if result == "passed"]
    assert not passed, (
        f"lab tests that the starter passes, so they prove nothing: {passed}\n{outcomes.table()}")
    # An error or a skip is no verdict: the test never reached its own assertion, so it
    # shows nothing about whether the starter would lose its points.
    other = [f"{name} ({result})" for name, result in outcomes.results.items()
             if result != "failed"]
    assert not other, (
        f"lab tests that do not fail on the starter with an assertion of their own, but end "
        f"in an error or a skip, which proves nothing: {other}\n{outcomes.table()}")
    record(record_property, case, f"starter: all {len(outcomes.results)} lab tests fail")


def check_mutant(patch: Path, lab_tests: str, tmp_path: Path, record_property,
                 case_prefix: str = "") -> None:
    """The test that `patch` names fails on one of its own assertions in a tree with it."""
    expected = expected_catcher(patch)
    assert expected is not None, f"{patch.name} names no test on a `Caught by: test_...` line"
    label = f"mutant {patch.stem} (caught by {expected})"
    record_property("tally", label)  # counted as caught if this test passes
    tree = copy_tree(tmp_path / "tree")
    apply_patch(patch, tree)
    build(tree)
    outcomes = pytest_in(tree, [f"{lab_tests}::{expected}"])
    shutil.rmtree(tree, ignore_errors=True)
    result = outcomes.results.get(expected)
    reason = outcomes.reasons.get(expected, "")
    assert result is not None, (
        f"{expected} did not run on mutant {patch.stem} (is it a test of {lab_tests}?):\n"
        f"{outcomes.output[-3000:]}")
    assert result != "passed", (
        f"mutant {patch.stem} loses no points: {expected}, named to catch it, passes it")
    assert result == "failed", (
        f"{expected} did not reach a verdict on mutant {patch.stem} ({result}), which proves "
        f"nothing about the mutant: {reason}\n{outcomes.output[-3000:]}")
    SUMMARY_DIR.mkdir(parents=True, exist_ok=True)
    (SUMMARY_DIR / f"{case_prefix}mutant-{patch.stem}.txt").write_text(f"{label}: {reason[:500]}\n")
