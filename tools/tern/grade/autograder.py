"""Build the Gradescope autograder bundle for a lab (`make autograder LAB=profile`).

Gradescope wants one zip with `setup.sh` (run once, to install packages) and
`run_autograder` (run for every submission) at its top. Ours also carries the starter tree,
so each submission is graded on a fresh copy of exactly what students were given:

    autograder-LAB.zip
        setup.sh           installs the Debian packages (tern/grade/gradescope/setup.sh)
        run_autograder     finds Python and runs autograde.py
        autograde.py       starter + submission -> tools/grade -> results/results.json
        autograder.json    {"lab": ..., "protected": [...], "timeout": ...}
        starter/           the student's starting tree, from `make starter LAB=... DEST=...`

The same files are also left unpacked in OUT/source, the folder Gradescope unpacks the zip
into, so a local run needs no unzip (see tools/tern/grade/gradescope/README.md).

`--starter DIR` takes an existing tree instead of generating one; the project's tests use
it to grade our own solution (which must score full marks) without a starter generator.
"""

from __future__ import annotations

import argparse
import json
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Sequence

from tern import REPO, labs

HERE = Path(__file__).resolve().parent
BUNDLE_FILES = ("setup.sh", "run_autograder", "autograde.py")
# The grade comes from these, so they are always the starter's, never the submission's; so
# do the lab's own files but those its lab.toml names as the student's (tern/labs.py).
PROTECTED = ["tools", "tests", "Makefile", "pytest.ini", "conftest.py"]
DEFAULT_TIMEOUT = 1800  # seconds for one submission: build and tests
# Not part of a tree, when copying one that is not a git repository.
NOT_SOURCE_NAMES = {".git", "build", "__pycache__", ".pytest_cache"}
NOT_SOURCE_PATHS = {"fs.img", "mkfs/mkfs", ".gdbport"}


class BundleError(Exception):
    pass


def tree_files(tree: Path) -> list[str]:
    """The files that make up a source tree: git's view if it is a repository.

    Tracked files and untracked ones that are not ignored, so a tree with work in progress
    is bundled as it is on disk, without its build outputs.
    """
    if (tree / ".git").exists():
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=tree, capture_output=True, check=True).stdout.decode()
        return sorted(p for p in set(listed.split("\0")) if p and (tree / p).is_file())
    files = []
    for path in tree.rglob("*"):
        rel = path.relative_to(tree).as_posix()
        if path.is_file() and rel not in NOT_SOURCE_PATHS and \
                not any(part in NOT_SOURCE_NAMES for part in rel.split("/")):
            files.append(rel)
    return sorted(files)


def copy_tree(source: Path, dest: Path) -> int:
    """Copy a source tree's files (see tree_files), keeping modes; return how many."""
    files = tree_files(source)
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, target, follow_symlinks=False)
    return len(files)


def generate_starter(lab: str, dest: Path) -> Path:
    """Run `make starter LAB=lab DEST=dest` in this repository."""
    if not (REPO / "tools" / "mkstarter").exists():
        raise BundleError("`make starter` is not available in this tree, so there is no "
                          "starter to grade against; pass STARTER=dir (an existing tree)")
    result = subprocess.run(["make", "-s", "starter", f"LAB={lab}", f"DEST={dest}"],
                            cwd=REPO, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-20:])
        raise BundleError(f"`make starter LAB={lab}` failed:\n{tail}")
    return dest


def build_bundle(lab: str, out: Path, starter: Path | None, timeout: int) -> Path:
    """Lay the bundle out in out/source and zip it; return the zip's path."""
    source = out / "source"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="starter-") as scratch:
        tree = starter if starter is not None else generate_starter(lab, Path(scratch) / "tree")
        count = copy_tree(tree, source / "starter")
    if not (source / "starter" / "tools" / "grade").exists():
        raise BundleError(f"the starter tree has no tools/grade ({count} files copied)")
    try:
        lab_files = labs.load(lab, source / "starter").protected(tree_files(source / "starter"))
    except labs.LabError as error:
        raise BundleError(str(error)) from None
    for name in BUNDLE_FILES:
        shutil.copy2(HERE / "gradescope" / name, source / name)
    config = {"lab": lab, "protected": PROTECTED + lab_files, "timeout": timeout}
    (source / "autograder.json").write_text(json.dumps(config, indent=2) + "\n")
    archive = out / f"autograder-{lab}.zip"
    zip_folder(source, archive)
    return archive


def zip_folder(folder: Path, archive: Path) -> None:
    """Zip `folder`'s contents (not the folder itself), keeping Unix modes (executables)."""
    archive.unlink(missing_ok=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for path in sorted(folder.rglob("*")):
            if path.is_dir():
                continue
            info = zipfile.ZipInfo.from_file(path, path.relative_to(folder).as_posix())
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IMODE(path.stat().st_mode) | stat.S_IFREG) << 16
            out.writestr(info, path.read_bytes())


def unzip_bundle(archive: Path, dest: Path) -> None:
    """Unpack like Gradescope does, keeping executable bits (zipfile alone drops them)."""
    with zipfile.ZipFile(archive) as bundle:
        for info in bundle.infolist():
            target = dest / info.filename
            bundle.extract(info, dest)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                target.chmod(mode)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograder", description=__doc__.splitlines()[0])
    parser.add_argument("--lab", default="profile")
    parser.add_argument("--starter", help="an existing tree to use as the starter")
    parser.add_argument("--out", default=str(REPO / "build" / "autograder"))
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT,
                        help="seconds allowed per submission")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    starter = Path(args.starter).resolve() if args.starter else None
    try:
        archive = build_bundle(args.lab, out, starter, args.timeout)
    except (BundleError, subprocess.CalledProcessError) as error:
        print(f"autograder: {error}", file=sys.stderr)
        return 1
    size = archive.stat().st_size // 1024
    print(f"autograder: wrote {archive} ({size} KB) for lab {args.lab}; upload it as the "
          f"assignment's autograder. Unpacked copy: {out / 'source'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
