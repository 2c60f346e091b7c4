"""What one run of mkfs gave (conftest.py's run_mkfs fixture returns it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
