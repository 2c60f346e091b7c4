"""tools/demo and `make demo DEMO=name`: every lecture demo runs and teaches its lesson.

Each demo of the table in tools/demo is run end to end, as `make demo` runs it (tools/demo,
into a directory of the test's own), and its profile is checked for what the lecture script
(lectures/README.md) tells the class to look at: the function the lesson is about has the
most self samples, and each demo's own point shows (the two prime counters agree and the
naive one takes most of the time; one-byte reads spend their samples in the kernel; two
programs on one hart take turns). Those runs boot tern, a few seconds each, and are skipped
unless the kernel and fs.img are built (`make all`). The rest needs no QEMU.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from samples import DATA, ROOT
from tern.demo import DEMOS
from tern.prof import lines, model, top

DEMO = ROOT / "tools" / "demo"
# The user programs the demos run; fs.img must be newer than all of them.
PROGRAMS = ("spin", "primes", "bytewise", "crc", "expcopy")


def run_demo(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DEMO), *args], capture_output=True, text=True,
                          errors="replace", timeout=timeout)


# --- Without QEMU ----------------------------------------------------------------------------


def test_list_names_every_demo() -> None:
    result = run_demo("list")
    assert result.returncode == 0, result.stderr
    for demo in DEMOS:
        line = next(l for l in result.stdout.splitlines() if l.split()[:1] == [demo.name])
        assert demo.lesson in line and len(line) <= 100, line
    assert DEMOS[0].name == "hot", "the default demo comes first"


@pytest.mark.parametrize("how", ["script", "make"])
def test_unknown_name_fails_with_the_list(how: str) -> None:
    if how == "script":
        result = run_demo("no-such-demo")
    else:
        result = subprocess.run(["make", "-s", "--no-print-directory", "demo",
                                 "DEMO=no-such-demo"], cwd=ROOT, capture_output=True, text=True,
                                timeout=120)
    assert result.returncode != 0
    assert "no demo called 'no-such-demo'" in result.stderr
    for demo in DEMOS:
        assert re.search(rf"(?m)^\s+{demo.name}\s+{re.escape(demo.lesson)}$", result.stderr)


@pytest.mark.parametrize("variables, command", [
    ((), "tools/demo"),
    (("DEMO=compete",), "tools/demo compete"),
    (("DEMO_CMD=profile run psys 1", "DEMO_RATE=500", "DEMO_CPUS=1"),
     "tools/demo --command 'profile run psys 1' --rate 500 --cpus 1"),
])
def test_make_passes_the_variables(variables: tuple, command: str) -> None:
    result = subprocess.run(["make", "-n", "--no-print-directory", "demo", *variables], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert command in result.stdout.splitlines()


def test_views_of_a_profile_on_disk(tmp_path: Path) -> None:
    result = run_demo("--views", str(DATA / "spin.json"), "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for name in ("report.html", "flame.svg", "profile.folded", "profile.speedscope.json",
                 "profile.perf.txt", "profile.pb.gz"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert re.search(r"(?m)^\s+\d+\s+[\d.]+%\s+\d+\s+[\d.]+%\s+hot$", result.stdout)
    assert "report.html" in result.stdout


# --- Each demo, in tern ----------------------------------------------------------------------


def built() -> bool:
    kernel, image = ROOT / "build" / "kernel.elf", ROOT / "fs.img"
    programs = [ROOT / "build" / "user" / f"_{name}" for name in PROGRAMS]
    return (kernel.exists() and image.exists()
            and all(p.exists() and image.stat().st_mtime >= p.stat().st_mtime for p in programs))


def samples_by_pid(profile: model.Profile) -> Dict[int, int]:
    counts: Dict[int, int] = {}
    for s in profile.samples:
        counts[s.pid] = counts.get(s.pid, 0) + 1
    return counts


def incl(profile: model.Profile, display: str) -> int:
    return next((r.incl_count for r in top.rows(profile) if r.display == display), 0)


def self_count(profile: model.Profile, display: str) -> int:
    return next((r.self_count for r in top.rows(profile) if r.display == display), 0)


def check_hot(profile: model.Profile, console: str) -> None:
    assert "spin: done" in console
    rows = {r.display: r for r in top.rows(profile)}
    total = len(profile.samples)
    # The lesson of self against inclusive: hot does the work, main is on every stack.
    assert rows["hot"].self_count > total / 2
    assert rows["main"].incl_count > 0.95 * total and rows["main"].self_count < total / 5


def check_primes(profile: model.Profile, console: str) -> None:
    answers = re.findall(r"primes: (naive|sieve): (\d+) primes below (\d+) in (\d+) ms", console)
    assert [a[0] for a in answers] == ["naive", "sieve"], console
    assert answers[0][1:3] == answers[1][1:3] == ("78498", "1000000"), "the same answer"
    # naive runs first (the lower pid); the sieve is over so fast that a host busy enough
    # may leave it no sample at all, and then the profile has one pid only.
    counts = samples_by_pid(profile)
    pids = sorted(counts)
    assert 1 <= len(pids) <= 2, f"samples by pid: {counts}"
    naive, sieve = counts[pids[0]], counts[pids[1]] if len(pids) == 2 else 0
    assert naive > 5 * sieve, f"naive {naive} samples, sieve {sieve}"


def check_syscalls(profile: model.Profile, console: str) -> None:
    sums = re.findall(r"bytewise: \d+ reads of \d+ bytes?: sum (\d+)", console)
    assert len(sums) == 2 and sums[0] == sums[1], console
    total = len(profile.samples)
    # In the kernel, or in the user stub `read` just after its ecall (where the way back
    # from the kernel is charged: interrupts stay off until the return to user mode).
    in_kernel = sum(1 for s in profile.samples if any(f.kernel for f in s.frames))
    assert in_kernel > 0.5 * total, f"{in_kernel} of {total} samples have kernel frames"
    stub = self_count(profile, "read")
    assert in_kernel + stub > 0.85 * total, f"{in_kernel} in the kernel, {stub} in read"
    assert incl(profile, "[k] usertrap") > total / 2
    # Most of the crossing is usertrap's and pop_off's (skid); sys_read's own share moves
    # with how often the host runs the guest (15% to 50% seen), but is never negligible.
    assert incl(profile, "[k] sys_read") > total / 10
    assert incl(profile, "read_bytewise") > 10 * max(1, incl(profile, "read_buffered"))


def check_compete(profile: model.Profile, console: str) -> None:
    assert len(re.findall(r"crc: 8 MiB, crc [0-9a-f]{8}", console)) == 2, console
    assert len(re.findall(r"primes: naive: 148933 primes", console)) == 2, console
    # crc's 8 MiB take a fraction of primes' time: it holds about a fifth of the samples or
    # less, and the shell and the profile command hold a few.
    counts = samples_by_pid(profile)
    busy = [pid for pid, n in counts.items() if n > 0.05 * len(profile.samples)]
    assert len(busy) == 2, f"samples by pid: {counts}"
    # On one hart, in time order, the two take turns: many changes from one to the other.
    order = [s.pid for s in sorted(profile.samples, key=lambda s: s.timestamp) if s.pid in busy]
    turns = sum(1 for a, b in zip(order, order[1:]) if a != b)
    assert turns >= 10, f"only {turns} changes between pids {busy}"
    # Where crc spends its turns: in crc32, not in filling its buffer.
    crc = [s for s in profile.samples if s.comm == "crc"]
    in_crc32 = sum(1 for s in crc if any(f.symbol == "crc32" for f in s.frames))
    assert in_crc32 > 0.5 * len(crc), f"{in_crc32} of crc's {len(crc)} samples are in crc32"


def check_primes_lines(profile: model.Profile, out: Path) -> None:
    """The hottest line of is_prime is its trial division (the loop that divides), in the
    table's rows, in the report's annotated source and in `go tool pprof -list`."""
    sources = lines.for_profile(profile)
    assert not [n for n in sources.notes if "primes" in n], sources.notes
    source = (ROOT / "user" / "demo" / "primes.cc").read_text().splitlines()
    start = next(i for i, text in enumerate(source) if "bool is_prime(int n)" in text)
    division = {i + 1 for i, text in enumerate(source[start:start + 8], start)
                if "d * d <= n" in text or "n % d" in text}
    assert len(division) == 2, "is_prime should still divide in a for loop"
    row = next(r for r in top.rows(profile, sources) if r.name == "is_prime")
    hottest = max(row.self_lines, key=lambda l: row.self_lines[l])
    assert hottest.path == str(ROOT / "user" / "demo" / "primes.cc") and \
        hottest.line in division, f"is_prime's lines: {row.self_lines}"
    html = (out / "report.html").read_text(encoding="utf-8")
    block = html[html.index('<div class="function" data-name="is_prime">'):]
    block = block[:block.index("</div>")]
    counts = {int(n): int(c) for n, c in re.findall(r'data-line="(\d+)" data-self="(\d+)"', block)}
    assert max(counts, key=lambda n: counts[n]) == hottest.line
    go = shutil.which("go")
    if go is not None:
        listing = subprocess.run([go, "tool", "pprof", "-sample_index=samples", "-list",
                                  "^is_prime$", str(out / "profile.pb.gz")],
                                 capture_output=True, text=True, timeout=120).stdout
        per_line = {int(m[2]): int(m[1]) for m in
                    re.finditer(r"(?m)^\s+\S+\s+(\d+)\s+(\d+):", listing)}  # cum
        assert max(per_line, key=lambda n: per_line[n]) == hottest.line, listing


def check_hot_lines(profile: model.Profile, out: Path) -> None:
    """hot's hottest line is its loop of xorshift calls: the code of xorshift, inlined,
    counts at the line that calls it."""
    sources = lines.for_profile(profile)
    source = (ROOT / "user" / "demo" / "spin.cc").read_text().splitlines()
    start = next(i for i, text in enumerate(source) if "unsigned long hot(" in text)
    loop = next(i + 1 for i, text in enumerate(source[start:start + 6], start)
                if "xorshift(x)" in text)
    row = next(r for r in top.rows(profile, sources) if r.name == "hot")
    assert row.hottest is not None and (row.hottest.path, row.hottest.line) == \
        (str(ROOT / "user" / "demo" / "spin.cc"), loop), \
        f"hot's lines: {row.lines}; notes: {sources.notes}"


# Checks of the source lines, for the demos that have one: given the profile and the folder
# of the views.
LINE_CHECKS: Dict[str, Callable[[model.Profile, Path], None]] = {
    "primes": check_primes_lines, "hot": check_hot_lines}


CHECKS: Dict[str, Callable[[model.Profile, str], None]] = {
    "hot": check_hot, "primes": check_primes, "syscalls": check_syscalls,
    "compete": check_compete,
}


def test_every_demo_is_checked() -> None:
    assert sorted(CHECKS) == sorted(d.name for d in DEMOS)


@pytest.mark.parametrize("demo", DEMOS, ids=lambda d: d.name)
def test_demo(demo: Any, tmp_path: Path) -> None:
    if not built():
        pytest.skip("needs build/kernel.elf and an up-to-date fs.img: run `make all`")
    pytest.importorskip("pexpect", reason="profget drives QEMU with pexpect")
    result = run_demo(demo.name, "--no-build", "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr[-4000:]
    for name in ("profile.json", "console.txt", "report.html", "flame.svg", "profile.folded",
                 "profile.speedscope.json", "profile.perf.txt", "profile.pb.gz"):
        assert (tmp_path / name).stat().st_size > 0, name
    # The demos' lessons are about the CPU, as the views' default (profconv --cpu on): the
    # processes' wait samples are left out here as there.
    profile = model.load(str(tmp_path / "profile.json")).of_cpu("on")
    rows = top.rows(profile)
    assert rows[0].display in demo.expected(), top.render(profile)
    console = (tmp_path / "console.txt").read_text(errors="replace")
    assert console in result.stderr, "the console is shown as well as saved"
    CHECKS[demo.name](profile, console)
    if demo.name in LINE_CHECKS:
        LINE_CHECKS[demo.name](profile, tmp_path)
