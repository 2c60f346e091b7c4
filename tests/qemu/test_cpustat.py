"""/proc/cpustat: for each hart, the instructions it spent with nothing to run.

Under -icount shift=0 with sleep=off the instruction counter is virtual time in nanoseconds,
idle time included, so the counts can be checked against what the harts did: while the only
process sleeps for about a second, the one hart's idle count grows by that second, and
while spin keeps the hart busy for a second, it hardly grows at all. Each pair of reads is one
command line (`cat; work; cat`), so no wait for the next line typed at the console falls
between them, and each program has run once before, so no exec waits for the disk. The benchmark of file writes (tools/tern/bench/icount.py) subtracts this count
to measure the writer's work without the disk's waits.
"""

from __future__ import annotations

import re
from typing import Iterator

import pytest

from tern.bench import icount
from tern.machine import Machine

LINE = re.compile(r"(?m)^hart (\d+) idle (\d+)$")
SECOND = 10**9  # instructions (virtual nanoseconds) a second under -icount shift=0


@pytest.fixture(scope="module")
def counted() -> Iterator[Machine]:
    with Machine(1, name="test_cpustat.icount", extra_args=icount.ICOUNT_ARGS) as m:
        m.boot()
        # Each program once, so that the measured runs find their blocks in the buffer cache
        # (64 blocks; these need about 50): an exec that read its program from the disk
        # would add the disk's wait, as many timer jumps as the host takes, to the idle count.
        m.run("cat /proc/cpustat; sleep 1; spin 1", timeout=60)
        yield m


def idle_around(m: Machine, command: str) -> int:
    """How much the one hart's idle count grew over `command`."""
    out = m.run(f"cat /proc/cpustat; {command}; cat /proc/cpustat", timeout=60)
    counts = [(int(h), int(n)) for h, n in LINE.findall(out)]
    assert [h for h, _ in counts] == [0, 0], out
    assert counts[1][1] >= counts[0][1], out
    return counts[1][1] - counts[0][1]


def test_one_line_a_hart() -> None:
    with Machine(2, name="test_cpustat.two") as m:
        m.boot()
        out = m.run("cat /proc/cpustat")
    assert [int(h) for h, _ in LINE.findall(out)] == [0, 1], out
    assert LINE.sub("", out).strip() == "", f"only 'hart H idle N' lines:\n{out}"


def test_sleeping_is_idle(counted: Machine) -> None:
    # sleep counts 100 ms ticks, and the first may come at once: 10 of them are 0.9 to 1
    # second, all of it idle on the only hart (the fork and exec of `sleep` and the second
    # `cat` are a few million instructions at most).
    idle = idle_around(counted, "sleep 10")
    assert 0.85 * SECOND <= idle <= 1.0 * SECOND, f"idle {idle:,} over `sleep 10`"


def test_spinning_is_not_idle(counted: Machine) -> None:
    idle = idle_around(counted, "spin 1")
    assert idle < 0.05 * SECOND, f"idle {idle:,} while spin kept the only hart busy"


def busy_fwrite() -> int:
    """The instructions `bsys fwrite 65536` took on a fresh one-hart machine under -icount,
    less those its hart spent idle: the writer's own work, with the disk's waits left out."""
    with Machine(1, name="test_cpustat.fwrite", extra_args=icount.ICOUNT_ARGS) as m:
        m.boot()
        fw = icount.parse(m.run("bsys fwrite 65536", timeout=300), "fwrite")[0]
        m.assert_no_failures()
    return fw["insns"] - fw["idle"]


def test_disk_waits_leave_the_busy_count_exact() -> None:
    """Sixteen 4 KiB writes, each committing log transactions through the virtio disk, on
    three fresh machines: the busy count is the same on each. QEMU finishes a disk request on
    a host thread, so its interrupt comes whenever the host is done; the busy count repeats
    only if the kernel handles it at the same point wherever it came (kern/proc/proc.cc,
    scheduler) and nothing in the busy part depends on where in the timer's grid a wait
    ended. This is what makes the bench's virtio file-write figure exact."""
    counts = [busy_fwrite() for _ in range(3)]
    assert len(set(counts)) == 1, counts
