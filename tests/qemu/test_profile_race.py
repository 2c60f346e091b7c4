"""The profiler's count of profiled processes against exits, forks and execs
(user/tests/profrace.cc).

The sampler stays on while `prof::nprofiled` is above zero, so the count must always equal
the number of processes whose `Proc::profiled` flag is set. /proc/profstat shows both
(`profiled:` and `flagged:`). profrace switches sampling and following (PROF_FOLLOW) on and
off, back to back, for children that exit at once, spin, fork a grandchild, exec, profile
themselves, or follow themselves through a small fork storm, and checks that both numbers
agree and return to where they were once all of them are gone. A fork of a followed process
sets the child's flag and the count together, while other calls switch the parent off.

A call that lands while a child is exiting is the dangerous case: a flag set after exit()
stopped sampling would survive into the freed slot. It was hit in about one round in thirty
at CPUS=3, so each run here does hundreds of rounds, with a fresh seed (printed, so a failure
can be replayed with `profrace SEED ROUNDS WORKERS`). At CPUS=1 the interleavings are fewer
(a call can only meet an exit through preemption) but the property is the same.
"""

from __future__ import annotations

import random
import re

import pytest

from tern.machine import PANIC, TRAP, Machine

RESULT = re.compile(r"(?m)^profrace: (ok, (\d+) rounds.*|FAIL.*)$")
ROUNDS = 400
WORKERS = 2
RUN_TIMEOUT = 240


def run_profrace(m: Machine, seed: int, rounds: int, workers: int) -> str:
    out = m.run(f"profrace {seed} {rounds} {workers}", timeout=RUN_TIMEOUT,
                failures=(PANIC, TRAP))
    assert f"profrace: seed {seed} rounds {rounds} workers {workers}" in out, (
        f"profrace did not start as asked:\n{out}")
    result = RESULT.search(out)
    assert result is not None, f"profrace {seed} {rounds} {workers} gave no verdict:\n{out}"
    assert result.group(1).startswith("ok"), (
        f"profrace {seed} {rounds} {workers} (replay with that command): {result.group(0)}")
    assert int(result.group(2)) == rounds * workers
    return out


@pytest.mark.parametrize("cpus", [3, 1])
def test_profiled_count_survives_exits(boot, cpus: int) -> None:
    m = boot(cpus)
    seed = random.randrange(1, 1_000_000)
    print(f"profrace seed {seed}, {ROUNDS} rounds x {WORKERS} workers at CPUS={cpus}")
    run_profrace(m, seed, ROUNDS, WORKERS)
    stat = dict(line.split(": ", 1) for line in m.run("cat /proc/profstat").splitlines()
                if ": " in line)
    assert stat["profiling"] == "none" and stat["profiled"] == stat["flagged"] == "0", (
        f"nothing is left to profile after profrace (seed {seed}), but /proc/profstat says "
        f"{stat}")
    m.assert_no_failures()
