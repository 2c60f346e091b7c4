"""Figures: what a benchmark measured, how it is summarised, printed and saved.

A benchmark produces one Figure per quantity, holding every run's value. The summary is the
median, with the spread shown as the smallest and largest value, so a reader sees at once
whether the runs agreed. Figures counted in guest instructions under QEMU's -icount are
marked exact: such a count does not depend on the host, so two runs of the whole bench must
give the same number, and compare() checks that against the previous run's results.

A figure may carry a target (for example "at most 800 instructions"); the table prints it
beside the value with whether it was met. Nothing here fails a run because of a value: the
benchmarks report, they do not assert.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable


@dataclass(frozen=True)
class Target:
    """An upper (`at_most=True`) or lower bound on a figure's median."""

    limit: float
    at_most: bool = True

    def met(self, value: float) -> bool:
        return value <= self.limit if self.at_most else value >= self.limit

    def describe(self, digits: int) -> str:
        shown = 0 if float(self.limit).is_integer() and digits <= 1 else digits
        return f"{'<=' if self.at_most else '>='} {format_number(self.limit, shown)}"


@dataclass
class Figure:
    key: str          # stable identifier, for comparing runs
    group: str        # which benchmark made it (boot, syscalls, profiler, ...)
    name: str         # what the table calls it
    unit: str
    clock: str        # "icount" (guest instructions) or "wall" (host seconds)
    digits: int = 0   # decimals to print
    exact: bool = False  # expected to repeat exactly from run to run
    target: Target | None = None
    values: list[float] = field(default_factory=list)
    missing: str = ""  # why there are no values, if there are none
    note: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    def add(self, value: float) -> None:
        self.values.append(value)


def format_number(value: float, digits: int) -> str:
    return f"{value:,.{digits}f}"


def _row(f: Figure) -> list[str]:
    median = f.median
    if median is None:
        return [f.name, "n/a", "", f.unit, f.clock, ""]
    if len(f.values) == 1:
        spread = "(1 run)"
    elif min(f.values) == max(f.values):
        spread = f"all {len(f.values)} equal"
    else:
        spread = (f"{format_number(min(f.values), f.digits)} - "
                  f"{format_number(max(f.values), f.digits)}")
    target = ""
    if f.target is not None:
        verdict = "met" if f.target.met(median) else "MISSED"
        target = f"{f.target.describe(f.digits)}: {verdict}"
    return [f.name, format_number(median, f.digits), spread, f.unit, f.clock, target]


HEADER = ["figure", "median", "spread (min - max)", "unit", "clock", "target"]
_RIGHT = {1, 2}  # numeric columns


def text_table(figures: Iterable[Figure]) -> str:
    """The table for a terminal: aligned columns, a blank line between groups."""
    figures = list(figures)
    rows = [HEADER] + [_row(f) for f in figures]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(widths[i]) if i in _RIGHT else c.ljust(widths[i])
                         for i, c in enumerate(cells)).rstrip()

    out = [line(HEADER), line(["-" * w for w in widths])]
    previous = None
    for f, row in zip(figures, rows[1:]):
        if previous is not None and f.group != previous:
            out.append("")
        previous = f.group
        out.append(line(row))
    return "\n".join(out)


def markdown_table(figures: Iterable[Figure]) -> str:
    rows = [HEADER, ["---", "---:", "---:", "---", "---", "---"]]
    rows += [_row(f) for f in figures]
    return "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows)


def notes(figures: Iterable[Figure]) -> str:
    """One line for each figure with something to say: why it is n/a, or its note."""
    lines = []
    for f in figures:
        text = f.note if f.values else f"n/a: {f.missing or 'not measured'}"
        if text:
            lines.append(f"- {f.name}: {text}")
    return "\n".join(lines)


# --- Saving and comparing -----------------------------------------------------------------


def save(path: Path, figures: list[Figure], meta: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = dict(meta)
    doc["figures"] = []
    for f in figures:
        entry = asdict(f)
        entry["median"] = f.median
        entry["min"] = min(f.values) if f.values else None
        entry["max"] = max(f.values) if f.values else None
        entry["target_met"] = (f.target.met(f.median) if f.target is not None and f.values
                               else None)
        doc["figures"].append(entry)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)


def compare(previous: dict, figures: list[Figure]) -> list[str]:
    """Lines describing how this run's exact figures differ from a previous run's."""
    before = {f["key"]: f for f in previous.get("figures", [])}
    lines = []
    same = 0
    for f in figures:
        old = before.get(f.key)
        if not f.exact or not f.values or old is None or not old.get("values"):
            continue
        if sorted(set(old["values"])) == sorted(set(f.values)):  # the number of runs may differ
            same += 1
            continue
        lines.append(f"  {f.name}: {_summary(old['values'], f.digits)} before, "
                     f"{_summary(f.values, f.digits)} now")
    head = f"exact figures identical to the previous run: {same}"
    if lines:
        head += f"; different: {len(lines)}"
    return [head] + lines


def _summary(values: list[float], digits: int) -> str:
    """The distinct values, with more decimals than the table shows (a difference may hide in
    them)."""
    return " / ".join(format_number(v, max(digits, 3)) for v in sorted(set(values)))
