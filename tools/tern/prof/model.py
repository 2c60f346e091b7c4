"""A profile as the kernel writes it, read into Python objects and checked on the way.

/proc/profile is a JSON array with one object per sample (kern/profile/report.cc):

    {"pid":3,"tid":3,"timestamp":1234567,"hart":0,"mode":"user","samples":[
      {"address":1234,"symbol":"hot","kernel":false}, ...]}

"mode" is "user" or "kernel" for a process the sampling interrupt found running, "wait" for
one found asleep; a wait sample also has "wchan", what it waited for ("disk", "pipe",
"sleep", "wait", "console", "sleeplock" or "other"), and its kernel frames are where it went
to sleep. Profile.of_cpu keeps the on-CPU samples, the wait samples, or both.

"timestamp" counts microseconds since boot. "samples" is the call stack at the moment of
the sample, innermost frame first; when the process was inside the kernel (a system call,
a page fault) the kernel's frames come first and the user frames that led there follow.

Skid: "late" says how many microseconds after its deadline the sample was taken, and
"irqoff": true that its interrupt had been held off by disabled interrupts, so the sample
shows where they came back on (pop_off, usertrap, the return to user mode) rather than
where the time went. Older kernels write neither: such samples read as on time.

Every converter in this package wants the opposite order, outermost caller first, so that
is what Sample.stack() gives. Each frame also has a *label*, the name a report shows:
kernel functions carry a " [k]" suffix, so a kernel `sleep` and a user `sleep` stay apart
and a reader sees at a glance where user code ends and the kernel begins.

The parser is strict about the things the converters rely on (every pid a number, every
frame a symbol) and says exactly which sample is wrong, but it ignores keys it does not
know, so a later kernel can add fields without breaking the tools.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

KERNEL_SUFFIX = " [k]"
UNKNOWN_SYMBOL = "??"  # what the kernel writes when an address is in no known function
CPU_CHOICES = ("on", "off", "both")  # Profile.of_cpu: on-CPU samples, wait samples, or all


class ProfileError(ValueError):
    """The input is not a profile in the format of /proc/profile."""


@dataclass(frozen=True)
class Frame:
    address: int
    symbol: str
    kernel: bool

    @property
    def label(self) -> str:
        """The function's name as reports show it: kernel functions end in " [k]"."""
        name = self.symbol or UNKNOWN_SYMBOL
        return name + KERNEL_SUFFIX if self.kernel else name


@dataclass(frozen=True)
class Sample:
    pid: int
    tid: int
    timestamp: int  # microseconds since boot
    hart: int
    # "user" or "kernel": where the sampling interrupt found the hart; "wait": the process
    # was asleep (off the CPU), and `wchan` says what it waited for ("disk", "pipe", ...)
    mode: str
    frames: Tuple[Frame, ...]  # innermost first, as in the file
    # The program the process ran when sampled ("comm"), "" if the file does not say. Before
    # its exec a new process runs its parent's program; Profile.names keeps the last one.
    comm: str = ""
    wchan: str = ""  # what a wait sample waited for, "" for the others
    late: int = 0  # microseconds after its deadline ("late")
    irqoff: bool = False  # held off by disabled interrupts ("irqoff"): skid

    @property
    def waiting(self) -> bool:
        """Was the process asleep (an off-CPU sample)?"""
        return self.mode == "wait"

    @property
    def wait_label(self) -> str:
        """What reports call the wait of a wait sample, on top of its stack: "[wait: disk]"."""
        return f"[wait: {self.wchan}]"

    def stack(self) -> Tuple[Frame, ...]:
        """The frames outermost first: main before the functions it called."""
        return tuple(reversed(self.frames))


@dataclass
class Profile:
    samples: List[Sample]
    # Process names by pid, when known: from an optional "comm" key of the samples, or
    # from profconv's --name option. Reports fall back to "pid N".
    names: Dict[int, str] = field(default_factory=dict)
    # When the last sample was taken, in seconds since 1970, if known. The machine keeps no
    # calendar, so this comes from outside: profconv takes the time the file was written.
    end_time: Optional[float] = None

    def pids(self) -> List[int]:
        return sorted({s.pid for s in self.samples})

    def of_pids(self, pids: Optional[Iterable[int]]) -> "Profile":
        """The samples of the given processes only (all of them for None)."""
        if pids is None:
            return self
        wanted = set(pids)
        return Profile([s for s in self.samples if s.pid in wanted], dict(self.names),
                       self.end_time)

    def of_cpu(self, which: str) -> "Profile":
        """The samples taken on the CPU ("on"), off it ("off": wait samples), or all ("both")."""
        if which not in CPU_CHOICES:
            raise ValueError(f"on, off or both, not {which!r}")
        if which == "both":
            return self
        off = which == "off"
        return Profile([s for s in self.samples if s.waiting == off], dict(self.names),
                       self.end_time)

    def held_off(self, held: Optional[bool]) -> "Profile":
        """The samples whose interrupt had been held off (True), the others (False), or all
        of them (None)."""
        if held is None:
            return self
        return Profile([s for s in self.samples if s.irqoff == held], dict(self.names),
                       self.end_time)

    def process_name(self, pid: int) -> str:
        """A short name for a process, without spaces: its known name, else "pidN"."""
        return self.names.get(pid) or f"pid{pid}"

    def process_label(self, pid: int) -> str:
        """How a report titles a process: "pid 3" or "pid 3 (spin)"."""
        name = self.names.get(pid)
        return f"pid {pid} ({name})" if name else f"pid {pid}"

    def time_span(self) -> Tuple[int, int]:
        """The first and last timestamps, in microseconds since boot ((0, 0) if empty)."""
        if not self.samples:
            return (0, 0)
        times = [s.timestamp for s in self.samples]
        return (min(times), max(times))

    def period_us(self) -> Optional[int]:
        """The sampling period, estimated from the timestamps, or None if there are too few.

        Each hart has its own sampling clock, so two samples taken one after the other on
        the same hart are one period apart if the process ran all the while, and a whole
        number of periods apart if it slept in between. The gaps cluster at the period,
        twice the period, and so on, blurred by ticks that come a little late. The lower
        quartile of the gaps lands in the first cluster as long as a quarter of them are
        single periods; the median of the gaps near it is then the estimate.
        """
        last: Dict[int, int] = {}
        gaps = []
        for s in sorted(self.samples, key=lambda s: s.timestamp):
            if s.hart in last and s.timestamp > last[s.hart]:
                gaps.append(s.timestamp - last[s.hart])
            last[s.hart] = s.timestamp
        if not gaps:
            return None
        gaps.sort()
        guess = gaps[len(gaps) // 4]
        near = [g for g in gaps if guess / 2 <= g <= guess * 3 / 2]
        return max(1, int(statistics.median(near)))


# --- Reading ---------------------------------------------------------------------------------


def loads(text: str) -> Profile:
    """The profile in `text`, the contents of /proc/profile."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        around = text[max(0, err.pos - 40):err.pos + 40]
        raise ProfileError(f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno} "
                           f"(near {around!r})") from None
    return from_json(data)


def load(path: str) -> Profile:
    """The profile in the file at `path` ("-" reads standard input)."""
    if path == "-":
        import sys
        return loads(sys.stdin.read())
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as err:
        raise ProfileError(f"{path}: not a text file ({err.reason} at byte {err.start})") from None
    try:
        return loads(text)
    except ProfileError as err:
        raise ProfileError(f"{path}: {err}") from None


def from_json(data: Any) -> Profile:
    """The profile in an already decoded JSON document."""
    if not isinstance(data, list):
        raise ProfileError(f"a profile is a JSON array of samples, not a {_kind(data)}")
    # The same few hundred frames recur in thousands of samples: each is checked and built
    # once and shared, which makes reading a large profile several times faster.
    frames: Dict[Tuple[int, str, bool], Frame] = {}
    profile = Profile([_sample(i, item, frames) for i, item in enumerate(data)])
    # A kernel may name the process in each sample ("comm", as Linux calls it). The last
    # name wins: a process sampled between its fork and its exec carries its parent's name
    # at first, and the program it runs is what a report should call it.
    for item in data:
        comm = item.get("comm")
        if isinstance(comm, str) and comm:
            profile.names[item["pid"]] = comm
    return profile


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean",
            type(None): "null"}.get(type(value), "number")


def _whole(where: str, key: str, value: Any) -> int:
    # bool is a subclass of int in Python, but `true` is not a pid.
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ProfileError(f"{where}: \"{key}\" should be a whole number, not {value!r}")
    return value


def _sample(index: int, item: Any, frames: Dict[Tuple[int, str, bool], Frame]) -> Sample:
    where = f"sample {index}"
    if not isinstance(item, dict):
        raise ProfileError(f"{where}: should be an object, not a {_kind(item)}")
    for key in ("pid", "timestamp", "samples"):
        if key not in item:
            raise ProfileError(f"{where}: has no \"{key}\"")
    pid = _whole(where, "pid", item["pid"])
    tid = _whole(where, "tid", item.get("tid", pid))
    timestamp = _whole(where, "timestamp", item["timestamp"])
    hart = _whole(where, "hart", item.get("hart", 0))
    raw_frames = item["samples"]
    if not isinstance(raw_frames, list):
        raise ProfileError(f"{where}: \"samples\" should be an array of frames")
    stack = tuple(_frame(index, i, f, frames) for i, f in enumerate(raw_frames))
    mode = item.get("mode")
    if mode is None:  # older kernels: a sample is in kernel mode if it has kernel frames
        mode = "kernel" if any(f.kernel for f in stack) else "user"
    if mode not in ("user", "kernel", "wait"):
        raise ProfileError(f"{where}: \"mode\" should be \"user\", \"kernel\" or \"wait\", "
                           f"not {mode!r}")
    wchan = item.get("wchan", "")
    if mode == "wait" and not (isinstance(wchan, str) and wchan):
        raise ProfileError(f"{where}: a wait sample should say what it waits for (\"wchan\")")
    comm = item.get("comm")
    late = _whole(where, "late", item.get("late", 0))
    irqoff = item.get("irqoff", False)
    if type(irqoff) is not bool:
        raise ProfileError(f"{where}: \"irqoff\" should be true or false, not {irqoff!r}")
    return Sample(pid, tid, timestamp, hart, mode, stack, comm if isinstance(comm, str) else "",
                  wchan if mode == "wait" else "", late, irqoff)


def _frame(sample: int, index: int, item: Any,
           frames: Dict[Tuple[int, str, bool], Frame]) -> Frame:
    if type(item) is dict:
        address = item.get("address", 0)
        symbol = item.get("symbol", UNKNOWN_SYMBOL)
        kernel = item.get("kernel", False)
        # Exact types: bool is an int to isinstance, and True == 1 as a dictionary key.
        if type(address) is int and address >= 0 and type(symbol) is str and type(kernel) is bool:
            key = (address, symbol, kernel)
            frame = frames.get(key)
            if frame is None:
                frame = frames[key] = Frame(address, symbol, kernel)
            return frame
    _reject_frame(f"sample {sample}, frame {index}", item)
    raise AssertionError("unreachable")


def _reject_frame(where: str, item: Any) -> None:
    """Raise the error that says what is wrong with a frame that failed the checks."""
    if not isinstance(item, dict):
        raise ProfileError(f"{where}: should be an object, not a {_kind(item)}")
    _whole(where, "address", item.get("address", 0))
    symbol = item.get("symbol", UNKNOWN_SYMBOL)
    if not isinstance(symbol, str):
        raise ProfileError(f"{where}: \"symbol\" should be a string, not {symbol!r}")
    kernel = item.get("kernel", False)
    raise ProfileError(f"{where}: \"kernel\" should be true or false, not {kernel!r}")
