"""The profiler's lecture demos: run one in tern, bring its profile out, draw every view.

    tools/demo [NAME] [-o DIR] [options]    run demo NAME (hot if none is named)
    tools/demo list                         the demos, with the lesson of each
    tools/demo --command CMD [NAME]         CMD instead of the demo's commands
    tools/demo --views PROFILE [-o DIR]     only the views, of a profile already on disk

`make demo DEMO=NAME` runs this; lectures/README.md is the lecture script that goes with
it. A demo is a few shell commands typed at tern's prompt after `profile rate RATE`, on a
machine with a given number of harts. tools/profget boots tern, types them, and copies
/proc/profile out through the export disk; then every view of it is written to DIR
(build/demo/NAME/ by default):

    profile.json  report.html  flame.svg  profile.folded  profile.speedscope.json
    profile.perf.txt  profile.pb.gz  console.txt (what the commands printed)

and the table of functions is printed last, with a note if the function the lesson is about
did not come out on top. --rate and --cpus override the demo's own; --command (repeat it for
several) replaces its commands, and without a NAME the views go to build/demo/custom/.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import List, Optional, Tuple

from tern import REPO
from tern.prof import cli, model, top

PROFGET = REPO / "tools" / "profget"
DEMO_ROOT = REPO / "build" / "demo"


@dataclass(frozen=True)
class Demo:
    name: str
    lesson: str  # one line, for `tools/demo list`
    commands: Tuple[str, ...]  # typed at the shell, after `profile rate RATE`
    hot: str  # the function that should have the most self samples, as `profconv top` names it
    cpus: int = 3
    rate: int = 1000
    also: Tuple[str, ...] = ()  # functions that may come first instead, as part of the lesson

    def expected(self) -> Tuple[str, ...]:
        return (self.hot,) + self.also if self.hot else ()


DEMOS = (
    Demo("hot", "self and inclusive time: main -> outer -> middle -> hot, most samples in hot",
         ("profile run spin 3",), hot="hot"),
    Demo("primes", "one answer, two algorithms: trial division (is_prime) dwarfs the sieve",
         ("profile run primes naive 1000000", "profile run primes sieve 1000000"),
         hot="is_prime"),
    Demo("syscalls", "one byte per read(): the time goes to entering and leaving the kernel",
         ("profile run bytewise 8",), hot="[k] usertrap",
         # Ticks that came while interrupts were off land where they come back on (skid):
         # on a busy host pop_off() can lead by a few samples. All three are the crossing.
         also=("read", "[k] pop_off()")),
    Demo("compete", "two busy programs on one hart take turns, and each runs slower than alone",
         ("crc", "primes naive 2000000", "profile all on", "crc & primes naive 2000000",
          "profile all off"), hot="is_prime", cpus=1),
)
DEFAULT = "hot"
CUSTOM = "custom"  # the name of a run of --command without a demo

# The files written besides profile.json, and the profconv format of each.
VIEWS = (("report.html", "html"), ("flame.svg", "svg"), ("profile.folded", "folded"),
         ("profile.speedscope.json", "speedscope"), ("profile.perf.txt", "perf"),
         ("profile.pb.gz", "pprof"))
WAITS_VIEW = "flame-waits.svg"  # on-CPU and wait samples, when the profile has waits


def find(name: str) -> Optional[Demo]:
    return next((d for d in DEMOS if d.name == name), None)


def listing() -> str:
    width = max(len(d.name) for d in DEMOS)
    lines = [f"  {d.name:<{width}}  {d.lesson}" for d in DEMOS]
    return "the demos (make demo DEMO=NAME):\n" + "\n".join(lines) + "\n"


def run_profget(demo: Demo, out: Path, build: bool) -> bool:
    """Boot tern, type the commands, bring /proc/profile out to out/profile.json. What the
    machine printed goes to standard error as it comes, and into out/console.txt."""
    argv = [sys.executable, str(PROFGET), "--cpus", str(demo.cpus), "-o",
            str(out / "profile.json"), f"profile rate {demo.rate}", *demo.commands]
    if not build:
        argv.insert(2, "--no-build")
    with open(out / "console.txt", "wb") as log, \
            subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:
        assert proc.stdout is not None
        for chunk in iter(lambda: proc.stdout.read1(4096), b""):
            sys.stderr.buffer.write(chunk)
            sys.stderr.flush()
            log.write(chunk)
    return proc.returncode == 0


def write_views(profile_path: Path, out: Path, title: Optional[str] = None,
                rate: Optional[int] = None) -> model.Profile:
    """Every view of the profile, into out/. Raises model.ProfileError for a bad profile.
    Without the rate, the pprof view estimates it from the timestamps."""
    profile = cli.read_profile(str(profile_path))
    options = (["--title", title] if title else []) + (["--rate", str(rate)] if rate else [])
    for filename, fmt in VIEWS:
        data = cli.convert(fmt, profile, cli.parser().parse_args([fmt, "-", *options]))
        (out / filename).write_bytes(data)
    # The views show the CPU (profconv's default); with wait samples, a flame graph of the
    # whole lifetime too, the waits drawn apart.
    if any(s.waiting for s in profile.samples):
        args = cli.parser().parse_args(["svg", "-", "--cpu", "both", *options])
        (out / WAITS_VIEW).write_bytes(cli.convert("svg", profile, args))
    return profile


def shown(path: Path) -> str:
    """The path relative to the current directory if it is below it: shorter to read."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


def report(profile: model.Profile, out: Path, expected: Tuple[str, ...]) -> None:
    """The table of functions (with each one's hottest line, found once for every view),
    where the views are, and whether the lesson came out."""
    waits = sum(1 for s in profile.samples if s.waiting)
    profile = profile.of_cpu("on")  # as the views show it
    sources = cli.sources(profile, cli.parser().parse_args(["top", "-"]))
    print(top.render(profile, sources=sources), end="")
    if waits:
        print(f"(and {waits} wait samples of processes asleep: `tools/profconv top --cpu off "
              f"{shown(out / 'profile.json')}` lists them, {shown(out / WAITS_VIEW)} draws them)")
    print(f"Every view is in {shown(out)}/: open {shown(out / 'report.html')} in a browser.")
    rows = top.rows(profile)
    if expected and rows and rows[0].display not in expected:
        print(f"note: {' or '.join(expected)} should have the most self samples, but "
              f"{rows[0].display} has; the lecture script's numbers will not match this run.")


def parse(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="demo", description="Run one of the profiler's lecture demos in tern and write "
        "every view of its profile.", epilog=listing(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", metavar="NAME", help="a demo, or `list`")
    p.add_argument("-o", "--output", type=Path, metavar="DIR",
                   help="where to write the views (default build/demo/NAME)")
    p.add_argument("--command", action="append", metavar="CMD",
                   help="a shell command to run instead of the demo's (repeatable)")
    p.add_argument("--rate", type=int, metavar="HZ", help="samples a second")
    p.add_argument("--cpus", type=int, metavar="N", help="harts")
    p.add_argument("--views", type=Path, metavar="PROFILE",
                   help="write the views of this profile; run nothing")
    p.add_argument("--no-build", action="store_true", help="do not run make first")
    args = p.parse_args(argv)
    if args.rate is not None and not 10 <= args.rate <= 10000:
        p.error("--rate must be from 10 to 10000 samples a second")
    if args.cpus is not None and args.cpus < 1:
        p.error("--cpus must be at least 1")
    return args


def main(argv: Optional[List[str]] = None) -> int:
    args = parse(argv)
    if args.views is not None:
        out = args.output or DEMO_ROOT / "report"
        out.mkdir(parents=True, exist_ok=True)
        try:
            report(write_views(args.views, out), out, None)
        except model.ProfileError as err:
            print(f"demo: {err}", file=sys.stderr)
            return 1
        return 0
    if args.name == "list":
        print(listing(), end="")
        return 0

    name = args.name or (CUSTOM if args.command else DEFAULT)
    demo = find(name)
    if demo is None and name == CUSTOM and args.command:
        demo = Demo(CUSTOM, "", (), hot="")
    if demo is None:
        print(f"demo: there is no demo called {name!r}\n{listing()}", file=sys.stderr, end="")
        return 2
    if args.command:
        demo = replace(demo, lesson="", commands=tuple(args.command), hot="")
    demo = replace(demo, cpus=args.cpus or demo.cpus, rate=args.rate or demo.rate)

    out = args.output or DEMO_ROOT / demo.name
    out.mkdir(parents=True, exist_ok=True)
    if demo.lesson:
        print(f"demo {demo.name}: {demo.lesson}", file=sys.stderr)
    if not run_profget(demo, out, build=not args.no_build):
        print(f"demo: the run in tern failed; what it printed is in {shown(out)}/console.txt",
              file=sys.stderr)
        return 1
    try:
        profile = write_views(out / "profile.json", out, f"tern demo: {demo.name}", demo.rate)
    except model.ProfileError as err:
        print(f"demo: {err}", file=sys.stderr)
        return 1
    report(profile, out, demo.expected())
    return 0
