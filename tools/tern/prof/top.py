"""The table of functions that took the most samples, as `profile top` prints it.

For every function two numbers are counted:

    self   samples whose innermost frame is in the function: time in its own code;
    incl   samples with the function anywhere on the stack, counted once per sample even
           if it recurses: time in it and in everything it called.

A function with a large `incl` and a small `self` is a manager that delegates; one whose
two numbers are close is where the work is actually done. The table is sorted by self,
then by inclusive count, and prints exactly as the `profile` command inside tern does, so
the two can be compared line by line.

When the source lines are known (lines.py), each row also names the function's hottest
line, file:line, in a column before the name: of the samples with the function on the
stack, the line of it that most of them were at (its own code, or the call it was
waiting on; the code of a function inlined into it counts at the line of the call). Rows whose line is unknown show "-" there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .lines import Line, Sources
from .model import Profile, UNKNOWN_SYMBOL


@dataclass
class Row:
    name: str
    kernel: bool
    self_count: int = 0
    incl_count: int = 0
    lines: "Counter[Line]" = field(default_factory=Counter)  # samples at each of its lines
    self_lines: "Counter[Line]" = field(default_factory=Counter)  # of those, in its own code

    @property
    def hottest(self) -> Optional[Line]:
        """The line most of its samples were at (the first in the file among equals)."""
        if not self.lines:
            return None
        return min(self.lines, key=lambda l: (-self.lines[l], l.path, l.line))

    @property
    def display(self) -> str:
        return f"[k] {self.name}" if self.kernel else self.name


def rows(profile: Profile, sources: Optional[Sources] = None) -> List[Row]:
    """Every function in the profile, most self samples first; with sources, each row
    counts the samples at each of its lines."""
    table: Dict[Tuple[str, bool], Row] = {}

    def row(symbol: str, kernel: bool) -> Row:
        key = (symbol or UNKNOWN_SYMBOL, kernel)
        if key not in table:
            table[key] = Row(*key)
        return table[key]

    for sample in profile.samples:
        if not sample.frames:
            continue
        first = sample.frames[0]
        if sample.waiting:  # asleep: its own time is the wait, not the function it sleeps in
            row(sample.wait_label, False).self_count += 1
            row(sample.wait_label, False).incl_count += 1
        else:
            row(first.symbol, first.kernel).self_count += 1
        for key in {(f.symbol or UNKNOWN_SYMBOL, f.kernel) for f in sample.frames}:
            row(*key).incl_count += 1
        if sources is not None:
            seen = set()
            for i, f in enumerate(sample.frames):  # innermost first: a recursion counts once
                key = (f.symbol or UNKNOWN_SYMBOL, f.kernel)
                if key in seen:
                    continue
                seen.add(key)
                line = sources.line(sample, i)
                if line is not None:
                    row(*key).lines[line] += 1
                    if i == 0:
                        row(*key).self_lines[line] += 1
    return sorted(table.values(), key=lambda r: (-r.self_count, -r.incl_count, r.name, r.kernel))


def percent(part: int, total: int) -> float:
    return 100.0 * part / total if total else 0.0


def render(profile: Profile, limit: Optional[int] = 10,
           sources: Optional[Sources] = None) -> str:
    """The table as text: the `limit` first rows (all of them for None) and a total line;
    with sources that found any line, a column of each function's hottest line."""
    total = sum(1 for s in profile.samples if s.frames)
    shown = rows(profile, sources)
    if limit is not None:
        shown = shown[:limit]
    where = [r.hottest.short if r.hottest else "-" for r in shown]
    width = max((len(w) for w in where), default=0)
    with_lines = sources is not None and any(r.hottest for r in shown)
    lines = []
    if total:
        line_head = f"{'line':<{width}}  " if with_lines else ""
        lines.append(f"{'self':>7} {'%':>6} {'incl':>7} {'%':>6}  {line_head}function")
        for r, w in zip(shown, where):
            line_cell = f"{w:<{width}}  " if with_lines else ""
            lines.append(f"{r.self_count:7d} {percent(r.self_count, total):5.1f}% "
                         f"{r.incl_count:7d} {percent(r.incl_count, total):5.1f}%  "
                         f"{line_cell}{r.display}")
    pids = profile.pids()
    who = "1 process" if len(pids) == 1 else f"{len(pids)} processes"
    lines.append(f"{total} samples from {who}")
    return "\n".join(lines) + "\n"
