"""The basic user programs: ls, cat, echo, wc, mkdir, ln, rm, grep, kill, sleep.

All tests share one machine: each works on its own file names, so they do not disturb each
other. Expected answers are computed on the host from the files in fs.img (see host.py).
"""

from __future__ import annotations

import pytest

from tern import host
from tern import jobs
from tern.machine import Machine

pytestmark = pytest.mark.points(1, lab="utils")


def lines(out: str) -> list[str]:
    return out.strip("\n").split("\n") if out.strip("\n") else []


def test_ls_lists_the_image(shared: Machine) -> None:
    out = shared.run("ls")
    names = host.listing_names(out)
    for expected in [".", "..", "README", "init", "sh", *host.user_programs()]:
        assert expected in names, f"`ls` does not list {expected}"
    readme = next(line.split() for line in lines(out) if line.split()[0] == "README")
    assert readme[1] == "2", "README is not a plain file (type 2)"
    assert readme[3] == str(len(host.image_file("README"))), "README's size is wrong"


def test_cat_readme(shared: Machine) -> None:
    text = host.readme_text()
    out = shared.run("cat README")
    assert out.startswith(text.split("\n")[0] + "\n")
    assert out == text


def test_echo_pipe_wc(shared: Machine) -> None:
    assert shared.run("echo hi | wc").split() == ["1", "1", "3"]


def test_ls_into_file(shared: Machine) -> None:
    assert shared.run("ls > lsout") == ""
    saved = host.listing_names(shared.run("cat lsout"))
    assert "lsout" in saved, "the shell should create lsout before ls runs"
    assert saved == host.listing_names(shared.run("ls"))


def test_mkdir_ln_rm(shared: Machine) -> None:
    text = host.readme_text()
    assert shared.run("mkdir d") == ""
    assert host.listing_names(shared.run("ls d")) == [".", ".."]
    assert shared.run("ln README d/r") == ""
    assert shared.run("cat d/r") == text
    assert host.listing_names(shared.run("ls d")) == [".", "..", "r"]
    assert shared.run("rm d").strip() == "rm: cannot remove d", "rm must refuse a non-empty dir"
    assert shared.run("cat d/r") == text, "a refused rm of a directory must keep its files"
    assert shared.run("rm d/r") == ""
    assert host.listing_names(shared.run("ls d")) == [".", ".."]
    assert shared.run("cat d/r").strip() == "cat: cannot open d/r", "the name must be gone"
    assert shared.run("cat README") == text, "removing a link must keep the file"
    assert shared.run("rm d") == "", "rm must remove an empty directory"
    assert "d" not in host.listing_names(shared.run("ls"))


def test_rm_file(shared: Machine) -> None:
    assert shared.run("echo gone > rmme") == ""
    assert "rmme" in host.listing_names(shared.run("ls"))
    assert shared.run("rm rmme") == ""
    assert "rmme" not in host.listing_names(shared.run("ls"))


@pytest.mark.parametrize("pattern", ["tern", "make"])
def test_grep(shared: Machine, pattern: str) -> None:
    expected = host.grep_lines(host.readme_text(), pattern)
    assert expected, f"the README should mention {pattern!r}"
    assert lines(shared.run(f"grep {pattern} README")) == expected


def test_wc_readme(shared: Machine) -> None:
    counts = host.wc(host.image_file("README"))
    assert shared.run("wc README").split() == [*str(counts).split(), "README"]


def test_kill_background_spin(shared: Machine) -> None:
    pid = jobs.start_background(shared, "spin")
    jobs.kill_and_wait_gone(shared, pid)
    assert shared.run("echo still here").strip() == "still here"
    shared.assert_no_failures()


def test_sleep(shared: Machine) -> None:
    assert shared.run("sleep 1; echo woke").strip() == "woke"
    for bad, says in [("sleep", ""), ("sleep x", "'x' is not a number"),
                      ("sleep 1 2", ""), ("sleep -3", "'-3' is not a number"),
                      ("sleep 12345678901", "is not a number")]:
        out = shared.run(bad)
        assert "usage: sleep TICKS" in out and says in out, f"`{bad}`:\n{out}"
