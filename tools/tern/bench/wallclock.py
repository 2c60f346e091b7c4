"""The benchmarks timed on the host's clock: boot, usertests, symbolization, export, the
grader.

These figures are seconds of real time, so they depend on the host and on whatever else it
is doing: on the project's shared two-core machines the same figure has moved by a factor of
two from one day to the next. Compare them only within one run of the bench, side by side.

* Boot: QEMU's start to the shell's first `$ `, and the kernel's first line (`tern:`, after
  OpenSBI's banner) to the same prompt, from the arrival times of the console's characters.
* usertests: the wall time of `usertests -q` at CPUS=3, typed at the shell.
* Symbolization: a kernel built with room for 131,072 samples (the default build holds
  65,536) is filled with 100,000 samples at the highest rate, and `bsys readtime` times two
  reads of /proc/profile inside the guest: the first looks each frame up once and keeps its
  text, the second finds every frame's text kept. Seconds are the guest's `time` counter,
  which follows the host's clock.
* Export: a profile of megabytes (`pdeep 32` sampled at 10 kHz until there are 3,500 samples
  or more, about 5 to 6 MB with the shell's shorter ones among them; the note gives the
  size) copied out as tools/profget does it, at CPUS=3: from typing `expcopy` to the JSON
  read back and checked on the host, which is the project's acceptance figure (target:
  under 10 s), and expcopy's part alone.
* The grader: `make grade LAB=profile` with one worker and with the default number.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tern import REPO
from tern import profget  # the benchmark copies the profile out with profget's code
from tern.bench.figures import Figure, Target
from tern.bench.icount import REFUSED, Unavailable, parse
from tern.machine import PANIC, TRAP, Machine, MachineError, qemu_command
from tern.prof import export, model

BIG_CAPACITY = 131072
SYMBOLIZE_TARGET_S = 0.5
FULL_SYMBOLIZE = 100_000  # samples in the full symbolization benchmark
BIG_BUILD = "build/bench-big"
TIMEBASE_HZ = 10_000_000


@dataclass(frozen=True)
class WallSizes:
    symbolize_samples: int
    usertests_args: str | None  # None: pick one quick test (the smoke pass)
    time_grader: bool
    export_samples: int


FULL = WallSizes(symbolize_samples=FULL_SYMBOLIZE, usertests_args="-q", time_grader=True,
                 export_samples=3_500)
SMOKE = WallSizes(symbolize_samples=2_000, usertests_args=None, time_grader=False,
                  export_samples=600)


# --- Boot -------------------------------------------------------------------------------------


def boot_figures() -> dict[str, Figure]:
    figs = {}
    for cpus in (1, 3):
        for key, what in (("qemu", "QEMU start"), ("kernel", "first kernel message")):
            f = Figure(f"boot.{key}.cpus{cpus}", "boot",
                       f"boot, {what} to first prompt, CPUS={cpus}", "s", "wall", digits=3)
            figs[f.key] = f
    return figs


def banner_offset(m: Machine) -> int:
    """Offset of the kernel's first line: the first `tern:` line after OpenSBI's banner."""
    log = m.boot_output
    match = re.compile(r"(?m)^tern:").search(log, max(log.find("OpenSBI v"), 0))
    if match is None:
        raise MachineError("no line starting with `tern:` before the prompt")
    return match.start()


def run_boot(cpus: int, figs: dict[str, Figure]) -> None:
    with Machine(cpus, name=f"bench-boot-{cpus}") as m:
        m.boot(timeout=120)
        prompt = m.arrival_time(len(m.boot_output))
        figs[f"boot.qemu.cpus{cpus}"].add(prompt - m.start_time)
        figs[f"boot.kernel.cpus{cpus}"].add(prompt - m.arrival_time(banner_offset(m)))


# --- usertests --------------------------------------------------------------------------------


def usertests_figure(sizes: WallSizes) -> Figure:
    args = sizes.usertests_args if sizes.usertests_args is not None else "NAME"
    name = ("usertests -q, CPUS=3" if args == "-q"
            else "usertests, one quick test (smoke pass), CPUS=3")
    return Figure("usertests.quick", "usertests", name, "s", "wall", digits=1)


def run_usertests(sizes: WallSizes, fig: Figure) -> None:
    with Machine(3, name="bench-usertests") as m:
        m.boot(timeout=120)
        args = sizes.usertests_args
        if args is None:
            listing = m.run("usertests -l", timeout=30)
            quick = re.findall(r"(?m)^(\S+) \(quick\)$", listing)
            if not quick:
                fig.missing = "usertests -l lists no quick test"
                return
            args = quick[0]
        start = time.monotonic()
        out = m.run(f"usertests {args}", timeout=1200, failures=(PANIC, TRAP))
        fig.add(time.monotonic() - start)
        verdict = re.search(r"(?m)^(ALL TESTS PASSED|FAILED:.*)$", out)
        fig.note = (f"`usertests {args}` said: {verdict.group(1)}" if verdict
                    else f"`usertests {args}` printed no verdict")


def usertests_available() -> bool:
    return (REPO / "build" / "user" / "_usertests").exists()


# --- Symbolization ----------------------------------------------------------------------------


def symbolize_figures(sizes: WallSizes) -> dict[str, Figure]:
    n = f"{sizes.symbolize_samples:,}"
    # The reader's target: a fresh profile of 100,000 samples read in at most half a second;
    # the smoke pass reads fewer, and has none.
    target = Target(SYMBOLIZE_TARGET_S) if sizes.symbolize_samples == FULL_SYMBOLIZE else None
    figs = [
        Figure("sym.first", "symbolize", f"symbolize {n} samples: first read of /proc/profile",
               "s", "wall", digits=3, target=target),
        Figure("sym.second", "symbolize", f"symbolize {n} samples: second read (names cached)",
               "s", "wall", digits=3, target=target),
        Figure("sym.rate", "symbolize", "/proc/profile output, first read", "MB/s", "wall",
               digits=2),
    ]
    return {f.key: f for f in figs}


def build_big_kernel(sizes: WallSizes) -> Path:
    """The kernel with room for the samples (built under its own build folder)."""
    if sizes.symbolize_samples <= 65536:
        return REPO / "build" / "kernel.elf"
    target = f"{BIG_BUILD}/kernel.elf"
    result = subprocess.run(
        ["make", "-s", f"KEXTRA=-DPROFILE_CAPACITY={BIG_CAPACITY}", f"BUILD={BIG_BUILD}", target],
        cwd=REPO, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-20:])
        raise MachineError(f"building {target} failed:\n{tail}")
    return REPO / target


def machine_with_kernel(kernel: Path, name: str) -> tuple[Machine, Path]:
    """A one-hart machine booting `kernel` on a private copy of fs.img."""
    tmp = Path(tempfile.mkdtemp(prefix="tern-bench-"))
    image = tmp / "fs.img"
    shutil.copyfile(REPO / "fs.img", image)
    argv = qemu_command(1, image)
    argv[argv.index("-kernel") + 1] = str(kernel)
    return Machine(1, name=name, command=argv), tmp


def run_symbolize(sizes: WallSizes, kernel: Path, figs: dict[str, Figure]) -> None:
    m, tmp = machine_with_kernel(kernel, "bench-symbolize")
    try:
        m.boot(timeout=120)
        want = sizes.symbolize_samples
        out = m.run(f"bsys fill {want}", timeout=want / 100 + 120)
        refused = REFUSED.search(out)
        if refused is not None:
            raise Unavailable(refused.group(1))
        fill = parse(out, "fill")[0]
        if fill["samples"] < want:
            for f in figs.values():
                f.missing = f"the profile held only {fill['samples']:,} samples"
            return
        passes = parse(m.run("bsys readtime /proc/profile 2", timeout=600), "readtime")
        first, second = passes[0], passes[1]
        figs["sym.first"].add(first["ticks"] / TIMEBASE_HZ)
        figs["sym.second"].add(second["ticks"] / TIMEBASE_HZ)
        figs["sym.rate"].add(first["bytes"] / (first["ticks"] / TIMEBASE_HZ) / 1e6)
        figs["sym.first"].note = (f"{fill['samples']:,} samples ({first['bytes'] / 1e6:,.1f} MB "
                                  f"of JSON) on a kernel built with PROFILE_CAPACITY="
                                  f"{BIG_CAPACITY if kernel.parent.name == 'bench-big' else 65536}"
                                  ", CPUS=1, timed inside the guest")
    finally:
        m.close()
        shutil.rmtree(tmp, ignore_errors=True)


# --- Export -----------------------------------------------------------------------------------

EXPORT_TARGET_S = 10.0  # the acceptance criterion: a 5 MB profile on the host in under 10 s


def export_figures(sizes: WallSizes) -> dict[str, Figure]:
    what = f"export a profile of >= {sizes.export_samples:,} pdeep 32 samples"
    figs = [
        Figure("export.total", "export", f"{what}: expcopy to checked JSON on the host", "s",
               "wall", digits=2, target=Target(EXPORT_TARGET_S)),
        Figure("export.expcopy", "export", f"{what}: expcopy alone", "s", "wall", digits=2),
        Figure("export.rate", "export", f"{what}: end to end", "MB/s", "wall", digits=1),
    ]
    return {f.key: f for f in figs}


def recorded_samples(m: Machine) -> int:
    found = re.search(r"(?m)^recorded: (\d+)$", m.run("profile status", timeout=30))
    if found is None:
        raise MachineError("`profile status` printed no `recorded:` line")
    return int(found.group(1))


def run_export(sizes: WallSizes, figs: dict[str, Figure]) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="tern-bench-"))
    try:
        image = tmp / "export.img"
        profget.blank_image(image, profget.DEFAULT_SIZE_MB << 20)
        with Machine(3, name="bench-export", extra_args=profget.export_drive_args(image)) as m:
            m.boot(timeout=120)
            # Sampled until there are enough: how many samples a second the guest manages
            # depends on the host's load, so a fixed run time would give any size.
            m.run("profile rate 10000", timeout=30)
            m.run("profile all on", timeout=30)
            for _ in range(30):
                m.run("pdeep 32 1", timeout=60, failures=(PANIC, TRAP))
                if recorded_samples(m) >= sizes.export_samples:
                    break
            m.run("profile all off", timeout=30)
            # A sample another hart began before sampling stopped may be committed after
            # this count: the document, taken when expcopy opens the file, holds at least
            # `before` samples and at most the count read after the copy.
            before = recorded_samples(m)
            start = m.position
            clock = profget.Clock()
            profget.copy_out(m, "/proc/profile", timeout=300)
            clock.lap("expcopy")
            split = re.search(r"expcopy: ms (.*)", m.output[start:])
            after = recorded_samples(m)
            clock.skip()
            profget.halt(m)
            clock.lap("halt")
        exported = export.read(image)
        clock.lap("unpack and CRC")
        profile = model.loads(exported.data.decode("utf-8"))
        clock.lap("JSON check")
        samples = len(profile.samples)
        if not before <= samples <= after:
            raise MachineError(f"the guest had recorded {before} samples before the copy and "
                               f"{after} after it, the host read {samples}")
        total = clock.total()
        figs["export.total"].add(total)
        figs["export.expcopy"].add(dict(clock.phases)["expcopy"])
        figs["export.rate"].add(len(exported.data) / 1e6 / total)
        figs["export.total"].note = (
            f"last run: {len(exported.data) / 1e6:.1f} MB, {samples:,} samples; "
            f"{clock.parts()}" + (f"; expcopy's own split, ms: {split.group(1).strip()}"
                                  if split else ""))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- The grader -------------------------------------------------------------------------------


def grader_figures() -> dict[str, Figure]:
    figs = [
        Figure("grade.jobs1", "grader", "make grade LAB=profile, GRADE_JOBS=1", "s", "wall",
               digits=1),
        # The target: the student's loop, `make grade` run many times a night, in 15 s.
        Figure("grade.default", "grader", "make grade LAB=profile, default workers", "s", "wall",
               digits=1, target=Target(15)),
    ]
    return {f.key: f for f in figs}


def grader_available() -> bool:
    result = subprocess.run(["make", "-n", "grade", "LAB=profile"], cwd=REPO,
                            capture_output=True, text=True)
    return result.returncode == 0


def run_grader(figs: dict[str, Figure]) -> None:
    for key, extra in (("grade.jobs1", ["GRADE_JOBS=1"]), ("grade.default", [])):
        start = time.monotonic()
        result = subprocess.run(["make", "grade", "LAB=profile", *extra], cwd=REPO,
                                capture_output=True, text=True, timeout=3600)
        figs[key].add(time.monotonic() - start)
        score = re.findall(r"(?m)^\s*(Score: .*?)\s*$", result.stdout + result.stderr)
        figs[key].note = (score[-1] if score else "no `Score:` line") + (
            f"; exit status {result.returncode}" if result.returncode != 0 else "")
