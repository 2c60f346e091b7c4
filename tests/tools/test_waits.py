"""Wait samples ("mode":"wait", kern/profile/report.cc) in the host tools.

The model keeps what a wait sample waited for; `profconv --cpu` chooses on-CPU samples (the
default), wait samples, or both; the flame graph draws waits apart (their own colour, and a
box naming the wait on top); every export stays what its consumer reads, with waits in it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tern.prof import flame, model

REPO = Path(__file__).resolve().parents[2]

SAMPLES = [
    {"pid": 3, "tid": 3, "comm": "psys", "timestamp": 1000, "hart": 0, "mode": "user",
     "samples": [{"address": 0x100, "symbol": "fill_file", "kernel": False},
                 {"address": 0x200, "symbol": "main", "kernel": False}]},
    {"pid": 3, "tid": 3, "comm": "psys", "timestamp": 2000, "hart": 0, "mode": "wait",
     "wchan": "disk",
     "samples": [{"address": 0x80201000, "symbol": "sched()", "kernel": True},
                 {"address": 0x80202000, "symbol": "virtio_disk_rw(Buf*, bool)",
                  "kernel": True},
                 {"address": 0x104, "symbol": "write", "kernel": False},
                 {"address": 0x108, "symbol": "fill_file", "kernel": False},
                 {"address": 0x200, "symbol": "main", "kernel": False}]},
]


def test_model_keeps_wchan() -> None:
    p = model.from_json(SAMPLES)
    assert [s.mode for s in p.samples] == ["user", "wait"]
    assert [s.wchan for s in p.samples] == ["", "disk"]
    assert [len(p.of_cpu(w).samples) for w in ("on", "off", "both")] == [1, 1, 2]


def test_wait_without_wchan_refused() -> None:
    bad = json.loads(json.dumps(SAMPLES))
    del bad[1]["wchan"]
    try:
        model.from_json(bad)
    except model.ProfileError as err:
        assert "wchan" in str(err)
    else:
        raise AssertionError("a wait sample without \"wchan\" was accepted")


def test_flame_draws_waits_apart() -> None:
    root = flame.build(model.from_json(SAMPLES))
    kinds = {b.node.name: b.node.kind for b in flame.layout(root)}
    assert kinds["[wait: disk]"] == "wait"
    assert kinds["sched() [k]"] == "wait"
    assert kinds["fill_file"] == "user"
    assert flame.colour("x", "wait") != flame.colour("x", "kernel")


def profconv(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(SAMPLES))
    return subprocess.run([sys.executable, str(REPO / "tools" / "profconv"), *args, str(path)],
                          capture_output=True, text=True, timeout=60)


def test_cpu_flag(tmp_path: Path) -> None:
    on = profconv(tmp_path, "folded")
    both = profconv(tmp_path, "--cpu", "both", "folded")
    off = profconv(tmp_path, "--cpu", "off", "folded")
    assert on.returncode == both.returncode == off.returncode == 0, on.stderr + both.stderr
    count = lambda text: sum(int(line.rpartition(" ")[2]) for line in text.splitlines())  # noqa
    assert (count(on.stdout), count(off.stdout), count(both.stdout)) == (1, 1, 2)
    svg = profconv(tmp_path, "--cpu", "both", "svg")
    assert svg.returncode == 0 and "[wait: disk]" in svg.stdout
    bad = profconv(tmp_path, "--cpu", "sideways", "top")
    assert bad.returncode != 0 and "--cpu" in bad.stderr


def test_top_charges_a_wait_to_what_it_waits_for() -> None:
    from tern.prof import top
    rows = {r.display: r for r in top.rows(model.from_json(SAMPLES))}
    assert rows["[wait: disk]"].self_count == 1
    assert rows["[k] sched()"].self_count == 0 and rows["[k] sched()"].incl_count == 1
    assert rows["fill_file"].self_count == 1 and rows["fill_file"].incl_count == 2


def test_a_cut_kernel_name_matches_its_binary() -> None:
    """A wait sample's chain can hold a kernel function whose name the kernel cut, with
    "..." (prof::NAME_MAX): it is still the binary that was profiled."""
    from tern.prof import lines
    full = "prof::(anonymous namespace)::read_name(" + "x" * 150 + ") [clone .isra.0]"

    class Table:
        def lookup(self, addr: int):
            return (0x1000, full)

    cut = full[:156] + "..."
    assert lines.Sources._mismatch(Table(), [(0x1004, cut)]) == ""
    assert lines.Sources._mismatch(Table(), [(0x1004, "other" + "y" * 70)]) != ""
