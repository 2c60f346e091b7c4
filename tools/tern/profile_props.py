"""Properties of /proc/profile that hold whatever the names and the reads, for the tests.

Shared by the project's tests (test_profile_json.py) and the lab's (test_lab_profile.py):

* Seeds: `seed_from_env` picks a fresh seed for a property test and prints it; setting the
  named environment variable replays a failure.
* Names: `user/tests/pnames.cc` recurses in a function whose UTF-8 name is longer than the
  kernel's name buffer, above one whose name fits. `name_problems` checks that every sample
  keeps at most 32 frames and that each long name is whole or cut with a visible "..."
  after a true prefix of it.
* Documents: `labread -r` opens a file several times, reads each opening with random sizes
  and goes on after the end; `parse_openings` reads its summary lines, and
  `document_problems` checks that every opening read one valid JSON document, nothing came
  after the end, and each document holds the previous one's samples.
"""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass

from tern import profile_check as pc

DESCEND = ("descenso_" + "ñ" * 80).encode()  # user/tests/pnames.cc: longer than the name buffer
BOTTOM = ("fondo_" + "é" * 70).encode()      # fits whole
CUT_MARK = b"..."
OPEN_LINE = re.compile(r"labread: open (\d+): (\d+) bytes, fnv1a ([0-9a-f]{8}), (\d+) reads, "
                       r"(\d+) bytes after the end")


def seed_from_env(name: str) -> int:
    """A seed for one property test: $NAME if set (to replay a failure), else a fresh one."""
    given = os.environ.get(name)
    seed = int(given) if given else random.SystemRandom().randrange(10**9)
    print(f"{name}={seed}")
    return seed


def hostile_names(rng: random.Random) -> tuple[bytes, bytes]:
    """Two names of the lengths of pnames' own, of random bytes 1..255 (any but NUL)."""
    def one(n: int) -> bytes:
        return bytes(rng.randrange(1, 256) for _ in range(n))
    return one(len(DESCEND)), one(len(BOTTOM))


def symbol_bytes(frame: pc.Frame) -> bytes:
    """A frame's name as the bytes the kernel read: it escapes each byte >= 0x7f as
    \\u00XX, which a JSON parser reads as the code point of that byte."""
    return frame["symbol"].encode("latin-1")


def name_problems(samples: list[pc.Sample], pid: int, long_names: list[bytes]) -> list[str]:
    """Frames at most 32 a sample, and each long name whole or cut with "..." after a prefix."""
    problems = []
    for i, s in enumerate(samples):
        frames = s["samples"]
        if len(frames) > pc.MAX_FRAMES:
            problems.append(f"sample {i} has {len(frames)} frames, more than {pc.MAX_FRAMES}")
        if s["pid"] != pid:
            continue
        for f in pc.user_frames(s):
            try:
                got = symbol_bytes(f)
            except UnicodeEncodeError:
                problems.append(f"sample {i}: name {f['symbol']!r} holds characters above "
                                f"U+00FF: bytes >= 0x7f should be escaped one by one, \\u00XX")
                continue
            for full in long_names:
                if got == full or not (full.startswith(got[:8]) and len(got) >= 8):
                    continue
                if not (got.endswith(CUT_MARK) and full.startswith(got[:-len(CUT_MARK)])):
                    problems.append(f"sample {i}: name {got!r} is neither {full!r} whole nor a "
                                    f"prefix of it followed by {CUT_MARK!r}")
                elif len(got) < 64:
                    problems.append(f"sample {i}: name cut to {len(got)} bytes: {got!r}")
    return problems


@dataclass(frozen=True)
class Opening:
    length: int
    fnv: int
    after: int  # bytes that came after a read had returned 0


def parse_openings(out: str, opens: int) -> list[Opening]:
    """The summary lines of `labread -r SEED OPENS ...`."""
    found = [Opening(int(g[1]), int(g[2], 16), int(g[4])) for g in OPEN_LINE.findall(out)]
    assert len(found) == opens, f"`labread -r` should report {opens} openings:\n{out}"
    return found


def document_problems(openings: list[Opening], last: bytes) -> list[str]:
    """Each opening read one valid document, and each document holds the previous one's
    samples: with samples only ever appended, document k is the last one's first bytes up to
    where document k's samples end, closed with "\\n]\\n"."""
    problems = []
    if pc.fnv1a(last) != openings[-1].fnv or len(last) != openings[-1].length:
        problems.append("the saved copy of the last opening differs from what labread read")
    for k, o in enumerate(openings, 1):
        if o.after:
            problems.append(f"opening {k}: {o.after} bytes came after a read had returned 0 "
                            f"(end of file)")
        if o.length < 4:
            problems.append(f"opening {k}: only {o.length} bytes")
            continue
        doc = last[:o.length - 3] + b"\n]\n"
        if pc.fnv1a(doc) != o.fnv:
            problems.append(f"opening {k}: its {o.length} bytes are not the first bytes of the "
                            f"last opening's document closed with \"\\n]\\n\"")
            continue
        try:
            json.loads(doc)
        except json.JSONDecodeError as err:
            problems.append(f"opening {k}: not valid JSON: {err}")
    lengths = [o.length for o in openings]
    if lengths != sorted(lengths):
        problems.append(f"a later opening has fewer samples: lengths {lengths}")
    elif lengths[0] == lengths[-1]:
        problems.append(f"no sample arrived while the file was read (lengths {lengths}): "
                        f"nothing was tried")
    return problems
