"""`perf script` text, parsed back the way the viewers that import it parse it.

The regular expressions are those an importer applies (speedscope's and the Firefox
Profiler's perf importers work line by line like this): a header line with the command,
pid/tid, a time in seconds with a decimal point and the event name; frame lines with a hex
address, a symbol that may contain spaces, and a file name in parentheses at the end.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Dict, List

from samples import process_names, raw_samples

HEADER = re.compile(r"^(\S.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+(\d+)\s+(\S+):\s*$")
FRAME = re.compile(r"^\s*([0-9a-f]+)\s+(.+) \((\S*)\)$")


def parse_perf(text: str) -> List[Dict[str, Any]]:
    events = []
    assert text == "" or text.endswith("\n\n"), "every block ends with a blank line"
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        header, *frames = block.split("\n")
        m = HEADER.match(header)
        assert m, f"malformed header {header!r}"
        event = {"comm": m[1], "pid": int(m[2]), "tid": int(m[3]), "cpu": int(m[4]),
                 "time": m[5], "period": int(m[6]), "event": m[7], "frames": []}
        for line in frames:
            assert line.startswith("\t"), f"frame lines are tab-indented: {line!r}"
            f = FRAME.match(line)
            assert f, f"malformed frame line {line!r}"
            event["frames"].append((int(f[1], 16), f[2], f[3]))
        events.append(event)
    return events


def test_round_trip(any_profile: Path, profconv: Callable) -> None:
    result = profconv("perf", any_profile)
    assert result.returncode == 0, result.stderr
    events = parse_perf(result.stdout.decode("utf-8"))
    samples = sorted(raw_samples(any_profile), key=lambda s: s["timestamp"])
    assert len(events) == len(samples)
    names = process_names(samples)
    for e, s in zip(events, samples):
        assert (e["pid"], e["tid"], e["cpu"]) == (s["pid"], s["tid"], s["hart"])
        seconds, micro = e["time"].split(".")
        assert int(seconds) * 1_000_000 + int(micro) == s["timestamp"] and len(micro) == 6
        assert e["period"] == 1 and e["event"] == "cpu-clock"
        comm = names.get(s["pid"], f"pid{s['pid']}")
        assert e["comm"] == comm.replace(" ", "_")
        dso = "/" + comm if s["pid"] in names else "[user]"
        expected = [(f["address"], " ".join(f["symbol"].split()) or "[unknown]",
                     "[kernel.kallsyms]" if f["kernel"] else dso) for f in s["samples"]]
        assert e["frames"] == expected


def test_names_become_comm_and_dso(spin_path: Path, profconv: Callable) -> None:
    pid = raw_samples(spin_path)[0]["pid"]
    events = parse_perf(profconv("perf", spin_path, "--name", f"{pid}=spin").stdout.decode())
    assert {e["comm"] for e in events} == {"spin"}
    files = {dso for e in events for _, _, dso in e["frames"]}
    assert "/spin" in files
    assert files <= {"/spin", "[kernel.kallsyms]"}
