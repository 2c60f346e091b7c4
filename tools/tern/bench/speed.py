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

The counts depend on the machine too: the QEMU that emulates it, the OpenSBI under the
kernel (its code runs, and counts, for every SBI call), and the timer the kernel chose at
boot (kern/trap/timer.cc: Sstc's stimecmp or an SBI call per re-arm). reference.toml
records the three (PLATFORM); a grade measured on another platform still counts, but each
speed test's note says that the machine differs (see the handout, "Grading", for why it
warns and does not refuse).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
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
# files or folders; a folder stands for the files git tracks in it, and for any source file
# in it (SOURCES) whether tracked or not, since the build compiles what it finds there.
PROTECTED = (
    "labs/speed/user",             # the workloads, and spcheck, the gate's checks
    "labs/speed/test_lab_speed.py",  # the gate and the tiers
    "user/tests/usertests",        # the gate's other half: every test, no page lost
    "user/bench/bsys.cc",          # the measuring program
    "user/lib", "user/user.ld",    # compiled into all of them
    "kern/abi",                    # limits and layouts they are compiled with: NPROC, NBUF...
    "tools/tern/bench/icount.py", "tools/tern/bench/speed.py",  # the measuring code
)
SOURCES = (".cc", ".h", ".S", ".ld", ".def")  # what the build picks up in a folder
REFERENCE = "labs/speed/reference.toml"
REFERENCE_COMMAND = "tools/speed --reference"
RUN_TIMEOUT = 300  # s for one workload, both runs, at GRADE_TIMEOUT_SCALE=1


def is_repository(root: Path) -> bool:
    """True if `root` is the top of a git work tree (a checkout, a worktree, a starter);
    False where there is no git at all, as on a grading machine that copies uploads."""
    try:
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True)
    except OSError:
        return False
    return top.returncode == 0 and Path(top.stdout.strip()).resolve() == root.resolve()


def protected_files(root: Path = REPO) -> list[str]:
    """The files git tracks under PROTECTED in the repository at `root`, sorted."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", *PROTECTED],
                            capture_output=True, check=True).stdout.decode()
    return sorted(name for name in listed.split("\0") if name)


def sources_in_folders(root: Path = REPO) -> list[str]:
    """The source files (SOURCES) on disk in the folders of PROTECTED, tracked or not,
    sorted: a build compiles them whatever git knows of them."""
    found = []
    for entry in PROTECTED:
        folder = root / entry
        if folder.is_dir():
            found += [str(path.relative_to(root)) for path in folder.rglob("*")
                      if path.is_file() and path.suffix in SOURCES]
    return sorted(found)


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
    digest), each as "PATH (changed)", "(missing)" or "(added)". Added are the files git
    tracks under PROTECTED that the reference does not list, and, with or without git (a
    copied or uploaded tree), any source file in a protected folder that it does not list:
    an editor's backup or an object file counts for nothing, a new `.cc` does."""
    found = digest(root, list(recorded))
    extra = sources_in_folders(root)
    if is_repository(root):
        extra += protected_files(root)
    found |= digest(root, [n for n in set(extra) if n not in recorded])
    out = []
    for name in sorted(found):
        if name not in recorded:
            out.append(f"{name} (added)")
        elif found[name] == "missing":
            out.append(f"{name} (missing)")
        elif found[name] != recorded[name]:
            out.append(f"{name} (changed)")
    return out


# What the counts depend on outside the tree: name -> what it is, in words.
PLATFORM = {
    "qemu": "QEMU",        # `qemu-system-riscv64 --version`
    "opensbi": "OpenSBI",  # the firmware's boot banner
    "timer": "timer",      # kern/trap/timer.cc's boot line: sstc or sbi
}
QEMU_VERSION = re.compile(r"QEMU emulator version (.+)")
OPENSBI_VERSION = re.compile(r"(?m)^OpenSBI (v\S+)")
TIMER = re.compile(r"(?m)^tern: timer: (\w+)")


def platform(qemu_version: str, boot_output: str) -> dict[str, str]:
    """PLATFORM's values, from what `QEMU --version` and a boot printed ("unknown" for a
    value that neither says)."""
    found = {"qemu": QEMU_VERSION.search(qemu_version),
             "opensbi": OPENSBI_VERSION.search(boot_output),
             "timer": TIMER.search(boot_output)}
    return {key: match.group(1).strip() if match else "unknown"
            for key, match in found.items()}


def platform_note(recorded: dict[str, str], found: dict[str, str]) -> str:
    """What a count taken on the platform `found` must say when it is not the reference's
    (`recorded`, reference.toml's), or "" when it is. Short, so that it fits on the grade's
    line for a test, in front of the test's own words."""
    differ = [f"{PLATFORM[key]} {found.get(key, 'unknown')}, not {recorded.get(key, 'unknown')}"
              for key in PLATFORM if found.get(key) != recorded.get(key)]
    return f"NOTE: another machine than the reference's ({'; '.join(differ)})" if differ else ""


@dataclass(frozen=True)
class Measurement:
    counts: dict[str, int]  # workload -> instructions
    platform: dict[str, str]  # PLATFORM's values


def measurement(root: Path = REPO, name: str = "speed-icount") -> Measurement:
    """The count of every workload, on one fresh machine of the tree at `root` (built), and
    that machine's platform."""
    counts = {}
    with Machine(1, name=name, extra_args=ICOUNT_ARGS, root=root) as m:
        boot_output = m.boot()
        version = subprocess.run([m.argv[0], "--version"], capture_output=True,
                                 text=True).stdout
        session = Session(m)
        for workload, command in WORKLOADS.items():
            counts[workload] = session.program(command, timeout=RUN_TIMEOUT)
    return Measurement(counts, platform(version, boot_output))


def measure(root: Path = REPO, name: str = "speed-icount") -> dict[str, int]:
    """The count of every workload, on one fresh machine of the tree at `root` (built)."""
    return measurement(root, name).counts


def load_reference(root: Path = REPO) -> dict:
    """reference.toml: {"starter": {workload: count}, "platform": {PLATFORM's values},
    "digest": {path: SHA-256}}."""
    return tomllib.loads((root / REFERENCE).read_text())


def write_reference(counts: dict[str, int], machine: dict[str, str], digests: dict[str, str],
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
        "# The machine they were counted on: a grade elsewhere says so.",
        "[platform]",
        *(f"{key} = {json.dumps(machine[key])}" for key in PLATFORM),
        "",
        "[digest]",
        *(f'"{name}" = "{sha}"' for name, sha in digests.items()),
        "",
    ]
    (root / REFERENCE).write_text("\n".join(lines))


def make_reference() -> Measurement:
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
        measured = Measurement(**json.loads(out))
        differ = differences(digest(), dest)
    if differ:
        raise SystemExit(f"the starter's protected files differ from ours: {', '.join(differ)}")
    return measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="runs, each on a fresh machine")
    parser.add_argument("--reference", action="store_true",
                        help=f"measure the starter and write {REFERENCE}")
    parser.add_argument("--print", action="store_true",
                        help="only the counts and the platform, as JSON")
    args = parser.parse_args(argv)
    if args.reference:
        measured = make_reference()
        write_reference(measured.counts, measured.platform, digest())
        for workload, count in measured.counts.items():
            print(f"{workload:6} {count:>12,}  starter")
        print(", ".join(f"{PLATFORM[key]} {measured.platform[key]}" for key in PLATFORM))
        print(f"wrote {REFERENCE}")
        return 0
    if args.print:
        measured = measurement()
        print(json.dumps({"counts": measured.counts, "platform": measured.platform}))
        return 0
    reference = load_reference()
    starter = reference["starter"]
    runs = [measurement() for _ in range(args.runs)]
    print(f"{'workload':8} {'starter':>12} " + " ".join(f"{'run ' + str(i + 1):>12}"
                                                      for i in range(len(runs))) + "  ratio")
    for workload in WORKLOADS:
        counts = [run.counts[workload] for run in runs]
        ratio = starter[workload] / counts[0]
        print(f"{workload:8} {starter[workload]:>12,} "
              + " ".join(f"{c:>12,}" for c in counts) + f"  {ratio:.2f}x")
    note = platform_note(reference.get("platform", {}), runs[0].platform)
    if note:
        print(f"{note}: the course's machine's counts decide the grade "
              "(labs/speed/README.md, \"Grading\")")
    if any(run.counts != runs[0].counts for run in runs):
        print("the runs differ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
