"""tools/profget: the profile copied out of a running tern through the export disk.

The end-to-end test boots tern (about half a minute), so it runs only when the kernel,
fs.img and `expcopy` are built (`make all`); otherwise it is skipped, saying so. The rest
checks profget's pieces without QEMU.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT
from prof import export

PROFGET = ROOT / "tools" / "profget"


def load_profget() -> ModuleType:
    pytest.importorskip("pexpect", reason="profget drives QEMU with pexpect")
    loader = importlib.machinery.SourceFileLoader("profget", str(PROFGET))
    spec = importlib.util.spec_from_loader("profget", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_drive_options(tmp_path: Path) -> None:
    profget = load_profget()
    image = tmp_path / "export.img"
    args = profget.export_drive_args(image)
    assert args == ["-drive", f"file={image},if=none,format=raw,id=x1",
                    "-device", "virtio-blk-device,drive=x1,bus=virtio-mmio-bus.1"]


def test_blank_image_reads_as_blank(tmp_path: Path) -> None:
    """A fresh image must never pass for an export, so a failed expcopy is noticed."""
    profget = load_profget()
    image = tmp_path / "export.img"
    image.write_bytes(export.pack(b"[]", "/proc/profile"))  # a stale export from a past run
    profget.blank_image(image, 1 << 20)
    assert image.stat().st_size == 1 << 20
    with pytest.raises(export.ExportError, match="blank"):
        export.read(image)


def test_needs_a_command() -> None:
    result = subprocess.run([sys.executable, str(PROFGET), "--no-build"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2 and "COMMAND" in result.stderr


def built() -> bool:
    expcopy = ROOT / "build" / "user" / "_expcopy"
    kernel, image = ROOT / "build" / "kernel.elf", ROOT / "fs.img"
    return (expcopy.exists() and kernel.exists() and image.exists()
            and image.stat().st_mtime >= expcopy.stat().st_mtime)


def test_profile_comes_out(tmp_path: Path) -> None:
    if not built():
        pytest.skip("needs build/kernel.elf and an fs.img holding expcopy: run `make all`")
    load_profget()  # skips without pexpect
    out = tmp_path / "spin.json"
    result = subprocess.run(
        [sys.executable, str(PROFGET), "--no-build", "--size", "8", "-o", str(out),
         "profile rate 500", "profile run spin 1"],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "profile: pid" in result.stderr, "the commands' output is shown"
    samples = json.loads(out.read_text())
    assert len(samples) > 50
    stacks = [[f["symbol"] for f in s["samples"]] for s in samples]
    assert sum(1 for st in stacks if st[:2] == ["hot", "middle"]) > len(samples) / 3
