"""tools/gdb/tern.py's describe_trap, without gdb: what tern-sample says of a stop's trap
registers. The origin of a trap is sepc's address, not sstatus.SPP (which any sret sets to
user mode), and a stop outside the timer trap (timer_interrupt not on the kernel stack,
or scause another cause) is never described as one."""

from __future__ import annotations

import importlib.util
import os
import random

from samples import ROOT

SEED = int(os.environ.get("GDB_TRAP_SEED", "4"))
TIMER = (1 << 63) | 5
TEXT = (0x8020_0000, 0x8024_0000)


def load():
    spec = importlib.util.spec_from_file_location("tern_gdb", ROOT / "tools" / "gdb" / "tern.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_describe_trap() -> None:
    describe = load().describe_trap
    rng = random.Random(SEED)
    causes = [TIMER, TIMER, (1 << 63) | 9, (1 << 63) | 1, 8, 12, 13, 15, 2, 3]
    for _ in range(2000):
        scause = rng.choice(causes)
        in_handler = rng.random() < 0.7
        sstatus = rng.getrandbits(64)
        kernel = rng.random() < 0.5
        sepc = rng.randrange(*TEXT) if kernel else rng.randrange(0, 0x40000)
        line, from_user = describe(in_handler, scause, sstatus, sepc, *TEXT)
        assert from_user == (not kernel)
        assert f"sepc {sepc:#x}" in line
        if scause == TIMER and in_handler:
            assert line.startswith("timer trap from " + ("supervisor" if kernel else "user"))
            assert ("stale" in line) == (((sstatus >> 8) & 1 == 0) == kernel), line
        else:
            assert line.startswith("not stopped in a timer trap"), line
            assert ("a kernel pc" if kernel else "a user pc") in line
            assert "trap from" not in line
    print(f"seed {SEED}: 2000 cases")


def test_the_lie_of_the_issue() -> None:
    """A kernel pc after an sret (SPP reads user) is not a trap from user mode."""
    line, from_user = load().describe_trap(True, TIMER, 0, 0x8020_1234, *TEXT)
    assert "timer trap from supervisor mode" in line and not from_user
    # The same registers at a stop in a system call, after a timer trap in the kernel
    # has returned: not a timer trap at all.
    line, from_user = load().describe_trap(False, TIMER, 0, 0x8020_1234, *TEXT)
    assert line.startswith("not stopped in a timer trap") and "a kernel pc" in line
