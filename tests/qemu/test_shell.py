"""The shell: pipes, redirection, background jobs, lists, parentheses, cd, errors.

Most tests share one machine. The background-job test boots its own, because it checks the
process id of the first command after boot.
"""

from __future__ import annotations

import re

import pytest

from tern import host
from tern import jobs
from tern.machine import Machine

pytestmark = pytest.mark.points(1, lab="shell")


def lines(out: str) -> list[str]:
    return out.strip("\n").split("\n") if out.strip("\n") else []


def test_three_stage_pipe(shared: Machine) -> None:
    selected = "".join(line + "\n" for line in host.grep_lines(host.readme_text(), "x"))
    expected = host.wc(selected)
    assert shared.run("cat README | grep x | wc").split() == str(expected).split()


def test_redirection(shared: Machine) -> None:
    assert shared.run("echo hello redirection > r1") == ""
    assert shared.run("cat < r1") == "hello redirection\n"
    assert shared.run("wc < r1").split() == ["1", "2", "18"]
    assert shared.run("cat < r1 > r2") == ""
    assert shared.run("cat r2") == "hello redirection\n"


def test_list(shared: Machine) -> None:
    assert lines(shared.run("echo one; echo two; echo three")) == ["one", "two", "three"]


def test_parentheses(shared: Machine) -> None:
    assert shared.run("(echo a; echo bb) | wc").split() == ["2", "2", "5"]
    assert shared.run("(echo x; echo y) > p1") == ""
    assert lines(shared.run("cat p1")) == ["x", "y"]


def test_cd(shared: Machine) -> None:
    assert shared.run("mkdir cdd") == ""
    assert shared.run("cd cdd") == ""
    assert shared.run("echo inside > f") == ""
    assert host.listing_names(shared.run("ls .")) == [".", "..", "f"]
    assert shared.run("cd ..") == ""
    assert shared.run("cat cdd/f") == "inside\n"
    assert shared.run("cd /cdd") == ""
    assert shared.run("cat f") == "inside\n"
    assert shared.run("cd /") == ""
    assert shared.run("cd nosuchdir").strip() != "", "cd into a missing directory should complain"
    assert shared.run("cat cdd/f") == "inside\n", "a failed cd must not move the shell"


def test_unknown_command(shared: Machine) -> None:
    assert shared.run("nosuchcommand").strip() != "", "an unknown command should print an error"
    assert shared.run("echo next").strip() == "next"


def test_background_job(machine: Machine) -> None:
    # init is pid 1 and the shell pid 2, so the first command after boot is pid 3.
    assert jobs.start_background(machine, "spin") == 3
    # The shell keeps answering while spin runs, and pid 3 is spin: once killed, it is gone.
    assert machine.run("echo meanwhile").strip() == "meanwhile"
    jobs.kill_and_wait_gone(machine, 3)
    assert machine.run("echo after").strip() == "after"
    machine.assert_no_failures()


def test_concurrent_writes_stay_whole(shared: Machine) -> None:
    """Three processes on three harts write long lines at once, one write() per line: the
    console must pass each write through whole, not interleave them byte by byte."""
    procs, lines = 3, 40
    out = shared.run(f"tlines {procs} {lines}", timeout=60)
    assert "tlines: done" in out, out[-2000:]
    shape = re.compile(r"tlines: child (\d) line (\d+) ([a-z])\3{149}")
    seen = set()
    broken = []
    for line in out.splitlines():
        if line.startswith("tlines: done"):
            continue
        m = shape.fullmatch(line)
        if m is None or ord(m.group(3)) - ord("a") != int(m.group(1)):
            broken.append(line)
        else:
            seen.add((int(m.group(1)), int(m.group(2))))
    assert not broken, (f"{len(broken)} lines were mixed with others, e.g. {broken[0][:120]!r}: "
                        f"console writes from different processes interleaved")
    assert len(seen) == procs * lines, f"only {len(seen)} of {procs * lines} lines arrived"
