"""The speed lab's handout (labs/speed/README.md) shows what its commands print today.

Its examples were made by running them (in the starter, and in the starter with the
sleep-lock fix); a change to a tool's output makes them stale, and these checks say so:

  * every `$ tools/profget ... 'profile run ...'` is followed by what profget prints: the
    session, with the guest's `profile run` table in the columns user/bin/profile/tally.cc
    prints (pid and process among them), its rows-left-out line and its total;
  * every `$ tools/profconv top FILE -n N` that follows is that profile's table in
    tern.prof.top's columns, its rows the guest's first N, its total the guest's;
  * every `tools/speed` table has the columns tern.bench.speed prints, the starter's counts
    of labs/speed/reference.toml, and ratios that follow from the counts;
  * every `make TARGET` it names is a Makefile target, every `tools/NAME` an executable.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tern.bench import speed
from tern.profile_check import TOP_LEFT_OUT, TOP_ROW, TOP_TOTAL

ROOT = Path(__file__).resolve().parents[2]
HANDOUT = ROOT / "labs/speed/README.md"
PROFGET = re.compile(r"^\$ tools/profget .*'profile run [^']+'.* -o (\S+)$")
PROFCONV_TOP = re.compile(r"^\$ tools/profconv top (\S+) -n (\d+)$")
PROFCONV_HEADER = re.compile(r"^\s+self\s+%\s+incl\s+%\s+(line\s+)?function$")
PROFCONV_ROW = re.compile(r"^\s*(\d+)\s+(\d+\.\d)%\s+(\d+)\s+(\d+\.\d)%\s+(?:\S+:\d+\s+|-\s+)?"
                          r"(.+)$")
PROFCONV_TOTAL = re.compile(r"^(\d+) samples from 1 process$")
SPEED_HEADER = re.compile(r"^workload\s+starter((?:\s+run \d+)+)\s+ratio$")


@dataclass(frozen=True)
class Row:
    self_count: int
    self_pct: float
    incl_count: int
    incl_pct: float
    name: str


def blocks() -> list[list[str]]:
    """The handout's code blocks (lines indented four spaces), without the indent."""
    out: list[list[str]] = []
    current: list[str] = []
    for line in HANDOUT.read_text().splitlines() + [""]:
        if line.startswith("    "):
            current.append(line[4:])
        elif current:
            out.append(current)
            current = []
    return out


def guest_header() -> str:
    """The header of `profile top`/`profile run`, from tally.cc's own printf."""
    source = (ROOT / "user/bin/profile/tally.cc").read_text()
    call = re.search(r'printf\("(%\d+s [^"]*)\\n", ([^;]*)\);', source)
    assert call, "user/bin/profile/tally.cc prints no header that this test can find"
    return call.group(1) % tuple(re.findall(r'"([^"]*)"', call.group(2)))


def check_pct(row: Row, total: int, where: str) -> None:
    for count, pct in ((row.self_count, row.self_pct), (row.incl_count, row.incl_pct)):
        assert abs(count * 100 / total - pct) <= 0.1, f"{where}: {row} of {total} samples"


def guest_table(lines: list[str], where: str) -> tuple[list[Row], int]:
    """The rows and the total of the `profile run` table in profget's output `lines`."""
    assert guest_header() in lines, (
        f"{where}: no `profile run` table with the columns of `profile top` today "
        f"({guest_header().strip()!r}): run the command again and paste what it prints")
    start = lines.index(guest_header()) + 1
    rows = []
    for line in lines[start:]:
        m = TOP_ROW.match(line)
        if not m:
            break
        rows.append(Row(int(m.group(1)), float(m.group(2)), int(m.group(3)),
                        float(m.group(4)), (m.group(7) or "") + m.group(8).strip()))
    rest = "\n".join(lines[start + len(rows):])
    total = TOP_TOTAL.search(rest)
    assert total, f"{where}: no `N samples (M dropped)` line after the table"
    assert len(rows) < 10 or TOP_LEFT_OUT.search(rest), (
        f"{where}: {len(rows)} rows and no `(K more rows left out)` line")
    samples = int(total.group(1))
    for row in rows:
        check_pct(row, samples, where)
    wrote = [line for line in lines if line.startswith("profget: wrote ")]
    assert wrote and wrote[-1].startswith(f"profget: wrote {samples} samples"), (
        f"{where}: profget's last line should say it wrote the table's {samples} samples")
    return rows, samples


def profiles() -> list[tuple[str, list[Row], int]]:
    """Each profile the handout makes: (its file, the guest table's rows, total)."""
    out = []
    for block in blocks():
        for i, line in enumerate(block):
            m = PROFGET.match(line)
            if m:
                end = next((j for j in range(i + 1, len(block)) if block[j].startswith("$ tools/")),
                           len(block))
                out.append((m.group(1), *guest_table(block[i + 1:end], line)))
    return out


def test_the_profget_examples_show_the_guest_table() -> None:
    assert len(profiles()) >= 2, "the walk-through profiles the starter and the fix"


def test_the_profconv_top_examples_match_their_profiles() -> None:
    made = {name: (rows, total) for name, rows, total in profiles()}
    seen = 0
    for block in blocks():
        for i, line in enumerate(block):
            m = PROFCONV_TOP.match(line)
            if not m:
                continue
            seen += 1
            assert m.group(1) in made, f"{line}: no profget above makes {m.group(1)}"
            guest, total = made[m.group(1)]
            n = int(m.group(2))
            out = block[i + 1:i + n + 3]
            assert PROFCONV_HEADER.match(out[0]), f"{line}: not profconv top's header: {out[0]!r}"
            rows = []
            for text in out[1:n + 1]:
                r = PROFCONV_ROW.match(text)
                assert r, f"{line}: not a row of profconv top: {text!r}"
                rows.append(Row(int(r.group(1)), float(r.group(2)), int(r.group(3)),
                                float(r.group(4)), r.group(5).strip()))
            assert rows == guest[:n], (
                f"{line}: rows differ from the guest's:\n{rows}\n{guest[:n]}")
            said = PROFCONV_TOTAL.match(out[n + 1])
            assert said and int(said.group(1)) == total, (
                f"{line}: total {out[n + 1]!r}, not {total}")
    assert seen >= 2, "the walk-through shows profconv top before and after"


def test_the_speed_tables_are_the_reference() -> None:
    starter = speed.load_reference(ROOT)["starter"]
    tables = 0
    for block in blocks():
        for i, line in enumerate(block):
            head = SPEED_HEADER.match(line)
            if not head:
                continue
            tables += 1
            runs = len(head.group(1).split()) // 2
            rows = [row.split() for row in block[i + 1:i + 1 + len(speed.WORKLOADS)]]
            assert [row[0] for row in rows] == list(speed.WORKLOADS), f"{line}: {rows}"
            for row in rows:
                counts = [int(c.replace(",", "")) for c in row[1:2 + runs]]
                assert counts[0] == starter[row[0]], (
                    f"{row[0]}: starter {counts[0]:,}, reference.toml says {starter[row[0]]:,}")
                assert len(set(counts[1:])) == 1, f"{row[0]}: the runs differ: {row}"
                assert row[-1] == f"{counts[0] / counts[1]:.2f}x", f"{row[0]}: ratio {row}"
    assert tables >= 2, "the handout shows the starter's counts and the first fix's"


# `make X` in backquotes or at the start of a line of a code block.
MAKE = re.compile(r"(?m)(?:`|^    )make ([a-z][\w-]*)")


@pytest.mark.parametrize("target", sorted(set(MAKE.findall(HANDOUT.read_text()))))
def test_the_make_targets_exist(target: str) -> None:
    assert re.search(rf"(?m)^{re.escape(target)}:", (ROOT / "Makefile").read_text()), target


@pytest.mark.parametrize("tool", sorted(set(re.findall(r"\btools/([a-z][\w-]*)(?![\w/.])",
                                                       HANDOUT.read_text()))))
def test_the_tools_exist(tool: str) -> None:
    assert os.access(ROOT / "tools" / tool, os.X_OK), f"tools/{tool} is no executable"
