"""tools/deps and the Makefile's install step, on machines made up of stub programs.

Each case builds a PATH in a temporary folder: stubs for some of the programs the packages
give (present or not, at random), for `id` (root or not), `sudo` (password-less, asking a
password, or absent) and `apt-get` (recording what it is asked, and "installing" a random
part of it, or failing). Whatever the case, tools/deps must name exactly the missing packages
of the group, install exactly those when it can (and then find them), and otherwise print the
one command that would, touching nothing.

The seed is TERN_TEST_SEED if set, else random; it is printed with the number of cases.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPS = ROOT / "tools" / "deps"
GROUPS = {"boot": ["boot"], "debug": ["boot", "debug"], "grade": ["boot", "grade"],
          "test": ["boot", "debug", "grade", "test"]}
CASES = 150


def seed() -> int:
    value = int(os.environ.get("TERN_TEST_SEED") or random.randrange(1 << 32))
    print(f"seed {value} (TERN_TEST_SEED={value} repeats it)")
    return value


@dataclass
class Row:
    group: str
    package: str
    probes: list[str]


def table() -> list[Row]:
    """The package table, read from tools/deps itself."""
    text = DEPS.read_text()
    body = text[text.index("TABLE='") + len("TABLE='"):]
    body = body[:body.index("'")]
    rows = []
    for line in body.strip().splitlines():
        group, package, probe = line.split()
        rows.append(Row(group, package, probe.split("|")))
    return rows


ROWS = table()
COMMANDS = sorted({p for row in ROWS for p in row.probes if not p.startswith(("/", "py:"))})


def importable(module: str) -> bool:
    return subprocess.run(["/usr/bin/python3", "-c", f"import {module}"],
                          capture_output=True).returncode == 0


# Probes this machine answers for itself: files, and modules of /usr/bin/python3 (which
# tools/find-python falls back to, as the stub PATH has no python3).
HOST = {p: (Path(p).exists() if p.startswith("/") else importable(p[3:]))
        for row in ROWS for p in row.probes if p.startswith(("/", "py:"))}


def stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


class Machine:
    """A PATH of stubs: `present` commands, a privilege mode, an apt-get that installs the
    commands named in `gives` (or fails with `apt_fails`)."""

    def __init__(self, folder: Path, present: set[str], mode: str, gives: set[str],
                 apt_fails: bool = False) -> None:
        self.bin = folder / "bin"
        self.bin.mkdir(parents=True)
        self.log = folder / "apt.log"
        for name in present - {"python3"}:
            stub(self.bin, name, "exit 0")
        if "python3" in present:  # one that has the modules HOST says this machine has
            python_stub(self.bin, "python3", {m for m in MODULES if HOST[f"py:{m}"]})
        stub(self.bin, "id", "echo 0" if mode in ("root", "no-apt") else "echo 1000")
        if mode == "sudo":
            stub(self.bin, "sudo", f'[ "$1 $2" = "-n true" ] && exit 0\n'
                 f'echo sudo >> {self.log}\nshift\nexec "$@"')
        elif mode == "sudo-password":
            stub(self.bin, "sudo", "exit 1")
        if mode != "no-apt":
            made = "".join(f'  : > {self.bin}/{name}; /bin/chmod 755 {self.bin}/{name}\n'
                           for name in sorted(gives))
            stub(self.bin, "apt-get", f'echo "$@" >> {self.log}\n'
                 + ("exit 100" if apt_fails else
                    f'[ "$1" = install ] || exit 0\n{made}exit 0'))

    def run(self, *args: str, path: str | None = None, cwd: Path = ROOT,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        env = {"PATH": path or str(self.bin), "HOME": str(self.bin.parent)}
        return subprocess.run(["/bin/sh", *args], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=timeout)

    def apt_calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


def missing(group: str, present: set[str]) -> list[str]:
    """The packages of `group` that a machine with `present` commands lacks, in table order."""
    def found(probe: str) -> bool:
        if probe.startswith(("/", "py:")):
            return HOST[probe]
        return probe in present
    return [row.package for row in ROWS
            if row.group in GROUPS[group] and not any(found(p) for p in row.probes)]


def commands_of(packages: list[str]) -> set[str]:
    return {p for row in ROWS if row.package in packages
            for p in row.probes if not p.startswith(("/", "py:"))}


def test_table_is_whole() -> None:
    """Every group's list is its parts' rows, and `list` prints them in the table's order."""
    assert {row.group for row in ROWS} == {"boot", "debug", "grade", "test"}
    for group, parts in GROUPS.items():
        listed = subprocess.run([str(DEPS), "list", group], capture_output=True, text=True,
                                check=True).stdout.split()
        assert listed == [row.package for row in ROWS if row.group in parts]
    # The boot group holds no browser, no GoogleTest and no test harness.
    boot = subprocess.run([str(DEPS), "list", "boot"], capture_output=True, text=True,
                          check=True).stdout.split()
    assert not {"chromium", "libgtest-dev", "googletest", "python3-pytest", "npm"} & set(boot)


def test_bad_group_and_command(tmp_path: Path) -> None:
    machine = Machine(tmp_path, set(COMMANDS), "root", set())
    for args in (["check", "nope"], ["missing", "boots"], ["frobnicate"]):
        result = machine.run(str(DEPS), *args)
        assert result.returncode == 2, args
        assert "tools/deps" in result.stderr or "usage" in result.stderr
        assert machine.apt_calls() == []


def test_random_machines(tmp_path: Path) -> None:
    rng = random.Random(seed())
    counts: dict[str, int] = {}
    modes = ["root", "sudo", "sudo-password", "no-sudo", "no-apt"]
    # The first cases are chosen so that every outcome below is reached whatever the seed:
    # (mode, apt-get gives all, apt-get fails, nothing missing).
    first = [("root", True, False, True), ("root", True, False, False),
             ("sudo", False, False, False), ("root", True, True, False),
             ("no-sudo", True, False, False), ("no-apt", True, False, False)]
    for case in range(CASES):
        present = {c for c in COMMANDS if rng.random() < 0.6}
        group = rng.choice(sorted(GROUPS))
        mode = rng.choice(modes)
        gives_all = rng.random() < 0.6
        apt_fails = rng.random() < 0.1
        if case < len(first):
            mode, gives_all, apt_fails, none_missing = first[case]
            present = set(COMMANDS) if none_missing else present - {"make", "git"}
            if not none_missing and not gives_all:
                present -= {"qemu-system-riscv64"}
        lacking = missing(group, present)
        gives = commands_of(lacking) if gives_all else {
            c for c in commands_of(lacking) if rng.random() < 0.5 and c != "make"}
        machine = Machine(tmp_path / f"case{case}", present, mode, gives, apt_fails)
        where = f"case {case}: group {group}, mode {mode}, present {sorted(present)}"

        listed = machine.run(str(DEPS), "missing", group)
        assert listed.returncode == 0, where
        assert listed.stdout.split() == lacking, where
        assert machine.apt_calls() == [], where

        result = machine.run(str(DEPS), "check", group)
        calls = machine.apt_calls()
        if not lacking:
            outcome = "nothing missing"
            assert (result.returncode, result.stderr, calls) == (0, "", []), where
        elif mode == "no-apt":
            outcome = "no apt-get"
            assert result.returncode == 1 and "no apt-get" in result.stderr, where
        elif mode in ("sudo-password", "no-sudo"):
            outcome = "told the command"
            assert result.returncode == 1, where
            assert calls == [], where
            command = ("sudo sh -c 'apt-get update && apt-get install -y "
                       f"--no-install-recommends {' '.join(lacking)}'")
            assert [line.strip() for line in result.stderr.splitlines()].count(command) == 1, \
                (where, result.stderr)
        else:
            prefix = ["sudo"] if mode == "sudo" else []
            assert calls[:len(prefix) + 1] == prefix + ["update -q"], (where, calls)
            if apt_fails:
                outcome = "apt-get failed"
                assert result.returncode == 1 and "apt-get failed" in result.stderr, where
            else:
                assert calls[len(prefix) + 1:] == prefix + [
                    "install -y -q --no-install-recommends " + " ".join(lacking)], (where, calls)
                still = missing(group, present | gives)
                if still:
                    outcome = "installed, some still missing"
                    assert result.returncode == 1, where
                    assert f"still missing after the install: {' '.join(still)}" \
                        in result.stderr, where
                else:
                    outcome = "installed"
                    assert result.returncode == 0, (where, result.stderr)
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"{CASES} cases: {counts}")
    # Every kind of outcome was tried, so a passing run says something about each.
    assert len(counts) == 6, counts


# --- Which interpreter the modules are looked for in ------------------------------------------

MODULES = [p[3:] for row in ROWS for p in row.probes if p.startswith("py:")]


def python_stub(folder: Path, name: str, has: set[str]) -> Path:
    """An interpreter that answers `-c CODE` as one would that can import `has`: it fails if
    CODE names a module it lacks (find-python's probe); given modules after CODE (tools/deps's
    probe), it prints those of them it has."""
    lacks = " ".join(m for m in MODULES if m not in has)
    stub(folder, name,
         f'if [ $# -gt 2 ]; then\n  shift 2; found=""\n'
         f'  for m in "$@"; do case " {lacks} " in *" $m "*) ;; *) found="$found $m" ;; esac; '
         f'done\n  echo $found; exit 0\nfi\n'
         f'for m in {lacks}; do case "$2" in *"\'$m\'"*|*\\"$m\\"*) exit 1 ;; '
         'esac; done\nexit 0')
    return folder / name


@pytest.mark.parametrize("path_has, system_has", [
    ({"pexpect"}, set()),                        # PATH's python3 has one module, Debian's none
    ({"pexpect"}, {"pytest", "elftools"}),       # each has some
    (set(MODULES), set()),                       # PATH's has all: it is the one used
    (set(), {"pytest", "pexpect", "xdist"}),     # Debian's has the harness, not elftools
    ({"pytest", "pexpect", "xdist"}, set()),     # PATH's has the harness, not elftools
])
def test_modules_are_looked_for_where_apt_puts_them(tmp_path: Path, path_has: set[str],
                                                    system_has: set[str]) -> None:
    """A python3 on PATH that has some of the modules but not the test harness (a separate
    install beside Debian's) must not hide a package: apt-get installs into Debian's
    interpreter, so unless PATH's python3 already has them all, the modules are looked for
    in Debian's (TERN_SYSTEM_PYTHON here, /usr/bin/python3 by default)."""
    machine = Machine(tmp_path, set(COMMANDS) - {"python3"}, "root", set())
    python_stub(machine.bin, "python3", path_has)
    system = python_stub(tmp_path, "system-python3", system_has)
    env = {"PATH": str(machine.bin), "HOME": str(tmp_path), "TERN_SYSTEM_PYTHON": str(system)}
    listed = subprocess.run(["/bin/sh", str(DEPS), "missing", "grade"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    used = path_has if set(MODULES) <= path_has else system_has
    packages = {row.probes[0][3:]: row.package for row in ROWS
                if row.probes[0].startswith("py:")}
    assert listed.stdout.split() == [packages[m] for m in MODULES if m not in used]
    chosen = subprocess.run(["/bin/sh", str(ROOT / "tools" / "find-python")], env=env,
                            capture_output=True, text=True, timeout=60).stdout.strip()
    assert chosen == ("python3" if set(MODULES) <= path_has else str(system)), chosen


def test_find_python_asks_for_the_tables_modules() -> None:
    """tools/find-python's test of an interpreter names exactly the py: rows' modules, so that
    the interpreter it picks is the one tools/deps found them in."""
    text = (ROOT / "tools" / "find-python").read_text()
    listed = re.search(r"for m in \(([^)]*)\)", text)
    assert listed, "find-python's module list"
    assert re.findall(r'"(\w+)"', listed.group(1)) == MODULES
