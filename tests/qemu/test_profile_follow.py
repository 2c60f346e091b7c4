"""Following children: a sampled process's forks are sampled too (profile(2)'s PROF_FOLLOW).

`profile PID on children` switches sampling on for a process and for every process it forks
afterwards, and theirs in turn; `profile run` does so by default (its graded tests are in
labs/profile/test_lab_profile.py). These tests hold the kernel to:

* a child forked after `profile PID on children` is sampled, with its own pid, in the
  function it runs (labs/profile/user/labforks.cc: child_work), and the profile names the
  program; switching the parent off afterwards leaves the children sampled until they exit,
  and the count of sampled processes (`profiled:`) back at 0 with the flags (`flagged:`);
* PROF_FOLLOW and PROF_FOLLOWED refuse every bad argument with -1 (a zombie, a killed
  process, pid 0, a process not sampled, an argument other than 0 or 1) and answer the good
  ones (user/tests/pfollow.cc);
* the `profile` command refuses a bad `on children` and a `run` without a command.

Forks racing with PROF_OFF, PROF_FOLLOW and exits are user/tests/profrace.cc's
(test_profile_race.py).
"""

from __future__ import annotations

import re
import time

from tern import jobs
from tern import profile_check as pc
from tern.machine import PANIC, TRAP, Machine, timeout_scale

RUN_TIMEOUT = 60
SETTLE_TIMEOUT = 30  # s: for a job of a second or two to exit and its counts to settle


def profstat(m: Machine) -> dict[str, str]:
    return pc.parse_profstat(m.run("profile status"))


def wait_for_profstat(m: Machine, done, what: str) -> dict[str, str]:
    """Poll /proc/profstat until done(stat) holds."""
    deadline = time.monotonic() + SETTLE_TIMEOUT * timeout_scale()
    while not done(stat := profstat(m)):
        assert time.monotonic() < deadline, f"{what}: /proc/profstat still says {stat}"
        time.sleep(0.2)
    return stat


# Not at a line's start: after the prompt, the line follows "$ " on the same line.
CHILDREN = re.compile(r"labforks: children((?: \d+)+)\r?\n")


def quiet(out: str) -> str:
    """What a command printed, without the lines of labforks running in the background."""
    return "\n".join(ln for ln in out.splitlines() if not ln.startswith("labforks:")).strip()


def nothing_left(stat: dict[str, str]) -> bool:
    return stat.get("profiling") == "none" and stat.get("profiled") == stat.get("flagged") == "0"


def test_on_children_follows_later_forks(shared: Machine) -> None:
    assert shared.run("profile clear") == ""
    assert shared.run("profile rate 100") == ""
    # labforks -w forks only once /proc/profstat lists it under `following:`. Its children
    # spin for up to a minute; the test kills them and their parent once it has checked them.
    parent = jobs.start_background(shared, "labforks -w 2 60")
    children: list[int] = []
    try:
        said = shared.run(f"pstatus profile {parent} on children")
        out = quiet(said)
        assert out == "pstatus: exit 0", (
            f"`profile {parent} on children` should print nothing and exit 0: {out!r}")
        # Followed, labforks forks and names its children in a line of its own, before this
        # prompt or after it. Typed before it came, the next command's echo would be split
        # by it (`$ pro` `labforks: children 8 9` `file status`), so wait for it first.
        # The pids it names are killed at the end, whatever happens in between.
        named = CHILDREN.search(said) or shared.expect(CHILDREN, timeout=RUN_TIMEOUT)
        children = [int(p) for p in named.group(1).split()]
        assert len(children) == 2 and all(p > parent for p in children), named.group(0)
        stat = profstat(shared)
        assert str(parent) in stat["following"].split(), (
            f"after `profile {parent} on children`, `following:` should list {parent}: {stat}")
        # Once it has forked, switch the parent off: its children stay sampled.
        stat = wait_for_profstat(shared, lambda s: len(s["profiling"].split()) >= 3,
                                 f"labforks {parent} should fork two followed children")
        followed = sorted(int(p) for p in stat["profiling"].split() if int(p) != parent)
        assert followed == sorted(children), (
            f"labforks {parent} forked {children}, but the processes sampled beside it are "
            f"{followed}: {stat}")
        # The three spin now: 30 more samples give the parent some in parent_work.
        recorded = int(stat["recorded"])
        wait_for_profstat(shared, lambda s: int(s["recorded"]) >= recorded + 30,
                          f"labforks {parent} and its children should be sampled")
        assert quiet(shared.run(f"profile {parent} off")) == ""
        stat = profstat(shared)
        assert str(parent) not in stat["profiling"].split(), stat
        assert str(parent) not in stat.get("following", "").split(), (
            f"PROF_OFF should stop following too: {stat}")
        assert all(str(p) in stat["profiling"].split() for p in children), (
            f"switching the parent off must leave its followed children {children} sampled: "
            f"{stat}")
        # The children alone are sampled now: 40 more samples are theirs.
        recorded = int(stat["recorded"])
        wait_for_profstat(shared, lambda s: int(s["recorded"]) >= recorded + 40,
                          f"the followed children {children} should be sampled")
    finally:
        # The parent first, so that init reaps the children.
        for pid in (parent, *children):
            shared.run(f"kill {pid}")
    wait_for_profstat(shared, nothing_left, "after labforks and its children are killed")

    top = pc.parse_top(shared.run("profile top 40"))
    for child in children:
        rows = [r for r in top.rows if r.pid == child]
        assert any(r.name == "child_work" for r in rows), (
            f"child {child} of labforks was followed, but `profile top` has no child_work row "
            f"of it: {top.rows}")
        assert all(r.comm == "labforks" for r in rows), (
            f"child {child}'s samples should name its program labforks: {rows}")
    assert any(r.pid == parent and r.name == "parent_work" for r in top.rows), top.rows


def test_follow_calls(shared: Machine) -> None:
    out = shared.run("pfollow", timeout=RUN_TIMEOUT, failures=(PANIC, TRAP))
    failures = re.findall(r"(?m)^pfollow: FAIL .*$", out)
    assert not failures and re.search(r"(?m)^pfollow: ok, \d+ checks$", out), (
        "PROF_FOLLOW or PROF_FOLLOWED answered wrongly:\n" + ("\n".join(failures) or out))
    wait_for_profstat(shared, nothing_left, "after pfollow")


BAD_COMMANDS = [
    # (arguments, what the message must contain); every one must exit with status 1
    ("999 on children", "no process 999"),
    ("{pid} on kids", "usage"),
    ("{pid} off children", "usage"),
    ("all on children", "usage"),
    ("{pid} on children extra", "unexpected 'extra' after 'children'"),
    ("run -n", "usage"),
    ("run -x spin", "unknown option '-x'"),
    ("run -n -n spin", "unknown option '-n'"),
]


def test_bad_follow_commands(shared: Machine) -> None:
    with jobs.running(shared, "spin") as pid:
        problems = []
        for args, needle in BAD_COMMANDS:
            cmd = f"pstatus profile {args.format(pid=pid)}"
            out = shared.run(cmd)
            if "pstatus: exit 1" not in out or needle not in out:
                problems.append(f"`{cmd[8:]}` should print {needle!r} and exit 1, "
                                f"printed {out!r}")
        out = shared.run(f"pstatus profile {pid} on children")
        if out.strip() != "pstatus: exit 0":
            problems.append(f"`profile {pid} on children` should succeed, printed {out!r}")
        out = shared.run(f"pstatus profile {pid} off")
        if out.strip() != "pstatus: exit 0":
            problems.append(f"`profile {pid} off` should succeed, printed {out!r}")
        assert not problems, "\n".join(problems)
    wait_for_profstat(shared, nothing_left, "after spin is gone")
