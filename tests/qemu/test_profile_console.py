"""What the `profile` command prints at the console, checked against /proc/profile.

* `profile tree`: the call graph of the samples, callers above callees, with inclusive
  counts and percentages. The tree is rebuilt on the host from the samples `cat
  /proc/profile` gives, and every printed node must have exactly the count the samples give
  its call path; each node's count is its self count plus its children's plus the line that
  sums the children left out under the threshold; the root is 100%. Thresholds are drawn
  from a seeded generator (the seed is printed: PROFILE_CONSOLE_SEED replays it).
* On spin (main -> outer -> middle -> hot) the tree holds that chain, hot with most samples.
* `profile top`: a row per process and function, with the process's pid and name, counts
  equal to the host's; `-p PID` keeps one process's rows; the rows beyond N are counted in a
  `(K more rows left out)` line. N is drawn from the same seeded generator.
* The small lies: a name cut at 95 characters ends in "..."; `profile run nosuchprog` says
  the exec failed and prints no report; each bad usage says what was wrong, then the usage,
  and exits 1; `profile PID off` after PID was killed says what is true (its samples are
  kept); `missed:` is explained in the usage and in the report when periods were missed.

One machine at CPUS=3 serves the whole file; each test starts from `profile clear`.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

import pytest

from tern import jobs
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
    """A frame's name as the console shows it: each escaped byte beyond ASCII as '?' (one
    character of the decoded JSON string per byte), cut to 95 with "..." at the end."""
    name = "".join(c if ord(c) < 0x80 else "?" for c in frame["symbol"]) or "??"
    if len(name) > NAME_CUT:
        name = name[:NAME_CUT - 3] + "..."
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
            assert depth == 0 and node.self_count is not None, (
                f"the first line is the root:\n{text}")
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
    # spin can be asleep at a tick (a wait sample): the tree counts the samples on the CPU.
    samples = pc.of_pid(pc.on_cpu(pc.parse_profile(m.run("cat /proc/profile",
                                                         timeout=CAT_TIMEOUT))), pid)
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
        problems = tree_problems(root, counts, len(samples),
                                 1.0 if threshold is None else threshold)
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
    # In all mode init and the shell, asleep, have wait samples: the tree counts the CPU's.
    samples = pc.on_cpu(pc.parse_profile(m.run("cat /proc/profile", timeout=CAT_TIMEOUT)))
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


# --- profile top ----------------------------------------------------------------------------


def top_model(samples: list[pc.Sample]) -> dict[tuple[int, str], tuple[int, int]]:
    """(pid, function as the console names it) -> (self, inclusive) samples."""
    self_count: Counter[tuple[int, str]] = Counter()
    incl: Counter[tuple[int, str]] = Counter()
    for s in samples:
        if not s["samples"]:
            continue
        names = [console_name(f) for f in s["samples"]]
        self_count[(s["pid"], names[0])] += 1
        for name in set(names):
            incl[(s["pid"], name)] += 1
    return {key: (self_count[key], n) for key, n in incl.items()}


def top_problems(top: pc.Top, model: dict[tuple[int, str], tuple[int, int]],
                 comm: dict[int, str], n: int) -> list[str]:
    problems = []
    shown = {}
    for r in top.rows:
        key = (r.pid, ("[k] " if r.kernel else "") + r.name)
        shown[key] = (r.self_count, r.incl_count)
        if model.get(key) != (r.self_count, r.incl_count):
            problems.append(f"row {key}: self {r.self_count}, incl {r.incl_count}; "
                            f"/proc/profile gives {model.get(key)}")
        if r.pid is not None and r.comm != comm[r.pid]:
            problems.append(f"row {key}: process {r.comm!r}, the samples say {comm[r.pid]!r}")
    if len(top.rows) != min(n, len(model)):
        problems.append(f"{len(top.rows)} rows for N={n} and {len(model)} (pid, function)s")
    if top.left_out != len(model) - len(top.rows):
        problems.append(f"says {top.left_out} rows left out, {len(model) - len(top.rows)} were")
    order = [(r.self_count, r.incl_count) for r in top.rows]
    if order != sorted(order, reverse=True):
        problems.append(f"rows not busiest first: {order}")
    hidden = [v for k, v in model.items() if k not in shown]
    if order and hidden and max(hidden) > min(order):
        problems.append(f"a row left out ({max(hidden)}) is busier than one shown ({min(order)})")
    return problems


def test_top_has_a_row_per_process_and_a_pid_filter(m: Machine) -> None:
    assert m.run("profile clear") == ""
    assert m.run("profile rate 200") == ""
    assert m.run("profile all on") == ""
    try:
        assert "spin: done" in m.run("spin 1", timeout=RUN_TIMEOUT)
        assert "primes" in m.run("primes naive 200000", timeout=RUN_TIMEOUT)
    finally:
        assert m.run("profile all off") == ""
    # `profile top` counts the samples taken on the CPU (not the waits of init and the shell).
    samples = [s for s in pc.on_cpu(pc.parse_profile(m.run("cat /proc/profile",
                                                           timeout=CAT_TIMEOUT)))
               if s["samples"]]
    comm = {s["pid"]: s["comm"] for s in samples}
    assert len(comm) >= 2, f"spin and primes ran in all mode, but samples name pids {comm}"
    rng = random.Random(seed_of("PROFILE_CONSOLE_SEED"))
    problems = []
    cases = 0
    everyone = top_model(samples)
    out = m.run("profile top 100000", timeout=RUN_TIMEOUT)
    top = pc.parse_top(out)
    problems += [f"`profile top 100000`: {p}" for p in top_problems(top, everyone, comm, 100000)]
    if top.samples != len(samples):
        problems.append(f"`profile top 100000` counts {top.samples} samples of {len(samples)}")
    cases += 1
    for pid in sorted(comm):
        mine = pc.of_pid(samples, pid)
        model = top_model(mine)
        for n in (rng.randrange(1, len(model) + 3), len(model)):
            cmd = f"profile top -p {pid} {n}" if rng.random() < 0.5 else f"profile top {n} -p {pid}"
            out = m.run(cmd, timeout=RUN_TIMEOUT)
            top = pc.parse_top(out)
            problems += [f"`{cmd}`: {p}" for p in top_problems(top, model, comm, n)]
            if top.samples != len(mine):
                problems.append(f"`{cmd}` counts {top.samples} samples of {len(mine)}")
            cases += 1
    print(f"{len(samples)} samples of {len(comm)} processes, {cases} tables checked")
    assert not problems, "\n  ".join(problems[:15])


# --- The small lies ---------------------------------------------------------------------------


def test_long_names_are_marked_cut(m: Machine) -> None:
    pid, _ = profile_run(m, "pnames 3 1", rate=100)
    # Every row, not the run report's ten: pnames' two functions have few samples of their
    # own (it spins in uptime()), and rank below however many kernel functions were sampled.
    rows = m.run(f"profile top -p {pid} 1000", timeout=RUN_TIMEOUT)
    tree = m.run(f"profile tree -t 0 {pid}", timeout=RUN_TIMEOUT)
    long_rows = [r.name for r in pc.parse_top(rows).rows
                 if r.name.startswith(("fondo_", "descenso_"))]
    long_nodes = [line.group(5) for line in map(TREE_LINE.match, tree.splitlines())
                  if line and line.group(5).startswith(("fondo_", "descenso_"))]
    for found in (long_rows, long_nodes):
        assert {n.split("_")[0] for n in found} == {"fondo", "descenso"}, (
            f"pnames' two long names are not both shown:\n{rows}\n{tree}")
    for name in long_rows + long_nodes:
        assert len(name) == NAME_CUT and name.endswith("..."), (
            f"pnames' names are 146 and 169 bytes: shown cut to {NAME_CUT}, they must end in "
            f"'...', but one is shown as {name!r} ({len(name)} characters)")


def test_run_of_a_missing_program_says_so(m: Machine) -> None:
    for cmd in ("nosuchprog", "nosuchprog with args", "/nosuchdir/prog"):
        out = m.run(f"pstatus profile run {cmd}", timeout=RUN_TIMEOUT)
        name = cmd.split()[0]
        assert f"exec {name} failed" in out, f"`profile run {cmd}` printed {out!r}"
        assert "pstatus: exit 0" not in out and "pstatus: exit" in out, (
            f"`profile run {cmd}` must exit non-zero, printed {out!r}")
        assert "exited with status" not in out and "samples (" not in out, (
            f"`profile run {cmd}` must not report on a command that never ran:\n{out}")


BAD_USAGES = [
    # (arguments, what the first line must say)
    ("", "no command"),
    ("foo", "unknown command 'foo'"),
    ("3", "on or off"),
    ("3 sideways", "on or off"),
    ("all", "on or off"),
    ("top 0", "'0'"),
    ("top many", "'many'"),
    ("top 3 4", "'4'"),
    ("top -p", "-p"),
    ("top -p x", "'x'"),
    ("tree -t", "-t"),
    ("tree -t 101", "'101'"),
    ("tree 3 4", "'4'"),
    ("run", "no command to run"),
    ("status now", "'now'"),
    ("clear all", "'all'"),
    ("rate", "rate"),
    ("x1 on", "'x1'"),
]


def test_bad_usage_says_what_was_wrong(m: Machine) -> None:
    problems = []
    for args, needle in BAD_USAGES:
        out = m.run(f"pstatus profile {args}".rstrip())
        lines = out.strip().splitlines()
        if (not lines or not lines[0].startswith("profile: ") or needle not in lines[0]
                or "usage:" not in out or "pstatus: exit 1" not in out):
            problems.append(f"`profile {args}` should say {needle!r} on its first line, then "
                            f"the usage, and exit 1; printed {out!r}")
    print(f"{len(BAD_USAGES)} bad usages tried")
    assert not problems, "\n  ".join(problems)


def test_off_after_kill_keeps_its_samples_and_says_so(m: Machine) -> None:
    assert m.run("profile clear") == ""
    assert m.run("profile rate 100") == ""
    pid = jobs.start_background(m, "spin")
    try:
        assert m.run(f"profile {pid} on") == ""
        time.sleep(0.5)
    finally:
        jobs.kill_and_wait_gone(m, pid)
    out = m.run(f"pstatus profile {pid} off")
    samples = pc.of_pid(pc.parse_profile(m.run("cat /proc/profile", timeout=CAT_TIMEOUT)), pid)
    assert samples, f"spin (pid {pid}) was profiled for 0.5 s but has no samples"
    assert f"no process {pid}" not in out, (
        f"`profile {pid} off` after the kill says {out!r}, but its samples are kept")
    assert (f"process {pid} has exited" in out and f"{len(samples)} samples" in out
            and "pstatus: exit 1" in out), (
        f"`profile {pid} off` should say that {pid} has exited and its samples are kept, "
        f"and exit 1; printed {out!r}")
    out = m.run("pstatus profile 9999 off")
    assert "no process 9999" in out and "pstatus: exit 1" in out, out


def test_missed_is_explained(m: Machine) -> None:
    usage = m.run("pstatus profile")
    assert "missed" in usage and "late" in usage, f"the usage should explain missed:\n{usage}"
