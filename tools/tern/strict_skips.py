"""Skips are failures under continuous integration.

A test skips when something it needs is missing (a package, a tool, a built file). On a
developer's machine that is a convenience; in CI, where tools/deps installs everything, a
skip means a test that proves nothing went unnoticed. So when the environment has
`CI=true`, every skipped test (and every skipped test file) is reported as failed instead,
with the skip's reason. `make test` runs pytest with `-rfEs`, which lists the reasons of the
skips that remain outside CI.

This module is a pytest plugin (the root pytest.ini loads it for every test): its report
hooks run inside the others' (trylast), so tools/tern/fixtures.py records the final outcome.
"""

from __future__ import annotations

import os

import pytest


def strict() -> bool:
    """Whether skips are forbidden: CI=true (or 1, yes) in the environment."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def fail_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Under CI=true, turn a skipped report into a failed one that gives the reason. An
    expected failure (xfail) is reported as skipped too, and is left alone."""
    if not strict() or not report.skipped or hasattr(report, "wasxfail"):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped, and skips fail the run under CI=true: {skip_reason(report)}"


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_make_collect_report(collector: pytest.Collector):
    outcome = yield
    fail_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    outcome = yield
    fail_skip(outcome.get_result())
