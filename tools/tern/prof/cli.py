"""profconv: turn a tern profile into a report or into another profiler's file format.

    tools/profconv FORMAT PROFILE [-o OUT] [options]

PROFILE is the JSON of /proc/profile (a file, or - for standard input), or an export image
written by `expcopy /proc/profile` (tools/profget makes one), which is unpacked first.
FORMAT is one of:

    top         the table of functions by self and inclusive samples (like `profile top`),
                with each function's hottest source line
    folded      folded stacks, for flamegraph.pl, inferno or speedscope
    speedscope  speedscope's JSON format (https://www.speedscope.app)
    perf        `perf script` text, for the Firefox Profiler or speedscope
    pprof       gzipped profile.proto, for `go tool pprof` (binary: needs -o or a pipe)
    svg         a flame graph picture
    html        a report page: flame graph (zoom, search), timeline, table of functions,
                and the source of the hottest functions with a count beside each line

Source lines (top, pprof, html) come from the DWARF line tables of the binaries in build/
(--build DIR names another folder), when those are the binaries that were profiled
(lines.py checks); --no-source leaves them out.

Skid: a sample whose timer interrupt had been held off by disabled interrupts ("irqoff")
shows where they came back on (pop_off, usertrap, the return to user mode), not where the
time went. --late keeps only those samples, to see which locks and which system calls hid
the time (the frames below pop_off name them); --on-time keeps the others, a profile without
the skid. Every format takes them.

The output goes to standard output unless -o names a file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from . import export, folded, lines, model, perf, pprof, report, speedscope, svg, top

FORMATS = ("top", "folded", "speedscope", "perf", "pprof", "svg", "html")


class UsageError(Exception):
    pass


def parse_pids(values: Optional[List[str]]) -> Optional[List[int]]:
    """--pid 3 --pid 4,5 -> [3, 4, 5]; None when no --pid was given."""
    if not values:
        return None
    pids = []
    for value in values:
        for part in value.split(","):
            if not part.strip().isdigit():
                raise UsageError(f"--pid wants process numbers, not {part!r}")
            pids.append(int(part))
    return pids


def parse_names(values: Optional[List[str]]) -> Dict[int, str]:
    """--name 3=spin -> {3: "spin"}."""
    names = {}
    for value in values or []:
        pid, sep, name = value.partition("=")
        if not sep or not pid.strip().isdigit() or not name.strip():
            raise UsageError(f"--name wants PID=NAME, not {value!r}")
        names[int(pid)] = name.strip()
    return names


def read_profile(path: str) -> model.Profile:
    """The profile in a JSON file, on standard input, or inside an export image.

    The profile's end_time is when the file was last written (tools/profget writes it
    just after the run), or now for standard input.
    """
    if path == "-":
        profile = model.loads(sys.stdin.read())
        profile.end_time = time.time()
        return profile
    try:
        with open(path, "rb") as f:
            raw = f.read()
            written = os.fstat(f.fileno()).st_mtime_ns / 1e9
    except OSError as err:
        raise model.ProfileError(f"cannot read {path}: {err.strerror}") from None
    if raw.startswith(export.MAGIC):
        try:
            raw = export.parse(raw).data
        except export.ExportError as err:
            raise model.ProfileError(f"{path}: {err}") from None
    try:
        profile = model.loads(raw.decode("utf-8"))
        profile.end_time = written
        return profile
    except UnicodeDecodeError as err:
        raise model.ProfileError(f"{path}: not a text file ({err.reason} at byte {err.start})") \
            from None
    except model.ProfileError as err:
        raise model.ProfileError(f"{path}: {err}") from None


def held_note(profile: model.Profile) -> Optional[str]:
    """How many samples were held off by disabled interrupts, and how to see them; None if
    none were (or the kernel does not say)."""
    held = sum(1 for s in profile.samples if s.irqoff)
    if not held:
        return None
    n = len(profile.samples)
    return (f"{held} of {n} samples ({100.0 * held / n:.0f}%) were taken late, their interrupt "
            f"held off by disabled interrupts: they show where interrupts came back on "
            f"(pop_off, usertrap), not where the time went; --late lists only them, "
            f"--on-time the rest")


def sources(profile: model.Profile, args: argparse.Namespace) -> Optional[lines.Sources]:
    """The source lines of the profile's frames, for the formats that show them (None with
    --no-source). Why some are missing is said on standard error."""
    if args.no_source:
        return None
    key = (id(profile), args.build)
    if key in _sources and _sources[key][0] is profile:
        return _sources[key][1]
    found = lines.for_profile(profile, Path(args.build) if args.build else None)
    for note in found.notes:
        print(f"profconv: {note}", file=sys.stderr)
    _sources[key] = (profile, found)
    return found


# The lines already found, so that the views of one profile read the binaries once.
_sources: Dict[Tuple[int, Optional[str]], Tuple[model.Profile, lines.Sources]] = {}


def convert(fmt: str, profile: model.Profile, args: argparse.Namespace) -> bytes:
    """The output of one format, as bytes."""
    profile = profile.of_cpu(args.cpu)
    if fmt == "top":
        text = top.render(profile, None if args.lines == 0 else args.lines,
                          sources(profile, args))
    elif fmt == "folded":
        text = folded.render(profile, with_pid=args.with_pid)
    elif fmt == "speedscope":
        text = json.dumps(speedscope.convert(profile, args.title or "tern profile"),
                          separators=(",", ":")) + "\n"
    elif fmt == "perf":
        text = perf.render(profile)
    elif fmt == "pprof":
        period = None if args.rate is None else max(1, round(1_000_000 / args.rate))
        return pprof.render(profile, period, sources(profile, args))
    elif fmt == "svg":
        text = svg.render(profile, args.title or "Flame graph", with_pid=args.with_pid)
    else:
        text = report.render(profile, args.title or "tern profile", sources(profile, args))
    return text.encode("utf-8")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="profconv", description="Convert a tern profile (/proc/profile JSON, or an export "
        "image holding one) into a report or another profiler's format.",
        epilog="formats: top (table of functions, with each one's hottest source line), "
        "folded (flamegraph.pl input), speedscope, perf (perf script text), pprof (gzipped "
        "profile.proto, with source lines), svg (flame graph), html (interactive report: "
        "flame graph, timeline, table, annotated source). Source lines come from the "
        "build's binaries (--build) when they are the ones that ran.")
    p.add_argument("format", choices=FORMATS, metavar="FORMAT", help=" | ".join(FORMATS))
    p.add_argument("profile", metavar="PROFILE", help="the profile JSON, - for standard input, "
                   "or an export image")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    p.add_argument("--pid", action="append", metavar="PID",
                   help="keep only these processes (repeat it, or separate pids by commas)")
    held = p.add_mutually_exclusive_group()
    held.add_argument("--late", dest="held", action="store_const", const=True,
                      help="keep only the samples taken late because interrupts were off "
                      "(\"irqoff\": the skid at pop_off, usertrap and the return to user mode)")
    held.add_argument("--on-time", dest="held", action="store_const", const=False,
                      help="keep only the samples not held off by disabled interrupts")
    p.add_argument("--name", action="append", metavar="PID=NAME",
                   help="name a process, instead of the name the profile gives it (or "
                   "where it gives none: profiles of older kernels)")
    p.add_argument("--with-pid", action="store_true",
                   help="folded, svg: start each stack with its process (\"pid 3 (spin)\", "
                   "or \"pid 3\" if the process has no name)")
    p.add_argument("-n", "--lines", type=int, default=10, metavar="N",
                   help="top: how many functions to list (0: all; default 10)")
    p.add_argument("--rate", type=float, metavar="HZ",
                   help="pprof: the sampling rate (estimated from the timestamps if not given)")
    p.add_argument("--cpu", choices=model.CPU_CHOICES, default="on",
                   help="which samples: taken on the CPU (the default, as the console's "
                   "`profile top` shows), off it (a process asleep: \"mode\":\"wait\"), or "
                   "both (where the whole lifetime went; the flame graph draws waits apart)")
    p.add_argument("--title", help="svg, html, speedscope: the title")
    p.add_argument("--build", metavar="DIR",
                   help="top, pprof, html: where the binaries with debug information are, for "
                   "source lines (default: build/ of this tree)")
    p.add_argument("--no-source", action="store_true",
                   help="top, pprof, html: leave out source lines")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        pids = parse_pids(args.pid)
        names = parse_names(args.name)
        if args.rate is not None and args.rate <= 0:
            raise UsageError("--rate must be positive")
        if args.lines < 0:
            raise UsageError("-n must not be negative")
    except UsageError as err:
        print(f"profconv: {err}", file=sys.stderr)
        return 2
    try:
        profile = read_profile(args.profile)
    except model.ProfileError as err:
        print(f"profconv: {err}", file=sys.stderr)
        return 1
    profile.names.update(names)
    profile = profile.of_pids(pids)
    if pids is not None and not profile.samples:
        print(f"profconv: no samples of pid {', '.join(map(str, pids))} in {args.profile}",
              file=sys.stderr)
        return 1
    # The CPU's samples, the waits or both first: the notes and filters below count what
    # the output shows (convert() applies it again, to no effect).
    profile = profile.of_cpu(args.cpu)
    if args.format == "top" and args.held is None:
        note = held_note(profile)
        if note:
            print(f"profconv: {note}", file=sys.stderr)
    profile = profile.held_off(args.held)
    if args.held is not None and not profile.samples:
        which = "late (\"irqoff\")" if args.held else "on-time"
        print(f"profconv: no {which} samples in {args.profile}", file=sys.stderr)
        return 1
    out = convert(args.format, profile, args)
    if args.output and args.output != "-":
        try:
            with open(args.output, "wb") as f:
                f.write(out)
        except OSError as err:
            print(f"profconv: cannot write {args.output}: {err.strerror}", file=sys.stderr)
            return 1
        return 0
    if args.format == "pprof" and sys.stdout.isatty():
        print("profconv: pprof output is binary: use -o FILE or a pipe", file=sys.stderr)
        return 2
    try:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    except BrokenPipeError:
        # `profconv ... | head` closed the pipe: not an error. Point stdout at /dev/null so
        # that Python's own flush at exit does not complain about the pipe again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
