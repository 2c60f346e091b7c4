#!/bin/sh
''''exec "$("$(dirname "$0")/../tools/find-python")" "$0" "$@" # '''
"""Benchmark figures for tern: `make bench` (and `make bench-smoke`; `make test` runs the same
pass, tests/qemu/test_bench_smoke.py).

    tools/bench [--smoke] [--runs N] [--only GROUP,...] [--no-build] [--readme FILE]

Runs each benchmark several times, prints a table of figures (the median of the runs, with
their spread), and writes every value to build/bench/results.json (the smoke pass writes
build/bench/results-smoke.json), plus the same table in Markdown to build/bench/table.md.

The groups, in the order they run:

  syscalls   system calls, counted in guest instructions under -icount (icount.py)
  profiler   the profiler's cost per sample, its slowdown, rendering /proc/profile, and
             the timer trap on both clocks, Sstc and SBI (icount)
  ramdisk    the file write (exactly) and `usertests -q` on a RAM disk (-initrd) (icount)
  boot       boot time at CPUS=1 and CPUS=3 (wall clock; wallclock.py)
  usertests  `usertests -q` at CPUS=3 (wall clock)
  symbolize  reading /proc/profile with 100,000 samples in it (wall clock)
  export     a profile of over 5 MB copied out to the host by expcopy (wall clock)
  grader     `make grade LAB=profile` with one worker and with the default (wall clock)

Two kinds of figure. Instruction counts (clock "icount") come from a one-hart QEMU with
`-icount shift=0,sleep=off`, where the count is a property of the code alone: every run boots
a fresh machine and types the same commands, and the counts repeat exactly. This run's exact
figures are compared with the previous run's results, and any difference is printed.
Wall-clock figures (clock "wall") depend on the host and its load; compare them only within
one run.

The smoke pass does one run of everything with small sizes, times only a dry run of the
grader and one usertests test, and takes a minute or two. It is there so that the
benchmarks keep working; nothing here asserts anything about the figures, and a benchmark
that cannot run (a missing program, no `make grade` yet) shows n/a with the reason.

--readme FILE replaces the text between the lines `<!-- bench table begin -->` and
`<!-- bench table end -->` in FILE with this run's table and the command that made it.
"""


import argparse
import datetime
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from tern import REPO
from tern.bench import figures as F
from tern.bench import icount, wallclock
from tern.bench.icount import ICOUNT_ARGS
from tern.bench.wallclock import Machine, MachineError
OUT_DIR = REPO / "build" / "bench"
GROUPS = ("syscalls", "profiler", "ramdisk", "boot", "usertests", "symbolize", "export", "grader")
README_BEGIN = "<!-- bench table begin -->"
README_END = "<!-- bench table end -->"


def mark_missing(figs, reason: str) -> None:
    for f in figs:
        if not f.values and not f.missing:
            f.missing = reason


def profiler_step(step, g: "icount.Session", sizes: "icount.Sizes",
                  figs: dict[str, F.Figure]) -> bool:
    """Run a profiler benchmark; False if the kernel refused the profiler (a lab's starter
    tree), in which case its figures are n/a and the profiler is not tried again."""
    try:
        step(g, sizes, figs)
        return True
    except icount.Unavailable as e:
        mark_missing(figs.values(), f"the profiler is not available ({e})")
        return False


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


class Bench:
    """One invocation: the chosen groups, their figures, and how many runs of each."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.smoke: bool = args.smoke
        self.groups = args.only
        default_runs = 1 if self.smoke else None
        self.runs = args.runs or default_runs
        self.sizes = icount.SMOKE if self.smoke else icount.FULL
        self.wall = wallclock.SMOKE if self.smoke else wallclock.FULL
        self.figures: list[F.Figure] = []
        self.seconds: dict[str, float] = {}  # host time each group took

    def runs_of(self, full_default: int) -> int:
        return self.runs if self.runs is not None else full_default

    def repeat(self, group: str, full_default: int, what: str, run: Callable[[], None]) -> None:
        """Call `run` runs_of(full_default) times, each time after a line `GROUP run I/N: what`."""
        runs = self.runs_of(full_default)
        for i in range(runs):
            log(f"{group} run {i + 1}/{runs}" + (f": {what}" if what else ""))
            run()

    def wanted(self, group: str) -> bool:
        return group in self.groups

    def keep(self, figs: dict[str, F.Figure]) -> dict[str, F.Figure]:
        self.figures.extend(figs.values())
        return figs

    # -- the groups --

    def run_icount(self) -> None:
        want_sys, want_prof = self.wanted("syscalls"), self.wanted("profiler")
        if not (want_sys or want_prof):
            return
        sys_figs = self.keep(icount.syscall_figures(self.sizes)) if want_sys else {}
        prof_figs = self.keep(icount.profiler_figures(self.sizes)) if want_prof else {}
        runs = self.runs_of(3)
        for i in range(runs):
            log(f"icount run {i + 1}/{runs}: system calls and the profiler, CPUS=1")
            with Machine(1, name="bench-icount", extra_args=ICOUNT_ARGS) as m:
                m.boot(timeout=120)
                g = icount.Session(m)
                if want_prof:  # rendering first: it depends on the time since boot
                    want_prof = profiler_step(icount.run_render, g, self.sizes, prof_figs)
                if want_sys:
                    icount.run_syscalls(g, self.sizes, sys_figs)
                if want_prof:
                    want_prof = profiler_step(icount.run_profiler, g, self.sizes, prof_figs)
            if want_prof:
                log(f"icount run {i + 1}/{runs}: the profiler on the SBI clock (no Sstc)")
                with Machine(1, name="bench-icount-sbi",
                             extra_args=ICOUNT_ARGS + icount.SBI_CLOCK_ARGS) as m:
                    m.boot(timeout=120)
                    want_prof = profiler_step(icount.run_sbi_clock, icount.Session(m),
                                              self.sizes, prof_figs)

    def run_ramdisk(self) -> None:
        if not self.wanted("ramdisk"):
            return
        figs = self.keep(icount.ramdisk_figures(self.sizes))
        runs = self.runs_of(3)
        for i in range(runs):
            log(f"ramdisk run {i + 1}/{runs}: file write and usertests on a RAM disk, CPUS=1")
            with Machine(1, name="bench-ramdisk", extra_args=ICOUNT_ARGS, ramdisk=True) as m:
                m.boot(timeout=120)
                icount.run_ramdisk(icount.Session(m), self.sizes, figs)

    def run_boot(self) -> None:
        if not self.wanted("boot"):
            return
        figs = self.keep(wallclock.boot_figures())
        runs = self.runs_of(5)
        for cpus in (1, 3):
            log(f"boot, CPUS={cpus}: {runs} boots")
            for _ in range(runs):
                wallclock.run_boot(cpus, figs)

    def run_usertests(self) -> None:
        if not self.wanted("usertests"):
            return
        fig = wallclock.usertests_figure(self.wall)
        self.figures.append(fig)
        if not wallclock.usertests_available():
            fig.missing = "no usertests program"
            return
        self.repeat("usertests", 3, "", lambda: wallclock.run_usertests(self.wall, fig))

    def run_symbolize(self) -> None:
        if not self.wanted("symbolize"):
            return
        figs = self.keep(wallclock.symbolize_figures(self.wall))
        log("building the kernel with room for the samples")
        kernel = wallclock.build_big_kernel(self.wall)
        try:
            self.repeat("symbolize", 3, f"{self.wall.symbolize_samples:,} samples",
                        lambda: wallclock.run_symbolize(self.wall, kernel, figs))
        except icount.Unavailable as e:
            mark_missing(figs.values(), f"the profiler is not available ({e})")

    def run_export(self) -> None:
        if not self.wanted("export"):
            return
        figs = self.keep(wallclock.export_figures(self.wall))
        self.repeat("export", 3, f"{self.wall.export_samples:,} samples of pdeep 32",
                    lambda: wallclock.run_export(self.wall, figs))

    def run_grader(self) -> None:
        if not self.wanted("grader"):
            return
        figs = self.keep(wallclock.grader_figures())
        if not wallclock.grader_available():
            mark_missing(figs.values(), "make grade not available")
            return
        if not self.wall.time_grader:
            mark_missing(figs.values(), "not timed in the smoke pass; `make -n grade` works")
            return
        self.repeat("grader", 1, "make grade LAB=profile, one worker and default",
                    lambda: wallclock.run_grader(figs))

    def run_all(self) -> list[str]:
        """Run every wanted group; a group that fails is reported and the rest still run."""
        problems = []
        steps: list[tuple[str, Callable[[], None]]] = [
            ("icount", self.run_icount), ("ramdisk", self.run_ramdisk), ("boot", self.run_boot),
            ("usertests", self.run_usertests), ("symbolize", self.run_symbolize),
            ("export", self.run_export), ("grader", self.run_grader)]
        for name, step in steps:
            before = len(self.figures)
            start = time.monotonic()
            try:
                step()
            except (MachineError, OSError, subprocess.SubprocessError) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                problems.append(f"{name}: {e}")
                mark_missing(self.figures[before:], f"failed: {first}")
            if len(self.figures) > before:
                self.seconds[name] = round(time.monotonic() - start, 1)
                log(f"{name}: {self.seconds[name]:.0f} s")
        return problems


# --- Output -------------------------------------------------------------------------------------


def command_line(argv: list[str] | None) -> str:
    """The command that made the figures; argv None means this process's own arguments."""
    made_by = os.environ.get("BENCH_COMMAND")  # set by the Makefile: `make bench`
    return made_by or "tools/bench " + shlex.join(sys.argv[1:] if argv is None else argv)


def digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    except OSError:
        return ""


def inputs() -> dict[str, str]:
    """What the exact figures depend on: the kernel and the disk image with its programs."""
    return {"kernel_sha256": digest(REPO / "build" / "kernel.elf"),
            "fs_img_sha256": digest(REPO / "fs.img")}


def meta(command: str, smoke: bool, seconds: float) -> dict:
    def out(*cmd: str) -> str:
        try:
            return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    dirty = out("git", "status", "--porcelain", "--untracked-files=no")
    qemu = out("qemu-system-riscv64", "--version").splitlines()
    return {
        "command": command,
        "mode": "smoke" if smoke else "full",
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "commit": out("git", "rev-parse", "--short", "HEAD") + (" (modified)" if dirty else ""),
        "qemu": qemu[0] if qemu else "",
        "host": f"{platform.node()}, {os.cpu_count()} cpus",
        "seconds": round(seconds, 1),
    }


def markdown(figures: list[F.Figure], info: dict) -> str:
    lines = [f"Made by `{info['command']}` on {info['date'][:10]} (commit {info['commit']}, "
             f"{info['qemu']}, {info['host']}, {info['seconds']:.0f} s).", "",
             F.markdown_table(figures)]
    notes = F.notes(figures)
    if notes:
        lines += ["", "Notes:", "", notes]
    return "\n".join(lines) + "\n"


def update_readme(path: Path, text: str) -> bool:
    body = path.read_text()
    begin, end = body.find(README_BEGIN), body.find(README_END)
    if begin < 0 or end < begin:
        return False
    path.write_text(body[:begin + len(README_BEGIN)] + "\n" + text + body[end:])
    return True


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Benchmark figures for tern.")
    p.add_argument("--smoke", action="store_true", help="one run of everything, small sizes")
    p.add_argument("--runs", type=int, help="runs of each benchmark (default: 3; 5 boots; "
                   "1 grader run; 1 of everything with --smoke)")
    p.add_argument("--only", type=lambda s: [g.strip() for g in s.split(",") if g.strip()],
                   default=list(GROUPS), help="comma-separated groups: " + ",".join(GROUPS))
    p.add_argument("--no-build", action="store_true", help="do not run `make all` first")
    p.add_argument("--readme", type=Path, help="put the table into this file, between its "
                   f"lines {README_BEGIN} and {README_END}")
    args = p.parse_args(argv)
    unknown = [g for g in args.only if g not in GROUPS]
    if unknown:
        p.error(f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}")
    if args.runs is not None and args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not args.no_build and "MAKELEVEL" not in os.environ:
        log("make all")
        built = subprocess.run(["make", "-s", "all"], cwd=REPO, capture_output=True, text=True)
        if built.returncode != 0:
            print((built.stdout + built.stderr)[-3000:], file=sys.stderr)
            return 2
    bench = Bench(args)
    start = time.monotonic()
    used = inputs()
    problems = bench.run_all()
    info = meta(command_line(argv), bench.smoke, time.monotonic() - start)
    info["group_seconds"] = bench.seconds
    info.update(used)
    # Another build during the run (the tree is shared) would mix two kernels in one table.
    names = {"kernel_sha256": "build/kernel.elf", "fs_img_sha256": "fs.img"}
    info["rebuilt_during_run"] = [names[k] for k, v in inputs().items() if used[k] != v]

    name = "results-smoke.json" if bench.smoke else "results.json"
    out = OUT_DIR / name
    previous = None
    if out.exists():
        try:
            previous = json.loads(out.read_text())
        except (OSError, ValueError):
            previous = None
        out.replace(out.with_name(out.stem + ".prev.json"))
    F.save(out, bench.figures, info)
    table_md = markdown(bench.figures, info)
    (OUT_DIR / ("table-smoke.md" if bench.smoke else "table.md")).write_text(table_md)

    print()
    print(F.text_table(bench.figures))
    notes = F.notes(bench.figures)
    if notes:
        print("\nNotes:\n" + notes)
    print(f"\n{info['command']}: {info['seconds']:.0f} s; figures in {out.relative_to(REPO)}")
    if previous is not None:
        print("\n".join(F.compare(previous, bench.figures)))
        changed = [k for k in ("kernel_sha256", "fs_img_sha256") if previous.get(k) != info[k]]
        if changed:
            print("  (the previous run used a different "
                  + " and ".join("kernel" if k.startswith("kernel") else "disk image"
                                 for k in changed)
                  + ": differences are expected)")
    if args.readme is not None:
        if update_readme(args.readme, table_md):
            print(f"table written into {args.readme}")
        else:
            print(f"{args.readme} has no `{README_BEGIN}` ... `{README_END}` lines",
                  file=sys.stderr)
    if info["rebuilt_during_run"]:
        print(f"bench: warning: {' and '.join(info['rebuilt_during_run'])} rebuilt while the "
              "bench ran: the figures may mix two builds", file=sys.stderr)
    for p in problems:
        print(f"bench: a benchmark could not run: {p}", file=sys.stderr)
    # A benchmark that could not run is reported, and in the smoke pass it fails `make test`:
    # that pass exists to keep the benchmarks working.
    return 1 if problems and bench.smoke else 0

