"""The RAM disk: the root file system in memory QEMU loaded with -initrd (kern/dev/ramdisk.cc).

A machine booted with `ramdisk=True` gets its private copy of fs.img as an initrd; the kernel
finds it through the device tree's /chosen node, says `tern: disk: ram, N KiB`, and keeps its
files there. An initrd that cannot be a file system (too short for what its superblock
claims, random bytes, a length that is not a whole number of blocks) is refused with a
message, and the kernel uses virtio disk 0 as always. Under -icount the RAM disk makes the
write path cost the same instructions on every fresh boot: that is what the bench's exact
disk figures rely on, and so does the bench's count of a whole usertests run there.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, TypeVar

import pytest

from tern.bench.icount import ICOUNT_ARGS, Session, parse
from tern.machine import PANIC, REPO, TRAP, Machine

T = TypeVar("T")
RAM = re.compile(r"(?m)^tern: disk: ram, (\d+) KiB$")
VIRTIO = re.compile(r"(?m)^tern: disk: virtio$")
REFUSED = re.compile(r"(?m)^tern: initrd .* cannot be the root disk: (.+)$")
VERDICT = re.compile(r"(?m)^(ALL TESTS PASSED|FAILED:.*)$")
BSIZE = 1024


def test_plain_boot_says_virtio(boot) -> None:
    m = boot(1)
    assert VIRTIO.search(m.boot_output), "no `tern: disk: virtio` line"
    assert not RAM.search(m.boot_output)


def test_ramdisk_keeps_files(boot) -> None:
    m = boot(3, ramdisk=True)
    ram = RAM.search(m.boot_output)
    assert ram is not None, "no `tern: disk: ram, N KiB` line"
    assert int(ram.group(1)) * 1024 == (REPO / "fs.img").stat().st_size
    assert not VIRTIO.search(m.boot_output)
    m.run("mkdir d")
    m.run("echo written in memory > d/f")
    for i in range(3):  # 40 KiB each: more blocks than the buffer cache holds
        m.run(f"cat README > d/r{i}")
    assert m.run("cat d/f").strip() == "written in memory"
    assert m.run("cat d/r2") == m.run("cat README")
    assert m.run("wc d/r0").split()[:3] == m.run("wc README").split()[:3]
    m.run("rm d/f")
    assert "f" not in m.run("ls d").split()


@pytest.mark.slow
def test_usertests_quick_on_ramdisk(boot) -> None:
    m = boot(3, ramdisk=True)
    assert RAM.search(m.boot_output)
    out = m.run("usertests -q", timeout=900, failures=(PANIC, TRAP))
    verdict = VERDICT.search(out)
    assert verdict is not None and verdict.group(1) == "ALL TESTS PASSED", m.tail()


def hostile(kind: str, path: Path) -> Path:
    image = (REPO / "fs.img").read_bytes()
    if kind == "short":  # a whole number of blocks, but fewer than the superblock claims
        data = image[:8 * BSIZE]
    elif kind == "random":
        data = os.urandom(64 * BSIZE)
    else:  # "ragged": the image with half a block more
        data = image + bytes(BSIZE // 2)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind,reason", [
    ("short", r"smaller than its superblock says"),
    ("random", r"no file-system superblock"),
    ("ragged", r"not a whole number of blocks"),
])
def test_hostile_initrd_falls_back_to_virtio(boot, tmp_path: Path, kind: str,
                                             reason: str) -> None:
    initrd = hostile(kind, tmp_path / f"{kind}.img")
    m = boot(1, extra_args=("-initrd", str(initrd)))
    refused = REFUSED.search(m.boot_output)
    assert refused is not None, "no message refusing the initrd"
    assert re.search(reason, refused.group(1)), refused.group(0)
    assert VIRTIO.search(m.boot_output), "no `tern: disk: virtio` after the refusal"
    m.run("echo on virtio > v")
    assert m.run("cat v").strip() == "on virtio"


def counted(name: str, command: Callable[[Machine], T]) -> T:
    """`command`'s result on a fresh one-hart machine under -icount, its root on the RAM disk."""
    with Machine(1, name=name, extra_args=ICOUNT_ARGS, ramdisk=True) as m:
        m.boot(timeout=120)
        assert RAM.search(m.boot_output)
        return command(m)


def fwrite_count() -> dict[str, int]:
    return counted("ramdisk-fwrite",
                   lambda m: parse(m.run("bsys fwrite 65536", timeout=300), "fwrite")[0])


def test_write_path_count_repeats() -> None:
    """bsys fwrite, counted with instret under -icount, on two fresh machines: the same
    number of instructions, and none of them idle (nothing waits for a device)."""
    first, second = fwrite_count(), fwrite_count()
    assert first["idle"] == 0 and second["idle"] == 0, (first, second)
    assert first["insns"] == second["insns"], (first, second)


def usertests_count(test: str) -> int:
    return counted("ramdisk-usertests",
                   lambda m: Session(m).program(f"usertests {test}", timeout=300))


def test_usertests_count_repeats() -> None:
    """`bsys run usertests killsleeping` on six fresh machines: the same number of
    instructions. The test sleeps, so most of its count is time spent waiting for ticks of
    the 100 ms grid: it repeats only if bsys starts counting at the same point of that grid
    on every boot, to the nanosecond, as the bench's whole usertests -q figure needs. What it
    does not check is the other half of that figure's exactness, the settled first run of
    `bsys run` (user/bench/bsys.cc, bench_run): without it, about one boot in ten counted a
    whole usertests -q 57 instructions apart, which only `make bench`'s repeated runs show."""
    counts = [usertests_count("killsleeping") for _ in range(6)]
    assert len(set(counts)) == 1, counts
