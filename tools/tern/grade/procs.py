"""Leave nothing running: how the grader starts pytest and makes sure it all ends.

A grading run is a tree of processes: grader.py starts pytest, pytest-xdist starts workers,
each worker starts QEMUs. Any of them may be interrupted (Ctrl-C, a closed terminal, a CI
job cancelled), and a QEMU left behind keeps a core busy until someone notices. Three
independent mechanisms make sure that cannot happen:

1. Parent-death signals. pytest runs with PR_SET_PDEATHSIG=SIGTERM, every xdist worker asks
   for the same (plugin.py), and every QEMU is started with SIGKILL as its parent-death
   signal (machine.py). If grader.py dies, even of SIGKILL, the chain follows it down.

2. An orderly stop. pytest runs in a session of its own, so a Ctrl-C in the terminal reaches
   only grader.py, which then stops the whole pytest process group itself: SIGTERM (a
   worker's signal handler closes its machines), and SIGKILL for anything still there a few
   seconds later.

3. A sweep by run id. Every process of a run inherits the environment variable
   TERN_GRADE_RUN=<a random id>. When the run ends, for whatever reason, any process still
   carrying this run's id is killed. The id is unique to the run, so a sweep never touches a
   second grader running beside it, in another clone or in the same one.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path
from types import FrameType
from typing import IO, Sequence

RUN_VARIABLE = "TERN_GRADE_RUN"
STOP_GRACE = 5.0  # seconds between SIGTERM and SIGKILL

try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _prctl = None


class Interrupted(Exception):
    """grader.py was asked to stop (SIGINT, SIGTERM or SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def new_run_id() -> str:
    return secrets.token_hex(8)


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(signum)


def install_stop_handlers() -> None:
    """Turn SIGINT, SIGTERM and SIGHUP into an `Interrupted` exception in the main thread."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_interrupted)


def ignore_stop_signals() -> None:
    """While cleaning up after an interruption, a second Ctrl-C must not cut the cleanup short."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """Ask the kernel to send this process `signum` when its parent dies (Linux only)."""
    if _prctl is None:
        return
    parent = os.getppid()
    _prctl(1, int(signum))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), signum)


def _child_setup() -> None:
    # Runs in the child between fork and exec: nothing here may allocate or import.
    if _prctl is not None:
        _prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


def spawn(argv: Sequence[str], *, cwd: Path, env: dict[str, str],
          output: IO[bytes]) -> subprocess.Popen[bytes]:
    """Start `argv` in a new session, with SIGTERM as its parent-death signal."""
    return subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=_child_setup)


def stop_group(child: subprocess.Popen[bytes], grace: float = STOP_GRACE) -> None:
    """Stop the child's whole process group: SIGTERM, then SIGKILL after `grace` seconds."""
    if child.poll() is None:
        _signal_group(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    # The group may outlive its leader (a worker still closing its machines).
    _signal_group(child.pid, signal.SIGKILL)
    try:
        child.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def processes_of_run(run_id: str) -> list[int]:
    """The pids of live processes whose environment carries this run's id."""
    marker = f"{RUN_VARIABLE}={run_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def sweep(run_id: str, settle: float = 2.0) -> list[int]:
    """Kill every process still carrying `run_id`; return the pids that were found.

    Processes that are already exiting (a worker closing its QEMUs) get `settle` seconds to
    finish before they are killed.
    """
    own = os.getpid()
    deadline = time.monotonic() + settle
    while True:
        left = [pid for pid in processes_of_run(run_id) if pid != own]
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return left
