"""speedscope's file format, checked against the structure its schema requires."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Callable

from samples import process_label, process_names, raw_samples

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def label(frame: dict) -> str:
    name = frame["symbol"] or "??"
    return name + " [k]" if frame["kernel"] else name


def test_structure(export_profile: Path, profconv: Callable, tmp_path: Path) -> None:
    out = tmp_path / "profile.speedscope.json"
    result = profconv("speedscope", export_profile, "-o", out)
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    samples = raw_samples(export_profile)

    assert doc["$schema"] == SCHEMA
    frames = doc["shared"]["frames"]
    assert isinstance(frames, list) and frames
    for f in frames:
        assert isinstance(f, dict) and isinstance(f["name"], str)
    names = [f["name"] for f in frames]
    assert len(set(zip(names, [f.get("file") for f in frames]))) == len(frames), \
        "each frame should be listed once"

    by_pid = Counter(s["pid"] for s in samples)
    assert isinstance(doc["profiles"], list) and len(doc["profiles"]) == len(by_pid)
    assert 0 <= doc.get("activeProfileIndex", 0) < len(doc["profiles"])
    seen = set()
    for prof in doc["profiles"]:
        assert prof["type"] == "sampled"
        assert prof["unit"] in ("none", "nanoseconds", "microseconds", "milliseconds", "seconds",
                                "bytes")
        pid = int(prof["name"].split()[1])
        seen.add(pid)
        assert len(prof["samples"]) == len(prof["weights"]) == by_pid[pid]
        assert sum(prof["weights"]) == by_pid[pid]
        assert prof["startValue"] == 0 and prof["endValue"] == sum(prof["weights"])
        for stack in prof["samples"]:
            assert all(isinstance(i, int) and 0 <= i < len(frames) for i in stack)

        # The stacks, in time order and outermost first, are the JSON's.
        mine = sorted((s for s in samples if s["pid"] == pid), key=lambda s: s["timestamp"])
        expected = [[label(f) for f in reversed(s["samples"])] for s in mine]
        assert [[names[i] for i in stack] for stack in prof["samples"]] == expected
    assert seen == set(by_pid)


def test_opens_on_the_busiest_process(export_profile: Path, profconv: Callable,
                                      tmp_path: Path) -> None:
    """speedscope shows the profile at activeProfileIndex first: the process with the most
    samples (the lowest pid among equals), not whichever pid is first."""
    out = tmp_path / "profile.speedscope.json"
    assert profconv("speedscope", export_profile, "-o", out).returncode == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    by_pid = Counter(s["pid"] for s in raw_samples(export_profile))
    busiest = min(by_pid, key=lambda pid: (-by_pid[pid], pid))
    active = doc["profiles"][doc["activeProfileIndex"]]
    assert int(active["name"].split()[1]) == busiest
    assert len(active["samples"]) == by_pid[busiest]


def test_names_the_processes(export_profile: Path, profconv: Callable, tmp_path: Path) -> None:
    out = tmp_path / "profile.speedscope.json"
    assert profconv("speedscope", export_profile, "-o", out).returncode == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    names = process_names(raw_samples(export_profile))
    assert [p["name"] for p in doc["profiles"]] == \
        [process_label(pid, names) for pid in sorted({s["pid"] for s in raw_samples(export_profile)})]
