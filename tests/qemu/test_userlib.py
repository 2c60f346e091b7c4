"""The user library (user/lib), tried from a user program.

`tformat SEED CASES` (user/tests/tformat.cc) calls snprintf with random conversions, values
and buffer sizes, and prints each case with its result; the host formats the same value with
Python's % operator, which has the same conversions, and checks that snprintf kept the first
CAP - 1 bytes of that text and returned its whole length. The seed is TFORMAT_SEED if set,
otherwise drawn at random; it is printed, so a failure can be replayed.

usage_exit (user/lib/printf.cc), through the programs that call it: random command lines that
they cannot take (USAGE_SEED) must each give one line `usage: PROGRAM ...` and exit status 1.
"""

from __future__ import annotations

import random
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


# The programs that answer a command line they cannot take with a usage line: how many arguments
# each takes at the least and at the most (None: any number), and first arguments it refuses
# (durations among them: seconds with at most one decimal, tenths() in user/lib/ulib.cc).
USAGE_PROGRAMS: dict[str, tuple[int, int | None, list[str]]] = {
    "labnofp": (0, 1, ["-1"]), "labret": (0, 1, ["-2", "0.25", "x"]),
    "labstart": (0, 1, ["61", "60.1", "-1", ".5"]),
    "labwords": (0, 2, ["-1"]), "labforks": (1, 3, ["0", "9"]), "pbench": (1, 2, ["1", "0"]),
    "expcopy": (1, 2, []),
    "grep": (1, None, []), "halt": (0, 0, []), "kill": (1, None, []), "ln": (2, 2, []),
    "mkdir": (1, None, []), "pstatus": (1, None, []), "rm": (1, None, []),
    "bytewise": (0, 1, ["0", "257", "-8"]), "crc": (0, 1, ["0", "1025", "-1"]),
    "psys": (0, 2, ["-1", "0.3.1"]), "spin": (0, 1, ["x", "-1", "1.", "0.3s", "1234567"]),
    "crashwork": (0, 2, ["x"]),
    "pbadfp": (1, 2, ["nowhere"]), "pdeep": (1, 2, ["0", "101"]), "plong": (0, 1, ["-1"]),
    "pnames": (1, 2, ["0", "101"]), "pstall": (2, 3, ["0"]),
    "profrace": (0, 3, []), "pfollow": (0, 0, []), "bsys": (1, None, []), "tbadarg": (0, 0, []),
    "tfault": (1, 1, []),
    "tformat": (2, 2, []), "tlines": (0, 2, ["0", "9"]),
}
USAGE_CASES = 60


def bad_command_line(rng: random.Random) -> str:
    """A command line that one of USAGE_PROGRAMS cannot take: too few or too many arguments,
    or one argument out of range."""
    name = rng.choice(sorted(USAGE_PROGRAMS))
    least, most, out_of_range = USAGE_PROGRAMS[name]
    counts = list(range(least)) + ([] if most is None else [most + 1, most + 2, most + 4])
    if out_of_range and (not counts or rng.random() < 0.5):
        args = [rng.choice(out_of_range)]
    else:
        args = [str(rng.randrange(1, 1000)) for _ in range(rng.choice(counts))]
    return " ".join([name] + args)


def test_usage_exit(shared: Machine) -> None:
    seed = seed_from_env("USAGE_SEED")
    rng = random.Random(seed)
    wrong = []
    for _ in range(USAGE_CASES):
        cmd = bad_command_line(rng)
        out = shared.run(f"pstatus {cmd}").replace("\r", "")
        name = cmd.split()[0]
        # One line, or (bsys) one line and its indented continuations.
        if not re.fullmatch(rf"usage: {name}\b[^\n]*\n(?:[ \t]+[^\n]*\n)*pstatus: exit 1\s*", out):
            wrong.append(f"`{cmd}` should print its usage (`usage: {name} ...`) and exit with "
                         f"status 1, printed {out!r}")
    print(f"seed {seed}: {USAGE_CASES} command lines, {len(wrong)} wrong")
    assert not wrong, "\n".join(wrong[:10])
