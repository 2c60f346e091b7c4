"""The speed lab's measurement (labs/speed/README.md): exact instruction counts of its workloads.

Each workload is a program of labs/speed/user/ with its arguments. One machine, booted with
`-icount shift=0,sleep=off` at CPUS=1 like `make bench`'s (tern/bench/icount.py), runs them
one after the other with `bsys run` (user/bench/bsys.cc): a first run, not counted, brings
their blocks into the buffer cache; then bsys settles on the timer's grid and counts the
guest instructions of one whole run, fork to wait. Nothing waits for the disk while it is
counted (the workloads write no file), so two runs of the same tree give the same counts.

    tools/speed [--runs N]          this tree's counts (N runs, each on a fresh machine)
    tools/speed --reference         make the starter (tools/mkstarter), measure it there, and
                                    write its counts to labs/speed/reference.toml

The grade (labs/speed/test_lab_speed.py) divides the starter's counts, recorded in
reference.toml, by a submission's. They are only comparable if both were measured by the
same workloads and the same measuring code, so reference.toml also records the digest of
each of those files (PROTECTED: the files git tracks under those paths, so that a build
output or an editor's backup beside them changes nothing), and the grade refuses a tree
whose files differ from them, naming each one that does.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from tern import REPO
from tern.bench.icount import ICOUNT_ARGS, Session
from tern.machine import Machine

# The workloads: name -> the command `bsys run` runs. Each stresses one problem of the
# starter (see the handout).
WORKLOADS = {
    "files": "spfiles 200",
    "pipe": "sppipe 2000",
    "copy": "spcopy 20",
}
# What the counts and the correctness gate depend on besides the kernel's code, so that a
# student cannot win by changing them (the handout lists them and says why). Paths of
# files or folders; a folder stands for the files git tracks in it.
PROTECTED = (
    "labs/speed/user",             # the workloads, and spcheck, the gate's checks
    "labs/speed/test_lab_speed.py",  # the gate and the tiers
    "user/tests/usertests",        # the gate's other half: every test, no page lost
    "user/bench/bsys.cc",          # the measuring program
    "user/lib", "user/user.ld",    # compiled into all of them
    "kern/abi",                    # limits and layouts they are compiled with: NPROC, NBUF...
    "tools/tern/bench/icount.py", "tools/tern/bench/speed.py",  # the measuring code
)
REFERENCE = "labs/speed/reference.toml"
REFERENCE_COMMAND = "tools/speed --reference"
RUN_TIMEOUT = 300  # s for one workload, both runs, at GRADE_TIMEOUT_SCALE=1


def is_repository(root: Path) -> bool:
    """True if `root` is the top of a git work tree (a checkout, a worktree, a starter)."""
    top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True)
    return top.returncode == 0 and Path(top.stdout.strip()).resolve() == root.resolve()


def protected_files(root: Path = REPO) -> list[str]:
    """The files git tracks under PROTECTED in the repository at `root`, sorted."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", *PROTECTED],
                            capture_output=True, check=True).stdout.decode()
    return sorted(name for name in listed.split("\0") if name)


def file_digest(path: Path) -> str:
    """The SHA-256 of one file's contents, or "missing" if there is no such file."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"


def digest(root: Path = REPO, files: list[str] | None = None) -> dict[str, str]:
    """path -> SHA-256 of each protected file of the tree at `root`: of `files`, or of the
    files git tracks under PROTECTED there. Untracked files never count."""
    names = protected_files(root) if files is None else files
    return {name: file_digest(root / name) for name in sorted(names)}


def differences(recorded: dict[str, str], root: Path = REPO) -> list[str]:
    """The protected files of the tree at `root` that differ from `recorded` (reference.toml's
    digest), each as "PATH (changed)", "(missing)" or "(added)". A tree that is not a git
    repository (a copied or uploaded one) is checked for the recorded files only."""
    found = digest(root, list(recorded))
    if is_repository(root):
        found |= digest(root, [n for n in protected_files(root) if n not in recorded])
    out = []
    for name in sorted(found):
        if name not in recorded:
            out.append(f"{name} (added)")
        elif found[name] == "missing":
            out.append(f"{name} (missing)")
        elif found[name] != recorded[name]:
            out.append(f"{name} (changed)")
    return out


def measure(root: Path = REPO, name: str = "speed-icount") -> dict[str, int]:
    """The count of every workload, on one fresh machine of the tree at `root` (built)."""
    counts = {}
    with Machine(1, name=name, extra_args=ICOUNT_ARGS, root=root) as m:
        m.boot()
        session = Session(m)
        for workload, command in WORKLOADS.items():
            counts[workload] = session.program(command, timeout=RUN_TIMEOUT)
    return counts


def load_reference(root: Path = REPO) -> dict:
    """reference.toml: {"starter": {workload: count}, "digest": {path: SHA-256}}."""
    return tomllib.loads((root / REFERENCE).read_text())


def write_reference(counts: dict[str, int], digests: dict[str, str],
                    root: Path = REPO) -> None:
    lines = [
        "# The speed lab's reference: the starter's instruction count of each workload",
        "# (tools/tern/bench/speed.py), and the digest of each file the counts depend on.",
        f"# Made by `{REFERENCE_COMMAND}`: remake it after any change to the kernel outside",
        "# the lab's regions, or to a file of the digest.",
        "",
        "[starter]",
        *(f"{workload} = {count}" for workload, count in counts.items()),
        "",
        "[digest]",
        *(f'"{name}" = "{sha}"' for name, sha in digests.items()),
        "",
    ]
    (root / REFERENCE).write_text("\n".join(lines))


def make_reference() -> dict[str, int]:
    """Make the starter, build it, measure it there (with its own copy of this code)."""
    with tempfile.TemporaryDirectory(prefix="speed-starter-") as tmp:
        dest = Path(tmp) / "starter"
        subprocess.run([str(REPO / "tools" / "mkstarter"), "--lab", "speed", "--dest",
                        str(dest)], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["make", "-s", "-j2", "all"], cwd=dest, check=True,
                       stdout=subprocess.DEVNULL)
        out = subprocess.run([sys.executable, "-m", "tern.bench.speed", "--print"], cwd=dest,
                             env={"PYTHONPATH": str(dest / "tools"), "PATH": "/usr/bin:/bin"},
                             check=True, capture_output=True, text=True).stdout
        counts = {}
        for line in out.splitlines():
            workload, count = line.split()
            counts[workload] = int(count)
        differ = differences(digest(), dest)
    if differ:
        raise SystemExit(f"the starter's protected files differ from ours: {', '.join(differ)}")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="runs, each on a fresh machine")
    parser.add_argument("--reference", action="store_true",
                        help=f"measure the starter and write {REFERENCE}")
    parser.add_argument("--print", action="store_true", help="only `workload count` lines")
    args = parser.parse_args(argv)
    if args.reference:
        counts = make_reference()
        write_reference(counts, digest())
        for workload, count in counts.items():
            print(f"{workload:6} {count:>12,}  starter")
        print(f"wrote {REFERENCE}")
        return 0
    if args.print:
        for workload, count in measure().items():
            print(workload, count)
        return 0
    reference = load_reference()["starter"]
    runs = [measure() for _ in range(args.runs)]
    print(f"{'workload':8} {'starter':>12} " + " ".join(f"{'run ' + str(i + 1):>12}"
                                                      for i in range(len(runs))) + "  ratio")
    for workload in WORKLOADS:
        counts = [run[workload] for run in runs]
        ratio = reference[workload] / counts[0]
        print(f"{workload:8} {reference[workload]:>12,} "
              + " ".join(f"{c:>12,}" for c in counts) + f"  {ratio:.2f}x")
    if any(run != runs[0] for run in runs):
        print("the runs differ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
