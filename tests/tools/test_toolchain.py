"""tools/tern/toolchain.py: the QEMU command line and the toolchain prefix come from the
Makefile, and only from it: a tree whose Makefile cannot say is an error, never a guess."""

from __future__ import annotations

import random
import shlex
from pathlib import Path

import pytest

from samples import ROOT
from tern import machine, toolchain


def makefile(tmp_path: Path, text: str) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "Makefile").write_text(text)
    return tree


def test_our_makefile_is_asked(tmp_path: Path) -> None:
    """The harness's command line is `make print-qemu`'s, word for word, for each hart
    count and setting (GRADE_PLATFORM's kind)."""
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    cases = [(rng.choice([1, 2, 3, 8]), rng.choice([(), ("MEM=64M",), ("MEM=512M",)]))
             for _ in range(4)]
    print(f"seed {seed}, {len(cases)} cases")
    for cpus, platform in cases:
        said = toolchain.make_says("print-qemu", f"CPUS={cpus}", *platform, root=ROOT)
        assert toolchain.qemu_command(cpus, ROOT, platform) == tuple(shlex.split(said))
        assert said.split()[0].startswith("qemu-system-riscv64")
        assert f"-smp {cpus}" in said
    assert toolchain.tool("nm") == toolchain.prefix() + "nm"
    assert toolchain.prefix().endswith("-")


@pytest.mark.parametrize("text", ["all:\n\ttrue\n", "print-qemu:\n\t@echo not a command\n",
                                  "print-qemu:\n\t@exit 3\n"],
                         ids=["no-target", "no-qemu", "fails"])
def test_no_command_line_is_an_error(tmp_path: Path, text: str) -> None:
    tree = makefile(tmp_path, text)
    with pytest.raises(machine.MachineError, match="no QEMU command line from the Makefile"):
        machine.makefile_qemu_command(1, tree)


def test_prefix_is_the_makefiles(tmp_path: Path) -> None:
    tree = makefile(tmp_path, "print-toolprefix:\n\t@echo riscv64-unknown-elf-\n")
    assert toolchain.tool("nm", tree) == "riscv64-unknown-elf-nm"
    (tmp_path / "x").mkdir()
    empty = makefile(tmp_path / "x", "all:\n\ttrue\n")
    with pytest.raises(toolchain.ToolchainError, match="print-toolprefix"):
        toolchain.prefix(empty)
