"""Pack your committed work into a zip for upload (`make handin`).

The zip holds exactly what `git archive HEAD` gives: the files of your last commit, without
build outputs or the .git folder. Upload it to Gradescope, which grades it on a fresh copy
of the starter tree (see tern/grade/gradescope/autograde.py).

It refuses when the working tree has changes that are not committed, modified files and new
files alike: what you hand in should be what you tested, and an uploaded zip that silently
leaves out your newest edits is worse than no zip. Commit (or discard) them and run it again.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Sequence


class HandinError(Exception):
    pass


def git(tree: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True)
    if result.returncode != 0:
        raise HandinError(result.stderr.strip() or f"git {' '.join(args)} failed")
    return result.stdout


def uncommitted(tree: Path, ignore: Sequence[str] = ()) -> list[str]:
    """`git status` lines for changes not committed (untracked files included)."""
    lines = git(tree, "status", "--porcelain=v1", "--untracked-files=all").splitlines()
    return [line for line in lines if line[3:] not in ignore]


def handin(tree: Path, lab: str, out: Path | None = None) -> Path:
    try:
        top = Path(git(tree, "rev-parse", "--show-toplevel").strip())
    except HandinError:
        raise HandinError(f"{tree} is not a git repository; handin packs your commits")
    out = out or top / "build" / f"handin-{lab}.zip"
    try:
        rel_out = out.resolve().relative_to(top).as_posix()
    except ValueError:
        rel_out = ""
    changes = uncommitted(top, ignore=[rel_out])
    if changes:
        shown = "\n".join(f"    {line}" for line in changes[:20])
        more = f"\n    ... and {len(changes) - 20} more" if len(changes) > 20 else ""
        raise HandinError(
            "you have changes that are not committed, so they would not be handed in:\n"
            f"{shown}{more}\n"
            "Commit them (git add -A && git commit -m 'my lab') or discard them, then run "
            "`make handin` again.")
    commit = git(top, "rev-parse", "--short", "HEAD").strip()
    out.parent.mkdir(parents=True, exist_ok=True)
    git(top, "archive", "--format=zip", f"--output={out}", "HEAD")
    with zipfile.ZipFile(out) as archive:
        count = sum(1 for info in archive.infolist() if not info.is_dir())
    print(f"handin: wrote {out} ({count} files of commit {commit}). Upload it to Gradescope "
          f"for lab {lab}.")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="handin", description=__doc__.splitlines()[0])
    parser.add_argument("--lab", default="profile")
    parser.add_argument("--tree", default=".", help="the repository (default: here)")
    parser.add_argument("--out", help="the zip to write (default: build/handin-LAB.zip)")
    args = parser.parse_args(argv)
    try:
        handin(Path(args.tree).resolve(), args.lab, Path(args.out).resolve() if args.out else None)
    except HandinError as error:
        print(f"handin: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
