"""The grader itself: tools/grade, its plugin, the Gradescope bundle and handin.

Most tests here run tools/grade on a small folder of made-up tests in a temporary directory, so
they check the grader's arithmetic and reports without booting anything: one line per test,
`Score: N/M` last, the exit status, results.json in Gradescope's format, JUnit XML, the
selection by lab and substring, a build that fails, a test file that does not load, and
the flakiness check.

A few boot real machines, because what they check only real QEMUs can show:

* interrupting the grader (Ctrl-C, or even SIGKILL) leaves no QEMU behind;
* a kernel that hangs (QEMU's -S), a command that never returns, and a kernel that panics
  (`-append test.panic`) each give a FAIL with the console tail, within their timeout as
  scaled by GRADE_TIMEOUT_SCALE;
* two graders running at once in two copies of the tree do not disturb each other.

The bundle tests lay out a folder the way Gradescope does (source/, submission/,
results/) and run run_autograder in it. The fast one uses a tiny fake tree; the slow one
bundles the real starter (`make starter`) and grades our own tree submitted over it (full
marks) and the starter as it is (nothing in the lab), with the real lab tests.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tern.grade import autograder
from tern.grade import grader as grade_mod
from tern.grade.results import GradedTest
from tern.machine import REPO

PACKAGE = REPO / "tools" / "tern"
GRADE = REPO / "tools" / "grade"
LINE = re.compile(r"^(?P<name>.+): (?P<status>OK|FAIL|SKIP|NOT RUN) \((?P<secs>[\d.]+)s\) "
                  r"(?P<score>[\d.]+)/(?P<max>[\d.]+)(?: -- (?P<reason>.*))?$")


def grade(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
          timeout: float = 300) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.pop("MAKELEVEL", None)
    full_env.setdefault("GRADE_TIMEOUT_SCALE", "1")
    full_env.update(env or {})
    return subprocess.run([sys.executable, str(GRADE), *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def lines_of(output: str) -> dict[str, re.Match[str]]:
    """The per-test report lines, by test name."""
    found = {}
    for line in output.splitlines():
        match = LINE.match(line)
        if match:
            found[match["name"]] = match
    return found


def write_tests(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text))
    return folder


MIXED = {
    "test_alpha.py": """
        import pytest
        from tern.machine import MachineError

        pytestmark = pytest.mark.points(2, lab="alpha")

        def test_passes():
            pass

        def test_fails_with_message():
            assert 1 == 2, "profile(3, ON) returned -1 for a running process"

        def test_hangs():
            raise MachineError(
                "timed out after 10 s waiting for the next shell prompt\\n"
                "machine: t (CPUS=3); command: cat\\n"
                "--- last 40 lines of the console ---\\n$ cat\\n--- end of console ---")

        @pytest.mark.points(5, lab="beta", name="a named test")
        @pytest.mark.parametrize("n", [1, 2])
        def test_param(n):
            assert n == 1, f"n is {n}"
    """,
    "test_beta.py": """
        import pytest

        def test_worth_nothing():
            assert False, "not graded, so never run by the grader"

        @pytest.mark.points(1, lab="beta")
        def test_skipped():
            pytest.skip("needs something absent")

        @pytest.fixture
        def broken():
            raise RuntimeError("the fixture broke")

        @pytest.mark.points(1, lab="beta")
        def test_setup_error(broken):
            pass

        @pytest.mark.points(1, lab="beta")
        def test_measures(record_property):
            record_property("grade_note", "spfiles 200: 3.25x")
    """,
}


# --- Reports, points and results files -----------------------------------------------------


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One serial run over MIXED, shared by the tests that only read its results."""
    base = tmp_path_factory.mktemp("mixed")
    tests = write_tests(base / "tests", MIXED)
    out = base / "out"
    return out, grade("--no-build", "--jobs", "1", "--out", str(out), str(tests))


def test_one_line_per_test_and_score_last(mixed) -> None:
    _, run = mixed
    lines = lines_of(run.stdout)
    assert set(lines) == {"alpha: passes", "alpha: fails with message", "alpha: hangs",
                          "beta: a named test [1]", "beta: a named test [2]", "beta: skipped",
                          "beta: setup error", "beta: measures"}, run.stdout
    assert lines["alpha: passes"]["status"] == "OK"
    assert (lines["alpha: passes"]["score"], lines["alpha: passes"]["max"]) == ("2", "2")
    assert lines["alpha: fails with message"]["reason"] == \
        "profile(3, ON) returned -1 for a running process"
    assert lines["alpha: hangs"]["reason"] == \
        "timed out after 10 s waiting for the next shell prompt; command: cat"
    assert lines["beta: a named test [2]"]["reason"].startswith("n is 2")
    assert lines["beta: skipped"]["status"] == "SKIP"
    assert lines["beta: setup error"]["reason"] == "RuntimeError: the fixture broke"
    # A passing test's note (record_property("grade_note", ...)) is printed after it.
    assert lines["beta: measures"]["status"] == "OK"
    assert lines["beta: measures"]["reason"] == "spfiles 200: 3.25x"
    assert run.stdout.rstrip().splitlines()[-1] == "Score: 8/19"
    assert run.returncode == 1


def test_failures_show_console_tail_and_log_folder(mixed) -> None:
    out, run = mixed
    details = run.stdout.split("--- alpha: hangs (test_alpha.py::test_hangs)", 1)[1]
    assert "last 1 console line:\n    $ cat" in details
    assert f"Console logs of failed tests: {out / 'logs'}/" in run.stdout


def test_gradescope_results(mixed) -> None:
    out, _ = mixed
    doc = json.loads((out / "results.json").read_text())
    assert doc["score"] == 8
    tests = {t["name"]: t for t in doc["tests"]}
    assert len(tests) == 8
    for t in tests.values():
        assert set(t) >= {"name", "score", "max_score", "status", "output"}
        assert t["status"] in ("passed", "failed")
    assert tests["alpha: passes"] == {"name": "alpha: passes", "score": 2, "max_score": 2,
                                      "status": "passed", "output": ""}
    hang = tests["alpha: hangs"]
    assert (hang["score"], hang["max_score"], hang["status"]) == (0, 2, "failed")
    assert hang["output"].startswith("timed out after 10 s waiting for the next shell prompt; "
                                     "command: cat\n")
    assert "$ cat" in hang["output"]
    assert tests["beta: measures"]["output"] == "spfiles 200: 3.25x"
    assert sum(t["max_score"] for t in doc["tests"]) == 19


def test_junit_xml(mixed) -> None:
    out, _ = mixed
    root = ET.parse(out / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"alpha", "beta"}
    assert (suites["alpha"].get("tests"), suites["alpha"].get("failures")) == ("3", "2")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    failure = cases["fails with message"].find("failure")
    assert failure is not None
    assert failure.get("message") == "profile(3, ON) returned -1 for a running process"
    assert cases["skipped"].find("skipped") is not None
    assert cases["passes"].find("failure") is None


def test_full_score_exits_zero_and_parallel_matches_serial(tmp_path: Path) -> None:
    tests = write_tests(tmp_path / "tests", {"test_ok.py": """
        import time
        import pytest
        pytestmark = pytest.mark.points(3, lab="ok")
        @pytest.mark.parametrize("n", range(4))
        def test_sleeps(n):
            time.sleep(0.5)
    """})
    serial = grade("--no-build", "-j", "1", "--out", str(tmp_path / "s"), str(tests))
    parallel = grade("--no-build", "-j", "2", "--out", str(tmp_path / "p"), str(tests))
    for run in (serial, parallel):
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stdout.rstrip().endswith("Score: 12/12")
    assert "with 2 workers" in parallel.stdout
    assert json.loads((tmp_path / "s" / "results.json").read_text())["tests"] == \
        json.loads((tmp_path / "p" / "results.json").read_text())["tests"]


def test_auto_workers_follow_the_cores_it_may_use(tmp_path: Path) -> None:
    """GRADE_JOBS=auto starts one worker per core the grader may run on, not per core the
    host has: pinned to one core (taskset, a container's cpuset), it starts one."""
    tests = write_tests(tmp_path / "tests", {"test_two.py": """
        import pytest
        @pytest.mark.points(1, lab="two")
        @pytest.mark.parametrize("n", range(2))
        def test_passes(n):
            pass
    """})
    # The grader is started by a Python that pins itself to one core and then becomes the
    # grader (the affinity is inherited), as `taskset -c N` would.
    pin = ("import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); "
           "os.execv(sys.argv[2], sys.argv[2:])")
    first = min(os.sched_getaffinity(0))
    pinned = subprocess.run(
        [sys.executable, "-c", pin, str(first), sys.executable, str(GRADE), "--no-build",
         "--out", str(tmp_path / "out"), str(tests)],
        env=dict(os.environ, GRADE_JOBS="auto", GRADE_TIMEOUT_SCALE="1"),
        capture_output=True, text=True, timeout=120)
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    assert "with 1 worker;" in pinned.stdout, pinned.stdout


CGROUP_CASES = {
    # /proc/self/cgroup, the files under the cgroup mount, the cores allowed by the quota
    "v2 quota of 1.5 cores": ("0::/grader\n", {"grader/cpu.max": "150000 100000\n"}, 1),
    "v2 quota of 3 cores": ("0::/\n", {"cpu.max": "300000 100000\n"}, 3),
    "v2 without a quota": ("0::/grader\n", {"grader/cpu.max": "max 100000\n"}, None),
    "v1 quota of 2 cores": ("4:memory:/x\n3:cpu,cpuacct:/docker/abc\n", {
        "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "200000\n",
        "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n"}, 2),
    "v1 in a namespace: the mount is the group": ("3:cpu:/docker/abc\n", {
        "cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),
    "v1 without a quota": ("1:cpu:/\n", {
        "cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    "v2 quota above the group": ("0::/user.slice/session-4.scope\n", {
        "user.slice/cpu.max": "200000 100000\n",
        "user.slice/session-4.scope/cpu.max": "max 100000\n"}, 2),
    "v2 the smallest of two": ("0::/a/b\n", {
        "a/cpu.max": "400000 100000\n", "a/b/cpu.max": "300000 100000\n"}, 3),
    "v1 quota above the group": ("2:cpu,cpuacct:/grader/job\n", {
        "cpu,cpuacct/grader/cpu.cfs_quota_us": "100000\n",
        "cpu,cpuacct/grader/cpu.cfs_period_us": "100000\n",
        "cpu,cpuacct/grader/job/cpu.cfs_quota_us": "-1\n",
        "cpu,cpuacct/grader/job/cpu.cfs_period_us": "100000\n"}, 1),
    "no cgroup files": ("0::/gone\n", {}, None),
    "unreadable garbage": ("0::/g\n", {"g/cpu.max": "lots\n"}, None),
    "a period of zero": ("0::/g\n", {"g/cpu.max": "100000 0\n"}, None),
    "a negative quota": ("1:cpu:/\n", {
        "cpu/cpu.cfs_quota_us": "-2\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    "a name that is not UTF-8": ("0::/caf\xe9\n", {"cpu.max": "100000 100000\n"}, 1),
}


@pytest.mark.parametrize("case", CGROUP_CASES)
def test_cgroup_cpu_quota(tmp_path: Path, case: str) -> None:
    """A CPU quota (docker --cpus, a grading service's limit) caps the automatic worker
    count: whole cores, at least one; no quota, or files that cannot be read, cap nothing."""
    membership, files, cores = CGROUP_CASES[case]
    (tmp_path / "self-cgroup").write_bytes(membership.encode("latin-1"))
    for name, text in files.items():
        (tmp_path / "fs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fs" / name).write_text(text)
    assert grade_mod.quota_cores(tmp_path / "self-cgroup", tmp_path / "fs") == cores


@pytest.mark.parametrize("affinity, quota, workers", [(8, None, 8), (8, 2, 2), (2, 4, 2)])
def test_auto_workers_are_the_smaller_of_affinity_and_quota(
        monkeypatch: pytest.MonkeyPatch, affinity: int, quota: int | None, workers: int) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(affinity)))
    monkeypatch.setattr(grade_mod, "quota_cores", lambda: quota)
    assert grade_mod.worker_count("auto") == workers


def test_two_graders_sharing_an_output_folder(tmp_path: Path) -> None:
    """A second grader in the same tree writes to a folder of its own, named in its output.

    The two graders overlap for certain: the test each one runs announces itself in a
    folder and waits until the other's test has announced itself too (or gives up, failing,
    after a minute), so both graders are running, each holding its output folder, at once.
    """
    tests = write_tests(tmp_path / "tests", {"test_slow.py": """
        import os
        import time
        from pathlib import Path
        import pytest
        @pytest.mark.points(1, lab="s")
        def test_waits_for_the_other_grader():
            meeting = Path(os.environ["MEETING_DIR"])
            (meeting / str(os.getpid())).touch()
            deadline = time.monotonic() + 60
            while len(list(meeting.iterdir())) < 2:
                assert time.monotonic() < deadline, "the other grader's test never started"
                time.sleep(0.05)
    """})
    out = tmp_path / "grade"
    meeting = tmp_path / "meeting"
    meeting.mkdir()
    argv = [sys.executable, str(GRADE), "--no-build", "-j", "1", "--out", str(out), str(tests)]
    env = dict(os.environ, GRADE_TIMEOUT_SCALE="1", MEETING_DIR=str(meeting))
    runs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [r.communicate(timeout=120)[0] for r in runs]
    assert all(r.returncode == 0 for r in runs), outputs
    assert all(o.rstrip().endswith("Score: 1/1") for o in outputs), outputs
    assert sum(f"this run writes to {out}-2/" in o for o in outputs) == 1, outputs
    for folder in (out, tmp_path / "grade-2"):
        assert json.loads((folder / "results.json").read_text())["score"] == 1


def test_selection_and_listing(tmp_path: Path) -> None:
    tests = write_tests(tmp_path / "tests", MIXED)
    out = ["--no-build", "--out", str(tmp_path / "out")]
    listed = grade("--list", *out, str(tests))
    assert listed.returncode == 0
    assert re.search(r"(?m)^beta: a named test \[1\] +5 pts +test_alpha\.py::test_param\[1\]$",
                     listed.stdout)
    assert "lab alpha: 3 tests, 6 points" in listed.stdout
    assert "lab beta: 5 tests, 13 points" in listed.stdout
    assert "worth nothing" not in listed.stdout
    only = grade("--lab", "beta", "--test", "NAMED", "-j", "1", *out, str(tests))
    assert set(lines_of(only.stdout)) == {"beta: a named test [1]", "beta: a named test [2]"}
    assert only.stdout.rstrip().endswith("Score: 5/10")
    none = grade("--lab", "gamma", *out, str(tests))
    assert none.returncode == 2
    assert "no graded test matches LAB=gamma" in none.stdout


def test_labs_are_found_by_folder(tmp_path: Path) -> None:
    """`--lab NAME` collects labs/NAME/, whose tests need not say their lab; a name that is
    no folder picks the system tests' pseudo-lab out of theirs; no --lab takes both."""
    root = write_tests(tmp_path / "tree", {
        "labs/alpha/test_a.py": """
            import pytest
            @pytest.mark.points(3)
            def test_in_alpha():
                pass
            @pytest.mark.points(1, lab="elsewhere")
            def test_names_its_lab():
                pass
        """,
        "labs/beta/test_b.py": """
            import pytest
            @pytest.mark.points(2)
            def test_in_beta():
                pass
        """,
        f"{grade_mod.SYSTEM_TESTS}/test_sys.py": """
            import pytest
            @pytest.mark.points(5, lab="boot")
            def test_boots():
                pass
            def test_worth_nothing():
                pass
        """})
    out = ["--no-build", "--root", str(root), "--out", str(tmp_path / "out"), "--list"]
    alpha = grade("--lab", "alpha", *out)
    assert "lab alpha: 1 tests, 3 points" in alpha.stdout, alpha.stdout + alpha.stderr
    assert "in beta" not in alpha.stdout and "boots" not in alpha.stdout
    boot = grade("--lab", "boot", *out)
    assert "lab boot: 1 tests, 5 points" in boot.stdout, boot.stdout + boot.stderr
    every = grade(*out)
    for line in ("lab alpha: 1 tests, 3 points", "lab beta: 1 tests, 2 points",
                 "lab boot: 1 tests, 5 points", "lab elsewhere: 1 tests, 1 points"):
        assert line in every.stdout, every.stdout


def test_long_tests_are_handed_out_first() -> None:
    tests = [GradedTest(f"t.py::{name}", "x", 1, name) for name in "abcdef"]
    took = {"t.py::a": 1, "t.py::b": 2, "t.py::c": 30, "t.py::d": 1, "t.py::e": 12,
            "t.py::f": 1}
    order = [t.title for t in grade_mod.long_tests_first(tests, took, jobs=2)]
    assert order == ["c", "e", "a", "b", "d", "f"]
    assert grade_mod.long_tests_first(tests, took, jobs=1) == tests
    assert grade_mod.long_tests_first(tests, {}, jobs=2) == tests


def grade_a_failing_build(tmp_path: Path, makefile: str, *args: str) -> tuple[
        Path, subprocess.CompletedProcess[str]]:
    """The grader run on a tree whose Makefile is `makefile`, with one test worth 4 points
    that never runs: the tree and the run."""
    root = tmp_path / "tree"
    root.mkdir()
    (root / "Makefile").write_text(makefile)
    tests = write_tests(tmp_path / "tests", {"test_x.py": """
        import pytest
        @pytest.mark.points(4, lab="x")
        def test_never_runs():
            pass
    """})
    return root, grade("--root", str(root), *args, str(tests))


def test_build_failure_is_a_result(tmp_path: Path) -> None:
    root, run = grade_a_failing_build(
        tmp_path,
        "all:\n"
        "\t@echo 'kern/proc/proc.cc: In function void f():' >&2\n"
        "\t@echo \"kern/proc/proc.cc:12:3: error: 'bar' was not declared in this scope\" >&2\n"
        "\t@exit 1\n")
    assert run.returncode == 1
    assert "Traceback" not in run.stdout + run.stderr
    assert re.search(r"(?m)^build: make all: FAIL \(", run.stdout)
    assert "kern/proc/proc.cc:12:3: error: 'bar' was not declared" in run.stdout
    assert run.stdout.rstrip().endswith("Score: 0/4")
    doc = json.loads((root / "build" / "grade" / "results.json").read_text())
    assert doc["score"] == 0
    build, test = doc["tests"]
    assert build["status"] == "failed" and "'bar' was not declared" in build["output"]
    assert (test["score"], test["max_score"], test["status"]) == (0, 4, "failed")


def test_a_failed_build_shows_the_first_failure_alone(tmp_path: Path) -> None:
    """The grader builds GRADE_JOBS files at a time, but a failed build shows one file's
    errors, the first in make's order, the same on every run: not those of every file the
    parallel build had started, in whatever order they ended."""
    _, run = grade_a_failing_build(
        tmp_path,
        "all: first second\n"
        "first:\n"
        "\t@sleep 0.5; echo 'kern/a.cc:1:1: error: the first failure' >&2; exit 1\n"
        "second:\n"
        "\t@echo 'kern/b.cc:1:1: error: the second failure' >&2; exit 1\n",
        "-j", "2")
    assert run.returncode == 1
    assert "the first failure" in run.stdout, run.stdout
    assert "the second failure" not in run.stdout, run.stdout


def test_a_file_that_does_not_load_fails_the_grade(tmp_path: Path) -> None:
    tests = write_tests(tmp_path / "tests", {
        "test_good.py": """
            import pytest
            @pytest.mark.points(1, lab="x")
            def test_good():
                pass
        """,
        "test_broken.py": "import pytest\ndef test_(:\n",
    })
    run = grade("--no-build", "-j", "1", "--out", str(tmp_path / "out"), str(tests))
    assert re.search(r"(?m)^test_broken\.py: FAIL -- the test file does not load: SyntaxError",
                     run.stdout), run.stdout
    assert run.returncode == 1


def test_flakiness_check(tmp_path: Path) -> None:
    tests = write_tests(tmp_path / "tests", {"test_f.py": """
        from pathlib import Path
        import pytest
        COUNTER = Path(__file__).with_name("runs")

        @pytest.mark.points(1, lab="f")
        def test_stable():
            pass

        @pytest.mark.points(1, lab="f")
        def test_every_other_run():
            runs = int(COUNTER.read_text()) if COUNTER.exists() else 0
            COUNTER.write_text(str(runs + 1))
            assert runs % 2 == 0, "fails on odd runs"
    """})
    run = grade("--no-build", "--repeat", "2", "-j", "1", "--out", str(tmp_path / "out"),
                str(tests))
    assert "Flakiness check: the 2 runs differ:" in run.stdout
    assert "f: every other run: passed failed" in run.stdout
    assert run.returncode == 1
    stable = grade("--no-build", "--repeat", "2", "-j", "1", "--test", "stable",
                   "--out", str(tmp_path / "out"), str(tests))
    assert "all 2 runs gave identical results" in stable.stdout
    assert stable.returncode == 0


# --- Real machines: interruption, hangs and panics, two clones -------------------------------


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


QEMU_WAITS = {"test_wait.py": """
    import os, time
    from pathlib import Path
    import pytest
    from tern.machine import Machine

    @pytest.mark.points(1, lab="wait")
    @pytest.mark.parametrize("n", [1, 2])
    def test_wait(n):
        m = Machine(1, name=f"wait{n}", extra_args=("-S",))  # QEMU waits, using no CPU
        m.start()
        Path(os.environ["PID_DIR"], f"{n}").write_text(f"{os.getpid()} {m._child.pid}")
        while True:
            m.pump(0.5)
"""}


@pytest.mark.parametrize("how", ["SIGINT", "SIGKILL"])
def test_interrupt_leaves_no_qemu(tmp_path: Path, how: str) -> None:
    """Ctrl-C (SIGINT to the terminal's process group) or even SIGKILL stops every QEMU."""
    tests = write_tests(tmp_path / "tests", QEMU_WAITS)
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    env = dict(os.environ, PID_DIR=str(pid_dir), GRADE_TIMEOUT_SCALE="1")
    env.pop("MAKELEVEL", None)
    grader = subprocess.Popen(
        [sys.executable, str(GRADE), "--no-build", "-j", "2", "--out", str(tmp_path / "out"),
         str(tests)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(pid_dir.iterdir())) < 2:
            assert grader.poll() is None, grader.communicate()[0]
            assert time.monotonic() < deadline, "the tests never started their QEMUs"
            time.sleep(0.2)
        pids = [int(p) for f in pid_dir.iterdir() for p in f.read_text().split()]
        assert all(_alive(pid) for pid in pids)
        os.killpg(grader.pid, getattr(signal, how))
        output, _ = grader.communicate(timeout=30)
    finally:
        if grader.poll() is None:
            os.killpg(grader.pid, signal.SIGKILL)
            grader.wait()
    if how == "SIGINT":
        assert grader.returncode == 130, output
        assert "interrupted" in output
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in pids if _alive(pid)], f"left behind: {pids}\n{output}"


BAD_KERNELS = {"test_bad.py": """
    import pytest
    from tern.machine import Machine

    pytestmark = pytest.mark.points(1, lab="bad")

    def test_kernel_hangs():
        with Machine(1, name="hangs", extra_args=("-S",)) as m:
            m.boot(timeout=3)

    def test_command_hangs():
        with Machine(1, name="cmd") as m:
            m.boot(timeout=60)
            m.run("cat", timeout=3)  # reads the console forever: no prompt comes back

    def test_kernel_panics():
        with Machine(1, name="panics", extra_args=("-append", "test.panic")) as m:
            m.boot(timeout=60)
"""}


def test_hang_and_panic_fail_with_console_tail(tmp_path: Path) -> None:
    tests = write_tests(tmp_path / "tests", BAD_KERNELS)
    out = tmp_path / "out"
    run = grade("--no-build", "-j", "2", "--out", str(out), str(tests),
                env={"GRADE_TIMEOUT_SCALE": "2"})
    lines = lines_of(run.stdout)
    assert run.returncode == 1 and run.stdout.rstrip().endswith("Score: 0/3"), run.stdout
    hang = lines["bad: kernel hangs"]
    assert hang["reason"] == "timed out after 6 s waiting for the first shell prompt"
    assert 6 <= float(hang["secs"]) < 15
    cmd = lines["bad: command hangs"]
    assert cmd["reason"] == "timed out after 6 s waiting for the next shell prompt; command: cat"
    assert 6 <= float(cmd["secs"]) < 6 + 60
    panic = lines["bad: kernel panics"]
    assert panic["reason"] == ("kernel panic while waiting for the first shell prompt: "
                               "'panic: test.panic given on the command line'")
    details = run.stdout.split("--- bad: kernel panics", 1)[1].split("\n---", 1)[0]
    assert re.search(r"(?m)^    \s*#0 ", details), "the backtrace is part of the console tail"
    command = run.stdout.split("--- bad: command hangs", 1)[1].split("\n---", 1)[0]
    assert "    $ cat" in command
    empty = run.stdout.split("--- bad: kernel hangs", 1)[1].split("\n---", 1)[0]
    assert "the console stayed empty" in empty
    logs = sorted(p.name for p in (out / "logs").iterdir())
    assert logs == ["cmd.log", "hangs.log", "panics.log"]
    doc = json.loads((out / "results.json").read_text())
    assert "#0 " in next(t["output"] for t in doc["tests"] if t["name"] == "bad: kernel panics")


CLONE_TESTS = {"test_clone.py": """
    import pytest
    from tern.machine import REPO, Machine

    pytestmark = pytest.mark.points(1, lab="clone")

    def test_boots_own_kernel():
        with Machine(1, name="own") as m:
            m.boot()
            kernel = m.argv[m.argv.index("-kernel") + 1]  # relative to QEMU's cwd, m.root
            assert (m.root / kernel).resolve() == REPO / "build" / "kernel.elf"
            assert m.run(f"echo {REPO.name}").strip() == REPO.name

    def test_fails_on_purpose():
        with Machine(1, name="fails") as m:
            m.boot()
            m.run(f"echo FAIL in {REPO.name}")
"""}


def make_clone(dest: Path) -> Path:
    """A copy of this tree (its source files and its build outputs), as a second clone."""
    autograder.copy_tree(REPO, dest)
    (dest / "build").mkdir(exist_ok=True)
    shutil.copy2(REPO / "build" / "kernel.elf", dest / "build" / "kernel.elf")
    shutil.copy2(REPO / "fs.img", dest / "fs.img")
    write_tests(dest / "clonetests", CLONE_TESTS)
    return dest


def test_two_clones_grade_at_once(tmp_path: Path) -> None:
    clones = [make_clone(tmp_path / name) for name in ("cloneA", "cloneB")]
    env = dict(os.environ, GRADE_TIMEOUT_SCALE="2")
    env.pop("MAKELEVEL", None)
    graders = [subprocess.Popen([sys.executable, str(c / "tools" / "grade"), "--no-build",
                                 "-j", "2", str(c / "clonetests")], cwd=c, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for c in clones]
    outputs = [g.communicate(timeout=300)[0] for g in graders]
    for clone, output in zip(clones, outputs):
        lines = lines_of(output)
        assert lines["clone: boots own kernel"]["status"] == "OK", output
        fail = lines["clone: fails on purpose"]
        assert fail["reason"].startswith("test program failure while waiting for the next shell "
                                         f"prompt: 'FAIL in {clone.name}'"), output
        assert output.rstrip().endswith("Score: 1/2")
        logs = clone / "build" / "grade" / "logs"
        assert (logs / "fails.log").exists(), output
        assert f"FAIL in {clone.name}" in (logs / "fails.log").read_text()


# --- The Gradescope bundle -------------------------------------------------------------------


def lay_out_gradescope(root: Path, bundle: Path, submission: Path | None) -> Path:
    """root/source (the unzipped bundle), root/submission, root/results, like Gradescope."""
    autograder.unzip_bundle(bundle, root / "source")
    (root / "submission").mkdir(parents=True)
    if submission is not None:
        autograder.copy_tree(submission, root / "submission")
    (root / "results").mkdir()
    return root


def run_autograder(root: Path, timeout: float) -> dict:
    env = dict(os.environ, AUTOGRADER_ROOT=str(root))
    env.pop("MAKELEVEL", None)
    result = subprocess.run([str(root / "source" / "run_autograder")], env=env,
                            capture_output=True, text=True, timeout=timeout)
    path = root / "results" / "results.json"
    assert path.exists(), result.stdout + result.stderr
    return json.loads(path.read_text())


FAKE_LAB = {
    "Makefile": "all:\n\t@test -f labs/profile/answer.txt\n",
    "labs/profile/lab.toml": 'withheld = []\nstudent = ["answer.txt"]\n',
    "labs/__init__.py": "",
    "labs/profile/__init__.py": "",
    "labs/profile/answer.txt": "0\n",
    "labs/profile/test_answer.py": """
        from pathlib import Path
        import pytest
        from tern.machine import REPO

        @pytest.mark.points(10)
        def test_answer_is_42():
            answer = REPO / "labs" / "profile" / "answer.txt"
            assert answer.read_text().strip() == "42", "answer.txt is not 42"

        @pytest.mark.points(5, lab="other")
        def test_other_lab():
            pass
    """,
}


def make_fake_starter(dest: Path) -> Path:
    """A tiny tree with our grader and one lab test, standing in for a starter tree."""
    write_tests(dest, FAKE_LAB)
    shutil.copytree(PACKAGE, dest / "tools" / "tern",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("tools/grade", "tools/find-python", "pytest.ini", "conftest.py"):
        shutil.copy2(REPO / name, dest / name)
    return dest


def test_bundle_mechanics_on_a_fake_lab(tmp_path: Path) -> None:
    starter = make_fake_starter(tmp_path / "starter")
    bundle = autograder.build_bundle("profile", tmp_path / "bundle", starter, timeout=300)
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        mode = (z.getinfo("run_autograder").external_attr >> 16) & 0o777
    assert {"setup.sh", "run_autograder", "autograde.py", "autograder.json",
            "starter/tools/grade", "starter/labs/profile/answer.txt"} <= names
    assert mode & 0o111, "run_autograder must stay executable"

    # The solution, plus a test file "fixed" to always pass: the test must not be used.
    solution = write_tests(tmp_path / "solution", {"labs/profile/answer.txt": "42\n"})
    cheat = (starter / "labs" / "profile" / "test_answer.py").read_text().replace('"42"', '"0"')
    write_tests(solution, {"labs/profile/test_answer.py": cheat})
    (solution / "build").mkdir()
    (solution / "build" / "junk").write_text("a build output is never copied")
    root = lay_out_gradescope(tmp_path / "full", bundle, None)
    shutil.copytree(solution, root / "submission", dirs_exist_ok=True)
    doc = run_autograder(root, timeout=120)
    assert doc["score"] == 10, doc
    assert [t["name"] for t in doc["tests"]] == ["profile: answer is 42"]
    assert "labs/profile/test_answer.py" in doc["output"]

    # The starter as submitted (nothing done) and an empty upload both score zero.
    for name, submission in (("starter", starter), ("empty", None)):
        doc = run_autograder(lay_out_gradescope(tmp_path / name, bundle, submission), 120)
        assert doc["score"] == 0, doc
        assert doc["tests"][0]["output"].startswith("answer.txt is not 42")
        assert ("has no files" in doc["output"]) == (submission is None)

    # A submission wrapped in one folder, as some zip tools make it, is found inside it.
    root = lay_out_gradescope(tmp_path / "wrapped", bundle, None)
    shutil.copytree(solution, root / "submission" / "lab-profile")
    assert run_autograder(root, timeout=120)["score"] == 10


def test_bundle_writes_results_when_the_grader_breaks(tmp_path: Path) -> None:
    starter = make_fake_starter(tmp_path / "starter")
    (starter / "tools" / "grade").write_text("raise SystemExit('grader exploded')\n")
    bundle = autograder.build_bundle("profile", tmp_path / "bundle", starter, timeout=300)
    doc = run_autograder(lay_out_gradescope(tmp_path / "root", bundle, None), timeout=60)
    assert doc["score"] == 0
    assert "grader exploded" in doc["output"]


def test_setup_script_is_valid_shell() -> None:
    for name in ("setup.sh", "run_autograder"):
        subprocess.run(["sh", "-n", str(PACKAGE / "grade" / "gradescope" / name)], check=True)


# The starter generator is only in the solution tree (a starter has none), and only there
# are the lab's tests expected to pass.
SOLUTION_TREE = (REPO / "tools" / "mkstarter").exists()


@pytest.mark.slow
@pytest.mark.skipif(not SOLUTION_TREE, reason="only in the solution tree (tools/mkstarter)")
def test_bundle_on_the_starter(tmp_path: Path) -> None:
    """The real starter: our solution submitted over it scores full marks, the starter itself
    scores nothing in the lab."""
    bundle = autograder.build_bundle("profile", tmp_path / "bundle", None, timeout=1200)
    solution = run_autograder(lay_out_gradescope(tmp_path / "solution", bundle, REPO), 1500)
    assert solution["score"] == sum(t["max_score"] for t in solution["tests"]) > 0, solution
    starter = run_autograder(lay_out_gradescope(tmp_path / "starter", bundle, None), 1500)
    earned = [t["name"] for t in starter["tests"] if t["score"] > 0]
    assert starter["score"] == 0 and not earned, starter


# --- handin ----------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="Student", GIT_AUTHOR_EMAIL="s@example.edu",
               GIT_COMMITTER_NAME="Student", GIT_COMMITTER_EMAIL="s@example.edu")
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout


def handin(repo: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "tools"))
    return subprocess.run([sys.executable, "-m", "tern.grade.handin", "--lab", "profile"],
                          cwd=repo, env=env, capture_output=True, text=True)


def test_handin(tmp_path: Path) -> None:
    repo = tmp_path / "work"
    write_tests(repo, {"kern/a.cc": "int a;\n", ".gitignore": "build/\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")

    done = handin(repo)
    assert done.returncode == 0, done.stderr
    archive = repo / "build" / "handin-profile.zip"
    with zipfile.ZipFile(archive) as z:
        assert sorted(z.namelist()) == [".gitignore", "kern/", "kern/a.cc"]
    assert "Upload it to Gradescope" in done.stdout

    (repo / "kern" / "a.cc").write_text("int a = 1;\n")
    (repo / "kern" / "b.cc").write_text("int b;\n")
    refused = handin(repo)
    assert refused.returncode == 1
    assert "changes that are not committed" in refused.stderr
    assert "kern/a.cc" in refused.stderr and "kern/b.cc" in refused.stderr
    assert "git commit" in refused.stderr

    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "done")
    assert handin(repo).returncode == 0
    with zipfile.ZipFile(archive) as z:
        assert z.read("kern/a.cc") == b"int a = 1;\n"
        assert "kern/b.cc" in z.namelist()
