"""What the tests of the profile tools share besides fixtures (conftest.py has those): the
tree's paths, the profiles, and the plain-json reference reading of a profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List

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
