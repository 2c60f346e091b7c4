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

ANNOUNCE_ONE = re.compile(r"\s*\[(\d+)\]\s*")
ANNOUNCE_ANY = re.compile(r"\[(\d+)\]")
COPIES_A_LINE = 8  # and at most LINE_CHARS characters (sh reads lines of up to 512)
LINE_CHARS = 500
PIDS_A_KILL = 16


def start_background(m: Machine, cmd: str) -> int:
    """Run `cmd &` and return the pid the shell announced."""
    out = m.run(f"{cmd} &")
    match = ANNOUNCE_ONE.fullmatch(out)
    if match is None:
        raise MachineError(f"`{cmd} &` should print [pid], printed {out!r}")
    return int(match.group(1))


def start_copies(m: Machine, cmd: str, count: int, pids: list[int]) -> None:
    """Start `count` copies of `cmd &`, several to a command line (sh takes up to 16 jobs in
    one), appending each pid the shell announces to `pids` as it goes: a caller that kills
    `pids` afterwards kills every copy that started, even if this fails half way."""
    while count > 0:
        n = max(1, min(count, COPIES_A_LINE, LINE_CHARS // (len(cmd) + 3)))
        line = " ".join([f"{cmd} &"] * n)
        out = m.run(line)
        found = [int(pid) for pid in ANNOUNCE_ANY.findall(out)]
        pids.extend(found)
        if len(found) != n or ANNOUNCE_ANY.sub("", out).strip():
            raise MachineError(f"`{line}` should print [pid] {n} times, printed {out!r}")
        count -= n


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


def kill_lines(pids: list[int]) -> list[str]:
    """`kill` command lines for `pids`, PIDS_A_KILL to a line (a command takes MAXARG words)."""
    return ["kill " + " ".join(map(str, pids[i:i + PIDS_A_KILL]))
            for i in range(0, len(pids), PIDS_A_KILL)]


def still_there(m: Machine, pids: list[int]) -> list[int]:
    """The processes of `pids` that exist (`kill` kills them, and does not say there is no
    such process)."""
    out = "".join(m.run(line) for line in kill_lines(pids))
    return [pid for pid in pids if f"cannot kill {pid}: no such process" not in out]


def kill_and_wait_gone(m: Machine, pid: int, timeout: float = 10) -> None:
    """Kill `pid` and wait until the process has exited and been reaped."""
    kill_all_and_wait_gone(m, [pid], timeout)


def kill_all_and_wait_gone(m: Machine, pids: list[int], timeout: float = 10) -> None:
    """Kill every process of `pids` and wait until all have exited and been reaped."""
    for line in kill_lines(pids):
        out = m.run(line)
        if out != "":
            raise MachineError(f"`{line}` printed {out!r}")
    deadline = time.monotonic() + timeout * timeout_scale()
    while left := still_there(m, pids):
        if time.monotonic() > deadline:
            raise MachineError(f"processes {left} still exist {timeout:g} s after kill")
        time.sleep(0.05)


@contextmanager
def running_all(m: Machine, cmd: str, count: int) -> Iterator[list[int]]:
    """Start `count` copies of `cmd &` and give their pids; on leaving the block, however it
    is left, kill every copy that started and wait until it is gone."""
    pids: list[int] = []
    try:
        start_copies(m, cmd, count, pids)
        yield pids
    finally:
        kill_all_and_wait_gone(m, pids)


@contextmanager
def running(m: Machine, cmd: str) -> Iterator[int]:
    """`running_all` for one copy: its pid."""
    with running_all(m, cmd, 1) as pids:
        yield pids[0]
