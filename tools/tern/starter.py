"""The starter generator (tools/mkstarter): the tree a student starts a lab from, made out of
the tree with the solution.

    tools/mkstarter --lab profile --dest DIR     (or: make starter LAB=profile DEST=DIR)

The solution of a lab lives in the ordinary source files, between marker comments. Every
marker names the lab and a part of it, so one tree can hold several labs:

    // LAB profile/syscall BEGIN: implement profile(2), see labs/profile/README.md, task 1
    ...the solution: compiled and tested in our tree...
    // LAB profile/syscall STARTER
    // return ERR;
    // LAB profile/syscall END

In the starter the whole region is replaced by a TODO comment made from the text after
"BEGIN:" (no comment when there is none) and then the STARTER lines with their comment
leader taken off: the least code that compiles and fails safely. `//` and `#` both work as
the leader, so C++, Python, Makefiles and plain text files can have regions. A STARTER
line that is itself a comment is written with the leader twice (`// // ...`).

Regions of other labs keep their solution; only their marker and STARTER lines go. The
exception is a lab's own folder (labs/NAME/): its regions (the reference answers) become
their STARTER in every starter, so no lab's starter carries another lab's answers.

The starter is every file of the tree that git knows or would add (`git ls-files` with
untracked files, .gitignore applied: no build outputs), minus the files that only make
sense beside a solution: those each lab's lab.toml withholds (its mutants, say; see
tern/labs.py) and this generator with its tests (GENERATOR below), written to DEST as a new git repository with a
single commit. DEST must not exist or be empty. The tree is checked first: a marker out of
order, a STARTER line that is not commented out, or a lab with no regions is an error and
nothing is written.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tern import REPO as ROOT
from tern import labs

# This generator and its tests: they need the markers, which the starter no longer has.
GENERATOR = ("tools/mkstarter", "tools/tern/starter.py", "tests/host/test_mkstarter.py")

# Used when the source is not a git checkout: what .gitignore leaves out.
IGNORED_NAMES = {".git", "build", "__pycache__", ".pytest_cache", ".gdbport"}
IGNORED_PATHS = {"fs.img", "mkfs/mkfs"}

MARKER = re.compile(
    r"^(?P<indent>[ \t]*)(?P<leader>//|#)[ \t]*LAB (?P<lab>[A-Za-z0-9_-]+)/(?P<part>[A-Za-z0-9_-]+)"
    r" (?P<kind>BEGIN|STARTER|END)(?::[ \t]*(?P<desc>.*?))?[ \t]*$")
# Anything that looks like it was meant to be a marker, to catch misspelt ones.
MARKER_LIKE = re.compile(r"(//|#)[ \t]*LAB [A-Za-z0-9_-]+/")


class MarkerError(Exception):
    """The markers of a file are malformed; the message names the file and line."""


@dataclass
class Region:
    """One BEGIN ... END region while it is being read."""

    lab: str
    part: str
    leader: str
    indent: str
    desc: str
    line: int
    solution: list[str] = field(default_factory=list)
    starter: list[str] | None = None  # None until the STARTER marker


@dataclass
class Result:
    text: str
    regions: dict[str, int]  # part -> number of regions of the requested lab


def uncomment(line: str, leader: str, where: str) -> str:
    """A STARTER line without its comment leader (and one space after it)."""
    if line.strip() == "":
        return ""
    match = re.match(r"^([ \t]*)" + re.escape(leader) + r" ?(.*)$", line)
    if match is None:
        raise MarkerError(f"{where}: a STARTER line must be commented out with {leader!r}: "
                          f"{line.strip()!r}")
    return match.group(1) + match.group(2)


def folder_lab(path: str) -> str | None:
    """The lab whose folder holds `path` (labs/NAME/...), if any."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == labs.LABS else None


def transform(text: str, lab: str, path: str = "<text>") -> Result:
    """The starter version of one file's text, for `lab`. Regions of `lab`, and those of the
    lab whose folder holds `path`, become their STARTER lines; the others keep their
    solution. Only `lab`'s regions are counted."""
    own = folder_lab(path)
    out: list[str] = []
    regions: dict[str, int] = {}
    current: Region | None = None
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        where = f"{path}:{number}"
        match = MARKER.match(line)
        if match is None:
            if MARKER_LIKE.search(line) and re.search(r"\bLAB \S+/\S+ (BEGIN|STARTER|END)\b",
                                                      line):
                raise MarkerError(f"{where}: malformed marker: {line.strip()!r}")
            if current is None:
                out.append(line)
            elif current.starter is None:
                current.solution.append(line)
            else:
                current.starter.append(uncomment(line, current.leader, where))
            continue
        kind, name = match["kind"], f"{match['lab']}/{match['part']}"
        if kind == "BEGIN":
            if current is not None:
                raise MarkerError(f"{where}: BEGIN of {name} inside {current.lab}/{current.part} "
                                  f"(opened at line {current.line}); regions do not nest")
            current = Region(match["lab"], match["part"], match["leader"], match["indent"],
                             match["desc"] or "", number)
            continue
        if current is None:
            raise MarkerError(f"{where}: {kind} of {name} without a BEGIN")
        if name != f"{current.lab}/{current.part}":
            raise MarkerError(f"{where}: {kind} of {name} inside {current.lab}/{current.part} "
                              f"(opened at line {current.line})")
        if kind == "STARTER":
            if current.starter is not None:
                raise MarkerError(f"{where}: a second STARTER in {name}")
            current.starter = []
            continue
        # END
        if current.lab in (lab, own):
            if current.desc:
                out.append(f"{current.indent}{current.leader} TODO(lab {current.lab}/"
                           f"{current.part}): {current.desc}")
            out.extend(current.starter or [])
            if current.lab == lab:
                regions[current.part] = regions.get(current.part, 0) + 1
        else:
            out.extend(current.solution)
        current = None
    if current is not None:
        raise MarkerError(f"{path}:{current.line}: {current.lab}/{current.part} has no END")
    return Result("\n".join(out), regions)


def withheld(root: Path) -> tuple[str, ...]:
    """The files and folders no starter gets: the generator, and what every lab withholds."""
    return GENERATOR + tuple(w for name in labs.names(root) for w in labs.load(name, root).withheld)


def is_excluded(rel: str, excluded: tuple[str, ...]) -> bool:
    return any(rel == e or rel.startswith(e + "/") for e in excluded)


def source_files(root: Path) -> list[str]:
    """The tree's files, relative to root, as git would commit them (plus untracked ones)."""
    if (root / ".git").exists():
        listing = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"], check=True, capture_output=True).stdout
        names = sorted({n for n in listing.decode().split("\0") if n})
    else:
        names = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_NAMES)
            for f in filenames:
                rel = (Path(dirpath) / f).relative_to(root).as_posix()
                if rel not in IGNORED_PATHS and not rel.endswith(".d"):
                    names.append(rel)
        names.sort()
    excluded = withheld(root)
    return [n for n in names if (root / n).is_file() and not (root / n).is_symlink()
            and not is_excluded(n, excluded)]


def plan(root: Path, lab: str) -> tuple[dict[str, bytes], dict[str, int], list[str]]:
    """Every starter file's bytes, the regions found per part, and the files changed."""
    files: dict[str, bytes] = {}
    regions: dict[str, int] = {}
    changed: list[str] = []
    for rel in source_files(root):
        data = (root / rel).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            files[rel] = data  # not text: no markers
            continue
        if "LAB " not in text:
            files[rel] = data
            continue
        result = transform(text, lab, rel)
        files[rel] = result.text.encode("utf-8")
        if result.regions:
            changed.append(rel)
            for part, count in result.regions.items():
                regions[part] = regions.get(part, 0) + count
    return files, regions, changed


def write_tree(root: Path, dest: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        shutil.copymode(root / rel, target)


def git_commit(dest: Path, lab: str) -> None:
    """Make dest a repository with one commit holding the whole starter."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(dest), "-c", "user.name=tern",
                        "-c", "user.email=tern@localhost", "-c", "commit.gpgsign=false",
                        *args], check=True, capture_output=True)
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", f"The {lab} lab: starter tree")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a lab's starter tree.")
    parser.add_argument("--lab", required=True, help="the lab: its folder labs/LAB/ and markers")
    parser.add_argument("--dest", required=True, type=Path, help="directory to create")
    parser.add_argument("--source", type=Path, default=ROOT, help="the solution tree")
    parser.add_argument("--no-git", action="store_true",
                        help="write the files only, without making a repository")
    args = parser.parse_args(argv)

    root = args.source.resolve()
    dest = args.dest.resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        print(f"mkstarter: {args.dest} exists and is not an empty directory", file=sys.stderr)
        return 2
    try:
        labs.load(args.lab, root)
        files, regions, changed = plan(root, args.lab)
    except (MarkerError, labs.LabError) as err:
        print(f"mkstarter: {err}", file=sys.stderr)
        return 1
    if not regions:
        print(f"mkstarter: no `LAB {args.lab}/...` regions in {root}", file=sys.stderr)
        return 1
    dest.mkdir(parents=True, exist_ok=True)
    write_tree(root, dest, files)
    if not args.no_git:
        git_commit(dest, args.lab)
    parts = ", ".join(f"{part} ({n})" for part, n in sorted(regions.items()))
    print(f"mkstarter: {len(files)} files in {args.dest}; lab {args.lab}: regions {parts} in "
          f"{', '.join(changed)}")
    return 0

