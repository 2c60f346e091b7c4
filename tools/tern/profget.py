"""Profile something inside tern and bring the profile back to the host, fast.

    tools/profget [-o OUT.json] [options] COMMAND...

    tools/profget -o build/spin.json 'profile rate 1000' 'profile run spin 3'

Boots tern in QEMU exactly as `make qemu` does, plus a second disk: a blank image file that
tern sees as /dev/export. At the shell it types each COMMAND in turn, then
`expcopy /proc/profile`, which copies the profile onto that disk (kern/abi/export.h), then
`halt`. Once QEMU has exited, the image is unpacked and checked (tools/tern/prof/export.py)
and the profile written to OUT.

Why not simply `cat /proc/profile` on the console? The serial console moves about
150 KB a second, and a profile of a few seconds at 1000 Hz is megabytes of JSON. The
disk is much faster: a 5 MB profile takes a second or so from typing `expcopy` to a checked
file on the host, and the biggest part of that is the kernel rendering the JSON. profget
prints where the time went,

    profget: 5.7 MB out in 1.53 s: expcopy 1.02 s, halt 0.08 s, unpack and CRC 0.11 s, ...

and expcopy's own line splits its part into reading (rendering), CRC and writing.

The commands' output is shown as they run, so `profile run` reports appear as usual. The
JSON is checked to be a valid profile before it is written; --raw skips that, for copying
out some other file with --file. The kernel and fs.img are brought up to date with make
first, unless --no-build is given.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tern.machine import PANIC, TRAP, Machine, MachineError
from tern import REPO
from tern.prof import export, model

DEFAULT_SIZE_MB = 64  # room for about a minute of samples at 1000 Hz
HALT_TIMEOUT = 30  # seconds for QEMU to exit after `halt`
EXPORT_BUS = "virtio-mmio-bus.1"  # the export disk's slot; fs.img is on bus 0


def export_drive_args(image: Path) -> list:
    """The QEMU options that attach `image` as the export disk."""
    return ["-drive", f"file={image},if=none,format=raw,id=x1",
            "-device", f"virtio-blk-device,drive=x1,bus={EXPORT_BUS}"]


def blank_image(path: Path, size: int) -> None:
    """A zero-filled image (sparse, so a big one costs nothing). A stale export left in it
    would otherwise pass for this run's if expcopy failed."""
    with open(path, "wb") as f:
        f.truncate(size)


def build() -> None:
    result = subprocess.run(["make", "-s", "build/kernel.elf", "fs.img"], cwd=REPO,
                            capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-20:])
        raise SystemExit(f"profget: `make build/kernel.elf fs.img` failed:\n{tail}")


def wait_for_exit(m: Machine, timeout: float) -> bool:
    """Keep reading the console until QEMU exits; False if it is still running at the end."""
    deadline = time.monotonic() + timeout
    while m.alive and time.monotonic() < deadline:
        m.pump(0.2)
    return not m.alive


def show(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def copy_out(m: Machine, path: str, timeout: float) -> None:
    """Type `expcopy` for `path` and wait for it. Raises MachineError if it complains."""
    cmd = f"expcopy -t {path}"
    show(f"$ {cmd}\n")
    out = m.run(cmd, timeout=timeout, failures=(PANIC, TRAP))
    show(out)
    if re.search(r"(?i)\b(error|fail|cannot|usage)", out):
        raise MachineError(f"expcopy reported a problem:\n{out}")


def halt(m: Machine) -> None:
    """Type `halt` and wait for QEMU to exit (the image is complete only then)."""
    show("$ halt\n")
    m.sendline("halt")
    if not wait_for_exit(m, HALT_TIMEOUT):
        show(f"profget: QEMU still running {HALT_TIMEOUT} s after halt; stopping it\n")


class Clock:
    """Seconds spent in each phase of the copy, in order, for the timing line."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, float]] = []
        self._last = time.monotonic()

    def lap(self, phase: str) -> None:
        now = time.monotonic()
        self.phases.append((phase, now - self._last))
        self._last = now

    def skip(self) -> None:
        """Leave the time since the last lap out of every phase (a check between two)."""
        self._last = time.monotonic()

    def total(self) -> float:
        return sum(seconds for _, seconds in self.phases)

    def parts(self) -> str:
        return ", ".join(f"{phase} {seconds:.2f} s" for phase, seconds in self.phases)

    def line(self, nbytes: int) -> str:
        return f"profget: {nbytes / 1e6:.1f} MB out in {self.total():.2f} s: {self.parts()}"


def session(args: argparse.Namespace, image: Path) -> Clock:
    """Boot, run the commands, export, halt. Raises MachineError on any failure. Returns the
    clock, started when expcopy is typed."""
    with Machine(args.cpus, name="profget", extra_args=export_drive_args(image)) as m:
        show("profget: booting tern\n")
        m.boot()
        for cmd in args.commands:
            show(f"$ {cmd}\n")
            show(m.run(cmd, timeout=args.timeout, failures=(PANIC, TRAP)))
        clock = Clock()
        copy_out(m, args.file, args.timeout)
        clock.lap("expcopy")
        halt(m)
        clock.lap("halt")
        return clock


def main() -> int:
    p = argparse.ArgumentParser(
        prog="profget", description="Run commands in tern and copy a profile (or any file) "
        "out through the export disk.")
    p.add_argument("commands", nargs="+", metavar="COMMAND",
                   help="shell commands to type, in order (quote each one)")
    p.add_argument("-o", "--output", default="profile.json", help="where to write the file "
                   "(default: profile.json)")
    p.add_argument("--file", default="/proc/profile", help="the file to copy out "
                   "(default: /proc/profile)")
    p.add_argument("--raw", action="store_true", help="do not check that it is a profile")
    p.add_argument("--cpus", type=int, default=3, help="harts (default 3)")
    p.add_argument("--size", type=int, default=DEFAULT_SIZE_MB, metavar="MB",
                   help=f"size of the export disk (default {DEFAULT_SIZE_MB})")
    p.add_argument("--image", type=Path, help="keep the export disk image at this path "
                   "(default: a temporary file, deleted afterwards)")
    p.add_argument("--timeout", type=float, default=300,
                   help="seconds each command may take (default 300)")
    p.add_argument("--no-build", action="store_true", help="do not run make first")
    args = p.parse_args()
    if args.size < 1:
        p.error("--size must be at least 1 MB")

    if not args.no_build:
        build()
    with tempfile.TemporaryDirectory(prefix="profget-") as tmp:
        image = args.image or Path(tmp) / "export.img"
        blank_image(image, args.size << 20)
        try:
            clock = session(args, image)
        except MachineError as err:
            print(f"profget: {err}", file=sys.stderr)
            return 1
        try:
            exported = export.read(image)
        except export.ExportError as err:
            print(f"profget: {err}", file=sys.stderr)
            return 1
        clock.lap("unpack and CRC")
    summary = f"{len(exported.data)} bytes"
    if not args.raw:
        try:
            profile = model.loads(exported.data.decode("utf-8"))
        except (UnicodeDecodeError, model.ProfileError) as err:
            print(f"profget: the exported {args.file} is not a valid profile: {err}",
                  file=sys.stderr)
            return 1
        clock.lap("JSON check")
        summary = f"{len(profile.samples)} samples ({summary})"
    out = Path(args.output)
    if out.parent != Path(""):
        os.makedirs(out.parent, exist_ok=True)
    out.write_bytes(exported.data)
    clock.lap("write")
    print(clock.line(len(exported.data)), file=sys.stderr)
    print(f"profget: wrote {summary} to {out}", file=sys.stderr)
    return 0
