"""Faults in user programs kill the program, never the kernel.

`tfault KIND` forks a child that makes one kind of bad access and reports the child's exit
status, which must be -1. The kernel prints exactly one `killed pid N (name): ...` line for
the child. `tbadarg` passes bad pointers and lengths to system calls, which must all return
-1. After each, the system must still run commands.

The tests share one machine, so a fault that damages the kernel in a way that only shows
later is caught too; a test that leaves the machine broken gets the next one a fresh boot.
"""

from __future__ import annotations

import re

import pytest

from tern.machine import Machine

pytestmark = pytest.mark.points(2, lab="faults")

KILLED = re.compile(r"(?m)^killed pid \d+ \((\S+)\):")


@pytest.mark.parametrize("kind", ["null", "text", "kernel", "guard", "maxva"])
def test_tfault(shared: Machine, kind: str) -> None:
    out = shared.run(f"tfault {kind}")
    assert f"tfault {kind}: child exit status -1" in out
    killed = KILLED.findall(out)
    assert killed == ["tfault"], f"expected one `killed pid N (tfault):` line, got {killed}"
    assert shared.run("echo up").strip() == "up"
    shared.assert_no_failures()


def test_tbadarg(shared: Machine) -> None:
    out = shared.run("tbadarg", timeout=30)
    assert "tbadarg: all -1" in out
    assert shared.run("echo up").strip() == "up"
    shared.assert_no_failures()
