"""The kernel's JSON writer (kern/profile/json.h) produces what a real parser accepts."""
import json
import os
from pathlib import Path

import pytest


def test_sample_document_parses():
    path = os.environ.get("JSON_SAMPLE")
    if not path or not Path(path).exists():
        pytest.skip("JSON_SAMPLE not produced (run through tests/host/Makefile)")
    doc = json.loads(Path(path).read_text(encoding="ascii"))
    assert [d["pid"] for d in doc] == [0, 1, 2]
    assert doc[1]["mode"] == "kernel"
    assert doc[2]["samples"][0]["symbol"] == 'Spinlock::acquire()\t"x"\\'
    assert doc[0]["samples"][1]["symbol"] == "\x01\x1f\x7f\xff"
    every = "".join(chr(c) for c in range(1, 256))
    assert doc[0]["samples"][2]["symbol"] == every
    assert doc[0]["samples"][3]["symbol"] == every[:97] + "..."
