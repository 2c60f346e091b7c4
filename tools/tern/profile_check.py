"""Reading and checking what the profiler prints, on the host.

The tests in test_profile.py copy /proc/profile out over the console and check it here:

* `parse_profile` turns the console text into the list of samples, and says exactly where
  and why when the text is not valid JSON.
* `schema_problems` checks the shape every sample must have (keys, types, kernel frames
  before user frames, a user-mode sample has no kernel frames, a wait sample names what it
  waits for, "late" in range).
* `comm_problems`, `hart_problems` and `timestamp_problems` check what the fields hold:
  the program's name, a hart that exists (and more than one when several processes ran
  at once), and microseconds that step by the sampling period.
* `Symbols` is a program's symbol table as `nm -C -S` prints it, the same names the build
  embeds in each binary. `address_problems` checks that every named address lies inside the
  function it is named after, looking a return address up at address - 1 the way the kernel
  says it does.
* `parse_top` reads the table that `profile top` and `profile run` print.
* `wait_for_recorded` is the one helper that drives a machine: it waits for a count of
  samples in /proc/profstat.

The checks return lists of readable problem strings rather than asserting, so that a test
can show all the problems of a profile at once.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from tern import toolchain
from tern.machine import REPO, Machine, timeout_scale

BUILD = REPO / "build"
KERNEL_BASE = 0x8000_0000  # user addresses are below this; the kernel's are above it
MAX_FRAMES = 32  # kern/profile/profiler.h: frames recorded per sample, kernel and user
# What a wait sample ("mode":"wait") may wait for: kern/profile/report.cc, WAIT_KINDS.
WCHANS = ("disk", "pipe", "sleep", "wait", "console", "sleeplock", "other")
LATE_MAX_US = 0x7FFF  # kern/profile/profiler.h: "late" saturates here

Sample = dict[str, Any]
Frame = dict[str, Any]


# --- The profile as JSON ---------------------------------------------------------------------


class ProfileError(AssertionError):
    """The console text is not a valid profile."""


def parse_profile(text: str) -> list[Sample]:
    """The samples in the output of `cat /proc/profile`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        lo, hi = max(0, err.pos - 80), err.pos + 80
        raise ProfileError(
            f"/proc/profile is not valid JSON: {err.msg} at byte {err.pos} of {len(text)}; "
            f"around it: {text[lo:err.pos]!r} <HERE> {text[err.pos:hi]!r}") from None
    if not isinstance(data, list):
        raise ProfileError(f"/proc/profile should be a JSON array, got {type(data).__name__}")
    return data


def of_pid(samples: Iterable[Sample], pid: int) -> list[Sample]:
    return [s for s in samples if s.get("pid") == pid]


# What a sample taken before a background job's exec may be named after: the shell that
# forked it, or nothing ("?": the moment between exec's commit and its registration).
BEFORE_EXEC = ("sh", "?")


def of_program(samples: Iterable[Sample], pid: int, program: str) -> list[Sample]:
    """The samples of process `pid` taken while it ran `program`, in order.

    A job started with `cmd &` is announced by the shell right after its fork, so sampling
    switched on at once may catch the child before or during its exec, still the shell.
    Those samples are named after the shell (BEFORE_EXEC) and must all come before the
    program's first sample; they are left out here, whichever way that race went. Any other
    sample of the pid is a problem, reported with its pid, comm and frames.
    """
    mine = of_pid(samples, pid)
    first = next((i for i, s in enumerate(mine) if s.get("comm") == program), len(mine))
    early = [s for s in mine[:first] if s.get("comm") not in BEFORE_EXEC]
    late = [s for s in mine[first:] if s.get("comm") != program]
    odd = early + late
    if odd:
        raise ProfileError(
            f"{len(odd)} of the {len(mine)} samples of pid {pid}, which ran {program!r}, are "
            f"named after another program: {describe(odd[0])}. Only samples taken before "
            f"the exec, in the shell that forked it, may be (comm {' or '.join(BEFORE_EXEC)})")
    return mine[first:]


def user_frames(sample: Sample) -> list[Frame]:
    return [f for f in sample["samples"] if not f["kernel"]]


def kernel_frames(sample: Sample) -> list[Frame]:
    return [f for f in sample["samples"] if f["kernel"]]


def names(frames: Iterable[Frame]) -> list[str]:
    return [f["symbol"] for f in frames]


def innermost_user(sample: Sample) -> str | None:
    frames = user_frames(sample)
    return frames[0]["symbol"] if frames else None


def describe(sample: Sample) -> str:
    """One line for a failure message: mode, then the frames with [k] on kernel ones."""
    frames = " <- ".join(("[k] " if f["kernel"] else "") + f"{f['symbol']}@{f['address']:#x}"
                         for f in sample["samples"])
    return f"pid {sample.get('pid')} comm {sample.get('comm')!r} {sample.get('mode')}: {frames}"


def schema_problems(samples: list[Sample]) -> list[str]:
    """Every way a sample departs from the documented schema (kern/profile/report.cc)."""
    problems = []
    for i, s in enumerate(samples):
        where = f"sample {i}"
        for key, kind in (("pid", int), ("tid", int), ("comm", str), ("timestamp", int),
                          ("hart", int), ("mode", str), ("samples", list)):
            if not isinstance(s.get(key), kind):
                problems.append(f"{where}: key {key!r} missing or not {kind.__name__}: {s!r}")
        if problems and problems[-1].startswith(where):
            continue
        if s["mode"] not in ("user", "kernel", "wait"):
            problems.append(f"{where}: mode {s['mode']!r} is not user, kernel or wait")
        if (s["mode"] == "wait") != ("wchan" in s):
            problems.append(f"{where}: \"wchan\" belongs to wait samples, and only to them")
        elif s["mode"] == "wait" and s["wchan"] not in WCHANS:
            problems.append(f"{where}: wchan {s['wchan']!r} is not one of {WCHANS}")
        # Skid (kern/profile/profiler.h): microseconds late, and a mark present only if set.
        late = s.get("late")
        if type(late) is not int or not 0 <= late <= LATE_MAX_US:
            problems.append(f"{where}: \"late\" should be 0..{LATE_MAX_US} microseconds, not "
                            f"{late!r}")
        if "irqoff" in s and s["irqoff"] is not True:
            problems.append(f"{where}: \"irqoff\" is present only as true, not {s['irqoff']!r}")
        frames = s["samples"]
        if not frames:
            problems.append(f"{where}: no frames at all (the pc is always recorded)")
        if len(frames) > MAX_FRAMES:
            problems.append(f"{where}: {len(frames)} frames, more than {MAX_FRAMES}")
        for f in frames:
            if not (isinstance(f.get("address"), int) and isinstance(f.get("symbol"), str)
                    and isinstance(f.get("kernel"), bool)):
                problems.append(f"{where}: malformed frame {f!r}")
                break
        else:
            flags = [f["kernel"] for f in frames]
            if flags != sorted(flags, reverse=True):
                problems.append(f"{where}: a kernel frame below a user frame: {describe(s)}")
            if s["mode"] == "user" and any(flags):
                problems.append(f"{where}: user-mode sample with kernel frames: {describe(s)}")
            for f in frames:
                if f["kernel"] != (f["address"] >= KERNEL_BASE):
                    problems.append(f"{where}: frame {f!r} is on the wrong side of "
                                    f"{KERNEL_BASE:#x} for its kernel flag")
    return problems


def on_cpu(samples: Iterable[Sample]) -> list[Sample]:
    """The samples taken on the CPU, as the console's `profile top` and `tree` count them:
    not the wait samples of processes asleep."""
    return [s for s in samples if s.get("mode") != "wait"]


def taken_in(samples: Iterable[Sample], functions: Iterable[str]) -> list[Sample]:
    """The samples with a user frame named after one of `functions`: those certainly taken
    in the program that has them, not in the one it was exec'd from."""
    wanted = set(functions)
    return [s for s in samples if wanted & set(names(user_frames(s)))]


def comm_problems(samples: list[Sample], program: str) -> list[str]:
    """Samples whose "comm" is not `program`, the name of the program that was running."""
    return [f"sample {i} (pid {s.get('pid')}): \"comm\" is {s.get('comm')!r}, not "
            f"{program!r}" for i, s in enumerate(samples) if s.get("comm") != program]


def hart_problems(samples: list[Sample], cpus: int, *, at_least: int = 1) -> list[str]:
    """Harts that do not exist (a machine of `cpus` harts numbers them 0 to cpus - 1), and
    fewer than `at_least` distinct harts over all the samples."""
    problems = [f"sample {i} (pid {s.get('pid')}): \"hart\" is {s.get('hart')!r}, but the "
                f"machine has harts 0 to {cpus - 1}" for i, s in enumerate(samples)
                if not isinstance(s.get("hart"), int) or not 0 <= s["hart"] < cpus]
    harts = sorted({s.get("hart") for s in samples if isinstance(s.get("hart"), int)})
    if len(harts) < at_least:
        problems.append(f"the samples name only hart(s) {harts}, though processes ran on at "
                        f"least {at_least} harts at once: \"hart\" is the hart that took "
                        f"the sample (Sample::hart)")
    return problems


def same_hart_steps(samples: list[Sample]) -> list[int]:
    """The steps between the timestamps of consecutive samples of one pid on one hart."""
    last: dict[tuple[Any, Any], int] = {}
    steps = []
    for s in samples:
        key = (s.get("pid"), s.get("hart"))
        if key in last:
            steps.append(s["timestamp"] - last[key])
        last[key] = s["timestamp"]
    return steps


def timestamp_problems(samples: list[Sample], rate: int, most_us: float,
                       least_us: float) -> list[str]:
    """Timestamps that are not microseconds since boot, for samples taken at `rate` Hz
    within a stretch of at most `most_us` and at least `least_us` microseconds.

    A hart samples on a grid of 1e6/rate microseconds, so consecutive samples of one
    process on one hart are about a period apart (a late interrupt moves one sample, not the
    grid), or a few periods when the process was off the hart or the host held the hart up
    (on one hart, three spinning processes and the shell that polls /proc/profstat take
    turns: five periods or a little more): the median step lies between half a period and
    eight, where a unit ten times too small or too large cannot (raw `time` ticks make a
    step of one period ten). The samples of each hart come in time order, and their spread
    fits the time sampling was on.
    """
    period = 1e6 / rate
    problems = []
    by_hart: dict[Any, list[int]] = {}
    for s in samples:
        by_hart.setdefault(s.get("hart"), []).append(s["timestamp"])
    for hart, times in sorted(by_hart.items(), key=lambda kv: str(kv[0])):
        back = [(a, b) for a, b in zip(times, times[1:]) if b < a]
        if back:
            problems.append(f"hart {hart}: timestamps go back in time ({back[0][0]} then "
                            f"{back[0][1]}), but each hart's samples are in the order taken")
    times = [s["timestamp"] for s in samples]
    if times:
        spread = max(times) - min(times)
        if not least_us <= spread <= most_us:
            problems.append(
                f"the timestamps spread over {spread} units, but sampling was on for between "
                f"{least_us:.0f} and {most_us:.0f} microseconds: \"timestamp\" is in "
                f"microseconds (Sample::time counts the `time` CSR, 10 MHz)")
    steps = sorted(same_hart_steps(samples))
    if steps:
        median = steps[len(steps) // 2]
        if not 0.5 * period <= median <= 8 * period:
            problems.append(
                f"consecutive samples of one process on one hart are {median} units apart "
                f"(the median of {len(steps)} steps), but at {rate} Hz they are about "
                f"{period:.0f} microseconds apart: \"timestamp\" is in microseconds")
    return problems


# --- Symbols ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Symbol:
    start: int
    size: int
    name: str


class Symbols:
    """The code symbols of one ELF file, as `nm -C -S` lists them."""

    def __init__(self, elf: Path) -> None:
        self.elf = elf
        self.by_name: dict[str, list[Symbol]] = {}
        out = subprocess.run([toolchain.tool("nm"), "-C", "-S", "--defined-only", str(elf)], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split(" ", 3)
            if len(parts) != 4 or parts[2] not in "TtWw":
                continue  # no size, or not code
            sym = Symbol(int(parts[0], 16), int(parts[1], 16), parts[3])
            self.by_name.setdefault(sym.name, []).append(sym)

    def holds(self, name: str, addr: int) -> bool:
        return any(s.start <= addr < s.start + s.size for s in self.by_name.get(name, []))

    def full_name(self, prefix: str, addr: int) -> str | None:
        """The name of the function at addr, if `prefix` is a cut-off form of it. The kernel
        ends a cut name with "..." (symbolize.cc), which is no part of the real name."""
        prefix = prefix.removesuffix("...")
        for name, syms in self.by_name.items():
            if name.startswith(prefix) and any(s.start <= addr < s.start + s.size for s in syms):
                return name
        return None

    def ranges(self, name: str) -> str:
        found = self.by_name.get(name, [])
        if not found:
            return f"no symbol {name!r} in {self.elf.name}"
        return ", ".join(f"[{s.start:#x}, {s.start + s.size:#x})" for s in found)


@functools.cache
def user_symbols(program: str) -> Symbols:
    return Symbols(BUILD / "user" / f"_{program}")


@functools.cache
def kernel_symbols() -> Symbols:
    return Symbols(BUILD / "kernel.elf")


@functools.cache
def loop_addresses(program: str, function: str) -> range:
    """The addresses of the one backward-branch loop in `function` of build/user/_PROGRAM,
    from the branch's target to the branch itself, as objdump disassembles them. A sample
    whose pc is in that range was taken inside the loop, not in the function's prologue or
    epilogue, where the registers the loop sets still hold their ordinary values."""
    out = subprocess.run([toolchain.tool("objdump"), "-d", f"--disassemble={function}",
                          str(BUILD / "user" / f"_{program}")], check=True,
                         capture_output=True, text=True).stdout
    branches = [(int(m[1], 16), int(m[2], 16)) for m in re.finditer(
        r"^\s*([0-9a-f]+):\s+\S+\s+b\w*\s+[^\n]*?\b([0-9a-f]+) <" + re.escape(function),
        out, re.M)]
    loops = [(target, at) for at, target in branches if target <= at]
    assert len(loops) == 1, f"expected one loop in {function} of _{program}, found {loops}:\n{out}"
    target, at = loops[0]
    return range(target, at + 1)


# Names cut shorter than this are not accepted as a cut-off form of the real name.
MIN_CUT_NAME = 40


def _part_problems(i: int, s: Sample, frames: list[Frame], table: Symbols,
                   allow_unknown: bool) -> list[str]:
    problems = []
    for k, f in enumerate(frames):
        lookup = f["address"] if k == 0 else f["address"] - 1
        name = f["symbol"]
        if name == "??":
            if not allow_unknown:
                problems.append(f"sample {i}: {f['address']:#x} not symbolized (\"??\"): "
                                f"{describe(s)}")
            continue
        if table.holds(name, lookup):
            continue
        # A long name cut short still names the right function; test_profile checks
        # separately that names come out whole.
        if len(name) < MIN_CUT_NAME or table.full_name(name, lookup) is None:
            problems.append(
                f"sample {i}: frame {k} {'pc' if k == 0 else 'return address'} "
                f"{f['address']:#x} (looked up at {lookup:#x}) is named {name!r}, "
                f"whose range in {table.elf.name} is {table.ranges(name)}")
    return problems


NO_IMAGE = "?"  # the "comm" of a sample whose process has no image (kern/profile/images.cc)


def address_problems(samples: list[Sample], user: Symbols | Sequence[Symbols] | None,
                     kernel: Symbols | None, *, allow_unknown: bool = False) -> list[str]:
    """Frames whose address is not inside the function they are named after.

    The first frame of each part (kernel, then user) is an interrupted pc and is checked as
    it is; every other frame is a return address and is checked at address - 1. A part is
    skipped when its table is None. "??" (unknown) is a problem unless allow_unknown. A
    long name that is a prefix of the right function's name is accepted here.

    `user` may be several tables: a sample's user frames must all fit one of them. That is
    for `profile run CMD`, whose first samples can come from the `profile` program itself,
    in the moments between switching sampling on and exec'ing CMD.

    A sample with no image ("comm" NO_IMAGE) was taken inside exec, after the commit to the
    new program and before prof::on_exec() registered it (kern/proc/exec.cc): its user
    frames are unknown by design, and a name there would be a problem.
    """
    tables = [] if user is None else [user] if isinstance(user, Symbols) else list(user)
    problems = []
    for i, s in enumerate(samples):
        if kernel is not None:
            problems += _part_problems(i, s, kernel_frames(s), kernel, allow_unknown)
        if s.get("comm") == NO_IMAGE:
            problems += [f"sample {i}: a sample with no image names a user frame "
                         f"{f['symbol']!r}: {describe(s)}"
                         for f in user_frames(s) if f["symbol"] != "??"]
        elif tables:
            tries = [_part_problems(i, s, user_frames(s), t, allow_unknown) for t in tables]
            if all(tries):
                problems += tries[0]
    return problems


def run_symbols(program: str) -> list[Symbols]:
    """The tables a sample of `profile run PROGRAM` may resolve against."""
    return [user_symbols(program), user_symbols("profile")]


def chain_counts(samples: Iterable[Sample]) -> Counter[tuple[str, ...]]:
    """How often each user chain (names, innermost first) occurs."""
    return Counter(tuple(names(user_frames(s))) for s in samples)


def common_chains(samples: Iterable[Sample], n: int = 5) -> str:
    """The n most common user chains, for failure messages."""
    return "; ".join(f"{count}x {' <- '.join(chain)}"
                     for chain, count in chain_counts(samples).most_common(n))



# The functions of psys (user/demo/psys.cc) that call the system-call stubs write() and read()
# directly; printf and fprintf reach write() through an internal formatter (user/lib/printf.cc).
PSYS_STUB_CALLERS = ("fill_file", "read_file", "pipe_round", "printf", "fprintf")


def is_psys_stub_caller(name: str) -> bool:
    return name in PSYS_STUB_CALLERS or name.startswith("(anonymous namespace)::format(")


def psys_stub_caller_lost(in_stub: Iterable[Sample]) -> list[Sample]:
    """The samples of psys taken inside write() or read() whose next user frame is not the
    stub's caller. A stub builds no frame record, so a walk that only follows frame
    pointers goes from the stub straight to its caller's caller."""
    return [s for s in in_stub if len(user_frames(s)) < 2
            or not is_psys_stub_caller(user_frames(s)[1]["symbol"])]

# --- `profile top` and /proc/profstat ---------------------------------------------------------


@dataclass(frozen=True)
class TopRow:
    self_count: int
    self_pct: float
    incl_count: int
    incl_pct: float
    kernel: bool
    name: str
    pid: int | None = None  # None: the row that sums the functions beyond the table
    comm: str = ""


@dataclass(frozen=True)
class Top:
    rows: list[TopRow]
    samples: int
    dropped: int
    left_out: int = 0  # rows not shown, as the report says


# self, %, incl, %, pid, process, then the function, "[k] " first for the kernel's.
TOP_ROW = re.compile(r"^\s*(\d+)\s+(\d+\.\d)%\s+(\d+)\s+(\d+\.\d)%\s+(\d+|-)\s+(\S+)\s+"
                     r"(\[k\] )?(.+)$")
TOP_TOTAL = re.compile(r"(?m)^(\d+) samples \((\d+) dropped\)$")
TOP_LEFT_OUT = re.compile(r"(?m)^\((\d+) more rows? left out\)$")


def parse_top(text: str) -> Top:
    """The rows and the total line of a `profile top` table."""
    total = TOP_TOTAL.search(text)
    if total is None:
        raise AssertionError(f"no `N samples (M dropped)` line in the report:\n{text}")
    rows = []
    for line in text.splitlines():
        m = TOP_ROW.match(line)
        if m:
            rows.append(TopRow(int(m.group(1)), float(m.group(2)), int(m.group(3)),
                               float(m.group(4)), m.group(7) is not None, m.group(8).strip(),
                               None if m.group(5) == "-" else int(m.group(5)), m.group(6)))
    left = TOP_LEFT_OUT.search(text)
    return Top(rows, int(total.group(1)), int(total.group(2)), int(left.group(1)) if left else 0)


def parse_profstat(text: str) -> dict[str, str]:
    """The `key: value` lines of /proc/profstat."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


POLL = 0.02  # s between two looks at /proc/profstat (`profile status` takes about 10 ms)


def wait_for_recorded(m: Machine, at_least: int, within: float, on_cpu: bool = False,
                      most: int | None = None) -> int:
    """Wait until /proc/profstat's `recorded:` reaches `at_least`, or `within` seconds (times
    GRADE_TIMEOUT_SCALE) pass: the count it shows last. A test that needs a number of
    samples waits for the number, not for a time: a busy host runs the guest slower and
    gives fewer samples a second, a quiet one stops early, and a kernel that takes none
    fails after `within`. With `on_cpu`, the count is of the samples taken on the CPU, less
    `wait samples:`: a sleeping process that is sampled has one every period besides. With
    `most`, the wait also ends once `recorded:` (waits included) reaches it: a profile that
    is mostly waits stays short enough to copy out."""
    deadline = time.monotonic() + within * timeout_scale()
    while True:
        stat = parse_profstat(m.run("profile status"))
        total = recorded = int(stat.get("recorded", "0"))
        if on_cpu:
            recorded -= int(stat.get("wait samples", "0"))
        if (recorded >= at_least or (most is not None and total >= most)
                or time.monotonic() > deadline):
            return recorded
        time.sleep(POLL)


def fnv1a(data: bytes) -> int:
    """32-bit FNV-1a, as labs/profile/user/labread.cc computes it."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h
