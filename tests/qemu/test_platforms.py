"""The platforms tern is tested on: each cell boots, runs `usertests -q` and the profile lab.

A course runs tern wherever its graders' image puts it, so the matrix varies what differs
between such images (README, "Platforms"):

* the timer: QEMU 7.1 and later have the Sstc extension; QEMU 6.x does not, and
  `-cpu rv64,sstc=off` stands for it (the kernel then arms its timers through the SBI);
* the number of harts: 1, 3 (the default) and NCPU (kern/abi/param.h), the most the kernel
  starts;
* the firmware: OpenSBI's fw_dynamic (QEMU's `-bios default`) and fw_jump from Debian's
  `opensbi` package, which jumps to 0x80200000 and puts the device tree at 0x82200000;
* the memory: the kernel's stated minimum (MIN_MEMORY_MIB in kern/arch/riscv/memlayout.h),
  128 MiB (the default) and 512 MiB.

The full product is 36 machines. The matrix boots six, a covering design: every pair of a
timer and a hart count (the timer is armed on every hart, in whatever order they arrive),
every pair of a firmware and a memory size (fw_jump's device tree sits at a fixed address),
and every pair of a timer and a firmware appear in at least one cell. test_design checks
that, so a changed table cannot lose a pair unnoticed.

A cell is one machine running `usertests -q` (the kernel's own suite, which must find the
memory there is, whatever its size) and, beside it, labs/profile/test_lab_profile.py in a second
pytest with GRADE_PLATFORM set to the cell's Makefile variables (tools/tern/machine.py boots
every machine of that run on them). Each cell's result is counted in the summary at the end
("platform <cell>: 1/1"); under pytest-xdist (`-n 2`) cells run in parallel. A failed cell's
consoles go to build/grade-logs/platforms/<cell>/ (usertests.log, the lab's own logs, and
pytest.txt, the lab run's output).
"""

from __future__ import annotations

import itertools
import os
import random
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tern.machine import LOG_DIR, REPO, Machine, timeout_scale
from test_usertests import check_still_works, run_usertests

FW_JUMP = Path("/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_jump.elf")
USERTESTS_TIMEOUT = 900  # usertests -q on NCPU harts of a busy two-core host
LAB_TIMEOUT = 900  # the lab's tests, one machine after another


def header_value(relative: str, pattern: str) -> int:
    text = (REPO / relative).read_text()
    match = re.search(pattern, text)
    assert match is not None, f"{relative} does not match {pattern!r}"
    return int(match.group(1))


NCPU = header_value("kern/abi/param.h", r"(?m)^#define NCPU (\d+)")
MIN_MIB = header_value("kern/arch/riscv/memlayout.h", r"MIN_MEMORY_MIB = (\d+);")

TIMERS = ("sstc", "sbi")
HARTS = (1, 3, NCPU)
FIRMWARES = ("fw_dynamic", "fw_jump")
MEMORIES = (MIN_MIB, 128, 512)


@dataclass(frozen=True)
class Cell:
    timer: str  # "sstc", or "sbi" for a CPU without Sstc
    harts: int
    firmware: str  # "fw_dynamic" or "fw_jump"
    mib: int

    @property
    def name(self) -> str:
        return f"{self.timer}-cpus{self.harts}-{self.firmware}-{self.mib}M"

    def makevars(self) -> tuple[str, ...]:
        """The Makefile variables that boot this cell (`make qemu` takes the same)."""
        out = [f"CPUS={self.harts}", f"MEM={self.mib}M",
               f"BIOS={'default' if self.firmware == 'fw_dynamic' else FW_JUMP}"]
        if self.timer == "sbi":
            out.append("CPU=rv64,sstc=off,sscofpmf=true")
        return tuple(out)


# Rows: the timers and hart counts in full; firmware and memory laid over them so that every
# firmware meets every memory size and every timer.
CELLS = (
    Cell("sstc", HARTS[0], "fw_dynamic", MEMORIES[0]),
    Cell("sbi", HARTS[0], "fw_jump", MEMORIES[1]),
    Cell("sstc", HARTS[1], "fw_jump", MEMORIES[2]),
    Cell("sbi", HARTS[1], "fw_dynamic", MEMORIES[1]),
    Cell("sstc", HARTS[2], "fw_dynamic", MEMORIES[2]),
    Cell("sbi", HARTS[2], "fw_jump", MEMORIES[0]),
)

# The pairs of factors the design must cover in full.
COVERED = (("timer", "harts"), ("firmware", "mib"), ("timer", "firmware"))
LEVELS = {"timer": TIMERS, "harts": HARTS, "firmware": FIRMWARES, "mib": MEMORIES}


def test_design() -> None:
    """Every level of every factor, and every pair named in COVERED, is in some cell."""
    for a, b in COVERED:
        seen = {(getattr(c, a), getattr(c, b)) for c in CELLS}
        missing = set(itertools.product(LEVELS[a], LEVELS[b])) - seen
        assert not missing, f"no cell has these ({a}, {b}) pairs: {sorted(missing)}"
    assert len({c.name for c in CELLS}) == len(CELLS), "two cells are the same"
    print(f"{len(CELLS)} cells cover {len(COVERED)} pairs of factors "
          f"(the full product has {len(list(itertools.product(*LEVELS.values())))})")


README_ROW = re.compile(r"(?m)^\| (sstc|sbi) \| (\d+) \| (fw_\w+) \| (\d+) MiB \|$")


def test_readme_lists_the_cells() -> None:
    """The README's "Platforms" section shows exactly the cells tested here."""
    text = (REPO / "README.md").read_text()
    start = text.find("\n## Platforms\n")
    assert start >= 0, "the README has no `## Platforms` section"
    end = text.find("\n## ", start + 1)
    rows = README_ROW.findall(text[start:end if end > 0 else len(text)])
    listed = [Cell(t, int(h), f, int(mib)) for t, h, f, mib in rows]
    assert sorted(listed, key=str) == sorted(CELLS, key=str), (
        f"the README lists {[c.name for c in listed]}, the matrix is {[c.name for c in CELLS]}")


def check_banner(m: Machine, cell: Cell) -> None:
    """The boot says what it runs on: the timer, the harts and the memory."""
    log = m.boot_output
    assert re.search(rf"(?m)^tern: timer: {cell.timer}$", log), (
        f"the banner should say `tern: timer: {cell.timer}`:\n{log[-1500:]}")
    assert re.search(rf"(?m)^tern: {cell.harts} harts, {cell.mib} MiB memory$", log), (
        f"the banner should say `tern: {cell.harts} harts, {cell.mib} MiB memory`")
    next_arg1 = re.search(r"Domain0 Next Arg1\s*:\s*0x([0-9a-f]+)", log)
    assert next_arg1 is not None, "OpenSBI did not print where it put the device tree"
    fixed_fdt = int(next_arg1.group(1), 16) == 0x82200000  # fw_jump's FW_JUMP_FDT_ADDR
    assert fixed_fdt == (cell.firmware == "fw_jump"), (
        f"the firmware that booted is not {cell.firmware}: {next_arg1.group(0)}")


def start_lab(cell: Cell) -> tuple[subprocess.Popen[str], Path]:
    """labs/profile/test_lab_profile.py on the cell's platform, in a pytest of its own."""
    logs = LOG_DIR / "platforms" / cell.name
    logs.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GRADE_PLATFORM=shlex.join(cell.makevars()),
               GRADE_LOG_DIR=str(logs))
    env.pop("PYTEST_XDIST_WORKER", None)
    out = logs / "pytest.txt"
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-build",
             "labs/profile/test_lab_profile.py"],
            cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
    return proc, out


@pytest.mark.slow
@pytest.mark.parametrize("cell", CELLS, ids=[c.name for c in CELLS])
def test_platform(cell: Cell, record_property) -> None:
    if cell.firmware == "fw_jump":
        assert FW_JUMP.exists(), f"{FW_JUMP} is missing: install Debian's opensbi (make deps)"
    start = time.monotonic()
    record_property("tally", f"platform {cell.name}")
    lab, lab_out = start_lab(cell)
    try:
        with Machine(cell.harts, name=f"test_platforms.{cell.name}", platform=cell.makevars(),
                     log_path=lab_out.with_name("usertests.log")) as m:
            try:
                m.boot(timeout=120)
                check_banner(m, cell)
                run_usertests(m, "-q", timeout=USERTESTS_TIMEOUT)
                check_still_works(m)
            except AssertionError as e:
                raise AssertionError(f"{e}\n(console: {m.save_log()})") from None
        try:
            lab.wait(timeout=LAB_TIMEOUT * timeout_scale())
        except subprocess.TimeoutExpired:
            pytest.fail(f"the lab's tests on {cell.name} took more than {LAB_TIMEOUT} s")
    finally:
        if lab.poll() is None:
            lab.kill()
            lab.wait()
    summary = lab_out.read_text()
    assert lab.returncode == 0, (
        f"the profile lab's tests failed on {cell.name} (GRADE_PLATFORM="
        f"{' '.join(cell.makevars())}); its output is in {lab_out}:\n" + summary[-3000:])
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and int(passed.group(1)) > 0, f"the lab ran no test:\n{summary}"
    print(f"{cell.name}: usertests -q and {passed.group(1)} lab tests passed in "
          f"{time.monotonic() - start:.0f} s")


MEMORY_CASES = 4


@pytest.mark.slow
def test_memory_eaters_at_random_sizes() -> None:
    """usertests' out-of-memory tests pass at any size from the minimum to 512 MiB: they
    measure against the memory that is free, not a size they assume (seeded:
    TERN_MEMORY_SEED)."""
    seed = int(os.environ.get("TERN_MEMORY_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    sizes = [rng.randint(MIN_MIB, 512) for _ in range(MEMORY_CASES)]
    print(f"seed {seed}, {len(sizes)} machines of {sizes} MiB")
    for mib in sizes:
        with Machine(1, name=f"test_platforms.memory.{mib}M", platform=(f"MEM={mib}M",),
                     log_path=LOG_DIR / "platforms" / f"memory-{mib}M.log") as m:
            try:
                m.boot(timeout=120)
                assert f"tern: 1 harts, {mib} MiB memory" in m.boot_output
                out = run_usertests(m, "sbrkoom oompaths sbrkcycle",
                                    timeout=USERTESTS_TIMEOUT, min_tests=3)
                assert "test sbrkoom: OK" in out, "sbrkoom did not run"
            except AssertionError as e:
                raise AssertionError(f"seed {seed}, {mib} MiB: {e}\n(console: "
                                     f"{m.save_log()})") from None
