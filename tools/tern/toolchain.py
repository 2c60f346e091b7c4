"""What the Makefile decides, asked of the Makefile: the cross toolchain's prefix and the
QEMU command line. The Makefile chooses them in one place (its "Toolchain" and "Running"
sections); Python code never repeats that choice, so `make qemu` and every test boot the
same machine, and a tree built with riscv64-unknown-elf- is read with that prefix's nm.

Either answer is an error when the Makefile cannot give it: no copy to fall back on.
"""

from __future__ import annotations

import functools
import shlex
import subprocess
from pathlib import Path

from tern import REPO


class ToolchainError(Exception):
    """The Makefile could not say; the message has its command and output."""


def make_says(target: str, *settings: str, root: Path = REPO) -> str:
    """The last line `make -s TARGET SETTINGS...` prints in `root`."""
    argv = ["make", "-s", "--no-print-directory", target, *settings]
    try:
        result = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ToolchainError(f"`{shlex.join(argv)}` in {root} failed: {error}") from None
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        said = (result.stdout + result.stderr).strip()[-2000:]
        raise ToolchainError(f"`{shlex.join(argv)}` in {root} gave nothing (exit status "
                             f"{result.returncode}):\n{said}")
    return lines[-1]


@functools.cache
def prefix(root: Path = REPO) -> str:
    """The cross toolchain's prefix the Makefile chose, such as "riscv64-linux-gnu-"."""
    return make_says("print-toolprefix", root=root)


def tool(name: str, root: Path = REPO) -> str:
    """A cross tool's command, such as tool("nm") -> "riscv64-linux-gnu-nm"."""
    return prefix(root) + name


@functools.cache
def qemu_command(cpus: int, root: Path = REPO,
                 platform: tuple[str, ...] = ()) -> tuple[str, ...]:
    """`make print-qemu`'s QEMU command line for `cpus` harts, with `platform`'s Makefile
    variable settings (such as "MEM=64M")."""
    line = make_says("print-qemu", f"CPUS={cpus}", *platform, root=root)
    if "qemu-system" not in line:
        raise ToolchainError(f"`make print-qemu` in {root} printed no QEMU command: {line!r}")
    return tuple(shlex.split(line))
