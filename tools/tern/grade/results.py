"""Graded tests and their results, and the three ways the grader reports them.

A `GradedTest` is what the collection pass found: a pytest node id, the lab it belongs to,
the points it is worth and a title for people. A `Result` is what became of it: passed,
failed, skipped or not run, how long it took, and for a failure a one-line reason, the
full explanation and the console logs kept for it. Points are all or nothing: a test that
passes earns its points, anything else earns zero.

The same results are written three ways:

* `report_line()`: one line for the terminal, e.g.
  `profile: call rejects a bad pid: OK (1.3s) 5/5`.
* `gradescope_json()`: Gradescope's autograder results format (`score`, and `tests`, each with
  `name`, `score`, `max_score`, `status` and `output`), which course staff upload or which
  the autograder bundle writes to /autograder/results/results.json.
* `junit_xml()`: JUnit XML, which CI systems show as a test report.

Nothing here runs anything; grader.py does, and these functions only format.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence
from xml.etree import ElementTree as ET

# Status words, as grader.py prints them.
STATUS_WORDS = {"passed": "OK", "failed": "FAIL", "skipped": "SKIP", "not run": "NOT RUN"}
REASON_WIDTH = 160
# Gradescope shows `output` as text; a console tail is far more than a student reads.
OUTPUT_LIMIT = 8000
# XML 1.0 cannot carry most control characters, and a console transcript can contain them.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


@dataclass(frozen=True)
class GradedTest:
    nodeid: str
    lab: str
    points: float
    title: str
    slow: bool = False

    @property
    def name(self) -> str:
        return f"{self.lab}: {self.title}" if self.lab else self.title


@dataclass
class Result:
    test: GradedTest
    status: str  # "passed", "failed", "skipped" or "not run"
    duration: float = 0.0
    reason: str = ""
    details: str = ""
    logs: list[str] = field(default_factory=list)
    note: str = ""  # what a passing test measured (its "grade_note" property)

    @property
    def score(self) -> float:
        return self.test.points if self.status == "passed" else 0

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def number(value: float) -> int | float:
    """3.0 prints as 3; 2.5 stays 2.5."""
    return int(value) if float(value).is_integer() else round(value, 2)


def one_line(text: str, width: int = REASON_WIDTH) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 3] + "..."


def report_line(result: Result) -> str:
    test = result.test
    line = (f"{test.name}: {STATUS_WORDS[result.status]} ({result.duration:.1f}s) "
            f"{number(result.score)}/{number(test.points)}")
    if not result.passed and result.reason:
        line += f" -- {one_line(result.reason)}"
    elif result.passed and result.note:
        line += f" -- {one_line(result.note)}"
    return line


def score_of(results: Iterable[Result]) -> tuple[float, float]:
    """(points earned, points possible)."""
    results = list(results)
    return sum(r.score for r in results), sum(r.test.points for r in results)


def outcome_signature(results: Iterable[Result]) -> list[tuple[str, str, float]]:
    """What must not change between two runs of the same tree: who passed, and the score."""
    return sorted((r.test.nodeid, r.status, r.score) for r in results)


# --- Gradescope ----------------------------------------------------------------------------


def _output_of(result: Result) -> str:
    if result.passed:
        return result.note
    details = result.details.strip()
    first = details.splitlines()[0] if details else ""
    # The reason is usually the details' first line, perhaps with the command added.
    if details and first and result.reason.startswith(first):
        text = result.reason + details[len(first):]
    else:
        text = "\n".join(p for p in (result.reason, details) if p)
    if len(text) > OUTPUT_LIMIT:
        text = "...\n" + text[-OUTPUT_LIMIT:]
    return text


def gradescope_json(results: Sequence[Result], *, output: str = "",
                    extra: Sequence[dict[str, object]] = (),
                    execution_time: float | None = None) -> str:
    """Gradescope's results.json. `extra` entries (a build failure, say) come first."""
    score, _ = score_of(results)
    tests: list[dict[str, object]] = list(extra)
    for r in results:
        tests.append({
            "name": r.test.name,
            "score": number(r.score),
            "max_score": number(r.test.points),
            "status": "passed" if r.passed else "failed",
            "output": _output_of(r),
        })
    doc: dict[str, object] = {"score": number(score), "output": output,
                              "visibility": "visible", "stdout_visibility": "visible",
                              "tests": tests}
    if execution_time is not None:
        doc["execution_time"] = round(execution_time)
    return json.dumps(doc, indent=2) + "\n"


# --- JUnit XML -----------------------------------------------------------------------------


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("?", text)


def junit_xml(results: Sequence[Result], *, extra_failures: Sequence[tuple[str, str]] = ()
              ) -> str:
    """A JUnit report: one testsuite per lab, one testcase per graded test.

    `extra_failures` are (name, text) pairs for failures that are not tests, such as the
    build; they go in a suite of their own called "grader".
    """
    root = ET.Element("testsuites")
    suites: dict[str, ET.Element] = {}

    def suite(name: str) -> ET.Element:
        if name not in suites:
            suites[name] = ET.SubElement(root, "testsuite", name=name)
        return suites[name]

    counts: dict[str, list[float]] = {}
    for name, text in extra_failures:
        case = ET.SubElement(suite("grader"), "testcase", classname="grader", name=name,
                             time="0")
        ET.SubElement(case, "failure", message=_xml_text(one_line(text))).text = _xml_text(text)
        counts.setdefault("grader", [0, 0, 0, 0.0])
        counts["grader"][0] += 1
        counts["grader"][1] += 1
    for r in results:
        lab = r.test.lab or "tests"
        case = ET.SubElement(suite(lab), "testcase", classname=lab, name=r.test.title,
                             time=f"{r.duration:.3f}")
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="nodeid", value=r.test.nodeid)
        ET.SubElement(props, "property", name="points", value=str(number(r.test.points)))
        ET.SubElement(props, "property", name="score", value=str(number(r.score)))
        tally = counts.setdefault(lab, [0, 0, 0, 0.0])
        tally[0] += 1
        tally[3] += r.duration
        if r.status == "skipped":
            ET.SubElement(case, "skipped", message=_xml_text(one_line(r.reason)))
            tally[2] += 1
        elif not r.passed:
            failure = ET.SubElement(case, "failure", message=_xml_text(one_line(r.reason)))
            failure.text = _xml_text(_output_of(r))
            tally[1] += 1
    for name, element in suites.items():
        tests, failures, skipped, seconds = counts.get(name, [0, 0, 0, 0.0])
        element.set("tests", str(int(tests)))
        element.set("failures", str(int(failures)))
        element.set("errors", "0")
        element.set("skipped", str(int(skipped)))
        element.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"
