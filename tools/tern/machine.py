"""Drive a tern machine in QEMU the way a student at the console would.

A test boots the kernel exactly as `make qemu` does, types shell commands on the serial
console and reads what comes back. This module is the one place that knows how to do that,
so the tests themselves read like a transcript: `out = m.run("echo hi | wc")`.

Design points a test writer should know:

* Every machine boots from its own private copy of fs.img in a temporary directory. Tests
  never see each other's files and can run in parallel (QEMU also locks an image it has
  open, so sharing one would not even work).

* The QEMU command line comes from the Makefile (`make -s print-qemu CPUS=n`), so the tests
  boot the same machine a student does. If the Makefile has no such target, the same
  command is built here.

* Every wait has a success pattern and a list of failure patterns: a kernel panic, an
  unexpected trap, a test program's own FAIL line, and QEMU exiting. Whichever appears
  first decides, so a broken kernel fails a test at once instead of after a timeout, and the
  error message says what went wrong, which command was running, and shows the last lines
  of the console.

* The platform is the Makefile's too: GRADE_PLATFORM holds Makefile variable settings
  (`GRADE_PLATFORM="MEM=64M BIOS=... CPU=rv64,sstc=off,sscofpmf=true"`) passed to
  `make print-qemu`, so any test module can run unchanged on another platform
  (tests/qemu/test_platforms.py does that). A CPUS=n there overrides the harts a test asks for,
  except in a machine under -icount, which counts instructions on the one hart it asks for.

* Timeouts are multiplied by the environment variable GRADE_TIMEOUT_SCALE (default 1), for
  slow or heavily loaded machines. GRADE_VERBOSE=1 copies the console to stderr as it
  arrives, which helps when writing a new test.

* When a machine that booted from its private copy is closed, the copy is read by the
  file-system checker (fsimage.py) before it is deleted, as the next boot would
  see it (a committed transaction replayed, unlinked files still open at the end allowed,
  since that boot frees them). Problems are kept in DISK_PROBLEMS, and fixtures.py fails
  the test or module the machine belonged to; the image is kept beside the console logs.

* `Machine(..., ramdisk=True)` boots with the private copy loaded by QEMU as an initrd
  (`-initrd`): the kernel keeps its root file system in that memory (kern/dev/ramdisk.cc),
  so disk-bound work costs the same instructions on every run under -icount. Virtio disk 0
  is still attached (a second private copy, which the kernel leaves alone). What the guest
  writes is lost when QEMU stops, so no disk check runs after close: there is nothing on
  the host to check.

* QEMU never outlives the harness: `close()` kills it, a Machine is a context manager, and
  atexit and signal handlers close whatever is still running. QEMU also runs with a
  parent-death signal, so even a harness killed with SIGKILL takes its QEMU with it.

Console text is normalised: carriage returns are dropped, so "\\r\\n" reads as "\\n".
"""

from __future__ import annotations

import atexit
import bisect
import ctypes
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import pexpect

from tern import REPO, fsimage, toolchain
# tools/grade points GRADE_LOG_DIR at a folder of its own run, which it names in its report.
LOG_DIR = Path(os.environ.get("GRADE_LOG_DIR") or REPO / "build" / "grade-logs")

# The shell prints "$ " at the start of a line when it is ready for the next command.
PROMPT = re.compile(r"(?m)^\$ ")
TAIL_LINES = 40
# A wait searches again only from the start of the line that held the last LOOKBACK
# characters it had searched, not from where it began, so that a command printing
# megabytes is not searched a megabyte at a time for each few bytes that arrive. No pattern
# a test waits for spans more than a line and this many characters; the failure patterns
# that start at the beginning of a line (TRAP, TEST_FAIL) still see the whole line.
LOOKBACK = 4096
# Console reads: at most READ_SIZE characters at a time. A read that brings STREAM_BYTES or
# more finds the console streaming, and waits STREAM_PAUSE for more, for STREAM_GATHER at most.
READ_SIZE = 1 << 16
STREAM_BYTES, STREAM_PAUSE, STREAM_GATHER = 256, 0.002, 0.02


def timeout_scale() -> float:
    """The factor applied to every timeout, from GRADE_TIMEOUT_SCALE."""
    try:
        scale = float(os.environ.get("GRADE_TIMEOUT_SCALE", "1"))
    except ValueError:
        return 1.0
    return scale if scale > 0 else 1.0


@dataclass(frozen=True)
class Failure:
    """A console pattern that ends a wait with an error as soon as it appears."""

    name: str
    regex: re.Pattern[str]


# A kernel panic, anywhere.
PANIC = Failure("kernel panic", re.compile(r"panic:.*"))
# A trap the kernel did not expect. The one line the kernel prints when it kills a user
# process for a bad access (`killed pid N (name): ...`) is an expected event, not a failure,
# even if it names scause.
TRAP = Failure("unexpected trap",
               re.compile(r"(?m)^(?!killed pid ).*(?:\bscause\b|unexpected (?:trap|interrupt)).*$"))
# A test program reporting its own failure.
TEST_FAIL = Failure("test program failure", re.compile(r"(?m)^.*\bFAIL(?:ED)?\b.*$"))

DEFAULT_FAILURES: tuple[Failure, ...] = (PANIC, TRAP, TEST_FAIL)


class MachineError(AssertionError):
    """A wait on the console failed. The message carries the console tail and the log path.

    It derives from AssertionError so that pytest reports it as a test failure.
    """


# --- Building the QEMU command line ------------------------------------------------------


def platform_vars() -> tuple[str, ...]:
    """The Makefile variable settings in GRADE_PLATFORM, such as ("MEM=64M", "CPUS=1")."""
    return tuple(shlex.split(os.environ.get("GRADE_PLATFORM", "")))


def platform_cpus(cpus: int, platform: Sequence[str], extra_args: Sequence[str] = ()) -> int:
    """The harts a machine gets: CPUS=n in `platform` if it says, else `cpus`. A machine
    that counts instructions (-icount) keeps the harts it asked for: such counts are taken
    on one hart, since secondary harts do not come up under -icount."""
    if "-icount" in extra_args:
        return cpus
    for setting in platform:
        if setting.startswith("CPUS="):
            return int(setting.removeprefix("CPUS="))
    return cpus


def makefile_qemu_command(cpus: int, root: Path = REPO,
                          platform: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The Makefile's QEMU command line (tern/toolchain.py); a MachineError if it cannot say."""
    try:
        return toolchain.qemu_command(cpus, root, platform)
    except toolchain.ToolchainError as error:
        raise MachineError(f"no QEMU command line from the Makefile: {error}") from None


def _with_image(argv: Sequence[str], image: Path | str) -> list[str]:
    """Point every `-drive file=...` option at `image`."""
    out = list(argv)
    for i, arg in enumerate(out):
        if i > 0 and out[i - 1] == "-drive":
            opts = [f"file={image}" if opt.startswith("file=") else opt
                    for opt in arg.split(",")]
            out[i] = ",".join(opts)
    return out


def _with_cpus(argv: Sequence[str], cpus: int) -> list[str]:
    """Force `-smp cpus` (for -icount runs, which need one hart)."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "-smp":
            out[i + 1] = str(cpus)
    return out


def qemu_command(cpus: int, image: Path | str, extra_args: Sequence[str] = (),
                 root: Path = REPO, platform: Sequence[str] | None = None) -> list[str]:
    """The full command line for one machine booting from `image`, on `platform`
    (Makefile variable settings; GRADE_PLATFORM's if None)."""
    platform = tuple(platform_vars() if platform is None else platform)
    cpus = platform_cpus(cpus, platform, extra_args)
    argv = _with_image(makefile_qemu_command(cpus, root, platform), image)
    return _with_cpus(argv, cpus) + list(extra_args)


# --- Never leave a QEMU behind ------------------------------------------------------------

_live: "weakref.WeakSet[Machine]" = weakref.WeakSet()
_atexit_installed = False
_handlers_installed = False


def _close_all() -> None:
    for machine in list(_live):
        machine.close()


def _on_signal(signum: int, _frame: object) -> None:
    _close_all()
    # Die of the same signal, as if no handler had been installed.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_cleanup() -> None:
    global _atexit_installed, _handlers_installed
    if not _atexit_installed:
        _atexit_installed = True
        atexit.register(_close_all)
    # Signal handlers can only be set from the main thread: a machine started first in
    # another thread leaves them to the next one started in the main thread.
    if _handlers_installed or threading.current_thread() is not threading.main_thread():
        return
    _handlers_installed = True
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) in (signal.SIG_DFL, None):
            signal.signal(signum, _on_signal)
    # Ctrl-C raises KeyboardInterrupt, which unwinds through close() and atexit.


# Looked up here, not in the child: loading a library between fork and exec can deadlock.
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _prctl = None
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Runs in the QEMU child before exec: SIGKILL it when the harness dies."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


# --- The disk a machine leaves behind ----------------------------------------------------------

# Disks found inconsistent when their machine was closed: (machine name, problems, saved copy).
DISK_PROBLEMS: list[tuple[str, list[str], Path]] = []


def disk_problems(image: Path) -> list[str]:
    """What the checker finds wrong with `image` as a stopped machine left it.

    A committed transaction still in the log is replayed first (in memory), and an inode
    with no links that nothing reaches is allowed: a file unlinked while still open when
    QEMU was killed, which the kernel frees at its next boot.
    """
    try:
        img = fsimage.Image.open(image)
    except fsimage.FormatError as e:
        return [f"{fsimage.SUPERBLOCK_BAD}: {e}"]
    return [str(p) for p in fsimage.check_image(img) if not fsimage.reclaimable_at_boot(img, p)]


# --- The machine ------------------------------------------------------------------------


class Machine:
    """One QEMU running tern, with its console.

    Typical use:

        with Machine(cpus=3, name="demo") as m:
            m.boot()
            assert m.run("echo hi | wc").strip() == "1 1 3"
    """

    def __init__(self, cpus: int = 3, *, name: str = "machine",
                 extra_args: Sequence[str] = (), log_path: Path | None = None,
                 root: Path = REPO, image: Path | str | None = None,
                 command: Sequence[str] | None = None,
                 platform: Sequence[str] | None = None, ramdisk: bool = False) -> None:
        """Describe a machine; start() or boot() runs it.

        `image`, if given, is booted in place instead of a private copy of fs.img, and keeps
        whatever the guest wrote (for tests that inspect the disk afterwards); a string
        names any disk QEMU can open (such as "nbd:unix:/path"). `command`, if
        given, runs instead of QEMU: it is for testing the harness itself. `platform` holds
        Makefile variable settings (GRADE_PLATFORM's if None); a CPUS=n there wins over `cpus`.
        `ramdisk` also loads the private copy as an initrd, which the kernel then uses as its
        root file system instead of virtio disk 0 (see the module's notes); the guest's writes
        vanish with QEMU, so the disk is not checked after close. It needs the private copy:
        no `image`.
        """
        if ramdisk and image is not None:
            raise ValueError("ramdisk=True boots a private copy of fs.img; do not pass image")
        self.platform = tuple(platform_vars() if platform is None else platform)
        self.cpus = platform_cpus(cpus, self.platform, extra_args)
        self.image = image
        self.command = list(command) if command is not None else None
        self.name = name
        self.extra_args = list(extra_args)
        self.root = root
        self.log_path = log_path or LOG_DIR / f"{_safe_name(name)}.log"
        self.argv: list[str] = []
        self.boot_output = ""
        self.at_prompt = False  # True when the shell is known to wait for a command
        self._child: pexpect.spawn | None = None
        self._tmpdir: Path | None = None
        self._text: list[str] = []  # console chunks, normalised
        self._size = 0
        self._arrivals: list[tuple[int, float]] = []  # (end offset, monotonic time)
        self._pos = 0  # where the next wait starts looking
        self._command: str | None = None  # the command being run, for error messages
        self._eof = False
        self._verbose = os.environ.get("GRADE_VERBOSE", "") not in ("", "0")
        self.start_time = 0.0
        # Check the private copy of fs.img when the machine is closed (see DISK_PROBLEMS).
        self.ramdisk = ramdisk
        self.check_disk = not ramdisk

    # -- life cycle --

    def start(self) -> None:
        """Start QEMU (on a private copy of fs.img, unless given an image). boot() calls it."""
        if self._child is not None:
            return
        _install_cleanup()
        if self.command is not None:
            self.argv = self.command
        else:
            kernel = self.root / "build" / "kernel.elf"
            image = self.image or self.root / "fs.img"
            for needed in (kernel, image):
                if isinstance(needed, Path) and not needed.exists():
                    raise MachineError(f"{needed} does not exist: run `make all`")
            if self.image is None:
                self._tmpdir = Path(tempfile.mkdtemp(prefix="tern-grade-"))
                image = self._tmpdir / "fs.img"
                shutil.copyfile(self.root / "fs.img", image)
            extra = list(self.extra_args)
            if self.ramdisk and self._tmpdir is not None:
                # A copy of its own: QEMU locks the drive's file while it runs.
                initrd = self._tmpdir / "initrd.img"
                shutil.copyfile(self.root / "fs.img", initrd)
                extra += ["-initrd", str(initrd)]
            self.argv = qemu_command(self.cpus, image, extra, self.root, self.platform)
        self.start_time = time.monotonic()
        self._child = pexpect.spawn(
            self.argv[0], self.argv[1:], cwd=str(self.root), encoding="utf-8",
            codec_errors="replace", echo=False, timeout=None, preexec_fn=_die_with_parent,
            dimensions=(24, 200))
        # pexpect waits 50 ms before each send by default, for programs that drop input
        # typed before they read; the console keeps what is typed ahead (INPUT_BUF bytes).
        self._child.delaybeforesend = None
        _live.add(self)

    def boot(self, timeout: float = 60) -> str:
        """Start QEMU and wait for the shell's first prompt. Returns the boot output."""
        self.start()
        self._command = "(boot)"
        match = self._wait(PROMPT, timeout, what="the first shell prompt")
        self.boot_output = self.output[:match.start()]
        self._pos = match.end()
        self.at_prompt = True
        self._command = None
        return self.boot_output

    def close(self) -> None:
        """Kill QEMU (always safe to call, any number of times) and delete the private image."""
        child, self._child = self._child, None
        if child is not None:
            try:
                if child.isalive():
                    child.kill(signal.SIGKILL)
                    child.wait()  # SIGKILL cannot be caught: QEMU is gone at once
                child.ptyproc.delayafterclose = 0  # it has exited: no need to wait 100 ms
                child.close(force=True)
            except (OSError, pexpect.ExceptionPexpect):
                pass
        _live.discard(self)
        if self._tmpdir is not None:
            self._check_disk(self._tmpdir / "fs.img")
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
        self.at_prompt = False

    def _check_disk(self, image: Path) -> None:
        """Check the private image before it is deleted; record what is wrong with it."""
        if not self.check_disk or not self.argv or not image.exists():
            return
        problems = disk_problems(image)
        if not problems:
            return
        saved = self.log_path.with_name(f"{self.log_path.stem}-disk.img")
        try:
            saved.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(image, saved)
        except OSError:
            pass
        DISK_PROBLEMS.append((self.name, problems, saved))

    def __enter__(self) -> "Machine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        return self._child is not None and self._child.isalive()

    @property
    def pid(self) -> int | None:
        """QEMU's process id, while it runs."""
        return self._child.pid if self._child is not None else None

    # -- typing --

    def send(self, text: str) -> None:
        """Type `text` on the console as it is."""
        if self._child is None:
            raise MachineError("send() on a machine that is not running")
        self.at_prompt = False
        self._child.send(text)

    def sendline(self, line: str) -> None:
        """Type one line and press Enter."""
        self.send(line + "\n")

    # -- waiting --

    def expect(self, pattern: str | re.Pattern[str], timeout: float = 10, *,
               failures: Iterable[Failure] = DEFAULT_FAILURES) -> re.Match[str]:
        """Wait for `pattern` in output not yet consumed by an earlier wait.

        Returns the match and consumes the output up to its end. Raises MachineError if a
        failure pattern appears first, QEMU exits, or the (scaled) timeout passes.
        """
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        match = self._wait(regex, timeout, failures=failures)
        self._pos = match.end()
        return match

    def run(self, cmd: str, timeout: float = 10, *,
            failures: Iterable[Failure] = DEFAULT_FAILURES, quiet: float | None = None) -> str:
        """Type a shell command and return what it printed before the next prompt.

        The machine must be at a prompt. The returned text starts after the echo of the
        command line and ends just before the "$ " of the next prompt. That prompt is
        recognised at the start of a line, so a command whose output ends without a newline,
        or prints a line that starts with "$ ", needs expect() instead. With `quiet`, the
        wait also fails once the console has printed nothing for that many (scaled) seconds:
        for a command that prints as it makes progress, whose silence means it is stuck.
        """
        if not self.at_prompt:
            raise MachineError(self._message(f"run({cmd!r}) while the shell is not at a prompt",
                                             None))
        self._command = cmd
        self.sendline(cmd)
        echo = self._wait(re.compile(re.escape(cmd + "\n")), timeout, failures=failures,
                          what="the echo of the command", typed=cmd + "\n")
        prompt = self._wait(PROMPT, timeout, failures=failures, start=echo.end(),
                            what="the next shell prompt", quiet=quiet)
        self._pos = prompt.end()
        self.at_prompt = True
        self._command = None
        return self.output[echo.end():prompt.start()]

    def _wait(self, regex: re.Pattern[str], timeout: float, *,
              failures: Iterable[Failure] = DEFAULT_FAILURES, start: int | None = None,
              what: str | None = None, typed: str = "",
              quiet: float | None = None) -> re.Match[str]:
        """Wait for `regex` from `start` on, failing early on any of `failures`.

        `typed` is text just typed, whose echo is expected first: the echo may arrive a few
        characters at a time, and a command such as `grep panic: README` must not be taken
        for a panic while its echo is still arriving.
        """
        failures = tuple(failures)
        what = what or f"/{regex.pattern}/"
        pos = self._pos if start is None else start
        began = time.monotonic()
        deadline = began + timeout * timeout_scale()
        scanned = pos  # text before this was searched, and held no match
        while True:
            text = self.output
            cut = scanned - LOOKBACK
            origin = pos if cut <= pos else max(pos, text.rfind("\n", pos, cut) + 1)
            found = regex.search(text, origin)
            echoed = text[pos:pos + len(typed)]
            judged = pos + len(echoed) if typed.startswith(echoed) else pos
            failed = _first_failure(text, max(judged, origin), failures)
            if failed is not None and (found is None or failed[1].start() < found.start()):
                name, match = failed
                self._drain()  # a panic's backtrace follows its first line
                # The failure may have been seen before its line was complete ("panic:" and
                # nothing more): match again on the drained text to quote the whole line.
                again = _first_failure(self.output, judged, failures)
                if again is not None and again[1].start() == match.start():
                    name, match = again
                raise self.error(f"{name} while waiting for {what}: {match.group(0).strip()!r}")
            if found is not None:
                return found
            if self._eof:
                raise self.error(f"QEMU exited ({self._exit_description()}) while waiting "
                                  f"for {what}")
            now = time.monotonic()
            if now >= deadline:
                raise self.error(f"timed out after {timeout * timeout_scale():g} s waiting "
                                  f"for {what}")
            if quiet is not None:
                last = max(began, self._arrivals[-1][1] if self._arrivals else began)
                if now - last >= quiet * timeout_scale():
                    raise self.error(f"nothing printed for {quiet * timeout_scale():g} s "
                                     f"while waiting for {what}")
            scanned = len(text)
            self._read(min(deadline - now, 0.25))

    def pump(self, timeout: float) -> None:
        """Collect console output for at most `timeout` seconds without waiting for anything.

        Use it while something else drives QEMU (a debugger, say): output that nobody reads
        fills the pseudo-terminal, and then the guest's console stalls.
        """
        self._read(timeout)

    def _drain(self, quiet: float = 0.3, limit: float = 2.0) -> None:
        """Read until the console has been quiet for `quiet` seconds (at most `limit`)."""
        end = time.monotonic() + limit
        while not self._eof and time.monotonic() < end:
            before = self._size
            self._read(quiet)
            if self._size == before:
                return

    def _read(self, timeout: float) -> None:
        """Append whatever the console prints within `timeout` seconds (and, if it is
        streaming, what follows within STREAM_GATHER more)."""
        if self._child is None:
            self._eof = True
            return
        pieces: list[tuple[str, float]] = []  # each piece read, with when it came
        try:
            data = self._child.read_nonblocking(READ_SIZE, timeout=max(timeout, 0.01))
            pieces.append((data, time.monotonic()))
            # QEMU writes the console a byte at a time: while it streams, gather a few
            # milliseconds of it, rather than handling each handful of bytes on its own.
            end = time.monotonic() + STREAM_GATHER
            while STREAM_BYTES <= len(data) < READ_SIZE and time.monotonic() < end:
                time.sleep(STREAM_PAUSE)
                more = self._child.read_nonblocking(READ_SIZE - len(data), timeout=0)
                pieces.append((more, time.monotonic()))
                data += more
        except pexpect.TIMEOUT:
            pass  # nothing (more) came
        except pexpect.EOF:
            self._eof = True
        for data, arrived in pieces:
            data = data.replace("\r", "")
            if not data:
                continue
            if self._verbose:
                sys.stderr.write(data)
                sys.stderr.flush()
            self._text.append(data)
            self._size += len(data)
            self._arrivals.append((self._size, arrived))

    # -- reading the record --

    @property
    def output(self) -> str:
        """All console output so far, normalised."""
        if len(self._text) > 1:
            self._text = ["".join(self._text)]
        return self._text[0] if self._text else ""

    @property
    def position(self) -> int:
        """Offset in `output` where the next wait starts looking."""
        return self._pos

    def arrival_time(self, offset: int) -> float:
        """Host time (time.monotonic) at which the character at `offset` arrived."""
        ends = [end for end, _ in self._arrivals]
        i = bisect.bisect_right(ends, offset)
        if i >= len(self._arrivals):
            raise ValueError(f"offset {offset} has not arrived")
        return self._arrivals[i][1]

    def tail(self, lines: int = TAIL_LINES) -> str:
        return "\n".join(self.output.splitlines()[-lines:])

    def halt(self, timeout: float = 20) -> None:
        """Type `halt` and wait (scaled) until QEMU has exited; then no failure may show."""
        self.sendline("halt")
        deadline = time.monotonic() + timeout * timeout_scale()
        while self.alive and time.monotonic() < deadline:
            self.pump(0.2)
        if self.alive:
            raise self.error(f"QEMU still running {timeout:g} s after `halt`")
        self.assert_no_failures()

    def assert_no_failures(self, failures: Iterable[Failure] = (PANIC, TRAP)) -> None:
        """Raise if any failure pattern appears anywhere in the console output so far."""
        self._read(0.05)
        failed = _first_failure(self.output, 0, tuple(failures))
        if failed is not None:
            name, match = failed
            raise self.error(f"{name} in console output: {match.group(0).strip()!r}")

    def save_log(self, path: Path | None = None) -> Path:
        """Write the whole console transcript, with the QEMU command, to `path`."""
        path = path or self.log_path
        path.parent.mkdir(parents=True, exist_ok=True)
        header = (f"# machine {self.name}, CPUS={self.cpus}\n"
                  f"# {shlex.join(self.argv) if self.argv else '(QEMU not started)'}\n")
        path.write_text(header + self.output)
        return path

    # -- QEMU monitor --

    def monitor(self, command: str, timeout: float = 10) -> str:
        """Run a QEMU monitor command (through -nographic's Ctrl-a c) and return its output.

        The console is switched back to the guest afterwards. Use this for measurements
        only: while the monitor has the console, typed text does not reach the guest.
        """
        self.send("\x01c")
        self.expect(re.compile(r"\(qemu\) "), timeout, failures=())
        self.sendline(command)
        # The monitor redraws the line as it is typed; its answer follows the last echo.
        done = self.expect(re.compile(r"\(qemu\) "), timeout, failures=())
        self.send("\x01c")
        reply = self.output[:done.start()]
        tail = reply[reply.rfind(command):] if command in reply else reply
        return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", tail.split("\n", 1)[-1])

    # -- errors --

    def error(self, reason: str) -> MachineError:
        """A MachineError for `reason`, with the console tail and the saved log's path."""
        self.at_prompt = False
        try:
            path: Path | None = self.save_log()
        except OSError:
            path = None
        return MachineError(self._message(reason, path))

    def _message(self, reason: str, path: Path | None) -> str:
        running = self._command if self._command is not None else "(none)"
        parts = [f"{reason}",
                 f"machine: {self.name} (CPUS={self.cpus}); command: {running}",
                 f"--- last {TAIL_LINES} lines of the console ---",
                 self.tail(),
                 "--- end of console ---"]
        if path is not None:
            parts.append(f"full console log: {path}")
        return "\n".join(parts)

    def _exit_description(self) -> str:
        child = self._child
        if child is None:
            return "closed"
        try:
            child.close(force=True)
        except (OSError, pexpect.ExceptionPexpect):
            pass
        if child.signalstatus:
            return f"killed by signal {child.signalstatus}"
        return f"exit status {child.exitstatus}"


def _first_failure(text: str, pos: int,
                   failures: tuple[Failure, ...]) -> tuple[str, re.Match[str]] | None:
    """The earliest failure pattern in text[pos:], with its name."""
    best: tuple[str, re.Match[str]] | None = None
    for failure in failures:
        match = failure.regex.search(text, pos)
        if match is not None and (best is None or match.start() < best[1].start()):
            best = (failure.name, match)
    return best


def _safe_name(name: str) -> str:
    """A file name for a test id such as `test_boot.py::test_boot[1]`."""
    name = name.replace(".py::", ".").replace("::", ".")
    return re.sub(r"[^A-Za-z0-9_.=-]+", "-", name).strip("-") or "machine"


def log_path_for(test_id: str) -> Path:
    """Where the console log of the test with pytest node id `test_id` goes."""
    return LOG_DIR / f"{_safe_name(Path(test_id).name)}.log"
