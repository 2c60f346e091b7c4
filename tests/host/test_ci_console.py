""".ci/console.py, the terminal driver of the newcomer check: each step passes only on what
it waits for, a failure pattern or a timeout stops the run at once, and a command that ends
badly fails it.

The driven command is a shell script that prints random filler in pieces of random sizes,
with random pauses, the awaited text cut across two writes; it echoes what is typed. The seed
is TERN_TEST_SEED if set, else random; it is printed with the number of cases.
"""

from __future__ import annotations

import os
import random
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = ROOT / ".ci" / "console.py"
CASES = 12


def drive(steps: list[str], script: str, fail: list[str] = (), timeout: float = 300):
    argv = [sys.executable, str(CONSOLE)]
    for pattern in fail:
        argv += ["--fail", pattern]
    argv += [*steps, "--", "sh", "-c", script]
    start = time.monotonic()
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    return result, time.monotonic() - start


def printing(rng: random.Random, text: str) -> str:
    """Shell commands that print filler, then `text` in two writes, with short pauses."""
    filler = "".join(rng.choice("abc xyz\n") for _ in range(rng.randrange(0, 3000)))
    cut = rng.randrange(1, len(text))
    parts = []
    for i in range(0, len(filler), 700):
        parts.append(f"printf %s {shlex.quote(filler[i:i + 700])}")
        parts.append(f"sleep 0.0{rng.randrange(10)}")
    parts += [f"printf %s {shlex.quote(text[:cut])}", "sleep 0.2",
              f"printf '%s\\n' {shlex.quote(text[cut:])}"]
    return "; ".join(parts)


def session(case: int, rng: random.Random) -> tuple[list[str], str, int, str]:
    """Case `case`'s steps, script, kind and awaited answer, drawn from `rng`."""
    word = f"ready{rng.randrange(10**6)}"
    answer = f"{rng.randrange(100)} {rng.randrange(100)} {rng.randrange(100)}"
    kind = case % 4
    script = printing(rng, f"{word}$ ") + "; read line; echo \"got $line\"; "
    if kind == 0:  # all well
        script += f"echo {shlex.quote(answer)}; read done; exit 0"
    elif kind == 1:  # the failure pattern comes instead of the answer
        script += "echo 'panic: bad things'; sleep 90"
    elif kind == 2:  # nothing comes: the step times out
        script += "sleep 90"
    else:  # the answer comes, but the command ends badly
        script += f"echo {shlex.quote(answer)}; read done; exit 3"
    # Only the case that tests the timeout waits briefly; the others wait long enough
    # for any load on the host.
    wait = 3 if kind == 2 else 60
    steps = [f"expect:prompt:60:{word}\\$ ", "send:hello there",
             f"expect:answer:{wait}:(?m)^{answer}\\b", "send:bye", "exit:end:60"]
    return steps, script, kind, answer


def test_random_sessions() -> None:
    seed = int(os.environ.get("TERN_TEST_SEED") or random.randrange(1 << 32))
    print(f"seed {seed} (TERN_TEST_SEED={seed} repeats it), {CASES} cases")
    rng = random.Random(seed)
    cases = [session(case, rng) for case in range(CASES)]
    # The sessions are independent processes, each with a terminal of its own: they run at
    # once, so that the waits (a timeout of 3 s, pauses) are taken together, not in turn.
    with ThreadPoolExecutor(CASES) as pool:
        results = list(pool.map(lambda c: drive(c[0], c[1], fail=["panic:"]), cases))
    for case, ((_, _, kind, answer), (result, took)) in enumerate(zip(cases, results)):
        where = f"case {case}"
        out = result.stdout
        assert "prompt: " in out, (where, out)
        if kind == 0:
            assert result.returncode == 0, (where, out)
            assert [line.split(":")[0].strip() for line in out.splitlines()] == \
                ["prompt", "answer", "end"], (where, out)
        else:
            assert result.returncode == 1, (where, out)
            assert "answer: " not in out or kind == 3, (where, out)
            reason = {1: "failure pattern 'panic:'", 2: "timed out after 3 s",
                      3: "ended with status 3"}[kind]
            assert reason in out, (where, out)
            if kind != 3:  # stopped at once, not after the command's sleep (or the 60 s wait)
                assert took < 30, (where, took)


def test_bad_usage() -> None:
    result = subprocess.run([sys.executable, str(CONSOLE), "expect:x:1:y"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    result = subprocess.run([sys.executable, str(CONSOLE), "wait:x", "--", "true"],
                            capture_output=True, text=True)
    assert result.returncode == 2


def test_newcomer_waits_for_each_pytest_run_of_make_test() -> None:
    """.ci/newcomer's `make test` block expects one "N passed in T s" line for each pytest
    run that `make test` makes: one step too many waits for a line that never comes, and CI
    fails a tree whose tests all passed."""
    newcomer = (ROOT / ".ci" / "newcomer").read_text()
    block = newcomer.split("# --- 4. make test", 1)[1].split("\nstep ", 1)[0]
    steps = [line for line in block.splitlines()
             if line.strip().startswith("'expect:") and "passed(" in line]
    dry = subprocess.run(["make", "--no-print-directory", "-n", "test"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert dry.returncode == 0, dry.stderr
    runs = [line for line in dry.stdout.splitlines() if " -m pytest " in line]
    assert runs, dry.stdout
    assert len(steps) == len(runs), (steps, runs)


def test_newcomer_sees_the_googletest_verdict_on_a_terminal() -> None:
    """The step that waits for the GoogleTest tests matches what `make test` prints for them,
    driven as .ci/newcomer drives it: by console.py, on a terminal, with no GTEST_ variable
    set. (GoogleTest colours its verdict on a terminal unless told not to, and a coloured
    line would leave the step waiting until its timeout.)"""
    newcomer = (ROOT / ".ci" / "newcomer").read_text()
    block = newcomer.split("# --- 4. make test", 1)[1].split("\nstep ", 1)[0]
    found = re.search(r"'expect:host unit tests passed:\d+:(.+)' \\", block)
    assert found, block
    outer = [name for name in os.environ
             if name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL") or name.startswith("GTEST_")]
    unset = "".join(f"-u {name} " for name in outer)
    script = f"cd {shlex.quote(str(ROOT))} && env {unset}TERM=xterm make -s -C tests/host unit"
    result, _ = drive([f"expect:verdict:120:{found.group(1)}", "exit:end:120"], script)
    assert result.returncode == 0, result.stdout + result.stderr
