"""pprof output, decoded by an independent reader: npm's pprof-format package.

profconv writes profile.proto with a hand-written protobuf encoder (tools/tern/prof/protobuf.py),
so its own code cannot be the judge of it. pprof-format, a decoder written by others from
the same public profile.proto, reads the file in Node; tests/tools/pprof_dump.mjs prints
what it decoded as JSON, and that is compared with the profile's JSON. Go's own `go tool
pprof` (Debian's golang-go) reads it too, as a user would.

The package is installed into build/tools-node/ (not committed) on first use; the tests
skip, saying why, only if npm is missing or cannot reach its registry. Under `CI=true`
those skips fail instead (tools/tern/strict_skips.py): CI installs node and npm (tools/deps).
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

from samples import ROOT, addr2line, process_names, primes_profile, raw_samples
from tern.prof import protobuf

NODE_PREFIX = ROOT / "build" / "tools-node"
DUMP = Path(__file__).resolve().parent / "pprof_dump.mjs"


@pytest.fixture(scope="session")
def pprof_reader() -> Callable[[Path], Dict[str, Any]]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to decode pprof with pprof-format "
                    "(Debian: apt-get install -y nodejs npm)")
    package = NODE_PREFIX / "node_modules" / "pprof-format" / "package.json"
    NODE_PREFIX.mkdir(parents=True, exist_ok=True)
    # Parallel test workers (pytest -n) must not run two installs into one folder.
    with open(NODE_PREFIX / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not package.exists():
            try:
                result = subprocess.run(
                    [npm, "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error",
                     "--prefix", str(NODE_PREFIX), "pprof-format"],
                    capture_output=True, text=True, timeout=180)
            except subprocess.TimeoutExpired:
                pytest.skip("`npm install pprof-format` timed out: is the npm registry "
                            "reachable?")
            if result.returncode != 0 or not package.exists():
                pytest.skip("`npm install pprof-format` failed (the npm registry may be out "
                            f"of reach):\n{result.stderr.strip()[-2000:]}")

    def read(path: Path) -> Dict[str, Any]:
        result = subprocess.run([node, str(DUMP), str(NODE_PREFIX), str(path)],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"pprof-format could not decode {path}:\n{result.stderr}"
        return json.loads(result.stdout)
    return read


def label(frame: dict) -> str:
    name = frame["symbol"] or "??"
    return name + " [k]" if frame["kernel"] else name


def pprof_written_at(profile: Path, written_ns: int, rate: int, profconv: Callable,
                     tmp_path: Path) -> Path:
    """profconv's pprof of a profile file last written at written_ns (which dates it).
    Without source lines: whether the build's binaries are the ones a fixture was taken
    with must not change what is checked here (test_go_pprof_lists_source_lines has them)."""
    os.utime(profile, ns=(written_ns, written_ns))
    out = tmp_path / "profile.pb.gz"
    result = profconv("pprof", profile, "-o", out, "--rate", rate, "--no-source")
    assert result.returncode == 0, result.stderr
    return out


def test_decoded_by_pprof_format(export_profile: Path, profconv: Callable, tmp_path: Path,
                                 pprof_reader: Callable) -> None:
    written_ns = 1_796_000_000_000_000_000
    out = pprof_written_at(export_profile, written_ns, 200, profconv, tmp_path)
    assert out.read_bytes()[:2] == b"\x1f\x8b", "pprof files are gzipped"
    decoded = pprof_reader(out)
    samples = sorted(raw_samples(export_profile), key=lambda s: s["timestamp"])
    names = process_names(samples)

    assert decoded["stringZero"] == "", "string_table[0] must be the empty string"
    assert decoded["sampleTypes"] == [["samples", "count"], ["cpu", "nanoseconds"]]
    assert decoded["periodType"] == ["cpu", "nanoseconds"]
    assert decoded["period"] == 5_000_000  # 200 Hz
    first, last = samples[0]["timestamp"], samples[-1]["timestamp"]
    # The file was written when the last sample was taken (as far as the host can tell).
    assert decoded["timeNanos"] == written_ns - (last - first) * 1000
    assert decoded["durationNanos"] == (last - first) * 1000 + 5_000_000
    assert decoded["comments"] and "boot" in decoded["comments"][0]

    mappings = {m["id"]: m for m in decoded["mappings"]}
    assert len(decoded["samples"]) == len(samples)
    for got, want in zip(decoded["samples"], samples):
        assert got["values"] == [1, 5_000_000]
        labels = {"pid": want["pid"], "hart": str(want["hart"]), "mode": want["mode"]}
        if want["pid"] in names:
            labels["comm"] = names[want["pid"]]
        assert got["labels"] == labels
        if not want["samples"]:
            assert [(f["name"], f["mapping"]) for f in got["frames"]] == [("[unknown]", 0)]
            continue
        # Locations innermost first, as the JSON has them, each in its function and mapping.
        assert [f["name"] for f in got["frames"]] == [label(f) for f in want["samples"]]
        assert [f["address"] for f in got["frames"]] == [f["address"] for f in want["samples"]]
        for f, w in zip(got["frames"], want["samples"]):
            m = mappings[f["mapping"]]
            assert m["start"] <= f["address"] < m["limit"] and m["hasFunctions"]
            assert m["file"] == ("[kernel.kallsyms]" if w["kernel"]
                                 else names.get(want["pid"], "[user]"))
            assert f["file"] == ("kernel" if w["kernel"] else "")


def test_estimated_period(spin_path: Path, profconv: Callable, tmp_path: Path,
                          pprof_reader: Callable) -> None:
    """Without --rate the period comes from the timestamps; spin was sampled at 200 Hz."""
    out = tmp_path / "spin.pb.gz"
    assert profconv("pprof", spin_path, "-o", out).returncode == 0
    decoded = pprof_reader(out)
    assert 3_000_000 <= decoded["period"] <= 8_000_000
    assert all(s["values"] == [1, decoded["period"]] for s in decoded["samples"])


def test_output_is_deterministic(spin_path: Path, profconv: Callable) -> None:
    a = profconv("pprof", spin_path, "-o", "-")
    b = profconv("pprof", spin_path, "-o", "-")
    assert a.returncode == 0 and a.stdout == b.stdout
    assert gzip.decompress(a.stdout)[:1] == b"\x0a", "the first field is sample_type (1, LEN)"


# --- The encoder itself, against the examples of the protobuf encoding guide -------------


def test_varints() -> None:
    assert protobuf.varint(0) == b"\x00"
    assert protobuf.varint(1) == b"\x01"
    assert protobuf.varint(127) == b"\x7f"
    assert protobuf.varint(150) == b"\x96\x01"
    assert protobuf.varint(300) == b"\xac\x02"
    assert protobuf.varint(2**64 - 1) == b"\xff" * 9 + b"\x01"
    assert protobuf.varint(-1) == b"\xff" * 9 + b"\x01", "int64 -1 is ten bytes"
    with pytest.raises(ValueError):
        protobuf.varint(2**64)


def test_fields() -> None:
    m = protobuf.Message().uint(1, 150)
    assert m.encode() == b"\x08\x96\x01"
    assert protobuf.Message().string(2, "testing").encode() == b"\x12\x07testing"
    assert protobuf.Message().packed(4, [3, 270, 86942]).encode() == \
        b"\x22\x06\x03\x8e\x02\x9e\xa7\x05"
    assert protobuf.Message().uint(1, 0).packed(2, []).string(3, "").encode() == b""
    assert protobuf.Message().string(6, "", keep_empty=True).encode() == b"\x32\x00"
    inner = protobuf.Message().uint(1, 150)
    assert protobuf.Message().message(3, inner).encode() == b"\x1a\x03\x08\x96\x01"


# --- Go's own pprof --------------------------------------------------------------------------
#
# `go tool pprof` (Debian's golang-go) is the consumer the format is for. -raw prints the
# profile as pprof holds it after reading (identical samples merged), -traces prints the
# header a user sees first. Both are parsed here and compared with the JSON: stacks,
# counts, pids, harts, process names, kernel marks, the main binary and the time.

RAW_SAMPLE = re.compile(r"^\s+(\d+)\s+(\d+): ([\d ]*)$")
RAW_LOCATION = re.compile(r"^\s+(\d+): 0x([0-9a-f]+)(?: M=(\d+))? (.+) (\S*):(\d+) s=(\d+)")
RAW_INLINED = re.compile(r"^\s+(.+) (\S*):(\d+) s=(\d+)")  # a location's further lines
RAW_MAPPING = re.compile(r"^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S*)")
LABEL = re.compile(r"(\w+):\[([^\]]*)\]")


@pytest.fixture(scope="session")
def go_pprof() -> Callable[..., str]:
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is needed to read pprof with `go tool pprof` "
                    "(Debian: apt-get install -y golang-go)")

    def run(*args: Any) -> str:
        env = dict(os.environ, TZ="UTC", HOME=os.environ.get("HOME", "/tmp"),
                   PPROF_TMPDIR=tempfile.gettempdir())
        result = subprocess.run([go, "tool", "pprof", *map(str, args)], capture_output=True,
                                text=True, timeout=120, env=env)
        assert result.returncode == 0, f"go tool pprof {args} failed:\n{result.stderr}"
        return result.stdout
    return run


def parse_raw(text: str) -> Dict[str, Any]:
    """`go tool pprof -raw` output: the header fields, the samples with their labels, the
    locations (address, mapping, function, file, line) and the mappings."""
    out: Dict[str, Any] = {"header": {}, "samples": [], "locations": {}, "mappings": {}}
    section = "header"
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line.rstrip(":").lower()
            continue
        if section == "header":
            key, _, value = line.partition(": ")
            out["header"][key] = value
        elif section == "samples":
            m = RAW_SAMPLE.match(line)
            if m:
                out["samples"].append({"values": [int(m[1]), int(m[2])],
                                       "locations": [int(i) for i in m[3].split()],
                                       "labels": {}})
            elif out["samples"] and LABEL.search(line):
                for key, value in LABEL.findall(line):
                    out["samples"][-1]["labels"][key] = value
        elif section == "locations":
            m = RAW_LOCATION.match(line)
            if m:
                last = out["locations"][int(m[1])] = {
                    "address": int(m[2], 16), "mapping": int(m[3] or 0), "name": m[4],
                    "file": m[5], "line": int(m[6]), "lines": [(m[4], m[5], int(m[6]))]}
                continue
            m = RAW_INLINED.match(line)
            assert m and out["locations"], f"malformed location line {line!r}"
            # An inlined function's code: the first line printed is the innermost, and the
            # function the location's frame is in comes last.
            last["lines"].append((m[1], m[2], int(m[3])))
            last["name"] = m[1]
        elif section == "mappings" and line.strip():
            m = RAW_MAPPING.match(line)
            assert m, f"malformed mapping line {line!r}"
            out["mappings"][int(m[1])] = {"start": int(m[2], 16), "limit": int(m[3], 16),
                                          "file": m[5]}
    return out


def go_time(text: str) -> float:
    """Go's time.Time.String() in UTC ("2026-12-04 01:22:37.123456789 +0000 UTC") as Unix
    seconds."""
    m = re.match(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d+))? \+0000 UTC$", text)
    assert m, f"not a Go time in UTC: {text!r}"
    whole = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    return whole.timestamp() + (int(m[2]) / 10 ** len(m[2]) if m[2] else 0.0)


def main_binary(samples: List[Dict[str, Any]]) -> str:
    """What pprof should call the profile's binary: the named program with the most samples
    in user code (the kernel is not the program being profiled unless there is no other)."""
    names = process_names(samples)
    programs: Counter = Counter()
    for s in samples:
        if any(not f["kernel"] for f in s["samples"]) and s["pid"] in names:
            programs[names[s["pid"]]] += 1
    if programs:
        return max(sorted(programs), key=lambda name: programs[name])
    return "[user]" if any(not f["kernel"] for s in samples for f in s["samples"]) \
        else "[kernel.kallsyms]"


def test_go_pprof_reads_everything(export_profile: Path, profconv: Callable, tmp_path: Path,
                                   go_pprof: Callable) -> None:
    # The JSON was written at a known wall-clock time: the profile's last sample.
    written_ns = 1_796_000_000_123_456_000
    out = pprof_written_at(export_profile, written_ns, 1000, profconv, tmp_path)
    raw = parse_raw(go_pprof("-raw", out))
    samples = raw_samples(export_profile)
    names = process_names(samples)

    want: Counter = Counter()
    for s in samples:
        # A sample with no frames keeps its place as "[unknown]", as in the folded view.
        frames = tuple((label(f), f["kernel"]) for f in s["samples"]) or (("[unknown]", False),)
        want[(frames, s["pid"], s["hart"], s["mode"], names.get(s["pid"]))] += 1
    got: Counter = Counter()
    for s in raw["samples"]:
        labels = s["labels"]
        locations = [raw["locations"][i] for i in s["locations"]]
        frames = []
        for loc in locations:
            if loc["mapping"] == 0 and loc["name"] == "[unknown]":
                frames.append((loc["name"], False))
                continue
            mapping = raw["mappings"][loc["mapping"]]["file"]
            kernel = mapping == "[kernel.kallsyms]"
            assert loc["name"].endswith(" [k]") == kernel, (loc, mapping)
            if not kernel:
                assert mapping == names.get(int(labels["pid"]), "[user]"), (loc, labels)
            frames.append((loc["name"], kernel))
        assert s["values"][1] == s["values"][0] * 1_000_000
        assert {"pid", "hart", "mode"} <= set(labels), f"a sample lacks a label: {labels}"
        got[(tuple(frames), int(labels["pid"]), int(labels["hart"]), labels["mode"],
             labels.get("comm"))] += s["values"][0]
    assert got == want

    header = go_pprof("-traces", out).splitlines()
    assert header[0] == f"File: {main_binary(samples)}"
    first = min(s["timestamp"] for s in samples)
    last = max(s["timestamp"] for s in samples)
    assert abs(go_time(raw["header"]["Time"]) - (written_ns / 1e9 - (last - first) / 1e6)) \
        < 1e-6, raw["header"]["Time"]


LIST_LINE = re.compile(r"^\s+(\S+)\s+(\S+)\s+(\d+):")


def test_go_pprof_lists_source_lines(profconv: Callable, tmp_path: Path,
                                     go_pprof: Callable) -> None:
    """`pprof -list FUNCTION` prints the function's source with the samples of each line,
    and every location's file:line is addr2line's."""
    path, samples, seed = primes_profile(tmp_path, 7, 400)
    out = tmp_path / "primes.pb.gz"
    result = profconv("pprof", path, "-o", out)
    assert result.returncode == 0, result.stderr
    addresses = [s["samples"][0]["address"] for s in samples]
    truth = addr2line(ROOT / "build" / "user" / "_primes.elf", addresses)
    print(f"seed {seed}: {len(samples)} samples")

    raw = parse_raw(go_pprof("-raw", out))
    by_address = dict(zip(addresses, truth))
    inlined = 0
    for loc in raw["locations"].values():
        # Each line of the location (inlined code first) is addr2line's, in its order.
        want = by_address[loc["address"]] or [("", 0)]
        assert [(f, n) for _, f, n in loc["lines"]] == want, loc
        inlined += len(want) > 1
    print(f"{inlined} of {len(raw['locations'])} locations are in inlined code")

    want = Counter(chain[-1][1] for s, chain in zip(samples, truth)
                   if chain and s["samples"][0]["symbol"] == "is_prime" and
                   chain[-1][0].endswith("primes.cc"))
    listing = go_pprof("-sample_index=samples", "-list", "^is_prime$", out)
    assert "ROUTINE ======================== is_prime in " in listing
    assert str(ROOT / "user" / "demo" / "primes.cc") in listing
    got = Counter()
    for line in listing.splitlines():
        m = LIST_LINE.match(line)
        if m and m[2] != ".":  # cum: inlined code counts at its call
            got[int(m[3])] = int(m[2])
    assert got == want and sum(want.values()) > 100
