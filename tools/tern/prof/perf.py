r"""The text that Linux's `perf script` prints, which many viewers know how to import.

The Firefox Profiler (https://profiler.firefox.com), speedscope and the classic
stackcollapse-perf.pl all read `perf script` output, so writing a tern profile in that
shape opens it in all of them. Each sample is a block: a header line, one line per frame
(innermost first, tab-indented: the address in hex, the symbol, and in parentheses the
file the code came from), and a blank line.

    spin 6/6 [002] 2.847926: 1 cpu-clock:
    \t              5c middle (/spin)
    \t              e0 outer (/spin)
    \t             16c main (/spin)
    \t              10 _start (/spin)

The header holds the command name, pid/tid, the hart in brackets, the time in seconds
with microseconds, the event's period (1: one sample) and the event's name. Importers find
the file name as the last parenthesised word on a frame line, so it must not contain
spaces; a symbol may (demangled C++ names often do). Kernel frames name the file
"[kernel.kallsyms]", the name Linux gives its kernel, which viewers use to tell kernel
code from user code.

One spelling is changed on the way: the Firefox Profiler's importer skips every frame
whose symbol starts with "(", taking it for a process name, and so would drop every
function of an anonymous namespace. "(anonymous namespace)" is written "{anonymous}", as
GCC's own messages spell it, and any other name that starts with a parenthesised group
has that group in braces.
"""

from __future__ import annotations

from typing import List

from .model import Profile, Sample

KERNEL_DSO = "[kernel.kallsyms]"
EVENT = "cpu-clock"


def seconds(us: int) -> str:
    """Microseconds as seconds with six decimals, without the rounding of a float."""
    return f"{us // 1_000_000}.{us % 1_000_000:06d}"


ANONYMOUS = "(anonymous namespace)"


def frame_name(symbol: str) -> str:
    """A symbol as a frame line spells it: on one line, never starting with "("."""
    name = " ".join(symbol.split()).replace(ANONYMOUS, "{anonymous}") or "[unknown]"
    if name.startswith("("):
        depth = 0
        for i, c in enumerate(name):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0:
                return "{" + name[1:i] + "}" + name[i + 1:]
        return "{" + name[1:]
    return name


def user_dso(profile: Profile, pid: int) -> str:
    name = profile.names.get(pid)
    return "/" + name.replace(" ", "_") if name else "[user]"


def render_sample(profile: Profile, sample: Sample) -> str:
    comm = profile.process_name(sample.pid).replace(" ", "_")
    lines: List[str] = [f"{comm} {sample.pid}/{sample.tid} [{sample.hart:03d}] "
                        f"{seconds(sample.timestamp)}: 1 {EVENT}:"]
    dso = user_dso(profile, sample.pid)
    for f in sample.frames:
        lines.append(f"\t{f.address:16x} {frame_name(f.symbol)} "
                     f"({KERNEL_DSO if f.kernel else dso})")
    return "\n".join(lines) + "\n\n"


def render(profile: Profile) -> str:
    """Every sample, in the order of time."""
    ordered = sorted(profile.samples, key=lambda s: s.timestamp)
    return "".join(render_sample(profile, s) for s in ordered)
