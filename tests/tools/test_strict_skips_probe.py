"""A test that skips when STRICT_SKIPS_PROBE=1 and passes at once otherwise: the probe that
tests/grader/test_strict_skips.py runs to check that skips fail under CI=true here too."""

import os

import pytest


def test_probe() -> None:
    if os.environ.get("STRICT_SKIPS_PROBE") == "1":
        pytest.skip("the probe skips on purpose")
