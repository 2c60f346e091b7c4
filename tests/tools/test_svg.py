"""The SVG flame graph: well-formed, self-contained, and with boxes as wide as their counts."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, List, Tuple

from samples import raw_samples

NS = {"svg": "http://www.w3.org/2000/svg"}
TITLE = re.compile(r"^(.*): (\d+) samples? \((\d+\.\d)%\)(?:, (\d+) in its own code)?$")


def boxes(path: Path) -> List[Dict]:
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    out = []
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        if "frame" not in g.get("class", "").split():
            continue
        title = g.find("svg:title", NS).text
        rect = g.find("svg:rect", NS)
        text = g.find("svg:text", NS).text or ""
        m = TITLE.match(title)
        assert m, f"unexpected tooltip {title!r}"
        out.append({"name": m[1], "count": int(m[2]), "self": m[4],
                    "kind": g.get("class").split()[1],
                    "x": float(rect.get("x")), "y": float(rect.get("y")),
                    "width": float(rect.get("width")), "fill": rect.get("fill"), "text": text})
    return out


def test_flame_graph(any_profile: Path, profconv: Callable, tmp_path: Path) -> None:
    out = tmp_path / "flame.svg"
    result = profconv("svg", any_profile, "-o", out, "--title", "a <test> & title")
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert "<script" not in text and "http://" not in text.replace("http://www.w3.org", ""), \
        "the picture must not need scripts or the network"
    assert "a &lt;test&gt; &amp; title" in text
    found = boxes(out)
    samples = raw_samples(any_profile)
    root = found[0]
    assert root["name"] == "all" and root["count"] == len(samples)
    scale = root["width"] / root["count"]
    for b in found:
        assert abs(b["width"] - b["count"] * scale) < 0.01
        # A name is shown whole, cut with "..", or not at all when the box is too narrow.
        assert b["text"] == b["name"] or b["text"].endswith("..") or b["text"] == ""
        if b["text"].endswith(".."):
            assert b["name"].startswith(b["text"][:-2])

    # Leaves: the boxes' self counts add up to the samples, per innermost function.
    leaf_counts: Counter = Counter()
    for b in found:
        if b["self"] is not None:
            leaf_counts[b["name"]] += int(b["self"])
    want: Counter = Counter()
    for s in samples:
        if s["samples"]:
            f = s["samples"][0]
            want[(f["symbol"] or "??") + (" [k]" if f["kernel"] else "")] += 1
    # Boxes narrower than a third of a pixel are left out of the picture, but at these sizes
    # (fewer than 3,000 samples over more than 1,000 pixels) even one sample is wider.
    assert len(samples) * 0.3 < root["width"]
    assert leaf_counts == want


def rgb(fill: str) -> Tuple[int, int, int]:
    r, g, b = map(int, re.findall(r"\d+", fill))
    return r, g, b


def test_kernel_is_cool_and_user_warm(mixed_path: Path, profconv: Callable,
                                      tmp_path: Path) -> None:
    out = tmp_path / "mixed.svg"
    assert profconv("svg", mixed_path, "-o", out).returncode == 0
    found = boxes(out)
    kernel = [b for b in found if b["kind"] == "kernel"]
    user = [b for b in found if b["kind"] == "user"]
    assert kernel and user
    assert all(b["name"].endswith(" [k]") for b in kernel)
    assert all(rgb(b["fill"])[2] > rgb(b["fill"])[0] for b in kernel)
    assert all(rgb(b["fill"])[0] > rgb(b["fill"])[2] for b in user)


def test_spin_picture(spin_path: Path, profconv: Callable, tmp_path: Path) -> None:
    out = tmp_path / "spin.svg"
    assert profconv("svg", spin_path, "-o", out).returncode == 0
    by_name: Dict[str, Dict] = {}
    for b in boxes(out):  # the widest box of each name
        if b["name"] not in by_name or b["width"] > by_name[b["name"]]["width"]:
            by_name[b["name"]] = b
    for parent, child in (("_start", "main"), ("main", "outer"), ("outer", "middle"),
                          ("middle", "hot")):
        # A callee sits one row above its caller, inside its span.
        p, c = by_name[parent], by_name[child]
        assert c["y"] < p["y"]
        assert p["x"] - 0.01 <= c["x"] and c["x"] + c["width"] <= p["x"] + p["width"] + 0.01
    assert by_name["hot"]["text"] == "hot"
