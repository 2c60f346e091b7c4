"""Fixtures shared by the host tests: a mkfs binary and a helper that runs it.

The Makefile builds mkfs under build/host/ and names it in the MKFS environment variable.
Run on their own (``pytest tests/host``), the tests compile a private copy instead, so they
never test a stale binary left over from some earlier build.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from mkfs_run import Run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def mkfs_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("MKFS")
    if given:
        return Path(given).resolve()
    out = tmp_path_factory.mktemp("mkfs") / "mkfs"
    subprocess.run(["g++", "-std=c++20", "-O2", "-Wall", "-Wextra", "-Werror",
                    f"-I{ROOT / 'kern'}", f"-I{ROOT / 'mkfs'}", "-o", str(out),
                    str(ROOT / "mkfs" / "mkfs.cc"), str(ROOT / "mkfs" / "image.cc")],
                   check=True)
    return out


@pytest.fixture
def run_mkfs(mkfs_bin: Path, tmp_path: Path) -> Callable[..., Run]:
    """Run mkfs with the given arguments in tmp_path, without checking the outcome."""
    def run(*args: str | Path) -> Run:
        p = subprocess.run([str(mkfs_bin), *map(str, args)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
        return Run(p.returncode, p.stdout, p.stderr)
    return run


@pytest.fixture
def make_image(run_mkfs: Callable[..., Run], tmp_path: Path) -> Callable[..., Path]:
    """Write `files` (host name -> contents) into a fresh directory, run mkfs on them in that
    order, and return the image's path. mkfs must succeed."""
    counter = iter(range(1_000_000))

    def make(files: dict[str, bytes], *options: str) -> Path:
        n = next(counter)
        src = tmp_path / f"in{n}"
        src.mkdir()
        paths = []
        for name, data in files.items():
            (src / name).write_bytes(data)
            paths.append(src / name)
        image = tmp_path / f"fs{n}.img"
        result = run_mkfs(*options, image, *paths)
        assert result.returncode == 0, result.stderr
        return image
    return make
