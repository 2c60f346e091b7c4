"""Crash recovery: cut the power in the middle of a write-heavy workload, then check the disk.

The file system promises that every system call that changes the disk happens completely or
not at all, whenever the machine stops (kern/fs/log.cc explains how). These tests hold it to
that promise the hard way. Each crash cycle:

1. copies fs.img and boots QEMU (CPUS=3) on the copy;
2. starts `tprofimg orphan` (user/tests/tprofimg.cc: a copy of sleep, run under the profiler and
   unlinked while it runs, so that the crash leaves its inode allocated with no links), then
   `crashwork SEED` (user/tests/crashwork.cc: three processes creating, appending, truncating,
   renaming, linking and unlinking files and making and removing directories);
3. once the workload reports progress, crashes the machine in one of two ways (the cycles
   alternate):
   * "time": waits a random time (0.2 to 3 s, seeded per cycle) and kills QEMU with
     SIGKILL. The disk is the image file itself, exactly as `make qemu` uses it.
   * "write": the disk is served to QEMU by SwitchedDisk below, which stops writing to the
     image after a chosen number of writes (1 to 600 after the first progress line, seeded),
     and QEMU is then killed with SIGKILL. A crash at a wall-clock time mostly lands between
     two operations, where every file system is consistent; counting writes instead puts
     about half of the crashes inside a commit, where the log matters. (A kernel that writes
     blocks home before committing them to the log passes most "time" cycles and fails
     most "write" ones.)
4. checks the image as the crash left it, with tools/tern/fsimage.py replaying a committed
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
directories. An allocated inode that no directory names (an orphan) is a failure too, with
one exception: the unlinked, still running program of step 2 is exactly one orphan with no
links in the crashed image, and must be gone after the reboot (the kernel frees such orphans
at boot and says so; the checker's replay is compared with the kernel's recovery after
freeing it the same way). crashwork never unlinks an open file, so any other orphan can only
mean a lost update. On top of the structure, the data is checked: crashwork writes self-describing
records, so every file must be whole records and at most the beginning of one more.

Every cycle is an independent test case, so `pytest -n 2` spreads them over both cores. The
number of cycles is CRASH_CYCLES (default 24). At the end the terminal summary prints
`crash cycles survived: N/N` and how many crashes the log had to repair.

When a cycle fails, the console logs of both boots are saved under build/grade-logs/ as for
any test, and the image as the crash left it is saved next to them (`...-crash.img`), so
`PYTHONPATH=tools python3 -m tern.fsimage --no-replay IMG` can be run on it by hand. The workload's
three processes interleave as the scheduler decides, so a seed does not reproduce a crash
exactly; the saved image does.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import socket
import struct
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, Sequence

import pytest

from tern import fsimage, machine
from tern.fsimage import BSIZE, T_DIR, T_FILE, Image
from tern.machine import PANIC, REPO, TEST_FAIL, TRAP, Machine, log_path_for

pytestmark = pytest.mark.points(1, lab="fs")

CYCLES = int(os.environ.get("CRASH_CYCLES", "24"))
CPUS = 3
WORKERS = 3  # crashwork's worker processes, each in its own directory cwN
PROGRESS = re.compile(r"crashwork: \d+ ops")
MIN_DELAY, MAX_DELAY = 0.2, 3.0   # "time" crashes: seconds after the first progress line
MAX_WRITES = 600                  # "write" crashes: disk writes after the first progress line


# --- A machine that boots from a given disk -------------------------------------------------


class Booter(Protocol):
    """The `boot` fixture (tern.fixtures.MachineFactory), as used here: the machines appended to
    `machines` are closed after the test, and their console logs saved if it fails."""

    name: str
    machines: list[Machine]


def image_machine(disk: Path | str, *, name: str) -> Machine:
    """A machine whose disk is `disk` (an image file, used in place, or a QEMU block device
    name such as "nbd:unix:/path") instead of a private copy of fs.img.

    The disk outlives the machine: close() kills QEMU (with SIGKILL, which for these tests
    is the crash itself) and leaves the image as QEMU left it.
    """
    return Machine(CPUS, name=name, image=disk)


def pump_for(m: Machine, seconds: float) -> None:
    """Keep reading the console for `seconds` of wall time (not scaled: this is not a
    timeout but the moment of the crash)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        m.pump(min(left, 0.1))


# --- A disk with a power switch ----------------------------------------------------------------
#
# QEMU can use a disk served over the network block device protocol (NBD; its specification
# is public, in the nbd project's doc/proto.md). The server below speaks just enough of it for
# QEMU's client: the "fixed newstyle" handshake, the options that name the export and its
# size, and then read, write, flush and disconnect requests answered with simple replies.
# Each write is applied to the image with pwrite() before it is acknowledged, so the image
# always holds exactly the acknowledged writes, in the order the guest made them.
#
# The switch: once `cut_after(k)` is set, the first write beyond the k-th is neither applied
# nor answered, and nothing after it reaches the image either. That is a power cut after
# write k, at a point chosen in writes rather than in seconds.

NBD_MAGIC = 0x4E42444D41474943        # "NBDMAGIC"
NBD_OPTS_MAGIC = 0x49484156454F5054   # "IHAVEOPT"
NBD_REPLY_MAGIC = 0x3E889045565A9     # option replies
NBD_REQUEST_MAGIC = 0x25609513
NBD_SIMPLE_REPLY_MAGIC = 0x67446698
NBD_FLAG_FIXED_NEWSTYLE, NBD_FLAG_NO_ZEROES = 1, 2
NBD_FLAG_HAS_FLAGS = 1                # transmission flags: no optional features
NBD_OPT_EXPORT_NAME, NBD_OPT_ABORT, NBD_OPT_INFO, NBD_OPT_GO = 1, 2, 6, 7
NBD_REP_ACK, NBD_REP_INFO, NBD_REP_ERR_UNSUP = 1, 3, (1 << 31) + 1
NBD_INFO_EXPORT = 0
NBD_CMD_READ, NBD_CMD_WRITE, NBD_CMD_DISC = 0, 1, 2


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError("the client closed the connection")
        data += chunk
    return bytes(data)


class SwitchedDisk:
    """An image file served to one QEMU over NBD on a Unix socket, with a power switch.

    Use `disk.address` as the machine's disk. `writes` counts the writes applied so far.
    """

    def __init__(self, image: Path) -> None:
        self._fd = os.open(image, os.O_RDWR)
        self._size = os.fstat(self._fd).st_size
        # Unix socket paths are short (108 bytes); pytest's tmp_path can be long.
        self._dir = Path(tempfile.mkdtemp(prefix="tern-nbd-"))
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self._dir / "disk.sock"))
        self._listener.listen(1)
        self._conn: socket.socket | None = None
        self._lock = threading.Lock()
        self._writes = 0
        self._limit: int | None = None
        self._cut = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"nbd:unix:{self._dir / 'disk.sock'}"

    @property
    def writes(self) -> int:
        with self._lock:
            return self._writes

    def cut_after(self, writes: int) -> None:
        """Let `writes` writes in all reach the image, and no more."""
        with self._lock:
            self._limit = writes

    def wait_for_cut(self, timeout: float) -> bool:
        return self._cut.wait(timeout)

    def close(self) -> None:
        for s in (self._conn, self._listener):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        self._thread.join(timeout=5)
        os.close(self._fd)
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> "SwitchedDisk":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the server thread --

    def _serve(self) -> None:
        try:
            self._conn, _ = self._listener.accept()
            self._handshake(self._conn)
            self._transmit(self._conn)
        except (EOFError, OSError):
            pass  # QEMU went away, or close() shut the sockets

    def _option_reply(self, conn: socket.socket, option: int, kind: int,
                      data: bytes = b"") -> None:
        conn.sendall(struct.pack(">QIII", NBD_REPLY_MAGIC, option, kind, len(data)) + data)

    def _handshake(self, conn: socket.socket) -> None:
        conn.sendall(struct.pack(">QQH", NBD_MAGIC, NBD_OPTS_MAGIC,
                                 NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES))
        (client_flags,) = struct.unpack(">I", _recv_exact(conn, 4))
        while True:
            _magic, option, length = struct.unpack(">QII", _recv_exact(conn, 16))
            _recv_exact(conn, length)  # the export name and info requests: there is one export
            if option == NBD_OPT_EXPORT_NAME:
                zeroes = b"" if client_flags & NBD_FLAG_NO_ZEROES else bytes(124)
                conn.sendall(struct.pack(">QH", self._size, NBD_FLAG_HAS_FLAGS) + zeroes)
                return
            if option in (NBD_OPT_INFO, NBD_OPT_GO):
                info = struct.pack(">HQH", NBD_INFO_EXPORT, self._size, NBD_FLAG_HAS_FLAGS)
                self._option_reply(conn, option, NBD_REP_INFO, info)
                self._option_reply(conn, option, NBD_REP_ACK)
                if option == NBD_OPT_GO:
                    return
            elif option == NBD_OPT_ABORT:
                raise EOFError("the client gave up")
            else:
                self._option_reply(conn, option, NBD_REP_ERR_UNSUP)

    def _transmit(self, conn: socket.socket) -> None:
        while True:
            _magic, _flags, command, handle, offset, length = struct.unpack(
                ">IHHQQI", _recv_exact(conn, 28))
            reply = struct.pack(">IIQ", NBD_SIMPLE_REPLY_MAGIC, 0, handle)
            if command == NBD_CMD_READ:
                conn.sendall(reply + os.pread(self._fd, length, offset))
            elif command == NBD_CMD_WRITE:
                data = _recv_exact(conn, length)
                with self._lock:
                    if self._limit is not None and self._writes >= self._limit:
                        self._cut.set()
                        return  # the power is off: this write and all later ones are lost
                    os.pwrite(self._fd, data, offset)
                    self._writes += 1
                conn.sendall(reply)
            elif command == NBD_CMD_DISC:
                return
            else:
                conn.sendall(reply)  # flush (the image is written synchronously) and the rest


# --- What crashwork writes -------------------------------------------------------------------

HEADER = re.compile(rb"<([0-9a-f]{8}):([0-9]{5})\|")
# What the start of a header may look like when a crash cut the file inside it.
HEADER_PREFIX = re.compile(rb"<(?:[0-9a-f]{0,7}|[0-9a-f]{8}(?::[0-9]{0,5})?)")
HEADER_BYTES = 16


def make_record(tag: int, length: int) -> bytes:
    """The record crashwork writes for this tag and length (see user/tests/crashwork.cc)."""
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


def consistency_report(img: Image, orphans: list[int] | None = None) -> list[str]:
    """Everything wrong with the image: structure first, then (if that is sound) data.

    With `orphans`, inodes with no links that nothing reaches (which the next boot frees)
    are not problems but are appended to that list instead.
    """
    problems = []
    for p in fsimage.check_image(img):
        if orphans is not None and fsimage.reclaimable_at_boot(img, p):
            orphans.append(p.inum)
        else:
            problems.append(str(p))
    if not problems:
        problems = data_problems(img)
    return problems


def free_orphan(img: Image, inum: int) -> None:
    """Free inode `inum` in img's bytes as the kernel's boot does (fs.cc's reclaim_orphans:
    iput truncates it, then marks it free), so the two recoveries can be compared."""
    inode = img.inode(inum)
    blocks = [b for b in inode.addrs[:fsimage.NDIRECT] if b]
    indirect = inode.addrs[fsimage.NDIRECT]
    if indirect:
        slots = struct.unpack(f"<{fsimage.NINDIRECT}I", img.block(indirect))
        blocks += [b for b in slots if b] + [indirect]
    for b in blocks:
        at = (img.sb.bmapstart + b // fsimage.BPB) * BSIZE + (b % fsimage.BPB) // 8
        img.data[at] &= ~(1 << (b % 8)) & 0xFF
    fsimage.INODE.pack_into(img.data, img.inode_offset(inum), fsimage.T_FREE, inode.major,
                            inode.minor, 0, 0, *([0] * (fsimage.NDIRECT + 1)))


# --- One crash cycle -------------------------------------------------------------------------


@dataclass(frozen=True)
class Cycle:
    index: int
    seed: int          # crashwork's seed
    kind: str          # "time" or "write"
    delay: float       # "time": seconds between the first progress line and SIGKILL
    writes: int        # "write": disk writes between the first progress line and the cut

    @staticmethod
    def make(index: int) -> "Cycle":
        rng = random.Random(f"tern crash cycle {index}")
        return Cycle(index, seed=index + 1, kind="write" if index % 2 == 0 else "time",
                     delay=round(rng.uniform(MIN_DELAY, MAX_DELAY), 2),
                     writes=rng.randint(1, MAX_WRITES))

    @property
    def id(self) -> str:
        return f"cycle{self.index:02d}-{self.kind}"

    def describe(self) -> str:
        when = (f"power cut {self.writes} disk writes" if self.kind == "write"
                else f"SIGKILL {self.delay} s")
        return f"crashwork {self.seed}, {when} after the first progress line"


def keep_image(image: Path, test_id: str, suffix: str) -> Path:
    """Copy `image` beside the test's console logs, for a post-mortem."""
    log = log_path_for(test_id)
    out = log.with_name(f"{log.stem}-{suffix}.img")
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(image, out)
    return out


def fail(reason: str, problems: Sequence[str], cycle: Cycle, saved: Path) -> None:
    shown = "\n  ".join(problems[:30])
    more = f"\n  ... and {len(problems) - 30} more" if len(problems) > 30 else ""
    pytest.fail(f"{reason} ({cycle.describe()}):\n  {shown}{more}\n"
                f"the image as the crash left it is saved as {saved}", pytrace=False)


def start_workload(m: Machine, cycle: Cycle) -> None:
    m.boot()
    out = m.run("tprofimg orphan", timeout=30)
    assert "runs unlinked" in out, f"`tprofimg orphan` failed:\n{out}"
    m.sendline(f"crashwork {cycle.seed}")
    m.expect(PROGRESS, timeout=60)


def crash_by_time(image: Path, cycle: Cycle, boot: Booter) -> None:
    m = image_machine(image, name=f"{boot.name}-crash")
    boot.machines.append(m)  # so that its console log is saved if the test fails
    start_workload(m, cycle)
    pump_for(m, cycle.delay)
    m.assert_no_failures((PANIC, TRAP, TEST_FAIL))
    if not m.alive:
        raise m.error("QEMU stopped before the crash")
    m.close()  # SIGKILL: the crash


def crash_by_write(image: Path, cycle: Cycle, boot: Booter) -> None:
    with SwitchedDisk(image) as disk:
        m = image_machine(disk.address, name=f"{boot.name}-crash")
        boot.machines.append(m)
        start_workload(m, cycle)
        disk.cut_after(disk.writes + cycle.writes)
        timeout = 60 * machine.timeout_scale()
        deadline = time.monotonic() + timeout
        while not disk.wait_for_cut(0.1):
            m.pump(0.05)  # keep the console flowing, or the guest stalls on it
            if time.monotonic() > deadline:
                raise m.error(f"the workload made no {cycle.writes} disk writes in "
                               f"{timeout:g} s")
        # What the console said before the power went is the workload's own health.
        m.assert_no_failures((PANIC, TRAP, TEST_FAIL))
        m.close()  # SIGKILL, while the guest waits for a write that will never finish


def recovery_machine(image: Path, boot: Booter) -> Machine:
    m = image_machine(image, name=f"{boot.name}-recover")
    boot.machines.append(m)
    return m


def reboot_and_halt(m: Machine) -> None:
    """Boot on the crashed image (the kernel replays the log), look around, power off."""
    m.boot()
    top = m.run("ls")
    for w in range(WORKERS):
        assert re.search(rf"(?m)^cw{w} +1 ", top), f"cw{w} is missing after recovery:\n{top}"
    m.run("ls cw0")
    m.halt()


@pytest.mark.parametrize("cycle", [Cycle.make(i) for i in range(CYCLES)], ids=lambda c: c.id)
def test_crash_cycle(cycle: Cycle, boot: Booter, tmp_path: Path,
                     record_property: Callable[[str, object], None]) -> None:
    record_property("tally", "crash cycles survived")
    image = tmp_path / "fs.img"
    shutil.copyfile(REPO / "fs.img", image)
    if cycle.kind == "write":
        crash_by_write(image, cycle, boot)
    else:
        crash_by_time(image, cycle, boot)
    crashed = tmp_path / "crashed.img"
    shutil.copyfile(image, crashed)

    # The image exactly as the crash left it.
    raw = Image.open(image, replay_log=False)
    committed = raw.log_header()[0]
    # (The orphan tprofimg leaves is there with or without the log: it does not count.)
    unreplayed = [p for p in fsimage.check_image(raw) if not fsimage.reclaimable_at_boot(raw, p)]
    record_property("tally", ("crashes that left a committed transaction in the log",
                              committed > 0))
    record_property("tally", ("crash images inconsistent until the log was replayed",
                              bool(unreplayed)))
    print(f"{cycle.describe()}: {committed} blocks committed in the log; without replay "
          f"{len(unreplayed)} problems {sorted({p.kind for p in unreplayed})}")

    # The checker's own replay alone must give a consistent file system, with one orphan:
    # the program that ran unlinked.
    replayed = Image.open(image)
    orphans: list[int] = []
    problems = consistency_report(replayed, orphans)
    if len(orphans) != 1:
        problems.append(f"expected one unlinked orphan (tprofimg's program), found {orphans}")
    if problems:
        fail("after the checker's replay of the log the image is inconsistent", problems,
             cycle, keep_image(crashed, boot.name, "crash"))
    for inum in orphans:
        free_orphan(replayed, inum)

    recovery = recovery_machine(image, boot)
    reboot_and_halt(recovery)
    assert f"fs: freed {len(orphans)} orphaned inodes" in recovery.boot_output, (
        "the boot after the crash did not free the orphan")

    recovered = Image.open(image, replay_log=False)
    problems = consistency_report(recovered)
    if recovered.log_header()[0] != 0:
        problems.insert(0, f"the log header still counts {recovered.log_header()[0]} blocks")
    if problems:
        fail("after the kernel's recovery the image is inconsistent", problems, cycle,
             keep_image(crashed, boot.name, "crash"))
    start = recovered.sb.inodestart * BSIZE
    if recovered.data[start:] != replayed.data[start:]:
        differ = [b for b in range(recovered.sb.inodestart, recovered.sb.size)
                  if recovered.block(b) != replayed.block(b)]
        fail("the kernel's recovery and the checker's replay disagree",
             [f"blocks {differ[:20]}{' ...' if len(differ) > 20 else ''} differ"], cycle,
             keep_image(crashed, boot.name, "crash"))


def test_workload_without_crash(boot: Booter, tmp_path: Path) -> None:
    """The baseline: crashwork run to its end and a clean power-off leave a clean image whose
    files hold exactly crashwork's records. A failure here is not about crashes at all."""
    image = tmp_path / "fs.img"
    shutil.copyfile(REPO / "fs.img", image)
    m = image_machine(image, name=boot.name)
    boot.machines.append(m)
    m.boot()
    out = m.run("crashwork 99 60", timeout=120)
    for w in range(WORKERS):
        assert f"crashwork: cw{w} done after 60 ops" in out
    assert "crashwork: done" in out
    m.halt()

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


def test_switched_disk_cuts_after_the_chosen_write(tmp_path: Path) -> None:
    """The power switch itself, driven by a tiny NBD client: reads see the image, writes up
    to the limit land in it, and the one after the limit never does."""
    image = tmp_path / "disk.img"
    image.write_bytes(bytes(4 * BSIZE))
    with SwitchedDisk(image) as disk:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(disk.address.removeprefix("nbd:unix:"))
        conn.settimeout(5)
        magic, opts, _flags = struct.unpack(">QQH", _recv_exact(conn, 18))
        assert (magic, opts) == (NBD_MAGIC, NBD_OPTS_MAGIC)
        conn.sendall(struct.pack(">I", NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES))
        conn.sendall(struct.pack(">QII", NBD_OPTS_MAGIC, NBD_OPT_EXPORT_NAME, 0))
        size, _ = struct.unpack(">QH", _recv_exact(conn, 10))
        assert size == 4 * BSIZE

        def request(command: int, handle: int, offset: int, payload: bytes = b"",
                    length: int | None = None) -> None:
            n = len(payload) if length is None else length
            conn.sendall(struct.pack(">IHHQQI", NBD_REQUEST_MAGIC, 0, command, handle,
                                     offset, n) + payload)

        def reply(handle: int) -> None:
            assert struct.unpack(">IIQ", _recv_exact(conn, 16)) == (
                NBD_SIMPLE_REPLY_MAGIC, 0, handle)

        disk.cut_after(2)
        for i in range(2):
            request(NBD_CMD_WRITE, i, i * BSIZE, bytes([i + 1]) * BSIZE)
            reply(i)
        request(NBD_CMD_READ, 7, 0, length=BSIZE)
        reply(7)
        assert _recv_exact(conn, BSIZE) == bytes([1]) * BSIZE
        request(NBD_CMD_WRITE, 3, 2 * BSIZE, bytes([3]) * BSIZE)
        assert disk.wait_for_cut(5)
        assert disk.writes == 2
        conn.close()
    data = image.read_bytes()
    assert data == bytes([1]) * BSIZE + bytes([2]) * BSIZE + bytes(2 * BSIZE)
