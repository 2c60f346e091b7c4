"""What the `profile` command prints at the console, checked against /proc/profile.

* `profile tree`: the call graph of the samples, callers above callees, with inclusive
  counts and percentages. The tree is rebuilt on the host from the samples `cat
  /proc/profile` gives, and every printed node must have exactly the count the samples give
  its call path; each node's count is its self count plus its children's plus the line that
  sums the children left out under the threshold; the root is 100%. Thresholds are drawn
  from a seeded generator (the seed is printed: PROFILE_CONSOLE_SEED replays it).
* On spin (main -> outer -> middle -> hot) the tree holds that chain, hot with most samples.

One machine at CPUS=3 serves the whole file; each test starts from `profile clear`.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

import pytest

from tern import profile_check as pc
from tern.machine import LOG_DIR, Machine

RUN_TIMEOUT = 60
CAT_TIMEOUT = 180
RUN_REPORT = re.compile(r"profile: pid (\d+) \((\S+)\) exited with status (-?\d+)")
NAME_CUT = 95  # user/bin/profile/json.h: the console keeps NAME_MAX - 1 bytes of a name

# A line of `profile tree`: percent, count, self count ("-" on the line of left-out
# callees), then one space and two more per level of depth before the name.
TREE_LINE = re.compile(r"^\s*(\d+\.\d)% +(\d+) +(\d+|-) ((?:  )*)(\S.*)$")
LEFT_OUT = re.compile(r"^\((\d+) more under (\d+\.\d)%\)$")


@pytest.fixture(scope="module")
def m() -> Iterator[Machine]:
    machine = Machine(3, name="test_profile_console",
                      log_path=LOG_DIR / "test_profile_console.log")
    try:
        machine.boot()
    except BaseException:
        machine.save_log()
        machine.close()
        raise
    yield machine
    machine.assert_no_failures()
    machine.close()


def seed_of(name: str) -> int:
    seed = int(os.environ.get(name) or random.randrange(1, 1_000_000))
    print(f"{name}={seed}")
    return seed


def profile_run(m: Machine, cmd: str, rate: int = 100) -> tuple[int, str]:
    assert m.run("profile clear") == ""
    assert m.run(f"profile rate {rate}") == ""
    out = m.run(f"profile run {cmd}", timeout=RUN_TIMEOUT)
    match = RUN_REPORT.search(out)
    assert match and match.group(3) == "0", f"`profile run {cmd}` failed:\n{out}"
    return int(match.group(1)), out


# --- The tree as the host sees it -----------------------------------------------------------


def console_name(frame: pc.Frame) -> str:
    name = frame["symbol"]
    if len(name.encode()) > NAME_CUT:
        name = name.encode()[:NAME_CUT - 3].decode(errors="replace") + "..."
    return ("[k] " if frame["kernel"] else "") + name


def path_counts(samples: list[pc.Sample], root: str) -> Counter[tuple[str, ...]]:
    """How many samples have each call path, outermost caller first, below `root`."""
    counts: Counter[tuple[str, ...]] = Counter()
    for s in samples:
        path = (root, *reversed([console_name(f) for f in s["samples"]]))
        for depth in range(1, len(path) + 1):
            counts[path[:depth]] += 1
    return counts


@dataclass
class Node:
    pct: float
    count: int
    self_count: int | None  # None on a line of left-out callees
    name: str
    children: list["Node"] = field(default_factory=list)
    left_out: int = 0  # callees left out under the threshold, as the line says
    left_out_count: int = 0


def parse_tree(text: str) -> Node:
    root: Node | None = None
    stack: list[Node] = []
    for line in text.splitlines():
        m = TREE_LINE.match(line)
        if not m:
            continue
        depth = len(m.group(4)) // 2
        node = Node(float(m.group(1)), int(m.group(2)),
                    None if m.group(3) == "-" else int(m.group(3)), m.group(5))
        if root is None:
            assert depth == 0 and node.self_count is not None, f"the first line is the root:\n{text}"
            root = node
            stack = [root]
            continue
        assert 1 <= depth <= len(stack), f"line {line!r} is deeper than its parent's child:\n{text}"
        parent = stack[depth - 1]
        del stack[depth:]
        if node.self_count is None:
            left = LEFT_OUT.match(node.name)
            assert left, f"a line without a self count must say what it left out: {line!r}"
            parent.left_out, parent.left_out_count = int(left.group(1)), node.count
        else:
            parent.children.append(node)
            stack.append(node)
    assert root is not None, f"`profile tree` printed no tree:\n{text}"
    return root


def tree_problems(root: Node, counts: Counter[tuple[str, ...]], total: int,
                  threshold: float) -> list[str]:
    """Each printed node against the host's count of its path, and the sums."""
    problems = []
    todo = [((root.name,), root)]
    while todo:
        path, node = todo.pop()
        where = " -> ".join(path)
        if node.count != counts[path]:
            problems.append(f"{where}: {node.count} samples, /proc/profile has {counts[path]}")
        pct = round(1000 * node.count / total) / 10 if total else 0.0
        if abs(node.pct - pct) > 0.11:
            problems.append(f"{where}: {node.pct}% for {node.count} of {total} samples")
        kids = sum(c.count for c in node.children)
        if node.count != node.self_count + kids + node.left_out_count:
            problems.append(f"{where}: {node.count} != self {node.self_count} + children {kids} "
                            f"+ left out {node.left_out_count}")
        truth = {p[-1]: n for p, n in counts.items() if len(p) == len(path) + 1 and p[:-1] == path}
        shown = {c.name for c in node.children}
        hidden = {name: n for name, n in truth.items() if name not in shown}
        if any(n * 1000 >= threshold * 10 * total for n in hidden.values()):
            problems.append(f"{where}: hid callees at or over {threshold}%: {hidden}")
        if len(hidden) != node.left_out or sum(hidden.values()) != node.left_out_count:
            problems.append(f"{where}: left out {node.left_out} callees with "
                            f"{node.left_out_count} samples, /proc/profile says {hidden}")
        for c in node.children:
            if c.count * 1000 < threshold * 10 * total:
                problems.append(f"{where} -> {c.name}: {c.count} samples is under {threshold}%")
        if [c.count for c in node.children] != sorted((c.count for c in node.children),
                                                      reverse=True):
            problems.append(f"{where}: callees are not in descending order of samples")
        todo.extend(((*path, c.name), c) for c in node.children)
    return problems


def test_tree_of_spin_adds_up(m: Machine) -> None:
    pid, _ = profile_run(m, "spin 2")
    samples = pc.of_pid(pc.parse_profile(m.run("cat /proc/profile", timeout=CAT_TIMEOUT)), pid)
    assert len(samples) >= 50, f"2 s at 100 Hz should give ~200 samples, got {len(samples)}"
    rng = random.Random(seed_of("PROFILE_CONSOLE_SEED"))
    thresholds = [None, 0.0, *(rng.randrange(0, 300) / 10 for _ in range(3))]
    cases = 0
    for threshold in thresholds:
        cmd = f"profile tree {pid}" if threshold is None else f"profile tree -t {threshold} {pid}"
        out = m.run(cmd, timeout=RUN_TIMEOUT)
        root = parse_tree(out)
        assert root.name == f"spin (pid {pid})" and root.pct == 100.0, (
            f"`{cmd}` should start at spin (pid {pid}), 100%:\n{out}")
        counts = path_counts(samples, root.name)
        problems = tree_problems(root, counts, len(samples), 1.0 if threshold is None else threshold)
        assert not problems, f"`{cmd}`:\n  " + "\n  ".join(problems[:15]) + f"\n{out}"
        cases += 1
        # (_start ->) main -> outer -> middle -> hot, hot with most of the samples.
        node, chain = root, []
        start = [c for c in root.children if c.name == "_start"]
        if start:
            node, chain = start[0], ["_start"]
        for name in ("main", "outer", "middle", "hot"):
            found = [c for c in node.children if c.name == name]
            assert found, f"`{cmd}`: no {name} under {' -> '.join(chain) or 'the root'}:\n{out}"
            node = found[0]
            chain.append(name)
        assert node.pct >= 40, f"`{cmd}`: hot does ~70% of spin's work, shown {node.pct}%:\n{out}"
    print(f"{len(samples)} samples, {cases} trees checked, thresholds {thresholds}")


def test_tree_of_everyone_has_a_node_per_process(m: Machine) -> None:
    assert m.run("profile clear") == ""
    assert m.run("profile rate 100") == ""
    assert m.run("profile all on") == ""
    try:
        assert "spin: done" in m.run("spin 1", timeout=RUN_TIMEOUT)
    finally:
        assert m.run("profile all off") == ""
    samples = pc.parse_profile(m.run("cat /proc/profile", timeout=CAT_TIMEOUT))
    out = m.run("profile tree -t 0", timeout=RUN_TIMEOUT)
    root = parse_tree(out)
    assert root.name == "all processes" and root.count == len(samples), out
    problems = []
    by_pid = Counter(s["pid"] for s in samples)
    comm = {s["pid"]: s["comm"] for s in samples}
    for pid, n in by_pid.items():
        name = f"{comm[pid]} (pid {pid})"
        node = next((c for c in root.children if c.name == name), None)
        if node is None:
            problems.append(f"no node {name!r}")
            continue
        counts = path_counts(pc.of_pid(samples, pid), name)
        problems += tree_problems(node, counts, len(samples), 0.0)
    assert not problems, "\n  ".join(problems[:15]) + f"\n{out}"
