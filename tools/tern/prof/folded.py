"""Folded stacks: one line per distinct call stack, with the number of samples that saw it.

    _start;main;outer;middle;hot 207
    _start;main;uptime;usertrap_[k] 12

The frames run from the outermost caller to the function that was executing, separated by
semicolons, and the count follows the last space. It is the simplest complete summary of a
sampling profile: the order of the samples is lost, but nothing else a flame graph needs
is, and it is the input of flamegraph.pl, inferno and speedscope.

Names are cleaned so a line can always be split again: a semicolon inside a name would
start a new frame, so it becomes a colon, and line breaks become spaces. Kernel functions
end in "_[k]": the mark of FlameGraph's `stackcollapse-perf.pl --kernel`, which its
flamegraph.pl looks for to colour kernel code (the other views write " [k]", model.py).
With `with_pid`, each stack starts with a frame for
its process ("pid 3"), so a flame graph keeps the processes side by side instead of
merging their stacks. A sample with no frames at all still counts, as "[unknown]", so the
counts always add up to the number of samples.
"""

from __future__ import annotations

from collections import Counter
from typing import List

from .model import UNKNOWN_SYMBOL, Profile, Sample

NO_FRAMES = "[unknown]"
KERNEL_MARK = "_[k]"


def clean(name: str) -> str:
    return name.replace(";", ":").replace("\r", " ").replace("\n", " ")


def stack_names(sample: Sample, profile: Profile, with_pid: bool = False) -> List[str]:
    """The names of a sample's frames, outermost first, as folded lines spell them."""
    names = [clean(f.symbol or UNKNOWN_SYMBOL) + (KERNEL_MARK if f.kernel else "")
             for f in sample.stack()] or [NO_FRAMES]
    if with_pid:
        names.insert(0, clean(profile.process_label(sample.pid)))
    return names


def fold(profile: Profile, with_pid: bool = False) -> "Counter[str]":
    """Each distinct stack (frames joined by ";") with its number of samples."""
    return Counter(";".join(stack_names(s, profile, with_pid)) for s in profile.samples)


def render(profile: Profile, with_pid: bool = False) -> str:
    """The folded text, one stack a line in sorted order (so equal profiles give equal text)."""
    counts = fold(profile, with_pid)
    return "".join(f"{stack} {counts[stack]}\n" for stack in sorted(counts))
