"""Booting: the kernel comes up on one hart and on three, and the shell answers.

The order of the first lines is part of the contract: OpenSBI prints its banner, then the
kernel's first line starts with `tern:`, and the shell's prompt `$ ` comes last.
"""

from __future__ import annotations

import re

import pytest

from machine import Machine, MachineError


def check_boot_log(m: Machine, cpus: int) -> None:
    log = m.boot_output
    sbi = log.find("OpenSBI v")
    assert sbi >= 0, "OpenSBI's banner is missing"
    harts = re.search(r"Platform HART Count\s*:\s*(\d+)", log)
    assert harts is not None and int(harts.group(1)) == cpus, "QEMU ran with the wrong -smp"
    banner = re.compile(r"(?m)^tern:.*$").search(log, sbi)
    assert banner is not None, "no line starting with `tern:` after OpenSBI's banner"
    assert "panic" not in log


@pytest.mark.points(5, lab="boot")
@pytest.mark.parametrize("cpus", [1, 3])
def test_boot_reaches_prompt(boot, cpus: int) -> None:
    m = boot(cpus)
    check_boot_log(m, cpus)
    assert m.run("echo alive").strip() == "alive"
    m.assert_no_failures()


def test_panic_is_caught(boot) -> None:
    """`-append test.panic` makes the kernel panic on purpose at the end of its boot. The
    harness must stop at once and show the panic line and the backtrace that follows it."""
    with pytest.raises(MachineError) as info:
        boot(1, extra_args=("-append", "test.panic"), timeout=30)
    message = str(info.value)
    assert message.startswith("kernel panic while waiting for the first shell prompt")
    assert re.search(r"(?m)^panic: .*test\.panic", message)
    assert re.search(r"(?m)^\s*#0 ", message), "the panic should print a backtrace"
