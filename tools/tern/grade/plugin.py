"""The grader's pytest plugin: what the tests are worth, and what became of each one.

grader.py runs pytest twice, each time with `-p tern.grade.plugin`:

1. A collection pass (`--grade-collect=FILE`). For every test that carries a
   `@pytest.mark.points(n)` marker the plugin writes its node id, lab (the marker's `lab=`,
   else the folder under labs/ the test is in), points and title to FILE as JSON.
   grader.py chooses among them (by lab, by substring) and prints the list, so the tests
   that count are decided once, in one place, before anything runs.

2. A run pass (`--grade-events=FILE`) over exactly the chosen node ids, possibly spread over
   several pytest-xdist workers. A test produces up to three reports (setup, call,
   teardown), and under xdist they reach the controlling process one by one as the workers
   finish them. The plugin, in the controller only, folds a test's reports into one outcome
   and appends it to FILE as one line of JSON as soon as the teardown report arrives.
   grader.py reads that file while the tests run and prints each result as it comes.

An outcome carries a one-line reason for a failure, taken from the exception: for a
MachineError (tern/machine.py) the first line of its message plus the shell command that
was running; for an assertion its message. The rest of the message (the console tail, an
assertion's explanation) goes in `details`, and the console logs tern/fixtures.py saved
for the test in `logs`.

The plugin also ties every worker's life to its parent's: if the controller dies, its
workers receive SIGTERM, and machine.py's own handlers then kill their QEMUs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tern.grade import procs as grade_procs

# The first line of a failure starts with the exception's class name. For the exceptions a
# grade test is expected to raise the class says nothing to a student, so it is dropped.
_PLAIN_EXCEPTIONS = re.compile(r"^(?:[\w.]+\.)?(?:AssertionError|MachineError|Failed): ?")
# The second line of a MachineError message: "machine: NAME (CPUS=n); command: CMD".
_MACHINE_LINE = re.compile(r"^machine: .*; command: (.*)$")
_LOG_LINE = re.compile(r"^full console log: (.+)$", re.MULTILINE)
_NOT_A_COMMAND = ("(none)", "(boot)")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grade", "the grader (tools/grade)")
    group.addoption("--grade-collect", metavar="FILE",
                    help="write the graded tests (those with a points marker) to FILE")
    group.addoption("--grade-events", metavar="FILE",
                    help="append each test's outcome to FILE as a line of JSON")


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        grade_procs.die_with_parent()
        return
    if config.getoption("grade_collect"):
        config.pluginmanager.register(GradedCollector(Path(config.getoption("grade_collect"))),
                                      "grade-collector")
    if config.getoption("grade_events"):
        config.pluginmanager.register(OutcomeWriter(Path(config.getoption("grade_events"))),
                                      "grade-outcomes")


# --- The collection pass -------------------------------------------------------------------


def title_of(item: pytest.Item) -> str:
    """A test's name for people: the marker's `name=`, or the function's name in words.

    `test_call_rejects_a_bad_pid[3]` becomes "call rejects a bad pid [3]".
    """
    mark = item.get_closest_marker("points")
    if mark is not None and mark.kwargs.get("name"):
        title = str(mark.kwargs["name"])
    else:
        function = getattr(item, "originalname", None) or item.name.split("[")[0]
        title = function.removeprefix("test_").replace("_", " ").strip() or function
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.id:
        title += f" [{callspec.id}]"
    return title


def lab_folder(path: Path) -> str:
    """The lab a test file belongs to by its place: NAME for labs/NAME/..., else ""."""
    parts = path.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1] == "labs":
            return parts[i]
    return ""


def graded_entry(item: pytest.Item) -> dict[str, Any] | None:
    """The grader's view of one collected test, or None if it is worth no points."""
    mark = item.get_closest_marker("points")
    if mark is None or not mark.args:
        return None
    return {
        "nodeid": item.nodeid,
        "lab": str(mark.kwargs.get("lab") or lab_folder(item.path)),
        "points": mark.args[0],
        "title": title_of(item),
        "slow": item.get_closest_marker("slow") is not None,
    }


class GradedCollector:
    """In the collection pass: write the graded tests, and any file that failed to load."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.errors: list[dict[str, str]] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.errors.append({"nodeid": report.nodeid,
                                "details": str(report.longrepr)[-4000:]})

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        entries = [e for e in map(graded_entry, session.items) if e is not None]
        self.path.write_text(json.dumps({"rootdir": str(session.config.rootpath),
                                         "tests": entries, "errors": self.errors}))


# --- The run pass --------------------------------------------------------------------------


# Under --dist loadgroup, xdist ends the node id of a test of an xdist_group with "@GROUP".
_XDIST_GROUP = re.compile(r"@[^\[\]/:@]*$")


class OutcomeWriter:
    """In the controlling process: fold each test's reports into one line of JSON."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pending: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = _XDIST_GROUP.sub("", report.nodeid)
        entry = self.pending.setdefault(nodeid, {
            "nodeid": nodeid, "outcome": "passed", "duration": 0.0,
            "reason": "", "details": "", "logs": [], "note": ""})
        entry["duration"] += float(getattr(report, "duration", 0.0) or 0.0)
        # A test may say what it measured, pass or fail: record_property("grade_note", text).
        for key, value in getattr(report, "user_properties", ()):
            if key == "grade_note" and report.when == "call":
                entry["note"] = str(value)
        for title, content in getattr(report, "sections", ()):
            if title == "console logs":
                entry["logs"] += [p for p in content.splitlines() if p not in entry["logs"]]
        if report.failed and entry["outcome"] != "failed":
            entry["outcome"] = "failed"
            entry["reason"], entry["details"] = describe_failure(report)
        elif report.skipped and entry["outcome"] == "passed":
            entry["outcome"] = "skipped"
            entry["reason"], entry["details"] = describe_skip(report)
        entry["logs"] += [p for p in _LOG_LINE.findall(entry["details"])
                          if p not in entry["logs"]]
        # Teardown is always the last report of a test; "???" is xdist's report for a test
        # whose worker died under it, and no other report of that test will follow.
        if report.when in ("teardown", "???"):
            self._write(self.pending.pop(nodeid))

    def pytest_sessionfinish(self) -> None:
        # A test whose teardown never came (the session was interrupted) is still reported.
        for entry in self.pending.values():
            if entry["outcome"] == "passed":
                entry["outcome"] = "failed"
                entry["reason"] = "the test did not finish"
            self._write(entry)
        self.pending.clear()

    def _write(self, entry: dict[str, Any]) -> None:
        # One write of one whole line, so the reader never sees half an entry as complete.
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


def describe_failure(report: pytest.TestReport) -> tuple[str, str]:
    """(one-line reason, full explanation) for a failed report."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if report.when == "???":
        text = str(report.longrepr).strip()
        return "the pytest worker running this test crashed", text
    if crash is not None:
        message = _PLAIN_EXCEPTIONS.sub("", crash.message, count=1).strip()
        where = f"{Path(crash.path).name}:{crash.lineno}"
    else:
        message = str(report.longrepr).strip()
        where = ""
    lines = message.splitlines() or ["(no message)"]
    reason = lines[0].strip()
    if len(lines) > 1:
        command = _MACHINE_LINE.match(lines[1])
        if command and command.group(1) not in _NOT_A_COMMAND:
            reason += f"; command: {command.group(1)}"
    if report.when == "setup" and not reason:
        reason = "error while preparing the test"
    if report.when == "teardown":
        reason = f"error after the test: {reason}"
    details = message if not where else f"{message}\n(at {where})"
    return reason, details


def describe_skip(report: pytest.TestReport) -> tuple[str, str]:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    text = str(text).removeprefix("Skipped: ").strip()
    return f"skipped: {text}", ""
