"""speedscope's own file format, so a profile opens at https://www.speedscope.app.

The format (its schema is https://www.speedscope.app/file-format-schema.json) stores each
function name once, in a shared table of frames, and then refers to frames by their index:

    {"$schema": "...file-format-schema.json",
     "shared": {"frames": [{"name": "_start"}, {"name": "main"}, {"name": "hot"}]},
     "profiles": [{"type": "sampled", "name": "pid 3", "unit": "none",
                   "startValue": 0, "endValue": 2,
                   "samples": [[0, 1, 2], [0, 1]], "weights": [1, 1]}]}

A "sampled" profile lists every sample's stack from the outermost frame to the innermost,
in the order the samples were taken, so speedscope can show both the merged flame graph
and the samples over time. Each process gets a profile of its own (speedscope shows one at
a time and lets the reader switch), and the file opens on the busiest one: the first pid
is often the shell that started the program, with a handful of samples. Every sample
weighs 1: the unit is a count of samples, not a time, which stays true whatever the
sampling rate was.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .model import Profile

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def convert(profile: Profile, name: str = "tern profile") -> Dict[str, Any]:
    """The speedscope document, as JSON-ready Python data."""
    frames: List[Dict[str, Any]] = []
    index: Dict[Tuple[str, bool], int] = {}

    def frame_index(label: str, kernel: bool) -> int:
        key = (label, kernel)
        if key not in index:
            index[key] = len(frames)
            entry: Dict[str, Any] = {"name": label}
            if kernel:
                entry["file"] = "kernel"
            frames.append(entry)
        return index[key]

    profiles = []
    for pid in profile.pids():
        samples = sorted((s for s in profile.samples if s.pid == pid), key=lambda s: s.timestamp)
        stacks = [[frame_index(f.label, f.kernel) for f in s.stack()] for s in samples]
        profiles.append({
            "type": "sampled",
            "name": profile.process_label(pid),
            "unit": "none",
            "startValue": 0,
            "endValue": len(stacks),
            "samples": stacks,
            "weights": [1] * len(stacks),
        })
    busiest = max(range(len(profiles)), key=lambda i: (profiles[i]["endValue"], -i), default=0)
    return {
        "$schema": SCHEMA,
        "name": name,
        "exporter": "tern profconv",
        "activeProfileIndex": busiest,
        "shared": {"frames": frames},
        "profiles": profiles,
    }
