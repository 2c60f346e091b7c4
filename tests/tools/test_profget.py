"""tools/profget: the profile copied out of a running tern through the export disk.

The end-to-end tests boot tern (up to half a minute each), so they run only when the
kernel, fs.img and `expcopy` are built (`make all`); otherwise they are skipped, saying so.
The rest checks profget's pieces without QEMU.

One of them is the acceptance test for the export's speed: a profile of more than 5 MB
must reach the host intact in under 10 s. Tests here assert nothing about time (a loaded
host can make anything slow; `make bench` measures it, in its `export` group, beside the
10 s target), so it checks that the profile arrives whole and prints how long the copy
took, as profget does:

    /usr/bin/python3 -m pytest -q -s tests/tools/test_profget.py -k five_megabytes
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from samples import ROOT
from tern.prof import export, model

PROFGET = ROOT / "tools" / "profget"


def load_profget() -> ModuleType:
    pytest.importorskip("pexpect", reason="profget drives QEMU with pexpect")
    import tern.profget
    return tern.profget


def test_drive_options(tmp_path: Path) -> None:
    profget = load_profget()
    image = tmp_path / "export.img"
    args = profget.export_drive_args(image)
    assert args == ["-drive", f"file={image},if=none,format=raw,id=x1",
                    "-device", "virtio-blk-device,drive=x1,bus=virtio-mmio-bus.1"]


def test_blank_image_reads_as_blank(tmp_path: Path) -> None:
    """A fresh image must never pass for an export, so a failed expcopy is noticed."""
    profget = load_profget()
    image = tmp_path / "export.img"
    image.write_bytes(export.pack(b"[]", "/proc/profile"))  # a stale export from a past run
    profget.blank_image(image, 1 << 20)
    assert image.stat().st_size == 1 << 20
    with pytest.raises(export.ExportError, match="blank"):
        export.read(image)


def test_needs_a_command() -> None:
    result = subprocess.run([sys.executable, str(PROFGET), "--no-build"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2 and "COMMAND" in result.stderr


def built() -> bool:
    expcopy = ROOT / "build" / "user" / "_expcopy"
    kernel, image = ROOT / "build" / "kernel.elf", ROOT / "fs.img"
    return (expcopy.exists() and kernel.exists() and image.exists()
            and image.stat().st_mtime >= expcopy.stat().st_mtime)


def test_profile_comes_out(tmp_path: Path) -> None:
    if not built():
        pytest.skip("needs build/kernel.elf and an fs.img holding expcopy: run `make all`")
    load_profget()  # skips without pexpect
    out = tmp_path / "spin.json"
    result = subprocess.run(
        [sys.executable, str(PROFGET), "--no-build", "--size", "8", "-o", str(out),
         "profile rate 500", "profile run spin 1"],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "profile: pid" in result.stderr, "the commands' output is shown"
    samples = json.loads(out.read_text())
    assert len(samples) > 50
    stacks = [[f["symbol"] for f in s["samples"]] for s in samples]
    assert sum(1 for st in stacks if st[:2] == ["hot", "middle"]) > len(samples) / 3


# A sample of `pdeep 32` holds 32 frames, about 1.65 KB of JSON, but in all mode the shell's
# and init's shorter wait samples are among them, in a share that depends on how quickly the
# commands between the runs of pdeep come: 4,500 samples have made anything from 4.9 to 5.8 MB.
# So the test samples until `wc` in the guest counts 5 MB of /proc/profile, not a number of
# samples.
FIVE_MB = 5 * 1024 * 1024


def recorded(m) -> int:
    """How many samples the profile holds, from `profile status`."""
    found = re.search(r"(?m)^recorded: (\d+)$", m.run("profile status"))
    assert found, "profile status prints `recorded: N`"
    return int(found[1])


def profile_bytes(m) -> int:
    """How many bytes a read of /proc/profile gives now, counted by `wc` in the guest."""
    out = m.run("wc /proc/profile", timeout=120)
    found = re.search(r"(?m)^\d+ \d+ (\d+) /proc/profile\r?$", out)
    assert found, "wc prints `LINES WORDS BYTES /proc/profile`"
    return int(found[1])


def test_five_megabytes_come_out_intact(tmp_path: Path) -> None:
    """A profile of more than 5 MB crosses to the host with its CRC intact, every sample in
    it. How long that takes is printed (run with -s to see it), not asserted."""
    if not built():
        pytest.skip("needs build/kernel.elf and an fs.img holding expcopy: run `make all`")
    profget = load_profget()
    image = tmp_path / "export.img"
    profget.blank_image(image, profget.DEFAULT_SIZE_MB << 20)
    # A deep stack sampled fast, until there is enough: how many samples a second a loaded
    # host lets the guest take varies too much to ask for a fixed number of seconds.
    with profget.Machine(3, name="profget-5mb",
                         extra_args=profget.export_drive_args(image)) as m:
        m.boot(timeout=120)
        m.run("profile rate 10000")
        for _ in range(40):
            # Off while wc reads: wc reading /proc/profile would be sampled too.
            m.run("profile all on")
            m.run("pdeep 32 1", timeout=60)
            m.run("profile all off")
            if profile_bytes(m) >= FIVE_MB:
                break
        samples = recorded(m)
        clock = profget.Clock()
        profget.copy_out(m, "/proc/profile", timeout=120)
        clock.lap("expcopy")
        profget.halt(m)
        clock.lap("halt")
        guest = m.output
    exported = export.read(image)  # checks the magic, the length and the CRC
    clock.lap("unpack and CRC")
    profile = model.loads(exported.data.decode("utf-8"))
    clock.lap("JSON check")
    print(clock.line(len(exported.data)))

    assert len(exported.data) >= FIVE_MB, f"only {len(exported.data)} bytes"
    assert exported.name == "/proc/profile"
    said = re.search(r"expcopy: (\d+) bytes, crc ([0-9a-f]+)", guest)
    assert said and int(said[1]) == len(exported.data), "expcopy counted the same bytes"
    assert len(profile.samples) == samples, "every sample the guest recorded arrived"
    # In all mode the shell and init, asleep, have wait samples too: pdeep's are the most
    # of those taken on the CPU.
    on_cpu = [s for s in profile.samples if not s.waiting]
    assert sum(1 for s in on_cpu if s.frames[:1] and s.frames[0].symbol == "bottom"
               ) > len(on_cpu) / 2


def wc_counts(data: bytes) -> tuple:
    """What tern's wc prints for `data`: lines, words, bytes."""
    words = len(re.findall(rb"[^ \t\n\r\v]+", data))
    return data.count(b"\n"), words, len(data)


def test_export_disk_partial_blocks(tmp_path: Path) -> None:
    """/dev/export reads and writes of less than a block keep the bytes around them.

    `wc` reads the disk 512 bytes at a time (half blocks); `cat` writes README to it 512
    bytes at a time, ending partway through a block, whose tail must survive.
    """
    if not built():
        pytest.skip("needs build/kernel.elf and an fs.img holding expcopy: run `make all`")
    profget = load_profget()
    readme = (ROOT / "build" / "README").read_bytes()  # the copy inside fs.img
    assert len(readme) % 1024 not in (0, 512), "the test wants README to end mid-block"
    lines = b"".join(b"line %d of the export disk\tword%d\n" % (i, i * i) for i in range(8000))
    # A whole number of blocks: the guest sees the disk's size rounded down to a block.
    before = export.pack(lines, "host", 400 * 1024)
    assert len(before) == 400 * 1024
    image = tmp_path / "export.img"
    image.write_bytes(before)
    with profget.Machine(1, name="export-partial",
                         extra_args=profget.export_drive_args(image)) as m:
        m.boot(timeout=120)
        out = m.run("wc /dev/export", timeout=120)
        assert out.split() == [str(n) for n in wc_counts(before)] + ["/dev/export"]
        assert m.run("cat README > /dev/export", timeout=60) == ""
        profget.halt(m)
    after = image.read_bytes()
    assert after[:len(readme)] == readme
    assert after[len(readme):] == before[len(readme):]
