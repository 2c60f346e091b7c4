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


def test_round_trip(export_profile: Path, profconv: Callable) -> None:
    result = profconv("perf", export_profile)
    assert result.returncode == 0, result.stderr
    events = parse_perf(result.stdout.decode("utf-8"))
    samples = sorted(raw_samples(export_profile), key=lambda s: s["timestamp"])
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
        assert [(a, perf_name_meaning(n), d) for a, n, d in e["frames"]] == expected
        assert not any(n.startswith("(") for _, n, _ in e["frames"])


def test_names_become_comm_and_dso(spin_path: Path, profconv: Callable) -> None:
    pid = raw_samples(spin_path)[0]["pid"]
    events = parse_perf(profconv("perf", spin_path, "--name", f"{pid}=spin").stdout.decode())
    assert {e["comm"] for e in events} == {"spin"}
    files = {dso for e in events for _, _, dso in e["frames"]}
    assert "/spin" in files
    assert files <= {"/spin", "[kernel.kallsyms]"}


# --- The Firefox Profiler's importer ---------------------------------------------------------
#
# The Firefox Profiler (src/profile-logic/import/linux-perf.js) reads `perf script` text with
# the rules below. Two of them can lose what tern wrote: a frame whose symbol starts with
# "(" is skipped, taken for a process name, and a trailing "+0x..." offset is cut off.


def import_like_firefox(text: str) -> List[Dict[str, Any]]:
    """The samples as the Firefox Profiler's perf importer reads them: thread name, pid, tid,
    and the frames innermost first as (function, module, is kernel)."""
    samples = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line == "" or line.startswith("#"):
            continue
        start = re.match(r"^(.*)\s+([\d.]+):", line)
        assert start, f"the importer cannot read the header {line!r}"
        who = re.match(r"^(.*)\s+(?:(\d+)\/)?(\d+)\b", start[1])
        assert who, f"the importer finds no pid/tid in {line!r}"
        frames = []
        while i < len(lines):
            frame_line = lines[i]
            i += 1
            if frame_line.strip() == "":
                break
            m = re.match(r"^\s*(\w+)\s*(.+) \((\S*)\)", frame_line)
            if not m:
                continue  # the importer ignores a line it cannot read
            func = re.sub(r"\+0x[\da-f]+$", "", m[2])
            if func.startswith("("):
                continue  # "skip process names"
            frames.append((func, m[3], "kallsyms" in f"{func} (in {m[3]})"))
        if frames:
            samples.append({"thread": who[1].strip(), "pid": int(who[2] or 0),
                            "tid": int(who[3]), "time": float(start[2]), "frames": frames})
    return samples


def test_firefox_importer_keeps_every_frame(export_profile: Path, profconv: Callable) -> None:
    result = profconv("perf", export_profile)
    assert result.returncode == 0, result.stderr
    imported = import_like_firefox(result.stdout.decode("utf-8"))
    samples = sorted((s for s in raw_samples(export_profile) if s["samples"]),
                     key=lambda s: s["timestamp"])
    names = process_names(samples)
    assert len(imported) == len(samples)
    lost = 0
    for got, want in zip(imported, samples):
        assert (got["pid"], got["tid"]) == (want["pid"], want["tid"])
        assert got["thread"] == names.get(want["pid"], f"pid{want['pid']}").replace(" ", "_")
        lost += len(got["frames"]) != len(want["samples"])
        if len(got["frames"]) == len(want["samples"]):
            for (func, _, kernel), f in zip(got["frames"], want["samples"]):
                assert kernel == f["kernel"]
                assert perf_name_meaning(func) == (" ".join(f["symbol"].split()) or "[unknown]")
    assert lost == 0, f"{lost} of {len(samples)} samples lost frames in the importer"


def perf_name_meaning(name: str) -> str:
    """The symbol a perf frame name stands for: perf.py writes "(anonymous namespace)" as
    GCC's messages spell it, "{anonymous}", so that importers keep the frame."""
    return name.replace("{anonymous}", "(anonymous namespace)")


def test_names_never_start_with_a_parenthesis() -> None:
    """Other names that start with a parenthesised group keep their letters, in braces."""
    from tern.prof.perf import frame_name
    assert frame_name("(anonymous namespace)::f((anonymous namespace)::A)") == \
        "{anonymous}::f({anonymous}::A)"
    assert frame_name("(lambda (x))::operator()") == "{lambda (x)}::operator()"
    assert frame_name("(unclosed") == "{unclosed"
    assert frame_name("f(int)") == "f(int)" and frame_name("") == "[unknown]"
    assert frame_name("a\tb\nc") == "a b c"
