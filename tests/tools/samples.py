"""What the tests of the profile tools share besides fixtures (conftest.py has those): the
tree's paths, the profiles, and the plain-json reference reading of a profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import profile_synth

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
DATA = Path(__file__).resolve().parent / "data"
PROFCONV = TOOLS / "profconv"

PROFILES = ("spin", "mixed", "synthetic")


def profile_text(kind: str) -> str:
    if kind == "synthetic":
        return profile_synth.make_text(seed=1)
    return (DATA / f"{kind}.json").read_text(encoding="utf-8")


def raw_samples(path: Path) -> List[Any]:
    """The samples of a profile file, read with nothing but the json module: the reference
    the converters' output is compared with."""
    return json.loads(path.read_text(encoding="utf-8"))


def process_names(samples: List[Any]) -> Dict[int, str]:
    """The name of each process that has one: the last "comm" its samples carry (a process
    sampled between its fork and its exec carries its parent's name at first)."""
    names: Dict[int, str] = {}
    for s in samples:
        if s.get("comm"):
            names[s["pid"]] = s["comm"]
    return names


def process_label(pid: int, names: Dict[int, str]) -> str:
    """How the reports title a process: "pid 3", or "pid 3 (spin)" when it has a name."""
    return f"pid {pid} ({names[pid]})" if pid in names else f"pid {pid}"
