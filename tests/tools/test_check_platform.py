"""tools/check-platform against fake QEMUs of random versions (seeded: CHECK_PLATFORM_SEED).

Each fake prints a QEMU version for --version and, started as a machine, an OpenSBI banner
of another random version, then hangs as firmware with no kernel would. The tool must
name both versions, say which timer the kernel will use (Sstc from QEMU 7.1 on, unless
`sstc=off` is given), warn exactly when a version is older than the tested QEMU 7.2 or
OpenSBI 1.1, and exit 1 on a warning only with --strict.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

from samples import TOOLS

TOOL = TOOLS / "check-platform"
CASES = 24

FAKE = """#!/bin/sh
if [ "$1" = --version ]; then
  echo "QEMU emulator version {qemu} (fake)"
  exit 0
fi
printf 'OpenSBI v{sbi}\\nPlatform Name             : fake\\n'
printf 'Domain0 Next Mode         : S-mode\\n'
exec sleep 30
"""


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          timeout=60)


def test_versions_timers_and_warnings(tmp_path: Path) -> None:
    seed = int(os.environ.get("CHECK_PLATFORM_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    print(f"seed {seed}, {CASES} cases")
    for case in range(CASES):
        qemu = (rng.randint(5, 9), rng.randint(0, 2), rng.randint(0, 30))
        sbi = (rng.choice([0, 1]), rng.randint(0, 9))
        sstc_off = rng.random() < 0.5
        fake = tmp_path / f"qemu-{case}"
        fake.write_text(FAKE.format(qemu=".".join(map(str, qemu)), sbi="%d.%d" % sbi))
        fake.chmod(0o755)
        extra = ["--extra", "-cpu rv64,sstc=off"] if sstc_off else []
        what = f"seed {seed} case {case}: QEMU {qemu}, OpenSBI {sbi}, sstc_off={sstc_off}"

        run = run_tool("--qemu", str(fake), *extra)
        first = run.stdout.splitlines()[0] if run.stdout else ""
        assert run.returncode == 0, f"{what}: exit {run.returncode}\n{run.stderr}"
        assert first.startswith(f"check-platform: QEMU {'.'.join(map(str, qemu))}, "
                                f"OpenSBI v{sbi[0]}.{sbi[1]} "), f"{what}: {first!r}"
        timer = "sbi" if qemu[:2] < (7, 1) or sstc_off else "sstc"
        assert f"timer: {timer}" in first, f"{what}: expected timer {timer}: {first!r}"
        old_qemu = qemu[:2] < (7, 2)
        old_sbi = sbi < (1, 1)
        assert ("QEMU" in run.stderr and "older than" in run.stderr) == old_qemu, (
            f"{what}: QEMU warning wrong:\n{run.stderr}")
        assert ("OpenSBI v" in run.stderr) == old_sbi, f"{what}: OpenSBI warning wrong:\n{run.stderr}"

        strict = run_tool("--qemu", str(fake), "--strict", *extra)
        assert strict.returncode == (1 if old_qemu or old_sbi else 0), (
            f"{what}: --strict exited {strict.returncode}")


def test_missing_qemu_and_firmware(tmp_path: Path) -> None:
    run = run_tool("--qemu", str(tmp_path / "no-such-qemu"))
    assert run.returncode == 1 and "check-platform: error: cannot run" in run.stderr
    silent = tmp_path / "silent-qemu"
    silent.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "QEMU emulator version 7.2.0"\n'
                      'echo "could not load firmware" >&2\nexit 1\n')
    silent.chmod(0o755)
    run = run_tool("--qemu", str(silent), "--bios", "nowhere.bin")
    assert run.returncode == 1
    assert "printed no OpenSBI banner" in run.stderr and "could not load firmware" in run.stderr
