"""Background jobs on the machine's shell: start one, kill it, and make sure it is gone.

The shell announces a background job as `[N]`, where N is the pid of the job's (last)
process. A killed process exits the next time it would return to user space, and the shell
reaps it during the wait for some later foreground command. Until then `kill N` still
succeeds; once it is reaped, `kill N` answers "no such process". Process ids are never
reused, so that answer proves the job is gone.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tern.machine import Machine, MachineError, timeout_scale

ANNOUNCE = re.compile(r"\s*\[(\d+)\]\s*")


def start_background(m: Machine, cmd: str) -> int:
    """Run `cmd &` and return the pid the shell announced."""
    out = m.run(f"{cmd} &")
    match = ANNOUNCE.fullmatch(out)
    if match is None:
        raise MachineError(f"`{cmd} &` should print [pid], printed {out!r}")
    return int(match.group(1))


def wait_past_exec(m: Machine, pid: int, program: str, timeout: float = 30) -> None:
    """Wait until process `pid` runs `program` and is not asleep, as ^P (the console's list
    of processes, procdump() in kern/proc/proc.cc) shows it. The shell announces a job when
    it forks, so the job may still be reading its program from the disk: a test that needs
    it on the CPU, never asleep, waits here first. The shell must be at a prompt; ^P does
    not reach it, so it still is afterwards."""
    if not m.at_prompt:
        raise MachineError(f"wait_past_exec({pid}) while the shell is not at a prompt")
    line = re.compile(rf"^{pid} (\S+) +(\S+)\r?$", re.M)
    deadline = time.monotonic() + timeout * timeout_scale()
    while True:
        m.send("\x10")
        m.at_prompt = True  # ^P lists processes on the console; the shell's line is untouched
        found = m.expect(line, timeout=timeout)
        if found.group(1) in ("run", "runble") and found.group(2) == program:
            return
        if time.monotonic() > deadline:
            raise MachineError(f"process {pid} is still {found.group(1)} {found.group(2)!r}, "
                               f"not running {program}, {timeout:g} s after it started")
        time.sleep(0.2)


def is_gone(m: Machine, pid: int) -> bool:
    """Does `kill pid` say there is no such process?"""
    return "no such process" in m.run(f"kill {pid}")


def kill_and_wait_gone(m: Machine, pid: int, timeout: float = 10) -> None:
    """Kill `pid` and wait until the process has exited and been reaped."""
    out = m.run(f"kill {pid}")
    if out != "":
        raise MachineError(f"`kill {pid}` printed {out!r}")
    deadline = time.monotonic() + timeout * timeout_scale()
    while not is_gone(m, pid):
        if time.monotonic() > deadline:
            raise MachineError(f"process {pid} still exists {timeout:g} s after kill")
        time.sleep(0.2)


@contextmanager
def running_all(m: Machine, cmd: str, count: int) -> Iterator[list[int]]:
    """Start `count` copies of `cmd &` and give their pids; on leaving the block, however it
    is left, kill every copy that started and wait until it is gone."""
    pids: list[int] = []
    try:
        for _ in range(count):
            pids.append(start_background(m, cmd))
        yield pids
    finally:
        for pid in pids:
            kill_and_wait_gone(m, pid)


@contextmanager
def running(m: Machine, cmd: str) -> Iterator[int]:
    """`running_all` for one copy: its pid."""
    with running_all(m, cmd, 1) as pids:
        yield pids[0]
