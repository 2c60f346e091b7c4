"""A full sample array: new samples are dropped and counted, old ones kept, JSON still valid.

Filling the default array (65536 samples) would take over a minute of profiling, so this
builds a second kernel with a capacity of 300 (make BUILD=build/smallcap
KEXTRA=-DPROFILE_CAPACITY=300) and boots that one on the normal disk image.
"""
from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from tern.machine import REPO, Machine, qemu_command, timeout_scale

CAPACITY = 300
BUILD = REPO / "build" / "smallcap"


@pytest.fixture(scope="module")
def small_kernel() -> Path:
    kernel = BUILD / "kernel.elf"
    result = subprocess.run(
        ["make", "-s", f"BUILD={BUILD}", f"KEXTRA=-DPROFILE_CAPACITY={CAPACITY}", str(kernel)],
        cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, f"building the small-capacity kernel failed:\n{result.stderr[-2000:]}"
    return kernel


def profstat(m: Machine) -> dict[str, str]:
    out = m.run("cat /proc/profstat")
    return dict(re.findall(r"^([a-z ]+): (.*?)\s*$", out, re.M))


def test_full_array_drops_new_samples_and_stays_valid(small_kernel: Path, tmp_path: Path) -> None:
    image = tmp_path / "fs.img"
    image.write_bytes((REPO / "fs.img").read_bytes())
    argv = qemu_command(1, image)
    argv[argv.index("-kernel") + 1] = str(small_kernel)
    with Machine(1, name="profile-capacity", command=argv) as m:
        m.boot()
        assert profstat(m)["capacity"] == str(CAPACITY), "the small-capacity kernel did not boot"
        m.run("profile rate 1000")
        pid = int(re.search(r"\[(\d+)\]", m.run("spin 60 &")).group(1))
        m.run(f"profile {pid} on")
        deadline = time.monotonic() + 60 * timeout_scale()
        stat = profstat(m)
        while int(stat["dropped"]) == 0 and time.monotonic() < deadline:
            time.sleep(0.5)
            stat = profstat(m)
        m.run(f"profile {pid} off")
        stat = profstat(m)
        assert int(stat["dropped"]) > 0, f"no sample was dropped after filling the array: {stat}"
        assert int(stat["recorded"]) == CAPACITY, f"recorded should stop at capacity: {stat}"

        text = m.run("cat /proc/profile", timeout=60)
        samples = json.loads(text)
        assert len(samples) == CAPACITY, f"{len(samples)} samples in /proc/profile, not {CAPACITY}"
        # Old samples were kept, not overwritten: timestamps rise from the first sample on,
        # and the profile still ends where it ended when the array filled.
        times = [s["timestamp"] for s in samples]
        assert times == sorted(times), "samples out of order: something overwrote old ones"
        assert all(s["pid"] == pid for s in samples)
        again = json.loads(m.run("cat /proc/profile", timeout=60))
        assert again == samples, "the profile changed after the array was full"
        m.run(f"kill {pid}")
