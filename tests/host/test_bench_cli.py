"""tools/bench records the command that made its figures: `make bench` names itself through
BENCH_COMMAND; run directly, tools/bench names itself with its own arguments."""

from __future__ import annotations

import sys

import pytest

from tern.bench import run


def test_run_directly_names_its_own_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCH_COMMAND", raising=False)
    monkeypatch.setattr(sys, "argv", ["tools/bench", "--smoke", "--only", "syscalls"])
    assert run.command_line(None) == "tools/bench --smoke --only syscalls"
    assert run.command_line(["--runs", "2"]) == "tools/bench --runs 2"


def test_make_bench_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_COMMAND", "make bench-smoke")
    assert run.command_line(None) == "make bench-smoke"
