"""The user library (user/lib), tried from a user program.

`tformat SEED CASES` (user/tests/tformat.cc) calls snprintf with random conversions, values
and buffer sizes, and prints each case with its result; the host formats the same value with
Python's % operator, which has the same conversions, and checks that snprintf kept the first
CAP - 1 bytes of that text and returned its whole length. The seed is TFORMAT_SEED if set,
otherwise drawn at random; it is printed, so a failure can be replayed.
"""

from __future__ import annotations

import re

from tern.machine import Machine
from tern.profile_props import seed_from_env

CASES = 400
LINE = re.compile(r"^tformat: ([^|\n]*%[^|\n]*)\|([^|]*)\|(\d+)\|(-?\d+)\|(.*)$", re.M)


def expected_text(fmt: str, value: str) -> str:
    """What C's snprintf would produce for fmt and the program's VALUE field."""
    if fmt.replace("%%", "").count("s"):
        return fmt % value
    bits = int(value, 16)
    conversion = re.search(r"%[-0-9]*(l?[dux])", fmt)[1]
    if conversion == "ld":
        arg = bits - (1 << 64) if bits >> 63 else bits
    elif conversion in ("lu", "lx"):
        arg = bits
    elif conversion == "d":
        low = bits & 0xFFFFFFFF
        arg = low - (1 << 32) if low >> 31 else low
    else:
        arg = bits & 0xFFFFFFFF
    return fmt % arg


def test_snprintf_cuts_and_counts(shared: Machine) -> None:
    seed = seed_from_env("TFORMAT_SEED")
    out = shared.run(f"tformat {seed} {CASES}", timeout=60)
    assert "tformat: FAIL" not in out, out
    assert re.search(r"^tformat: done\s*$", out, re.M), f"tformat did not finish:\n{out[-2000:]}"
    cases = LINE.findall(out.replace("\r", ""))
    assert len(cases) == CASES, f"{len(cases)} of {CASES} cases read back:\n{out[-2000:]}"
    wrong = []
    for fmt, value, cap, returned, text in cases:
        full = expected_text(fmt, value)
        want = (full[:int(cap) - 1] if int(cap) > 0 else "", len(full))
        if (text, int(returned)) != want:
            wrong.append(f"snprintf(cap {cap}, {fmt!r}, {value}) gave {text!r} and {returned}, "
                         f"expected {want[0]!r} and {want[1]}")
    print(f"seed {seed}: {len(cases)} cases, {len(wrong)} wrong")
    assert not wrong, "\n".join(wrong[:10])
