"""The kernel's own correctness suite (usertests) and the system-call fuzzer (grind).

`usertests` runs each of its tests in a child process and prints one `test NAME: OK` or
`test NAME: FAILED (reason)` line per test, then `free pages: before N after M` and a verdict,
`ALL TESTS PASSED` or `FAILED: name1 name2 ...`. The whole run must pass and leave the
kernel's count of free pages where it found it.

`grind SECONDS` lets random system calls with random arguments loose on the kernel for that
long, then stops and cleans up and prints `grind: done, N calls`. The kernel must not panic
or hang, no call may claim to have written through a pointer it must not use (grind prints
`grind: error: ...` for that), and the shell must still work afterwards.

These runs take minutes, so they are marked `slow`: `pytest -m 'not slow'` skips them.
A failing usertests run is reported with the names of the failed tests and their reasons;
the full console is in build/grade-logs/.
"""

from __future__ import annotations

import re

import pytest

from tern.machine import PANIC, TRAP, Machine

pytestmark = [pytest.mark.slow, pytest.mark.points(10, lab="usertests")]

# The suite's own FAILED lines are collected at the end, so only a panic or an unexpected
# trap stops a wait early.
FAILURES = (PANIC, TRAP)

VERDICT = re.compile(r"(?m)^(ALL TESTS PASSED|FAILED:.*)$")
TEST_LINE = re.compile(r"(?m)^test (\S+): (OK|FAILED.*)$")
PAGES = re.compile(r"(?m)^free pages: before (\d+) after (\d+)$")


def run_usertests(m: Machine, args: str, timeout: float, min_tests: int = 10) -> str:
    out = m.run(f"usertests {args}".strip(), timeout=timeout, failures=FAILURES)
    results = TEST_LINE.findall(out)
    failed = [f"{name}: {status}" for name, status in results if status != "OK"]
    verdict = VERDICT.search(out)
    assert verdict is not None, f"usertests printed no verdict; last lines:\n{m.tail()}"
    assert not failed and verdict.group(1) == "ALL TESTS PASSED", (
        f"usertests {args}: {verdict.group(1)}\n" + "\n".join(failed))
    pages = PAGES.search(out)
    assert pages is not None, "usertests did not print its free-page count"
    assert pages.group(1) == pages.group(2), f"pages were lost: {pages.group(0)}"
    assert len(results) >= min_tests, f"only {len(results)} tests ran"
    return out


def check_still_works(m: Machine) -> None:
    assert m.run("echo still alive").strip() == "still alive"
    m.assert_no_failures(FAILURES)


def test_usertests_full(boot) -> None:
    m = boot(3)
    run_usertests(m, "", timeout=1500)
    check_still_works(m)


def test_usertests_quick(boot) -> None:
    m = boot(1)
    run_usertests(m, "-q", timeout=300)
    check_still_works(m)


def test_grind(boot) -> None:
    m = boot(3)
    # Ten generations of workers (grind starts fresh ones every 3 s): about 20,000 calls on a
    # two-core host running nothing else. 60 s gave twice as many for twice the CPU.
    seconds = 30
    # grind's own clock (uptime) runs behind the host's on a loaded machine, and cleaning up
    # takes a few seconds more.
    out = m.run(f"grind {seconds}", timeout=seconds * 3 + 120, failures=FAILURES)
    errors = [line for line in out.splitlines() if line.startswith("grind: error")]
    assert not errors, "grind found calls that wrote where they must not:\n" + "\n".join(errors)
    done = re.search(r"(?m)^grind: done, (\d+) calls$", out)
    assert done is not None, f"grind did not finish cleanly; last lines:\n{m.tail()}"
    assert int(done.group(1)) > 0, "grind made no calls"
    pages = re.search(r"(?m)^grind: free pages before (\d+) after (\d+)$", out)
    assert pages is not None and pages.group(1) == pages.group(2), (
        f"pages were lost: {pages.group(0) if pages else 'no count printed'}")
    listing = [line.split()[0] for line in m.run("ls /").splitlines() if line.strip()]
    assert "grindtmp" not in listing, "grind left its scratch directory behind"
    check_still_works(m)



def test_usertests_profiled(boot) -> None:
    """usertests -q with every process sampled at 4000 Hz on three harts.

    The sampler then walks the stacks of processes that fork, exec, grow and shrink their
    memory, fault and are killed, at every point of those calls; its per-process translation
    cache and the images kept for exited programs are exercised throughout. Nothing may
    break, the suite's page count must balance, and the profile must still render.
    """
    m = boot(3)
    assert m.run("profile rate 4000") == ""
    assert m.run("profile all on") == ""
    run_usertests(m, "-q", timeout=600)
    assert m.run("profile all off") == ""
    stat = dict(line.split(": ", 1) for line in m.run("cat /proc/profstat").splitlines()
                if ": " in line)
    assert int(stat["recorded"]) > 1000, f"too few samples: {stat}"
    # Rendering every sample symbolizes them against programs that have long exited. The
    # document has a line per sample between `[` and `]`, so its newlines number the
    # recorded samples plus two: every sample rendered, none lost or split.
    count = m.run("wc /proc/profile", timeout=300, failures=FAILURES).split()
    assert len(count) == 4 and count[0].isdigit(), f"wc /proc/profile printed {count}"
    assert int(count[0]) == int(stat["recorded"]) + 2, (
        f"/proc/profile has {count[0]} lines for {stat['recorded']} recorded samples; it "
        f"should have one per sample plus the lines of `[` and `]`")
    check_still_works(m)
