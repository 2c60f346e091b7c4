#!/usr/bin/env python3
"""Drive a command through a terminal, step by step, timing each step.

    console.py [--log FILE] [--fail REGEX]... STEP... -- COMMAND [ARG...]

Each STEP is one argument:
    expect:NAME:SECONDS:REGEX   wait at most SECONDS for REGEX in the output; print NAME's time
    send:TEXT                   type TEXT and a newline
    exit:NAME:SECONDS           wait for COMMAND to end; it must end with status 0

COMMAND runs on a new pseudo-terminal, as a person's shell would run it (QEMU's console needs
one). Everything it prints is copied to --log. A --fail pattern seen at any time stops the
run at once, showing the last lines, as does a step's timeout. The exit status is 0 only if
every step passed. It uses only Python's standard library: it runs on the CI machine before
anything is installed there.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import signal
import sys
import time


class StepFailed(Exception):
    pass


class Console:
    def __init__(self, argv: list[str], log, fail: list[re.Pattern[str]]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execvp(argv[0], argv)
            finally:
                os._exit(127)
        self.log = log
        self.fail = fail
        self.text = ""  # everything seen, for the failure patterns and the tail
        self.seen = 0  # how much of self.text the expects have consumed
        self.scanned = 0  # where the current expect found nothing up to (less a margin)
        self.status: int | None = None

    def read(self, until: float) -> bool:
        """Read what arrives before `until`; False at end of output."""
        left = until - time.monotonic()
        if left <= 0:
            return True
        ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the other side closed
            data = b""
        if not data:
            return False
        chunk = data.decode("utf-8", errors="replace")
        self.log.write(chunk)
        self.log.flush()
        start = max(0, len(self.text) - 200)
        self.text += chunk
        for pattern in self.fail:
            found = pattern.search(self.text, start)
            if found:
                raise StepFailed(f"failure pattern {pattern.pattern!r} seen: {found.group(0)!r}")
        return True

    def expect(self, pattern: re.Pattern[str], seconds: float) -> None:
        until = time.monotonic() + seconds
        self.scanned = self.seen
        while True:
            # The patterns span a line or two, so text more than a few lines back need not
            # be searched again: the search stays linear in the output, however long.
            found = pattern.search(self.text, max(self.seen, self.scanned - 1000))
            self.scanned = len(self.text)
            if found:
                self.seen = found.end()
                return
            if time.monotonic() >= until:
                raise StepFailed(f"timed out after {seconds:g} s waiting for {pattern.pattern!r}")
            if not self.read(until):
                raise StepFailed(f"the command ended before {pattern.pattern!r} appeared")

    def send(self, text: str) -> None:
        os.write(self.fd, (text + "\n").encode())

    def wait(self, seconds: float) -> int:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if not self.read(until):
                break
        else:
            raise StepFailed(f"the command did not end within {seconds:g} s")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
            time.sleep(0.1)
        raise StepFailed("the command closed its terminal but did not exit")

    def stop(self) -> None:
        """End the command and everything it started (its process group: pty.fork made it
        a session leader, and its shell starts no jobs of its own)."""
        if self.status is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
                time.sleep(1)
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass

    def tail(self, lines: int = 25) -> str:
        return "\n".join(self.text.replace("\r", "").splitlines()[-lines:])

    def failures(self, lines: int = 120) -> str:
        """pytest's failure reports and its FAILED and ERROR summary lines, wherever they are
        in the output: a failed suite's last lines may be some other test's summary."""
        text = self.text.replace("\r", "").splitlines()
        report = []
        for i, line in enumerate(text):
            if re.match(r"=+ (FAILURES|ERRORS) =+$", line):
                for rest in text[i:i + lines]:
                    if rest is not line and re.match(r"=+ .* =+$", rest):
                        break
                    report.append(rest)
        report += [line for line in text if re.match(r"(FAILED|ERROR) ", line)]
        return "\n".join(report)


def parse_step(step: str) -> tuple:
    kind, _, rest = step.partition(":")
    if kind == "expect":
        name, seconds, regex = rest.split(":", 2)
        return kind, name, float(seconds), re.compile(regex)
    if kind == "send":
        return kind, rest
    if kind == "exit":
        name, seconds = rest.split(":", 1)
        return kind, name, float(seconds)
    raise argparse.ArgumentTypeError(f"bad step {step!r}")


class Stopped(Exception):
    pass


def stopped(signum: int, _frame) -> None:
    raise Stopped(f"stopped by signal {signum}")


def main() -> int:
    # A stop from outside ends the command too (through the `finally` below), so that no
    # make or QEMU outlives the check and keeps its root's mounts busy.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stopped)
    args = sys.argv[1:]
    if "--" not in args:
        print(__doc__, file=sys.stderr)
        return 2
    split = args.index("--")
    command = args[split + 1:]
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("--log", default=os.devnull)
    parser.add_argument("--fail", action="append", default=[], type=re.compile)
    parser.add_argument("steps", nargs="+", type=parse_step)
    options = parser.parse_args(args[:split])
    if not command:
        parser.error("no command after --")

    with open(options.log, "a", encoding="utf-8") as log:
        console = Console(command, log, options.fail)
        last = time.monotonic()
        try:
            for step in options.steps:
                if step[0] == "send":
                    console.send(step[1])
                    continue
                if step[0] == "expect":
                    console.expect(step[3], step[2])
                else:
                    status = console.wait(step[2])
                    if status != 0:
                        raise StepFailed(f"the command ended with status {status}")
                now = time.monotonic()
                print(f"    {step[1]}: {now - last:.0f} s", flush=True)
                last = now
        except (StepFailed, Stopped) as failure:
            print(f"    step {step[1]!r} failed: {failure}\n--- last lines:\n{console.tail()}",
                  flush=True)
            failures = console.failures()
            if failures:
                print(f"--- what failed:\n{failures}", flush=True)
            return 1
        finally:
            console.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
