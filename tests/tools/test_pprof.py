"""pprof output, decoded by an independent reader: npm's pprof-format package.

profconv writes profile.proto with a hand-written protobuf encoder (tools/tern/prof/protobuf.py),
so its own code cannot be the judge of it. pprof-format, a decoder written by others from
the same public profile.proto, reads the file in Node; tests/tools/pprof_dump.mjs prints
what it decoded as JSON, and that is compared with the profile's JSON.

The package is installed into build/tools-node/ (not committed) on first use; the tests
skip, saying why, only if npm is missing or cannot reach its registry. Under `CI=true`
those skips fail instead (tools/tern/strict_skips.py): CI installs node and npm (tools/deps).
"""

from __future__ import annotations

import fcntl
import gzip
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from samples import ROOT, raw_samples
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


def test_decoded_by_pprof_format(any_profile: Path, profconv: Callable, tmp_path: Path,
                                 pprof_reader: Callable) -> None:
    out = tmp_path / "profile.pb.gz"
    result = profconv("pprof", any_profile, "-o", out, "--rate", 200)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:2] == b"\x1f\x8b", "pprof files are gzipped"
    decoded = pprof_reader(out)
    samples = sorted(raw_samples(any_profile), key=lambda s: s["timestamp"])

    assert decoded["stringZero"] == "", "string_table[0] must be the empty string"
    assert decoded["sampleTypes"] == [["samples", "count"], ["cpu", "nanoseconds"]]
    assert decoded["periodType"] == ["cpu", "nanoseconds"]
    assert decoded["period"] == 5_000_000  # 200 Hz
    first, last = samples[0]["timestamp"], samples[-1]["timestamp"]
    assert decoded["timeNanos"] == first * 1000
    assert decoded["durationNanos"] == (last - first) * 1000 + 5_000_000
    assert decoded["comments"] and "boot" in decoded["comments"][0]

    mappings = {m["id"]: m for m in decoded["mappings"]}
    assert len(decoded["samples"]) == len(samples)
    for got, want in zip(decoded["samples"], samples):
        assert got["values"] == [1, 5_000_000]
        assert got["labels"] == {"pid": want["pid"], "hart": want["hart"], "mode": want["mode"]}
        # Locations innermost first, as the JSON has them, each in its function and mapping.
        assert [f["name"] for f in got["frames"]] == [label(f) for f in want["samples"]]
        assert [f["address"] for f in got["frames"]] == [f["address"] for f in want["samples"]]
        for f, w in zip(got["frames"], want["samples"]):
            m = mappings[f["mapping"]]
            assert m["start"] <= f["address"] < m["limit"] and m["hasFunctions"]
            assert m["file"] == ("kernel" if w["kernel"] else "user")
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
