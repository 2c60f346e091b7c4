"""The harness itself: does it notice what it must notice?

A grader that misses a kernel panic, or hangs instead of failing, is worse than none. These
tests replace QEMU with a small scripted console (FAKE_CONSOLE below) that behaves like
the real one: OpenSBI's banner, the kernel's `tern:` lines, a `$ ` prompt, echo of typed
characters, CRLF line ends. Each command makes it misbehave in one particular way. No QEMU
is started, so these tests take well under a second each.
"""

from __future__ import annotations

import inspect
import random
import re
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from tern import fsimage
from tern.machine import REPO, Machine, MachineError, disk_problems, timeout_scale
from tern.profile_props import seed_from_env

# A long output, made the same way by the fake console and the test that checks it: `flood N
# SEED` prints N lines of random lengths, in pieces of random sizes with short pauses
# between some, as QEMU's console arrives. `flood N SEED panic` has a panic halfway, and
# `flood N SEED trap` first a line of 6,000 characters, slowly, with a trap at its end.
def flood_lines(n, seed):
    rnd = random.Random(seed)
    return [f"line {i} " + "x" * rnd.randrange(300) + "\n" for i in range(n)]


def flood_pieces(text, seed):
    rnd = random.Random(seed + 1)
    at = 0
    while at < len(text):
        size = rnd.choice((1, 2, 7, 64, 300, 4096))
        yield text[at:at + size], rnd.random() < 0.01
        at += size


FAKE_CONSOLE = ("import random\n" + inspect.getsource(flood_lines)
                + inspect.getsource(flood_pieces) + r'''
import os, sys, time, tty
tty.setraw(0)
def out(text):
    os.write(1, text.replace("\n", "\r\n").encode())
out("OpenSBI v1.1\nPlatform HART Count       : 3\n\ntern: booting on hart 0\n")
out("tern: 3 harts\n$ ")
line = b""
while True:
    c = os.read(0, 1)
    if not c:
        break
    time.sleep(0.002)  # echo slowly, so the harness sees a command's echo in pieces
    os.write(1, c.replace(b"\n", b"\r\n"))
    if c != b"\n":
        line += c
        continue
    cmd, line = line.decode(), b""
    if cmd == "panic":
        out("panic: broken invariant\n  #0 0x80201234 sleep+0x10\n")
        continue
    if cmd == "quit":
        sys.exit(3)
    if cmd == "hang":
        continue
    if cmd == "dots":  # progress for a second, then silence: stuck after making progress
        for _ in range(10):
            out(".")
            time.sleep(0.1)
        continue
    if cmd == "slowdots":  # a dot every 0.3 s for 1.5 s, then done
        for _ in range(5):
            out(".")
            time.sleep(0.3)
        out("\n")
    if cmd.startswith("echo "):
        out(cmd[5:] + "\n")
    if cmd == "killed":
        out("killed pid 4 (tfault): store page fault at address 0x0, pc 0x10, scause 0xf\n")
    if cmd == "trap":
        out("kerneltrap: unexpected trap scause 0xd\n")
    if cmd == "fail":
        out("t: FAIL something\n")
    if cmd == "stamp":  # a stream for 15 ms, then the time its last line was written
        out("z" * 300)
        for _ in range(15):
            time.sleep(0.001)
            out("z" * 10)
        out(f"\nwritten at {time.monotonic():.6f}\n")
    if cmd.startswith("flood "):
        words = cmd.split()
        lines = flood_lines(int(words[1]), int(words[2]))
        if words[3:] == ["panic"]:
            lines.insert(len(lines) // 2, "panic: in the flood\n")
        if words[3:] == ["trap"]:  # the long line slowly, so that it comes in many reads
            for _ in range(60):
                out("y" * 100)
                time.sleep(0.003)
            lines.insert(0, " unexpected trap scause 0x5\n")
        for piece, pause in flood_pieces("".join(lines), int(words[2])):
            out(piece)
            if pause:
                time.sleep(0.01)
    out("$ ")
''')


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[Machine]:
    script = tmp_path / "console.py"
    script.write_text(FAKE_CONSOLE)
    m = Machine(3, name="harness", command=[sys.executable, str(script)],
                log_path=tmp_path / "console.log")
    m.boot(timeout=10)
    yield m
    m.close()


def test_run_returns_output_without_carriage_returns(fake: Machine) -> None:
    assert fake.boot_output.endswith("tern: 3 harts\n")
    assert "\r" not in fake.output
    assert fake.run("echo hello") == "hello\n"
    # The echo of a command is not output: words in it are not judged.
    assert fake.run("unknown panic: FAIL scause") == ""


@pytest.mark.parametrize("cmd, reason", [
    ("panic", "kernel panic"),
    ("trap", "unexpected trap"),
    ("fail", "test program failure"),
    ("quit", "QEMU exited"),
    ("hang", "timed out"),
])
def test_failures_are_reported(fake: Machine, cmd: str, reason: str) -> None:
    with pytest.raises(MachineError) as info:
        fake.run(cmd, timeout=1)
    message = str(info.value)
    assert message.startswith(reason)
    assert f"command: {cmd}" in message
    assert "last 40 lines of the console" in message
    assert fake.log_path.exists() and f"full console log: {fake.log_path}" in message
    assert not fake.at_prompt


@pytest.mark.parametrize("case", range(4))
def test_long_output_comes_back_whole(fake: Machine, case: int) -> None:
    """Megabytes of output, arriving in pieces of any size: run() returns exactly them (the
    waits search only new text, gather streaming reads, and must lose nothing)."""
    seed = seed_from_env("FLOOD_SEED") + case
    lines = 4000 * (case + 1)
    assert fake.run(f"flood {lines} {seed}", timeout=60) == "".join(flood_lines(lines, seed))
    assert fake.run("echo after") == "after\n"


def test_arrival_time_is_never_before_the_bytes_were_written(fake: Machine) -> None:
    """Output that streams in is gathered over a few reads; each piece keeps the time it
    came (the boot figures of `make bench` are such times), not the first piece's."""
    for _ in range(5):
        start = fake.position
        out = fake.run("stamp")
        written = float(re.search(r"written at ([\d.]+)", out)[1])
        offset = fake.output.index("written at", start)
        assert fake.arrival_time(offset) >= written, (
            f"the line written at {written:.6f} is said to have arrived at "
            f"{fake.arrival_time(offset):.6f}")


def test_panic_deep_in_long_output_is_caught(fake: Machine) -> None:
    seed = seed_from_env("FLOOD_SEED")
    with pytest.raises(MachineError) as info:
        fake.run(f"flood 8000 {seed} panic", timeout=60)
    assert str(info.value).startswith("kernel panic while waiting for the next shell prompt: "
                                      "'panic: in the flood'")


def test_trap_at_the_end_of_a_long_line_is_caught(fake: Machine) -> None:
    """A failure pattern that starts at the beginning of its line is found however long the
    line is, although the waits search again only near what is new."""
    seed = seed_from_env("FLOOD_SEED")
    with pytest.raises(MachineError) as info:
        fake.run(f"flood 4000 {seed} trap", timeout=60)
    assert str(info.value).startswith("unexpected trap while waiting for the next shell prompt")


def test_panic_message_includes_backtrace(fake: Machine) -> None:
    with pytest.raises(MachineError) as info:
        fake.run("panic", timeout=1)
    assert "#0 0x80201234 sleep+0x10" in str(info.value)


def test_a_killed_process_is_not_a_kernel_failure(fake: Machine) -> None:
    out = fake.run("killed")
    assert re.match(r"killed pid 4 \(tfault\):", out)
    fake.assert_no_failures()


def test_quiet_limit_fails_a_command_that_stops_printing(fake: Machine) -> None:
    """run(quiet=s) fails once nothing has come for s seconds, not before: a command that
    prints as it goes ends well, one that stops printing fails long before its timeout."""
    assert fake.run("slowdots", timeout=10, quiet=1.5).strip() == "....."
    start = time.monotonic()
    with pytest.raises(MachineError, match=rf"nothing printed for {1.5 * timeout_scale():g} s"):
        fake.run("dots", timeout=30, quiet=1.5)
    assert time.monotonic() - start < 10, "the quiet limit did not end the wait"


def test_close_kills_the_process(fake: Machine) -> None:
    fake.close()
    assert not fake.alive
    fake.close()  # a second close is harmless


# --- The disk check at close -------------------------------------------------------------------


def _patched_image(tmp_path: Path,
                   change: Callable[[fsimage.Image, bytearray], None]) -> Path:
    """A copy of fs.img with `change(image, data)` applied to its bytes."""
    path = tmp_path / "fs.img"
    shutil.copyfile(REPO / "fs.img", path)
    data = bytearray(path.read_bytes())
    change(fsimage.Image.open(path), data)
    path.write_bytes(bytes(data))
    return path


def _set_inode(img: fsimage.Image, data: bytearray, inum: int, kind: int, nlink: int) -> None:
    at = img.sb.inodestart * fsimage.BSIZE + inum * fsimage.INODE_SIZE
    struct.pack_into("<hhhh", data, at, kind, 0, 0, nlink)


def test_disk_check_accepts_a_clean_image_and_unlinked_orphans(tmp_path: Path) -> None:
    assert disk_problems(_patched_image(tmp_path, lambda img, data: None)) == []
    # An inode with no links that nothing names: a file unlinked while still open when the
    # machine stopped. The next boot frees it, so the harness lets it be.
    unlinked = _patched_image(tmp_path, lambda img, data: _set_inode(img, data, 150,
                                                                      fsimage.T_FILE, 0))
    assert disk_problems(unlinked) == []


def test_disk_check_reports_duplicates_and_linked_orphans(tmp_path: Path) -> None:

    def duplicate(img: fsimage.Image, data: bytearray) -> None:
        root = img.inode(fsimage.ROOTINO)
        entries = [e for e in img.entries(fsimage.ROOTINO) if e.name not in (".", "..")]
        first, second = entries[0], entries[1]
        # Give the second entry the first one's name.
        block = root.addrs[second.offset // fsimage.BSIZE]
        at = block * fsimage.BSIZE + second.offset % fsimage.BSIZE
        fsimage.DIRENT.pack_into(data, at, second.inum, first.name.encode())

    problems = disk_problems(_patched_image(tmp_path, duplicate))
    assert any(p.startswith(fsimage.DIR_BAD) for p in problems), problems
    linked = _patched_image(tmp_path, lambda img, data: _set_inode(img, data, 150,
                                                                    fsimage.T_FILE, 1))
    assert any(p.startswith(fsimage.ORPHAN) for p in disk_problems(linked))


def collected(*args: str) -> list[str]:
    """The node ids a pytest run of ours would run, in its order (no machine is booted)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--no-build", "-p", "no:xdist",
         "-p", "no:cacheprovider", *args], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return [line for line in result.stdout.splitlines() if "::" in line]


def test_slow_tests_are_handed_out_first() -> None:
    """The tests marked slow come first, in the order they were found in, then the rest."""
    files = ["tests/qemu/test_boot.py", "tests/qemu/test_orphans.py",
             "tests/qemu/test_usertests.py"]
    slow = collected("-m", "slow", *files)
    rest = collected("-m", "not slow", *files)
    assert slow and rest, "the files chosen must hold tests of both kinds"
    assert collected(*files) == slow + rest
