r"""Folded stacks: exactly the sample counts of the JSON, in total and for every stack.

Kernel frames end in "_[k]", the mark FlameGraph's stackcollapse-perf.pl --kernel writes
and flamegraph.pl's colour schemes (--colors=java, js, perl) look for to paint a frame as
kernel code: `$name =~ m:_\[k\]$:`.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List

from samples import process_label, process_names, raw_samples


def expected_stacks(samples: List[Dict[str, Any]], with_pid: bool = False) -> Counter:
    """Folded stacks computed straight from the JSON, independently of tools/tern/prof."""
    out: Counter = Counter()
    processes = process_names(samples)
    for s in samples:
        names = []
        for f in reversed(s["samples"]):
            name = (f["symbol"] or "??").replace(";", ":")
            names.append(name + "_[k]" if f["kernel"] else name)
        names = names or ["[unknown]"]
        if with_pid:
            names.insert(0, process_label(s["pid"], processes))
        out[";".join(names)] += 1
    return out


def parse_folded(text: str) -> Counter:
    """Folded text back into stack -> count; the count follows the last space."""
    out: Counter = Counter()
    assert text.endswith("\n")
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        assert stack and count.isdigit(), f"malformed folded line {line!r}"
        assert stack not in out, f"stack {stack!r} appears on two lines"
        out[stack] = int(count)
    return out


def test_counts_match_json(export_profile: Path, profconv: Callable) -> None:
    result = profconv("folded", export_profile)
    assert result.returncode == 0, result.stderr
    folded = parse_folded(result.stdout.decode("utf-8"))
    samples = raw_samples(export_profile)
    assert sum(folded.values()) == len(samples)
    assert folded == expected_stacks(samples)


def test_with_pid_prefix(export_profile: Path, profconv: Callable) -> None:
    result = profconv("folded", export_profile, "--with-pid")
    assert result.returncode == 0, result.stderr
    folded = parse_folded(result.stdout.decode("utf-8"))
    assert folded == expected_stacks(raw_samples(export_profile), with_pid=True)
    assert all(stack.startswith("pid ") for stack in folded)


def test_pid_filter(mixed_path: Path, profconv: Callable) -> None:
    samples = raw_samples(mixed_path)
    pids = sorted({s["pid"] for s in samples})
    assert len(pids) > 1
    for pid in pids:
        result = profconv("folded", mixed_path, "--pid", pid)
        assert result.returncode == 0, result.stderr
        folded = parse_folded(result.stdout.decode("utf-8"))
        assert folded == expected_stacks([s for s in samples if s["pid"] == pid])
    both = profconv("folded", mixed_path, "--pid", f"{pids[0]},{pids[1]}", "--with-pid")
    prefixes = {line.split(";")[0] for line in both.stdout.decode().splitlines()}
    assert prefixes == {f"pid {pids[0]}", f"pid {pids[1]}"}


def test_spin_chain(spin_path: Path, profconv: Callable) -> None:
    folded = parse_folded(profconv("folded", spin_path).stdout.decode())
    hot = folded["_start;main;outer;middle;hot"]
    assert hot > sum(folded.values()) / 2, "spin spends most of its samples in hot"


def test_kernel_frames_marked(mixed_path: Path, profconv: Callable) -> None:
    folded = parse_folded(profconv("folded", mixed_path).stdout.decode())
    flamegraph_kernel = re.compile(r"_\[k\]$")  # flamegraph.pl's test, as it writes it
    samples = raw_samples(mixed_path)
    kernel_frames = sum(f["kernel"] for s in samples for f in s["samples"])
    marked_frames = sum(count * sum(1 for f in stack.split(";") if flamegraph_kernel.search(f))
                        for stack, count in folded.items())
    assert kernel_frames > 0, "the mixed profile has samples inside system calls"
    assert marked_frames == kernel_frames
    for stack in folded:
        marked = [bool(flamegraph_kernel.search(f)) for f in stack.split(";")]
        # Kernel frames are innermost: once a stack enters the kernel it stays there.
        assert marked == sorted(marked), stack
