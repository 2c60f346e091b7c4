"""File-system calls while a kernel table is full: fail with -1, change nothing, never
write a name twice.

`texhaust SEED ROUNDS` (user/tests/texhaust.cc) exhausts, in turn, the in-memory inode table, the
open-file table, pipes, the process table, the profiler's image table (with the inode
table) and keeps the buffer cache busy; while each is full it makes random link, create,
mkdir, mknod, unlink and open calls and checks /tx against its model of what the calls that
returned 0 did. Then the machine powers off with `halt` and the disk image is read by the
independent checker, tools/tern/fsimage.py: no name twice in a directory, link counts equal
to the entries, the bitmap exact, no inode allocated and unreachable.

The seed is TEXHAUST_SEED if set, otherwise drawn at random; it is printed, so a failure can
be replayed with `TEXHAUST_SEED=n`. Each test runs once at CPUS=3 and once at CPUS=1.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tern import fsimage
from tern.machine import REPO, Machine
from tern.profile_props import seed_from_env

ROUNDS = 8
SUMMARY = re.compile(r"texhaust: (\w+): (\d+) calls, (\d+) failed with -1")


@pytest.mark.parametrize("cpus", [3, 1])
def test_texhaust(boot, tmp_path: Path, cpus: int) -> None:
    image = tmp_path / "fs.img"
    shutil.copyfile(REPO / "fs.img", image)
    m = Machine(cpus, name=f"{boot.name}", image=image)
    boot.machines.append(m)  # closed after the test, its console saved if it fails
    m.boot()
    s = seed_from_env("TEXHAUST_SEED")
    out = m.run(f"texhaust {s} {ROUNDS}", timeout=240)
    summaries = {name: (int(calls), int(failed)) for name, calls, failed in SUMMARY.findall(out)}
    cases = re.search(r"texhaust: (\d+) cases ok", out)
    assert cases, f"texhaust did not finish cleanly:\n{out[-3000:]}"
    print(f"cpus {cpus}: {cases[1]} cases; per table (calls, failed): {summaries}")
    assert set(summaries) == {"none", "inodes", "files", "pipes", "procs", "images", "buffers"}
    # The control round makes calls; the exhausted rounds must make some fail, or the test
    # exhausted nothing.
    assert summaries["none"][0] > 0
    assert summaries["inodes"][1] > 0 and summaries["files"][1] > 0
    m.halt()
    problems = [str(p) for p in fsimage.check(image, replay_log=False)]
    assert problems == [], "the disk after texhaust is inconsistent:\n  " + "\n  ".join(problems)
