"""`make qemu` on a machine that lacks the cross compiler.

The Makefile must look for the compiler after tools/deps has installed it, so the first
compile runs riscv64-linux-gnu-g++, never the host's g++ with RISC-V flags (which fails with
`unrecognized argument in option '-mabi=lp64'`). The machine is made of stubs: an apt-get
that "installs" a cross compiler which records its arguments, and a host g++ that does the
same; both fail, so the build stops at its first compile.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPENSBI = "/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin"


def stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


def test_make_qemu_finds_the_compiler_it_installed(tmp_path: Path) -> None:
    """A machine with everything but the cross compiler: `make qemu` installs it (a stub
    apt-get puts stub compilers on PATH), and the first compile must use it."""
    if shutil.which("make") is None:
        pytest.skip("no make")
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(
        "build", ".git", "fs.img", "mkfs", "__pycache__", ".pytest_cache"))
    shutil.copytree(ROOT / "mkfs", tree / "mkfs",
                    ignore=shutil.ignore_patterns("mkfs", "*.d", "*.o"))
    calls = tmp_path / "compilers.log"
    # The host's programs, less the RISC-V tools, g++ and what the stubs stand for.
    host = tmp_path / "host"
    host.mkdir()
    stubbed = {"id", "sudo", "apt-get"}
    for folder in ("/usr/local/bin", "/usr/bin", "/bin"):
        if not Path(folder).is_dir():
            continue
        for entry in Path(folder).iterdir():
            name = entry.name
            if name.startswith("riscv64-") or name.startswith("g++") or name in stubbed \
                    or os.path.lexists(host / name):
                continue
            (host / name).symlink_to(entry)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    apt_log = tmp_path / "apt.log"
    stub(stubs, "id", "echo 0")
    # g++ (the host's) and the cross compiler the fake install brings both record their
    # arguments and fail, so the build stops at its first compile.
    stub(stubs, "g++", f'echo "g++ $*" >> {calls}\nexit 1')
    stub(stubs, "apt-get",
         f'echo "$@" >> {apt_log}\n[ "$1" = install ] || exit 0\n'
         f'printf "#!/bin/sh\\necho \\"riscv64-linux-gnu-g++ \\$*\\" >> {calls}\\nexit 1\\n"'
         f' > {stubs}/riscv64-linux-gnu-g++\n'
         f'chmod 755 {stubs}/riscv64-linux-gnu-g++')
    # Everything else of the boot group is there.
    stub(stubs, "qemu-system-riscv64", "exit 0")
    for needed in (OPENSBI, "/usr/bin/python3"):
        if not Path(needed).exists():
            pytest.skip(f"this machine lacks {needed}, which the stubs do not stand for")
    result = subprocess.run(["make", "qemu"], cwd=tree, capture_output=True, text=True,
                            env={"PATH": f"{stubs}:{host}", "HOME": str(tmp_path)},
                            timeout=300)
    calls_to_apt = apt_log.read_text().splitlines() if apt_log.exists() else []
    installs = [c for c in calls_to_apt if c.startswith("install")]
    assert len(installs) == 1 and "g++-riscv64-linux-gnu" in installs[0].split(), \
        result.stdout + result.stderr
    assert result.returncode != 0  # the stub compiler fails the build on purpose
    compiled = calls.read_text().splitlines()
    assert compiled, result.stdout + result.stderr
    first_riscv = next(line for line in compiled if "-march=" in line)
    assert first_riscv.startswith("riscv64-linux-gnu-g++ "), compiled[:3]
    assert not any(re.match(r"g\+\+ .*-mabi=", line) for line in compiled), compiled[:3]
