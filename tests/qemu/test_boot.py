"""Booting: the kernel comes up on one hart and on three, and the shell answers.

The order of the first lines is part of the contract: OpenSBI prints its banner, then the
kernel's first line starts with `tern:`, and the shell's prompt `$ ` comes last.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tern.machine import REPO, Machine, MachineError, qemu_command, timeout_scale


def check_boot_log(m: Machine, cpus: int) -> None:
    log = m.boot_output
    sbi = log.find("OpenSBI v")
    assert sbi >= 0, "OpenSBI's banner is missing"
    harts = re.search(r"Platform HART Count\s*:\s*(\d+)", log)
    assert harts is not None and int(harts.group(1)) == cpus, "QEMU ran with the wrong -smp"
    banner = re.compile(r"(?m)^tern:.*$").search(log, sbi)
    assert banner is not None, "no line starting with `tern:` after OpenSBI's banner"
    # QEMU 7.2's default CPU has Sstc: the kernel arms its timers through stimecmp.
    assert re.search(r"(?m)^tern: timer: sstc$", log), "no `tern: timer: sstc` line"
    assert "panic" not in log


@pytest.mark.points(5, lab="boot")
@pytest.mark.parametrize("cpus", [1, 3])
def test_boot_reaches_prompt(boot, cpus: int) -> None:
    m = boot(cpus)
    check_boot_log(m, m.cpus)  # GRADE_PLATFORM may have set the harts
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


# --- The timer on every hart, with and without Sstc -----------------------------------------
# Without the Sstc extension (QEMU before 7.1, or `-cpu rv64,sstc=off` on a newer one) the
# kernel must arm every hart's timer through the SBI, whichever hart OpenSBI's lottery picked
# to boot and in whatever order the others arrive. A hart that writes `stimecmp` there takes
# an illegal-instruction trap, so a wrong decision shows as a panic during the boot.

NO_SSTC = ("-cpu", "rv64,sstc=off")
TIMER_BOOTS = int(os.environ.get("TERN_TIMER_BOOTS", "12"))


def ncpu() -> int:
    text = (REPO / "kern" / "abi" / "param.h").read_text()
    match = re.search(r"(?m)^#define NCPU (\d+)", text)
    assert match is not None, "kern/abi/param.h defines no NCPU"
    return int(match.group(1))


def test_boot_without_sstc_on_many_harts(boot, record_property) -> None:
    """Boots without Sstc, at CPUS=3 every other time and at a random 2..NCPU otherwise
    (seeded: TERN_TIMER_SEED), each to a prompt and a `sleep` that ends on the timer's ticks."""
    seed = int(os.environ.get("TERN_TIMER_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    top = ncpu()
    plans = [3 if i % 2 == 0 else rng.randint(2, top) for i in range(TIMER_BOOTS)]
    print(f"seed {seed}, {len(plans)} boots without Sstc at CPUS={plans}")
    failed: list[str] = []
    boot_harts: dict[int, int] = {}
    for i, cpus in enumerate(plans):
        try:
            m = boot(cpus, extra_args=NO_SSTC, timeout=60)
            first = re.search(r"tern: booting on hart (\d+)", m.boot_output)
            assert first is not None, "no `tern: booting on hart N` line"
            assert re.search(r"(?m)^tern: timer: sbi$", m.boot_output), (
                "without Sstc the banner should say `tern: timer: sbi`")
            boot_harts[int(first.group(1))] = boot_harts.get(int(first.group(1)), 0) + 1
            # `sleep 3` returns when the boot hart's timer has ticked three times (100 ms
            # each), with every hart idle: a second of `spin` would prove no more, and
            # would keep a host core busy for it.
            assert m.run("sleep 3", timeout=30).strip() == ""
            m.assert_no_failures()
        except AssertionError as e:  # MachineError is one too
            failed.append(f"boot {i} (CPUS={cpus}): {str(e).splitlines()[0]}")
        finally:
            boot.close()
    print(f"boot harts seen (hart: boots): {dict(sorted(boot_harts.items()))}")
    record_property("tally", ("boots without Sstc reaching a prompt", not failed))
    assert not failed, (f"seed {seed}: {len(failed)} of {len(plans)} boots without Sstc "
                        f"failed:\n" + "\n".join(failed))


# --- The smallest memory the kernel runs in ---------------------------------------------------


def min_memory_mib() -> int:
    text = (REPO / "kern" / "arch" / "riscv" / "memlayout.h").read_text()
    match = re.search(r"MIN_MEMORY_MIB = (\d+);", text)
    assert match is not None, "kern/arch/riscv/memlayout.h states no MIN_MEMORY_MIB"
    return int(match.group(1))


@pytest.mark.parametrize("below", [1, 16])
def test_too_little_memory_is_refused(below: int, tmp_path: Path) -> None:
    """Below its stated minimum the kernel says so and powers off with a failure status,
    before it hands out a page; at the minimum it boots (tests/qemu/test_platforms.py)."""
    mib = min_memory_mib() - below
    image = tmp_path / "fs.img"
    shutil.copyfile(REPO / "fs.img", image)
    argv = qemu_command(1, image, platform=(f"MEM={mib}M",))
    try:
        run = subprocess.run(argv, cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, errors="replace", timeout=30 * timeout_scale())
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"QEMU with {mib} MiB still runs after 30 s:\n"
                             f"{(e.stdout or b'')[-2000:]!r}") from None
    expected = (f"tern: {mib} MiB of memory is too little: tern needs at least "
                f"{min_memory_mib()} MiB")
    assert expected in run.stdout, f"no `{expected}` line:\n{run.stdout[-2000:]}"
    assert "$ " not in run.stdout.split(expected)[1], "the shell started anyway"
    assert run.returncode == 1, f"QEMU exited with {run.returncode}, not the failure status 1"


UNTOUCHED_MIB = 512  # the largest memory the platform cells give a machine
RSS_LIMIT_MIB = 160  # QEMU itself, the kernel's image and the pages a boot uses: far less


def rss_mib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"(?m)^VmRSS:\s+(\d+) kB$", status)
    assert match is not None, f"no VmRSS in /proc/{pid}/status"
    return int(match.group(1)) // 1024


def test_boot_leaves_unused_memory_untouched() -> None:
    """The kernel writes a page of RAM only when it first hands the page out (kalloc.cc), so a
    machine given 512 MiB that uses a few makes its host supply only those. QEMU's resident
    size shows what the guest has written."""
    with Machine(1, name="test_boot.untouched", platform=(f"MEM={UNTOUCHED_MIB}M",)) as m:
        m.boot()
        assert m.run("echo alive").strip() == "alive"
        assert m.pid is not None
        used = rss_mib(m.pid)
        assert used < RSS_LIMIT_MIB, (
            f"QEMU holds {used} MiB of a {UNTOUCHED_MIB} MiB machine after booting: the "
            f"kernel has written to memory it has not handed out")
        m.assert_no_failures()
