"""The table of functions: self and inclusive counts, printed like `profile top`."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, Tuple

from samples import ROOT, addr2line, primes_profile, raw_samples

# The row format of `profile top` (user/bin/profile/tally.cc), which profconv copies.
ROW = re.compile(r"^\s*(\d+)\s+(\d+\.\d)%\s+(\d+)\s+(\d+\.\d)%  (\[k\] )?(.+)$")
TOTAL = re.compile(r"^(\d+) samples from (\d+) process(?:es)?$")


def expected_counts(samples: list) -> Tuple[Counter, Counter, int]:
    self_counts: Counter = Counter()
    incl_counts: Counter = Counter()
    total = 0
    for s in samples:
        frames = s["samples"]
        if not frames:
            continue
        total += 1
        self_counts[(frames[0]["symbol"] or "??", frames[0]["kernel"])] += 1
        for key in {(f["symbol"] or "??", f["kernel"]) for f in frames}:
            incl_counts[key] += 1
    return self_counts, incl_counts, total


def parse_top(text: str) -> Tuple[Dict[Tuple[str, bool], Tuple[int, int]], int, int]:
    lines = text.splitlines()
    total = TOTAL.match(lines[-1])
    assert total, f"no total line at the end:\n{text}"
    rows = {}
    for line in lines[1:-1]:
        m = ROW.match(line)
        assert m, f"malformed row {line!r}"
        n = int(total[1])
        assert abs(float(m[2]) - 100.0 * int(m[1]) / n) < 0.051
        assert abs(float(m[4]) - 100.0 * int(m[3]) / n) < 0.051
        rows[(m[6], m[5] is not None)] = (int(m[1]), int(m[3]))
    return rows, int(total[1]), int(total[2])


def test_all_rows_match_json(any_profile: Path, profconv: Callable) -> None:
    result = profconv("top", any_profile, "-n", 0)
    assert result.returncode == 0, result.stderr
    rows, total, nprocs = parse_top(result.stdout.decode("utf-8"))
    samples = raw_samples(any_profile)
    self_counts, incl_counts, want_total = expected_counts(samples)
    assert total == want_total
    assert nprocs == len({s["pid"] for s in samples})
    assert rows == {key: (self_counts[key], incl_counts[key]) for key in incl_counts}


def test_sorted_and_limited(spin_path: Path, profconv: Callable) -> None:
    text = profconv("top", spin_path).stdout.decode()
    rows = [ROW.match(line) for line in text.splitlines()[1:-1]]
    functions = {(f["symbol"], f["kernel"]) for s in raw_samples(spin_path) for f in s["samples"]}
    assert len(rows) == min(10, len(functions)), "ten rows by default, like `profile top`"
    keys = [(-int(m[1]), -int(m[3])) for m in rows]
    assert keys == sorted(keys)
    assert rows[0][6] == "hot", "spin spends most of its time in hot"
    assert len(profconv("top", spin_path, "-n", 3).stdout.decode().splitlines()) == 5


LINE_ROW = re.compile(r"^\s*(\d+)\s+(\d+\.\d)%\s+(\d+)\s+(\d+\.\d)%  (\S+)\s+(\[k\] )?(.+)$")


def test_hottest_line_of_each_function(profconv: Callable, tmp_path: Path) -> None:
    """With the build's binaries, each row names the line of its own code most of its
    samples were at (for inlined code, the line of the call), as addr2line finds it."""
    path, samples, seed = primes_profile(tmp_path, 11, 300)
    text = profconv("top", path, "-n", 0).stdout.decode()
    truth = addr2line(ROOT / "build" / "user" / "_primes.elf",
                      [s["samples"][0]["address"] for s in samples])
    per_function: Dict[str, Counter] = {}
    for s, chain in zip(samples, truth):
        if chain:  # the function's own line: the outermost of an inlined call's chain
            per_function.setdefault(s["samples"][0]["symbol"], Counter())[chain[-1]] += 1
    header, *rows, _ = text.splitlines()
    assert header.split()[4:] == ["line", "function"], header
    checked = 0
    for line in rows:
        m = LINE_ROW.match(line)
        assert m, f"malformed row {line!r}"
        counts = per_function.get(m[7])
        if not counts:
            assert m[5] == "-"
            continue
        best = min(counts, key=lambda t: (-counts[t], t[0], t[1]))
        assert m[5] == f"{os.path.basename(best[0])}:{best[1]}", line
        checked += 1
    print(f"seed {seed}: {len(samples)} samples, {checked} rows checked")
    assert checked >= 5
    assert LINE_ROW.match(rows[0])[7] == "is_prime"


def test_no_source_leaves_the_column_out(profconv: Callable, tmp_path: Path) -> None:
    path = tmp_path / "primes.json"
    path.write_text(json.dumps(raw_samples(Path(__file__).parent / "data" / "spin.json")))
    text = profconv("top", path, "--no-source").stdout.decode()
    assert text.splitlines()[0].split()[4:] == ["function"]
