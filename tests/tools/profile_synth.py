"""Synthetic profiles in the format of /proc/profile, for testing the converters.

A real profile (data/spin.json, data/mixed.json) shows what the kernel actually writes; a
synthetic one reaches the corners a short real run may not: several processes, recursion,
deep stacks, kernel frames above user frames, names with spaces, semicolons and non-ASCII
letters, an unknown symbol, and a sample with no frames at all. The processes are sampled
unevenly, the busiest not first; most carry a name ("comm"), one changes it halfway (a
fork, then an exec), and one has none. The generator is seeded, so a failing test sees the
same profile again.

Each hart samples on its own clock with an exact period, so a test can check that the
period is estimated correctly.
"""

from __future__ import annotations

import json
import random
from typing import Any

PERIOD_US = 1000
HARTS = 3
USER_BASE = 0x1000
KERNEL_BASE = 0x8020_0000
# How often each process is sampled, and its names: before and after its exec (None: no
# "comm" key at all).
PROCESS_WEIGHTS = {3: 1, 4: 2, 7: 5}
NAMES = {3: ("sh", "sh"), 4: (None, None), 7: ("sh", "primes")}

# Call paths, outermost first, with how often each is sampled.
USER_PATHS: list[tuple[list[str], int]] = [
    (["_start", "main", "outer", "middle", "hot"], 40),
    (["_start", "main", "outer", "middle"], 10),
    (["_start", "main", "outer"], 6),
    (["_start", "main"], 4),
    (["_start", "main", "fib", "fib", "fib", "fib"], 8),
    (["_start", "main", "operator<<(Stream&; int)"], 3),  # a semicolon in a name
    (["_start", "main", "(anonymous namespace)::run_list((anonymous namespace)::"], 3),
    (["_start", "main", "naïve_sum"], 2),  # not ASCII
    (["_start", "main", "??"], 1),  # an address in no known function
    (["_start", "main", "write"], 6),  # enters the kernel (below)
    (["_start", "main", "sleep"], 2),  # a user `sleep` beside the kernel's
]
KERNEL_PATHS: list[list[str]] = [
    ["usertrap", "syscall()", "sys_write", "filewrite(File*, UserAddr, int)", "pop_off()"],
    ["usertrap", "syscall()", "sys_sleep", "sleep"],
    ["usertrap", "syscall()", "sys_write"],
    ["usertrap"],
]


def address(name: str, kernel: bool, depth: int) -> int:
    """A stable made-up address per function (and a little per call site)."""
    base = KERNEL_BASE if kernel else USER_BASE
    return base + (sum(name.encode("utf-8")) * 64) % 0x40000 + 4 * depth


def frame(name: str, kernel: bool, depth: int) -> dict[str, Any]:
    return {"address": address(name, kernel, depth), "symbol": name, "kernel": kernel}


def make_samples(seed: int = 1, count: int = 600, pids: tuple[int, ...] = (3, 4, 7),
                 empty_samples: int = 1) -> list[dict[str, Any]]:
    """`count` samples (plus `empty_samples` with no frames), in the kernel's JSON shape."""
    rng = random.Random(seed)
    paths = [p for p, _ in USER_PATHS]
    weights = [w for _, w in USER_PATHS]
    clocks = [1_000_000 + 37 * h for h in range(HARTS)]
    samples = []
    for i in range(count + empty_samples):
        hart = i % HARTS
        clocks[hart] += PERIOD_US
        pid = rng.choices(pids, [PROCESS_WEIGHTS.get(p, 1) for p in pids])[0]
        user = rng.choices(paths, weights)[0]
        kernel: list[str] = []
        if user[-1] in ("write", "sleep") and rng.random() < 0.8:
            kernel = rng.choice(KERNEL_PATHS)
        frames = [frame(n, True, d) for d, n in reversed(list(enumerate(kernel)))]
        frames += [frame(n, False, d) for d, n in reversed(list(enumerate(user)))]
        if i >= count:
            frames = []  # a sample the walker could not read at all
        sample: dict[str, Any] = {"pid": pid, "tid": pid}
        comm = NAMES.get(pid, (None, None))[0 if i < count // 4 else 1]
        if comm is not None:
            sample["comm"] = comm
        sample.update({"timestamp": clocks[hart], "hart": hart,
                       "mode": "kernel" if kernel and frames else "user", "samples": frames})
        samples.append(sample)
    return samples


def render(samples: list[dict[str, Any]]) -> str:
    """The samples as /proc/profile writes them: one object a line, in an array."""
    if not samples:
        return "[\n]\n"
    return "[\n" + ",\n".join(json.dumps(s, separators=(",", ":"), ensure_ascii=False)
                              for s in samples) + "\n]\n"


def make_text(seed: int = 1, **kwargs: Any) -> str:
    return render(make_samples(seed, **kwargs))
