"""Crash recovery: pull the plug in the middle of a write-heavy workload, then check the disk.

The file system promises that every system call that changes the disk happens completely or
not at all, whenever the machine stops (kern/fs/log.cc explains how). These tests hold it to
that promise the hard way. Each crash cycle:

1. copies fs.img and boots QEMU (CPUS=3) on the copy;
2. starts `crashwork SEED` (user/crashwork.cc: three processes creating, appending,
   truncating, renaming, linking and unlinking files and making and removing directories);
3. once the workload reports progress, waits a random time (0.2 to 3 s, seeded per cycle)
   and kills QEMU with SIGKILL: a power cut, with transactions in flight;
4. checks the image as the crash left it, with tests/host/fsimage.py replaying a committed
   transaction in memory first (as the kernel does at boot): the result must already be a
   consistent file system;
5. boots again on the same image, so the kernel replays the log itself, runs `ls`, and
   powers off with `halt`;
6. checks the image again, now without any replay by the checker: the log must be empty, the
   file system consistent, and every block from the inodes on must equal what the checker's
   own replay produced, so the kernel's recovery and the independent one agree.

"Consistent" is everything fsimage.check() looks at: each block in use reachable from exactly
one place and marked in the bitmap, nothing else marked, sizes covered by blocks, link counts
equal to the directory entries naming the inode, no entry naming a free inode, well-formed
directories. An allocated inode that no directory names (an orphan) is a failure too: xv6
leaves one behind when a file is unlinked while still open and the machine crashes before
the close, but crashwork never unlinks an open file, so here an orphan can only mean a lost
update. On top of the structure, the data is checked: crashwork writes self-describing
records, so every file must be whole records and at most the beginning of one more.

Every cycle is an independent test case, so `pytest -n 2` spreads them over both cores. The
number of cycles is CRASH_CYCLES (default 24). At the end the terminal summary prints
`crash cycles survived: N/N` and how many crashes the log had to repair.

When a cycle fails, the console logs of both boots are saved under build/grade-logs/ as for
any test, and the image as the crash left it is saved next to them (`...-crash.img`), so
`python3 tests/host/fsimage.py --no-replay IMG` can be run on it by hand.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pexpect
import pytest

import machine
from machine import LOG_DIR, PANIC, REPO, TEST_FAIL, TRAP, Machine, MachineError, log_path_for

sys.path.insert(0, str(REPO / "tests" / "host"))
import fsimage  # noqa: E402  (lives in tests/host, shared with the host tests)
from fsimage import BSIZE, T_DIR, T_FILE, Image  # noqa: E402

pytestmark = pytest.mark.points(1, lab="fs")

CYCLES = int(os.environ.get("CRASH_CYCLES", "24"))
CPUS = 3
WORKERS = 3  # crashwork's worker processes, each in its own directory cwN
PROGRESS = re.compile(r"crashwork: \d+ ops")
MIN_DELAY, MAX_DELAY = 0.2, 3.0


# --- A machine that boots from a given image ------------------------------------------------


class ImageMachine(Machine):
    """A Machine that boots from `image` in place instead of from a private copy of fs.img.

    The image outlives the machine: close() kills QEMU (with SIGKILL, which for these tests
    is the crash itself) and leaves the file as QEMU left it.
    """

    def __init__(self, image: Path, *, name: str) -> None:
        super().__init__(CPUS, name=name)
        self.image = image

    def start(self) -> None:
        if self._child is not None:
            return
        kernel = self.root / "build" / "kernel.elf"
        if not kernel.exists():
            raise MachineError(f"{kernel} does not exist: run `make build/kernel.elf fs.img`")
        machine._install_cleanup()
        self.argv = machine.qemu_command(self.cpus, self.image, self.extra_args, self.root)
        self.start_time = time.monotonic()
        self._child = pexpect.spawn(
            self.argv[0], self.argv[1:], cwd=str(self.root), encoding="utf-8",
            codec_errors="replace", echo=False, timeout=None,
            preexec_fn=machine._die_with_parent, dimensions=(24, 200))
        machine._live.add(self)


def pump_for(m: Machine, seconds: float) -> None:
    """Keep reading the console for `seconds` of wall time (not scaled: this is not a
    timeout but the moment of the crash)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        m.pump(min(left, 0.1))


def wait_for_power_off(m: Machine, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout * machine.timeout_scale()
    while m.alive and time.monotonic() < deadline:
        m.pump(0.2)
    if m.alive:
        raise m._error(f"QEMU still running {timeout:g} s after `halt`")


# --- What crashwork writes -------------------------------------------------------------------

HEADER = re.compile(rb"<([0-9a-f]{8}):([0-9]{5})\|")
# What the start of a header may look like when a crash cut the file inside it.
HEADER_PREFIX = re.compile(rb"<(?:[0-9a-f]{0,7}|[0-9a-f]{8}(?::[0-9]{0,5})?)")
HEADER_BYTES = 16


def make_record(tag: int, length: int) -> bytes:
    """The record crashwork writes for this tag and length (see user/crashwork.cc)."""
    filler = bytes(ord("a") + (tag + i) % 26 for i in range(HEADER_BYTES, length - 1))
    return b"<%08x:%05d|" % (tag, length) + filler + b"\n"


def record_problem(data: bytes) -> str | None:
    """Why `data` is not a run of whole records plus perhaps the start of one more."""
    pos = 0
    while pos < len(data):
        rest = data[pos:]
        header = HEADER.match(rest)
        if header is None:
            if len(rest) < HEADER_BYTES and HEADER_PREFIX.fullmatch(rest):
                return None
            return f"no record starts at offset {pos}: {rest[:24]!r}"
        tag, length = int(header[1], 16), int(header[2])
        if length <= HEADER_BYTES:
            return f"the record at offset {pos} claims the impossible length {length}"
        piece = rest[:length]
        expected = make_record(tag, length)[:len(piece)]
        if piece != expected:
            first = next(i for i, (a, b) in enumerate(zip(piece, expected)) if a != b)
            return (f"the record at offset {pos} differs from what was written at its byte "
                    f"{first}: {piece[first:first + 16]!r} instead of "
                    f"{expected[first:first + 16]!r}")
        pos += length
    return None


def workload_files(img: Image) -> dict[int, str]:
    """Every regular file under the workload's directories: inode number -> one path."""
    found: dict[int, str] = {}
    todo = [f"/cw{w}" for w in range(WORKERS) if img.lookup(f"/cw{w}") is not None]
    while todo:
        path = todo.pop()
        for entry in img.entries(img.lookup(path)):
            if entry.name in (".", ".."):
                continue
            kind = img.inode(entry.inum).type
            if kind == T_DIR:
                todo.append(f"{path}/{entry.name}")
            elif kind == T_FILE:
                found.setdefault(entry.inum, f"{path}/{entry.name}")
    return found


def data_problems(img: Image) -> list[str]:
    """Files whose contents are not what crashwork wrote, one message each."""
    bad = []
    for inum, path in sorted(workload_files(img).items()):
        why = record_problem(img.read(inum))
        if why is not None:
            bad.append(f"{path} (inode {inum}): {why}")
    return bad


def consistency_report(img: Image) -> list[str]:
    """Everything wrong with the image: structure first, then data."""
    problems = [str(p) for p in fsimage.check_image(img)]
    if not problems:
        problems = data_problems(img)
    return problems


# --- One crash cycle -------------------------------------------------------------------------


@dataclass(frozen=True)
class Cycle:
    index: int
    seed: int    # crashwork's seed
    delay: float  # seconds between the first progress line and the crash

    @staticmethod
    def make(index: int) -> "Cycle":
        rng = random.Random(f"tern crash cycle {index}")
        return Cycle(index, seed=index + 1, delay=round(rng.uniform(MIN_DELAY, MAX_DELAY), 2))


def keep_image(image: Path, test_id: str, suffix: str) -> Path:
    """Copy `image` beside the test's console logs, for a post-mortem."""
    log = log_path_for(test_id)
    out = log.with_name(f"{log.stem}-{suffix}.img")
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(image, out)
    return out


def fail(reason: str, problems: Sequence[str], cycle: Cycle, saved: Path | None) -> None:
    shown = "\n  ".join(problems[:30])
    more = f"\n  ... and {len(problems) - 30} more" if len(problems) > 30 else ""
    where = f"\nthe crashed image is saved as {saved}" if saved else ""
    pytest.fail(f"{reason} (crashwork {cycle.seed}, crash {cycle.delay} s after the first "
                f"progress line):\n  {shown}{more}{where}", pytrace=False)


def run_until_crash(m: ImageMachine, cycle: Cycle) -> None:
    """Boot, start the workload, and kill QEMU `cycle.delay` seconds into it."""
    m.boot()
    m.sendline(f"crashwork {cycle.seed}")
    m.expect(PROGRESS, timeout=60)
    pump_for(m, cycle.delay)
    m.assert_no_failures((PANIC, TRAP, TEST_FAIL))
    if not m.alive:
        raise m._error("QEMU stopped before the crash")
    m.close()  # SIGKILL: the power cut


def reboot_and_halt(m: ImageMachine) -> str:
    """Boot on the crashed image (the kernel replays the log), look around, power off.
    Returns the output of `ls` in the workload's first directory."""
    m.boot()
    top = m.run("ls")
    for w in range(WORKERS):
        assert re.search(rf"(?m)^cw{w} +1 ", top), f"cw{w} is missing after recovery:\n{top}"
    listing = m.run("ls cw0")
    m.sendline("halt")
    wait_for_power_off(m)
    m.assert_no_failures()
    return listing


@pytest.mark.parametrize("cycle", [Cycle.make(i) for i in range(CYCLES)],
                         ids=lambda c: f"cycle{c.index:02d}")
def test_crash_cycle(cycle: Cycle, boot, tmp_path: Path,
                     request: pytest.FixtureRequest, record_property) -> None:
    record_property("tally", "crash cycles survived")
    test_id = request.node.nodeid
    image = tmp_path / "fs.img"
    shutil.copyfile(REPO / "fs.img", image)

    first = ImageMachine(image, name=f"{test_id}-crash")
    boot.machines.append(first)  # so that its console log is saved if the test fails
    run_until_crash(first, cycle)

    # The image exactly as the crash left it.
    raw = Image.open(image, replay_log=False)
    committed = raw.log_header()[0]
    unreplayed = fsimage.check_image(raw)
    record_property("tally", ("crashes that left a committed transaction in the log",
                              committed > 0))
    record_property("tally", ("crash images inconsistent until the log was replayed",
                              bool(unreplayed)))
    print(f"crash after {cycle.delay} s: {committed} blocks committed in the log; without "
          f"replay {len(unreplayed)} problems {sorted({p.kind for p in unreplayed})}")

    # The checker's own replay alone must give a consistent file system.
    replayed = Image.open(image)
    problems = consistency_report(replayed)
    if problems:
        fail("after the checker's replay of the log the image is inconsistent", problems,
             cycle, keep_image(image, test_id, "crash"))
    crashed_copy = tmp_path / "crashed.img"
    shutil.copyfile(image, crashed_copy)

    second = ImageMachine(image, name=f"{test_id}-recover")
    boot.machines.append(second)
    reboot_and_halt(second)

    recovered = Image.open(image, replay_log=False)
    problems = consistency_report(recovered)
    if recovered.log_header()[0] != 0:
        problems.insert(0, f"the log header still counts {recovered.log_header()[0]} blocks")
    if problems:
        fail("after the kernel's recovery the image is inconsistent", problems, cycle,
             keep_image(crashed_copy, test_id, "crash"))
    start = recovered.sb.inodestart * BSIZE
    if recovered.data[start:] != replayed.data[start:]:
        differ = [b for b in range(recovered.sb.inodestart, recovered.sb.size)
                  if recovered.block(b) != replayed.block(b)]
        fail("the kernel's recovery and the checker's replay disagree",
             [f"blocks {differ[:20]}{' ...' if len(differ) > 20 else ''} differ"], cycle,
             keep_image(crashed_copy, test_id, "crash"))


def test_workload_without_crash(boot, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The baseline: crashwork run to its end and a clean power-off leave a clean image whose
    files hold exactly crashwork's records. A failure here is not about crashes at all."""
    image = tmp_path / "fs.img"
    shutil.copyfile(REPO / "fs.img", image)
    m = ImageMachine(image, name=request.node.nodeid)
    boot.machines.append(m)
    m.boot()
    out = m.run("crashwork 99 60", timeout=120)
    for w in range(WORKERS):
        assert f"crashwork: cw{w} done after 60 ops" in out
    assert "crashwork: done" in out
    m.sendline("halt")
    wait_for_power_off(m)
    m.assert_no_failures()

    img = Image.open(image, replay_log=False)
    assert img.log_header()[0] == 0, "the log was not empty after halt"
    assert consistency_report(img) == []
    files = workload_files(img)
    assert files, "crashwork left no files at all"
    for inum in files:
        data = img.read(inum)
        # Without a crash no record may be cut short.
        assert data == b"" or data.endswith(b"\n"), files[inum]


# --- The checks above, checked -----------------------------------------------------------------


def test_records_accept_whole_and_cut_records() -> None:
    a, b = make_record(0xDEADBEEF, 17), make_record(7, 3000)
    assert record_problem(b"") is None
    assert record_problem(a + b) is None
    for cut in (1, 9, 15, 16, 17, 2000, 2999):
        assert record_problem(a + b[:cut]) is None, cut


def test_records_reject_damage() -> None:
    good = make_record(0x1234, 2000) + make_record(0x99, 500)
    zeroed = good[:1024] + bytes(976) + good[2000:]
    assert record_problem(zeroed) is not None
    swapped = good[:100] + b"X" + good[101:]
    assert record_problem(swapped) is not None
    assert record_problem(good[1:]) is not None
    assert record_problem(good + b"\0" * 10) is not None

