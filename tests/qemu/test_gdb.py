"""The gdb commands of tools/gdb/tern.py, run in batch mode against a running system.

QEMU waits for gdb on a free port, as `make qemu-gdb` does; gdb-multiarch loads .gdbinit
(kernel symbols and the tern-* commands), stops in the sampler while `spin` is profiled,
and prints the process and both frame chains.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tern.machine import REPO, Machine, MachineError, timeout_scale
from tern.ports import free_port


def boot_with_gdb_port(attempts: int = 3) -> tuple[Machine, int]:
    """A booted machine whose gdb stub listens on a free port.

    The port is free when chosen, but another program may take it before QEMU binds it; QEMU
    then exits at once, saying so, and another port is tried.
    """
    for attempt in range(attempts):
        port = free_port()
        m = Machine(1, name="gdb", extra_args=["-gdb", f"tcp:127.0.0.1:{port}"])
        try:
            m.boot()
            return m, port
        except MachineError:
            m.close()
            if "in use" not in m.output or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def run_gdb(port: int, commands: list[str], timeout: float) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        # A private copy of .gdbinit pointing at this machine's port (never the shared .gdbport).
        init = Path(tmp) / "gdbinit"
        text = (REPO / ".gdbinit").read_text()
        text = text.replace("source .gdbport", f"target remote 127.0.0.1:{port}")
        init.write_text(text)
        args = ["gdb-multiarch", "-nx", "-batch", "-ix", str(init)]
        for c in commands:
            args += ["-ex", c]
        result = subprocess.run(args, cwd=REPO, capture_output=True, text=True,
                                timeout=timeout * timeout_scale())
        return result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("gdb-multiarch") is None, reason="gdb-multiarch is not installed")
def test_gdb_commands_show_process_and_chains(tmp_path: Path) -> None:
    m, port = boot_with_gdb_port()
    with m:
        m.run("profile rate 100")
        pid = int(re.search(r"\[(\d+)\]", m.run("spin 30 &")).group(1))
        m.run(f"profile {pid} on")
        out = run_gdb(port, [
            "break prof::record",
            "continue",
            "tern-proc",
            "tern-sample",
            "tern-bt",
            "delete",
            "detach",
        ], timeout=60)
        m.run(f"profile {pid} off")
    assert "Breakpoint 1, prof::record" in out, out[-3000:]
    assert "(spin) running" in out, f"tern-proc did not name the profiled process:\n{out[-3000:]}"
    assert "trap from user mode" in out or "trap from supervisor mode" in out, out[-3000:]
    # The user chain of spin: its functions, innermost first, down to main.
    user_lines = [l for l in out.splitlines() if l.strip().startswith("u#")]
    names = " ".join(user_lines)
    assert "main+" in names and "_start+" in names, f"user chain not symbolized:\n{out[-3000:]}"
    spin_functions = {"hot", "middle", "outer", "main", "_start", "uptime", "mix"}
    found = {l.split()[2].split("+")[0] for l in user_lines}
    assert found <= spin_functions, f"user frames outside spin's functions: {found - spin_functions}"
    kernel_lines = [l for l in out.splitlines() if l.strip().startswith("k#")]
    assert any("timer_interrupt" in l for l in kernel_lines), f"kernel chain missing:\n{out[-3000:]}"


@pytest.mark.skipif(shutil.which("gdb-multiarch") is None, reason="gdb-multiarch is not installed")
def test_gdb_sample_outside_a_timer_trap() -> None:
    """Stopped in a system call, tern-sample must not describe a timer trap: the sampler
    is not running there, and sepc is only where the last trap was taken."""
    m, port = boot_with_gdb_port()
    with m:
        m.run("spin 30 &")
        out = run_gdb(port, ["break sys_uptime", "continue", "tern-sample", "delete", "detach"],
                      timeout=60)
    assert "Breakpoint 1, sys_uptime" in out, out[-3000:]
    sample = out[out.index("Breakpoint 1, sys_uptime"):]
    assert "trap from user mode" not in sample and "trap from supervisor mode" not in sample, \
        sample[-3000:]
    m = re.search(r"not stopped in a timer trap \(scause: [^)]*\).*sepc (0x[0-9a-f]+) is a "
                  r"(kernel|user) pc", sample)
    assert m, sample[-3000:]
    # sepc may be the system call's (user) or that of a timer trap taken in the kernel
    # since, which has returned: either way the address, not sstatus, tells which.
    assert (m[2] == "kernel") == (int(m[1], 16) >= 0x8000_0000), m[0]
