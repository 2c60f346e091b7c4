"""The table of functions that took the most samples, as `profile top` prints it.

For every function two numbers are counted:

    self   samples whose innermost frame is in the function: time in its own code;
    incl   samples with the function anywhere on the stack, counted once per sample even
           if it recurses: time in it and in everything it called.

A function with a large `incl` and a small `self` is a manager that delegates; one whose
two numbers are close is where the work is actually done. The table is sorted by self,
then by inclusive count, and prints exactly as the `profile` command inside tern does, so
the two can be compared line by line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .model import Profile, UNKNOWN_SYMBOL


@dataclass
class Row:
    name: str
    kernel: bool
    self_count: int = 0
    incl_count: int = 0

    @property
    def display(self) -> str:
        return f"[k] {self.name}" if self.kernel else self.name


def rows(profile: Profile) -> List[Row]:
    """Every function in the profile, most self samples first."""
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
        row(first.symbol, first.kernel).self_count += 1
        for key in {(f.symbol or UNKNOWN_SYMBOL, f.kernel) for f in sample.frames}:
            row(*key).incl_count += 1
    return sorted(table.values(), key=lambda r: (-r.self_count, -r.incl_count, r.name, r.kernel))


def percent(part: int, total: int) -> float:
    return 100.0 * part / total if total else 0.0


def render(profile: Profile, limit: Optional[int] = 10) -> str:
    """The table as text: the `limit` first rows (all of them for None) and a total line."""
    total = sum(1 for s in profile.samples if s.frames)
    shown = rows(profile)
    if limit is not None:
        shown = shown[:limit]
    lines = []
    if total:
        lines.append(f"{'self':>7} {'%':>6} {'incl':>7} {'%':>6}  function")
        for r in shown:
            lines.append(f"{r.self_count:7d} {percent(r.self_count, total):5.1f}% "
                         f"{r.incl_count:7d} {percent(r.incl_count, total):5.1f}%  {r.display}")
    pids = profile.pids()
    who = "1 process" if len(pids) == 1 else f"{len(pids)} processes"
    lines.append(f"{total} samples from {who}")
    return "\n".join(lines) + "\n"
