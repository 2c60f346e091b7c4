"""tools/mkstarter (tools/tern/starter.py): the marker rules, and the profile lab's starter tree it writes.

The rules are checked on small texts. The real starter is generated once (into a temporary
directory, without git, which is tested separately) and checked for what a student must
and must not get: no marker left, no identifier that only the solution uses, no file that
belongs beside the solution only, every other file unchanged, and starter code that
compiles.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tern import labs
from tern import starter as mk

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "mkstarter"

# Names that only the solution of the profile lab contains: helpers written inside the
# regions, and text of the reference answers. None may appear anywhere in the starter.
SOLUTION_ONLY = [
    "find_live",            # kern/profile/sysprofile.cc
    "attach_live_images",
    "render_sample(const Sample",  # kern/profile/report.cc
    "PIECE_MAX",
    "struct Piece",
    "SAMPLE_MAX",
    "snapshot_count",
    "want_lo",
    "run_child",            # user/bin/profile/run.cc
    "go_fd",
    "could not start profiling pid",
    "9,282,000 words",      # labs/profile/answers.txt
    "skid is the blind spot",
    "prepare is skipped",
]
# The files the lab's regions are in.
LAB_FILES = ["kern/profile/sysprofile.cc", "kern/profile/report.cc", "user/bin/profile/run.cc",
             "labs/profile/answers.txt"]
NOT_IN_STARTER = ["labs/profile/mutants", "labs/profile/test_lab_discrimination.py",
                  "tools/mkstarter", "tools/tern/starter.py", "tests/host/test_mkstarter.py",
                  "build", "fs.img", ".git"]


# --- The rules -----------------------------------------------------------------------------


def test_region_becomes_todo_and_starter_code() -> None:
    text = ("int f() {\n"
            "  // LAB demo/part BEGIN: write f\n"
            "  return 42;\n"
            "  // LAB demo/part STARTER\n"
            "  // return -1;\n"
            "  // LAB demo/part END\n"
            "}\n")
    result = mk.transform(text, "demo")
    assert result.text == "int f() {\n  // TODO(lab demo/part): write f\n  return -1;\n}\n"
    assert result.regions == {"part": 1}


def test_hash_leader_and_doubled_leader() -> None:
    text = ("# LAB demo/answers BEGIN\n"
            "the answer\n"
            "# LAB demo/answers STARTER\n"
            "# # a comment that stays a comment\n"
            "# (write here)\n"
            "#\n"
            "# LAB demo/answers END\n")
    result = mk.transform(text, "demo")
    assert result.text == "# a comment that stays a comment\n(write here)\n\n"


def test_region_without_starter_or_description_disappears() -> None:
    text = "a\n// LAB demo/x BEGIN\nsecret\n// LAB demo/x END\nb\n"
    assert mk.transform(text, "demo").text == "a\nb\n"


def test_other_labs_keep_their_solution() -> None:
    text = ("// LAB other/x BEGIN: not this one\n"
            "kept();\n"
            "// LAB other/x STARTER\n"
            "// dropped();\n"
            "// LAB other/x END\n")
    result = mk.transform(text, "demo")
    assert result.text == "kept();\n"
    assert result.regions == {}


@pytest.mark.parametrize("text, message", [
    ("// LAB d/a BEGIN\n// LAB d/b BEGIN\n// LAB d/b END\n// LAB d/a END\n", "do not nest"),
    ("// LAB d/a BEGIN\nx\n", "has no END"),
    ("// LAB d/a END\n", "without a BEGIN"),
    ("// LAB d/a BEGIN\n// LAB d/b END\n", "inside d/a"),
    ("// LAB d/a BEGIN\n// LAB d/a STARTER\nnot commented\n// LAB d/a END\n",
     "must be commented out"),
    ("// LAB d/a BEGIN\n// LAB d/a STARTER\n// LAB d/a STARTER\n// LAB d/a END\n",
     "second STARTER"),
    ("x = 1;  // LAB d/a BEGIN\n", "malformed marker"),
])
def test_malformed_markers_are_errors(text: str, message: str) -> None:
    with pytest.raises(mk.MarkerError, match=message):
        mk.transform(text, "d", "f.cc")


# --- The profile lab's starter ---------------------------------------------------------------


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("starter") / "tree"
    result = subprocess.run([sys.executable, str(TOOL), "--lab", "profile", "--dest", str(dest),
                             "--no-git"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return dest


def starter_files(starter: Path) -> list[Path]:
    return [p for p in starter.rglob("*") if p.is_file()]


def test_no_marker_left(starter: Path) -> None:
    left = [f"{p.relative_to(starter)}: {line.strip()}"
            for p in starter_files(starter)
            for line in p.read_text(errors="replace").splitlines()
            if re.search(r"\bLAB profile/\w+ (BEGIN|STARTER|END)\b", line)]
    assert not left, "markers left in the starter:\n" + "\n".join(left)


def test_no_solution_code(starter: Path) -> None:
    found = [f"{p.relative_to(starter)}: {name!r}"
             for p in starter_files(starter)
             for name in SOLUTION_ONLY if name in p.read_text(errors="replace")]
    assert not found, "solution code in the starter:\n" + "\n".join(found)


def test_solution_identifiers_are_real() -> None:
    """Each identifier of SOLUTION_ONLY is in our tree: otherwise the check above is empty."""
    ours = "".join((ROOT / f).read_text() for f in LAB_FILES)
    missing = [name for name in SOLUTION_ONLY if name not in ours]
    assert not missing, f"not in the solution any more, update SOLUTION_ONLY: {missing}"


def test_excluded_files_absent(starter: Path) -> None:
    present = [name for name in NOT_IN_STARTER if (starter / name).exists()]
    assert not present, f"the starter must not contain {present}"
    for needed in ("Makefile", "labs/profile/README.md", "labs/profile/answers.txt",
                   "labs/profile/lab.toml", "labs/profile/test_lab_profile.py",
                   "tools/tern/machine.py", "tools/grade", "kern/profile/sampler.cc"):
        assert (starter / needed).is_file(), f"the starter lacks {needed}"


def without_markers(path: Path) -> bytes:
    """Our file as a starter of another lab has it: every lab's solution kept but in a lab's
    own folder, the marker and STARTER lines gone."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    rel = path.relative_to(ROOT).as_posix()
    return mk.transform(text, "", rel).text.encode("utf-8") if "LAB " in text else data


def test_other_files_unchanged(starter: Path) -> None:
    changed = [str(p.relative_to(starter)) for p in starter_files(starter)
               if str(p.relative_to(starter)) not in LAB_FILES
               and p.read_bytes() != without_markers(ROOT / p.relative_to(starter))]
    assert not changed, f"files outside the lab's regions differ from ours: {changed}"
    differs = [f for f in LAB_FILES if (starter / f).read_bytes() == (ROOT / f).read_bytes()]
    assert not differs, f"the lab's files should have their regions replaced: {differs}"


def test_todos_and_placeholders(starter: Path) -> None:
    todos = {f: len(re.findall(r"TODO\(lab profile/\w+\)", (starter / f).read_text()))
             for f in LAB_FILES[:3]}
    assert todos == {"kern/profile/sysprofile.cc": 1, "kern/profile/report.cc": 2,
                     "user/bin/profile/run.cc": 1}, todos
    answers = (starter / "labs/profile/answers.txt").read_text()
    assert answers.count("(write your answer here)") == 3
    assert len(re.findall(r"(?m)^Answer:$", answers)) == 3


def test_starter_code_compiles(starter: Path) -> None:
    objects = ["build/kern/profile/sysprofile.cc.o", "build/kern/profile/report.cc.o",
               "build/user/bin/profile/run.cc.o"]
    result = subprocess.run(["make", "-s", *objects], cwd=starter, capture_output=True,
                            text=True)
    assert result.returncode == 0, f"the starter's code does not compile:\n{result.stderr}"


# --- The command -------------------------------------------------------------------------------


# Code and answers only the sample lab's solution holds (kern/profile/sampler.cc, walk.h,
# kern/trap/timer.cc, labs/sample/answers.txt): none may appear in its starter.
SAMPLE_SOLUTION_ONLY = ["__atomic_fetch_add(&cursor", "looks_like_fp(w8, fp, b)", "find_leaf",
                        "PTE_V | riscv::PTE_U | riscv::PTE_R", "kernel_stack_bounds(reinterpret",
                        "(now - c->next_sample) / period", "next_sample < when",
                        "while (inside[h])", "(690 - 143) / 31", "All 101 of the 166",
                        "finish_wait(s, p"]


def test_sample_starter_has_no_solution(tmp_path: Path) -> None:
    dest = tmp_path / "sample"
    result = subprocess.run([sys.executable, str(TOOL), "--lab", "sample", "--dest", str(dest),
                             "--no-git"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    files = ["kern/profile/sampler.cc", "kern/profile/walk.h", "kern/trap/timer.cc",
             "labs/sample/answers.txt"]
    ours = "".join((ROOT / f).read_text() for f in files)
    assert all(name in ours for name in SAMPLE_SOLUTION_ONLY), "update SAMPLE_SOLUTION_ONLY"
    found = [f"{p.relative_to(dest)}: {name!r}" for p in starter_files(dest)
             for name in SAMPLE_SOLUTION_ONLY if name in p.read_text(errors="replace")]
    assert not found, "the sample lab's solution in its starter:\n" + "\n".join(found)
    assert not (dest / "labs/sample/mutants").exists()
    # The profile lab keeps its solution code in the sample lab's starter, but not its
    # answers: a lab's own folder never carries its solution into any starter.
    assert "find_live" in (dest / "kern/profile/sysprofile.cc").read_text()
    answers = (dest / "labs/profile/answers.txt").read_text()
    assert "9,282,000 words" not in answers and answers.count("(write your answer here)") == 3


def test_profile_starter_has_no_sample_answers(starter: Path) -> None:
    answers = (starter / "labs/sample/answers.txt").read_text()
    assert "All 101 of the 166" not in answers
    assert answers.count("(write your answer here)") == 4


def test_git_repository_with_one_commit(tmp_path: Path) -> None:
    dest = tmp_path / "repo"
    result = subprocess.run(["make", "-s", "--no-print-directory", "starter", "LAB=profile",
                             f"DEST={dest}"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    log = subprocess.run(["git", "-C", str(dest), "log", "--format=%s"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert log == ["The profile lab: starter tree"]
    status = subprocess.run(["git", "-C", str(dest), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert status == "", f"files left out of the commit:\n{status}"


def test_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "something").write_text("x")
    result = subprocess.run([sys.executable, str(TOOL), "--lab", "profile", "--dest",
                             str(tmp_path), "--no-git"], capture_output=True, text=True)
    assert result.returncode == 2 and "not an empty directory" in result.stderr


def test_unknown_lab_is_an_error(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(TOOL), "--lab", "nosuchlab", "--dest",
                             str(tmp_path / "x"), "--no-git"], capture_output=True, text=True)
    assert result.returncode == 1 and "no lab 'nosuchlab'" in result.stderr, result.stderr
    assert not (tmp_path / "x").exists()


# --- lab.toml ----------------------------------------------------------------------------------


def test_lab_description_of_the_profile_lab() -> None:
    """What the generator withholds of the profile lab exists in our tree (else the check that
    the starter lacks it is empty), and the student's files are there too."""
    lab = labs.load("profile")
    assert lab.withheld == ("labs/profile/mutants", "labs/profile/test_lab_discrimination.py")
    assert all((ROOT / w).exists() for w in lab.withheld)
    assert lab.student == ("labs/profile/answers.txt",)
    assert "profile" in labs.names()


@pytest.mark.parametrize("text, message", [
    ('withheld = "mutants"\n', "withheld must be a list"),
    ('student = ["missing.txt"]\n', "student names missing.txt"),
    ('withheld = []\nextra = 1\n', "unknown keys extra"),
    ('withheld = [\n', "lab.toml"),
], ids=["not-a-list", "no-student-file", "unknown-key", "not-toml"])
def test_lab_description_errors(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "labs" / "x").mkdir(parents=True)
    (tmp_path / "labs" / "x" / "lab.toml").write_text(text)
    (tmp_path / "labs" / "x" / "__init__.py").write_text("")
    with pytest.raises(labs.LabError, match=message):
        labs.load("x", tmp_path)
    with pytest.raises(labs.LabError, match="no lab 'y'"):
        labs.load("y", tmp_path)


def test_lab_folder_must_be_a_package(tmp_path: Path) -> None:
    """Without its __init__.py, two labs' test_lab_discrimination.py could not both be
    collected: the lab is refused, with the reason."""
    (tmp_path / "labs" / "x").mkdir(parents=True)
    (tmp_path / "labs" / "x" / "lab.toml").write_text("withheld = []\n")
    with pytest.raises(labs.LabError, match="no __init__.py"):
        labs.load("x", tmp_path)


def test_every_lab_is_collected_with_the_others() -> None:
    """pytest collects every lab's tests in one run, same-named files included."""
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                        "-p", "no:cacheprovider", "labs"], cwd=ROOT, text=True,
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for name in labs.names():
        assert f"labs/{name}/test_lab_discrimination.py::" in r.stdout, name
