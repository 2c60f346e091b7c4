"""Files copied out of the machine through its export disk, for tests that need megabytes.

The console moves about 150 KB a second (QEMU writes it to the host a byte at a time); a
profile of deep samples with long escaped names is tens of kilobytes a sample. So these tests
give the machine a second disk (the one tools/profget uses), type `expcopy FILE` and read the
container it writes (kern/abi/export.h, unpacked by tern/prof/export.py) from the host side
while the machine keeps running: QEMU writes the raw image file in place, so the bytes are
there once expcopy has returned. image_of() finds the disk of a machine given one with
drive_args(), such as the profile lab's shared machine.
"""

from __future__ import annotations

import re
from pathlib import Path

from tern import profile_check as pc
from tern.machine import PANIC, TRAP, Machine, MachineError
from tern.prof import export

EXPORT_BUS = "virtio-mmio-bus.1"  # as tools/profget: fs.img is on bus 0
SIZE = 64 << 20


def drive_args(image: Path) -> tuple[str, ...]:
    """QEMU options attaching a fresh, blank (sparse) `image` as /dev/export."""
    with open(image, "wb") as f:
        f.truncate(SIZE)
    return ("-drive", f"file={image},if=none,format=raw,id=x1",
            "-device", f"virtio-blk-device,drive=x1,bus={EXPORT_BUS}")


def image_of(m: Machine) -> Path | None:
    """The image of the export disk `m` was given with drive_args(), if it has one."""
    for arg in m.extra_args:
        if arg.startswith("file=") and arg.endswith(",id=x1"):
            return Path(arg.removeprefix("file=").split(",")[0])
    return None


def copy_out(m: Machine, image: Path, path: str, timeout: float = 120) -> bytes:
    """The bytes of `path` in the machine, copied out with expcopy."""
    with open(image, "r+b") as f:  # no stale copy can pass for this one
        f.write(bytes(export.HEADER_SIZE))
    out = m.run(f"expcopy {path}", timeout=timeout, failures=(PANIC, TRAP))
    if not re.fullmatch(r"\s*expcopy: \d+ bytes, crc [0-9a-f]+\s*", out):
        raise MachineError(f"`expcopy {path}` failed: {out!r}")
    return export.read(image).data


def profile_samples(m: Machine, image: Path) -> list[pc.Sample]:
    """/proc/profile, copied out with copy_out() and parsed: the kernel escapes every byte
    that is not ASCII, so a document that is not ASCII, or not valid JSON, fails."""
    return pc.parse_profile(copy_out(m, image, "/proc/profile").decode("ascii"))
