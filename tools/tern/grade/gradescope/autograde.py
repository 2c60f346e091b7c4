"""Grade one Gradescope submission: starter tree + the student's files -> results.json.

This runs inside Gradescope's container (run_autograder starts it), with the bundle made by
`make autograder` unpacked in ROOT/source:

    ROOT/source/autograder.json   the lab, the protected paths, the time limit
    ROOT/source/starter/          the tree students started from, as `make starter` made it
    ROOT/submission/              what the student uploaded (a `make handin` zip, unpacked)
    ROOT/results/results.json     what this script writes

Steps:

1. Copy the starter tree to a fresh work folder, then copy the submission over it. Paths
   listed as protected (the tests, the Makefile, the tools) always come from the starter:
   a submission may change what the lab asks it to change, but nothing that decides its
   grade. Build outputs in the submission are ignored, so the build is always fresh.
2. Run the tree's own grader, `tools/grade --lab LAB`, which builds, runs the lab's
   tests and writes Gradescope's results format.
3. Copy its results.json to ROOT/results, adding a note about any protected file the
   submission tried to change. If the grader did not produce results (it crashed, or ran
   out of time), write a zero score with the end of its output, so the student always sees
   a result and a reason.

The standard library only: this script runs before anything of the tree is trusted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import traceback
import zipfile
from pathlib import Path
from typing import IO, Iterable

# Never taken from a submission: outputs of the build (from the top of the tree), and
# version-control or desktop clutter (at any depth).
IGNORED_PATHS = ("build", "fs.img", "mkfs/mkfs")
IGNORED_NAMES = {".git", "__pycache__", ".pytest_cache", "__MACOSX", ".DS_Store"}
TAIL = 60


def main(root: Path) -> int:
    source, submission, results = root / "source", root / "submission", root / "results"
    results.mkdir(parents=True, exist_ok=True)
    config = json.loads((source / "autograder.json").read_text())
    keep = os.environ.get("AUTOGRADER_WORK")  # a folder to work in and keep, for debugging
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="autograde-"))
    try:
        return grade_submission(config, source, submission, results, work)
    except Exception:  # a broken bundle must still give the student a result and a reason
        doc = {"score": 0, "tests": [],
               "output": "The autograder failed:\n" + traceback.format_exc()}
        (results / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
        raise
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def grade_submission(config: dict, source: Path, submission: Path, results: Path,
                     work: Path) -> int:
    timeout = float(config.get("timeout", 1800))
    tree, out = work / "tree", work / "grade"
    for old in (tree, out):  # left by an earlier run in a kept work folder
        shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(source / "starter", tree, symlinks=True)
    notes = overlay(submission_root(submission, work), tree, config["protected"])
    # The grader's own limit comes first, so that the tests that finished still count.
    argv = [sys.executable, "tools/grade", "--lab", config["lab"], "--out", str(out),
            "--time-limit", f"{timeout * 0.8:.0f}"]
    print(f"autograde: lab {config['lab']}, tree {tree}", flush=True)
    log = work / "grade.log"
    try:
        with open(log, "w") as output:
            status = run_teed(argv, tree, output, timeout)
    except subprocess.TimeoutExpired:
        status = None
        notes.append(f"The grader ran out of time ({timeout:g} s).")
    graded = out / "results.json"
    if graded.exists():  # after a time-out it holds the tests that finished in time
        doc = json.loads(graded.read_text())
    else:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-TAIL:])
        ending = "ran out of time" if status is None else f"exited with status {status}"
        doc = {"score": 0, "tests": [],
               "output": f"The grader {ending} without results. Its last lines:\n{tail}"}
    doc["output"] = "\n".join(n for n in notes + [str(doc.get("output", ""))] if n)
    (results / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"autograde: score {doc['score']}", flush=True)
    return 0


def run_teed(argv: list[str], cwd: Path, log: IO[str], timeout: float) -> int:
    """Run argv, copying its output both to our stdout (Gradescope shows it) and to log.

    Raises TimeoutExpired after stopping the child if it runs longer than `timeout`.
    """
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, text=True, errors="replace")
    copier = threading.Thread(target=_copy, args=(child.stdout, log), daemon=True)
    copier.start()
    try:
        status = child.wait(timeout=timeout)
    except BaseException:
        child.terminate()  # the grader stops its tests and writes what it has on SIGTERM
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
        raise
    finally:
        copier.join(timeout=10)
    return status


def _copy(source: IO[str], log: IO[str]) -> None:
    for line in source:
        sys.stdout.write(line)
        sys.stdout.flush()
        log.write(line)


def submission_root(submission: Path, work: Path) -> Path:
    """The folder that holds the tree: the upload itself, its one folder, or its one zip."""
    entries = [p for p in submission.iterdir() if p.name not in IGNORED_NAMES] \
        if submission.is_dir() else []
    if len(entries) == 1 and entries[0].suffix == ".zip" and entries[0].is_file():
        unpacked = work / "submission"
        with zipfile.ZipFile(entries[0]) as archive:
            archive.extractall(unpacked)
        return submission_root(unpacked, work)
    if len(entries) == 1 and entries[0].is_dir():
        return submission_root(entries[0], work)
    return submission


def overlay(submission: Path, tree: Path, protected: list[str]) -> list[str]:
    """Copy the submission's files over the tree, except protected and ignored paths."""
    refused: list[str] = []
    copied = 0
    for path in sorted(submission.rglob("*")) if submission.is_dir() else []:
        rel = path.relative_to(submission).as_posix()
        if path.is_dir() or _ignored(rel):
            continue
        target = tree / rel
        if _under(rel, protected):
            if not target.exists() or target.read_bytes() != path.read_bytes():
                refused.append(rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.is_file():
            target.unlink()
        shutil.copy2(path, target, follow_symlinks=False)
        copied += 1
    notes = [] if copied else ["The submission has no files to use: the starter was graded."]
    if refused:
        listed = ", ".join(refused[:10]) + (" ..." if len(refused) > 10 else "")
        notes.append(f"These files of the submission were not used (the grader's own copies "
                     f"always are): {listed}")
    return notes


def _under(rel: str, paths: Iterable[str]) -> bool:
    """Is `rel` one of `paths`, or inside one of them?"""
    return any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in paths)


def _ignored(rel: str) -> bool:
    return _under(rel, IGNORED_PATHS) or any(part in IGNORED_NAMES for part in rel.split("/"))


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else
                       os.environ.get("AUTOGRADER_ROOT", "/autograder"))))
