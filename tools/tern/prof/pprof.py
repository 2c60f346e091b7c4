"""pprof's profile.proto, the format of Go's `go tool pprof` and of many profiling services.

A pprof profile is a protocol-buffers message (protobuf.py writes it), gzipped. It is
normalised like a small database, so that a profile of millions of samples stays small:

    string_table   every string once; everything else refers to strings by index, and
                   index 0 must be the empty string
    function       a function: its name (and, in bigger tools, its source file)
    location       a code address, and the function it lies in (a "line")
    mapping        a range of addresses that came from one binary: here one for the
                   kernel and one for user programs
    sample         a stack as a list of location ids, innermost first, with one value per
                   sample type and labels (pid, hart, mode) that `pprof -tagfocus` filters on
    sample_type    what the values mean: here the number of samples, and the CPU time
                   they stand for (one sampling period each)

Field numbers are those of the public profile.proto. Kernel functions carry the " [k]"
suffix in their names, as in every other view, and have "kernel" as their file name.
The profile's time_nanos counts from tern's boot, since the machine keeps no calendar.
"""

from __future__ import annotations

import gzip
from typing import Dict, List, Optional, Tuple

from .model import Frame, Profile
from .protobuf import Message

KERNEL_FILE = "kernel"

# Field numbers from profile.proto.
PROFILE_SAMPLE_TYPE, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION = 1, 2, 3, 4
PROFILE_FUNCTION, PROFILE_STRING_TABLE = 5, 6
PROFILE_TIME_NANOS, PROFILE_DURATION_NANOS, PROFILE_PERIOD_TYPE, PROFILE_PERIOD = 9, 10, 11, 12
PROFILE_COMMENT = 13
VALUE_TYPE_TYPE, VALUE_TYPE_UNIT = 1, 2
SAMPLE_LOCATION_ID, SAMPLE_VALUE, SAMPLE_LABEL = 1, 2, 3
LABEL_KEY, LABEL_STR, LABEL_NUM = 1, 2, 3
MAPPING_ID, MAPPING_START, MAPPING_LIMIT, MAPPING_FILENAME, MAPPING_HAS_FUNCTIONS = 1, 2, 3, 5, 7
LOCATION_ID, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE = 1, 2, 3, 4
LINE_FUNCTION_ID = 1
FUNCTION_ID, FUNCTION_NAME, FUNCTION_SYSTEM_NAME, FUNCTION_FILENAME = 1, 2, 3, 4

KERNEL_MAPPING, USER_MAPPING = 1, 2


class StringTable:
    def __init__(self) -> None:
        self.strings: List[str] = [""]
        self._index: Dict[str, int] = {"": 0}

    def __call__(self, text: str) -> int:
        """The index of `text`, adding it the first time."""
        if text not in self._index:
            self._index[text] = len(self.strings)
            self.strings.append(text)
        return self._index[text]


def value_type(strings: StringTable, kind: str, unit: str) -> Message:
    return Message().uint(VALUE_TYPE_TYPE, strings(kind)).uint(VALUE_TYPE_UNIT, strings(unit))


def encode(profile: Profile, period_us: Optional[int] = None) -> bytes:
    """The profile as an uncompressed profile.proto message.

    period_us is the sampling period; if None it is estimated from the timestamps, and if
    that is impossible too the profile has sample counts only, no CPU time.
    """
    if period_us is None:
        period_us = profile.period_us()
    strings = StringTable()
    out = Message()

    out.message(PROFILE_SAMPLE_TYPE, value_type(strings, "samples", "count"))
    if period_us:
        out.message(PROFILE_SAMPLE_TYPE, value_type(strings, "cpu", "nanoseconds"))

    functions: Dict[Tuple[str, bool], int] = {}
    locations: Dict[Tuple[int, str, bool], int] = {}
    function_msgs: List[Message] = []
    location_msgs: List[Message] = []

    def function_id(frame: Frame) -> int:
        key = (frame.label, frame.kernel)
        if key not in functions:
            functions[key] = len(functions) + 1
            m = Message().uint(FUNCTION_ID, functions[key])
            m.uint(FUNCTION_NAME, strings(frame.label))
            m.uint(FUNCTION_SYSTEM_NAME, strings(frame.symbol))
            if frame.kernel:
                m.uint(FUNCTION_FILENAME, strings(KERNEL_FILE))
            function_msgs.append(m)
        return functions[key]

    def location_id(frame: Frame) -> int:
        key = (frame.address, frame.label, frame.kernel)
        if key not in locations:
            locations[key] = len(locations) + 1
            line = Message().uint(LINE_FUNCTION_ID, function_id(frame))
            location_msgs.append(
                Message().uint(LOCATION_ID, locations[key])
                .uint(LOCATION_MAPPING_ID, KERNEL_MAPPING if frame.kernel else USER_MAPPING)
                .uint(LOCATION_ADDRESS, frame.address)
                .message(LOCATION_LINE, line))
        return locations[key]

    for s in sorted(profile.samples, key=lambda s: s.timestamp):
        sample = Message().packed(SAMPLE_LOCATION_ID, [location_id(f) for f in s.frames])
        sample.packed(SAMPLE_VALUE, [1, period_us * 1000] if period_us else [1])
        for key, number in (("pid", s.pid), ("hart", s.hart)):
            sample.message(SAMPLE_LABEL, Message().uint(LABEL_KEY, strings(key))
                           .uint(LABEL_NUM, number))
        sample.message(SAMPLE_LABEL, Message().uint(LABEL_KEY, strings("mode"))
                       .uint(LABEL_STR, strings(s.mode)))
        out.message(PROFILE_SAMPLE, sample)

    for mapping_id, kernel, filename in ((KERNEL_MAPPING, True, KERNEL_FILE),
                                         (USER_MAPPING, False, "user")):
        addresses = [f.address for s in profile.samples for f in s.frames if f.kernel == kernel]
        if not addresses:
            continue
        out.message(PROFILE_MAPPING, Message().uint(MAPPING_ID, mapping_id)
                    .uint(MAPPING_START, min(addresses)).uint(MAPPING_LIMIT, max(addresses) + 1)
                    .uint(MAPPING_FILENAME, strings(filename)).uint(MAPPING_HAS_FUNCTIONS, 1))
    for m in location_msgs:
        out.message(PROFILE_LOCATION, m)
    for m in function_msgs:
        out.message(PROFILE_FUNCTION, m)

    first, last = profile.time_span()
    comment = strings("tern profile: time_nanos counts from the machine's boot")
    if period_us:
        out.message(PROFILE_PERIOD_TYPE, value_type(strings, "cpu", "nanoseconds"))
    # The string table is complete once nothing below adds to it.
    for text in strings.strings:
        out.string(PROFILE_STRING_TABLE, text, keep_empty=True)
    out.uint(PROFILE_TIME_NANOS, first * 1000)
    out.uint(PROFILE_DURATION_NANOS, (last - first + (period_us or 0)) * 1000)
    if period_us:
        out.uint(PROFILE_PERIOD, period_us * 1000)
    out.packed(PROFILE_COMMENT, [comment])
    return out.encode()


def render(profile: Profile, period_us: Optional[int] = None) -> bytes:
    """The gzipped profile, as `pprof` reads it. mtime=0 makes equal profiles equal bytes."""
    return gzip.compress(encode(profile, period_us), mtime=0)
