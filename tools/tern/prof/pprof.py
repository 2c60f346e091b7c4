"""pprof's profile.proto, the format of Go's `go tool pprof` and of many profiling services.

A pprof profile is a protocol-buffers message (protobuf.py writes it), gzipped. It is
normalised like a small database, so that a profile of millions of samples stays small:

    string_table   every string once; everything else refers to strings by index, and
                   index 0 must be the empty string
    function       a function: its name, and its source file and first line when the
                   build's debug information gives them (lines.py)
    location       a code address, the function it lies in and its source line (a "line")
    mapping        a range of addresses that came from one binary: one per user program
                   (named after the process, "[user]" for processes without a name) and
                   "[kernel.kallsyms]" for the kernel, as Linux's perf calls it
    sample         a stack as a list of location ids, innermost first, with one value per
                   sample type and labels that `pprof -tagfocus` filters on: pid, hart,
                   mode, and comm (the process's name) when it is known
    sample_type    what the values mean: here the number of samples, and the CPU time
                   they stand for (one sampling period each)

Field numbers are those of the public profile.proto. A few choices keep what pprof would
otherwise drop or get wrong:

  * hart is a string label: a numeric label of 0 is left out on the wire (as every zero
    is), and pprof reads a label with neither a value nor a unit as no label at all.
  * The busiest user program's mapping comes first, and the kernel's name starts with
    "[": pprof calls the first mapping whose name does not the profile's main binary
    (its "File:" line).
  * Code of an inlined function is a location with several lines, innermost first, as
    pprof wants inline frames: xorshift's line in user.h, then the line in `hot` that
    called it. A function whose own lines lie in several files is one pprof function per
    file, since a line number belongs to one file.
  * Kernel functions carry the " [k]" suffix in their names, as in every other view, and
    their plain name as system_name. User functions have no system_name: pprof takes a
    function whose two names are equal for one still to demangle, and "simplifies" an
    already demangled C++ name by cutting every parenthesised part, so
    "(anonymous namespace)::format(Output&)" would become "::format".
  * A sample with no frames at all (the walker could not read the stack) gets one
    location, "[unknown]", in no mapping, as in the folded view: pprof drops a sample
    without locations, and the counts would no longer add up.
  * time_nanos is the wall-clock time of the first sample. The machine keeps no calendar:
    the profile's end_time (when the file was written) less the profile's span is used,
    or the time of conversion when that is unknown.
"""

from __future__ import annotations

import gzip
import time
from typing import Dict, List, Optional, Set, Tuple

from .lines import Line, Sources
from .model import Frame, Profile, Sample
from .protobuf import Message

KERNEL_FILE = "kernel"  # the source file name of kernel functions
KERNEL_MAPPING_FILE = "[kernel.kallsyms]"
UNNAMED_PROGRAM = "[user]"
NO_FRAMES = Frame(0, "[unknown]", False)  # the one frame of a sample that has none

# Field numbers from profile.proto.
PROFILE_SAMPLE_TYPE, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION = 1, 2, 3, 4
PROFILE_FUNCTION, PROFILE_STRING_TABLE = 5, 6
PROFILE_TIME_NANOS, PROFILE_DURATION_NANOS, PROFILE_PERIOD_TYPE, PROFILE_PERIOD = 9, 10, 11, 12
PROFILE_COMMENT = 13
VALUE_TYPE_TYPE, VALUE_TYPE_UNIT = 1, 2
SAMPLE_LOCATION_ID, SAMPLE_VALUE, SAMPLE_LABEL = 1, 2, 3
LABEL_KEY, LABEL_STR, LABEL_NUM = 1, 2, 3
MAPPING_ID, MAPPING_START, MAPPING_LIMIT, MAPPING_FILENAME, MAPPING_HAS_FUNCTIONS = 1, 2, 3, 5, 7
MAPPING_HAS_FILENAMES, MAPPING_HAS_LINE_NUMBERS, MAPPING_HAS_INLINE_FRAMES = 8, 9, 10
LOCATION_ID, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE = 1, 2, 3, 4
LINE_FUNCTION_ID, LINE_LINE = 1, 2
FUNCTION_ID, FUNCTION_NAME, FUNCTION_SYSTEM_NAME, FUNCTION_FILENAME = 1, 2, 3, 4
FUNCTION_START_LINE = 5


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


def encode(profile: Profile, period_us: Optional[int] = None,
           sources: Optional[Sources] = None) -> bytes:
    """The profile as an uncompressed profile.proto message.

    period_us is the sampling period; if None it is estimated from the timestamps, and if
    that is impossible too the profile has sample counts only, no CPU time. With sources
    (lines.py), each location has its source line and each function its file and first
    line, so that `pprof -list FUNCTION` prints the source with a count beside each line.
    """
    if period_us is None:
        period_us = profile.period_us()
    strings = StringTable()
    out = Message()

    out.message(PROFILE_SAMPLE_TYPE, value_type(strings, "samples", "count"))
    if period_us:
        out.message(PROFILE_SAMPLE_TYPE, value_type(strings, "cpu", "nanoseconds"))

    # One mapping per user program, the busiest first, then the kernel's.
    programs = program_order(profile)
    mapping_of_program = {name: i + 1 for i, name in enumerate(programs)}
    kernel_mapping = len(programs) + 1

    functions: Dict[Tuple[str, bool, str], int] = {}
    locations: Dict[Tuple[int, int, str, Optional[Line]], int] = {}
    function_msgs: List[Message] = []
    location_msgs: List[Message] = []
    extent: Dict[int, Tuple[int, int]] = {}  # each mapping's lowest and highest address
    with_lines: Set[int] = set()  # the mappings whose locations have source lines
    with_inlines: Set[int] = set()  # ... and inlined functions

    def function_id(frame: Frame, start: Optional[Line], line: Optional[Line]) -> int:
        # A function whose code lies in several files (a function of a header inlined into
        # it) is one pprof function per file: a line number means something in one file.
        where = line or start
        path = where.path if where else (KERNEL_FILE if frame.kernel else "")
        key = (frame.label, frame.kernel, path)
        if key not in functions:
            functions[key] = len(functions) + 1
            m = Message().uint(FUNCTION_ID, functions[key])
            m.uint(FUNCTION_NAME, strings(frame.label))
            if frame.label != frame.symbol:
                m.uint(FUNCTION_SYSTEM_NAME, strings(frame.symbol))
            m.uint(FUNCTION_FILENAME, strings(path))
            if start is not None and start.path == path:
                m.uint(FUNCTION_START_LINE, start.line)
            function_msgs.append(m)
        return functions[key]

    def location_id(s: Sample, index: int, mapping: int) -> int:
        frame = s.frames[index] if s.frames else NO_FRAMES
        chain = tuple(sources.chain(s, index)) if sources and s.frames else ()
        key = (mapping, frame.address, frame.label, chain)
        if key not in locations:
            locations[key] = len(locations) + 1
            if mapping:
                low, high = extent.get(mapping, (frame.address, frame.address))
                extent[mapping] = (min(low, frame.address), max(high, frame.address))
            start = sources.start(s, index) if sources and s.frames else None
            location = (Message().uint(LOCATION_ID, locations[key])
                        .uint(LOCATION_MAPPING_ID, mapping)
                        .uint(LOCATION_ADDRESS, frame.address))
            # Inlined functions first, each a frame of its own to pprof, then the frame's.
            for name, line in chain[:-1]:
                inlined = Frame(0, name, frame.kernel)
                location.message(LOCATION_LINE, Message()
                                 .uint(LINE_FUNCTION_ID, function_id(inlined, None, line))
                                 .uint(LINE_LINE, line.line))
                with_inlines.add(mapping)
            line = chain[-1][1] if chain else None
            entry = Message().uint(LINE_FUNCTION_ID, function_id(frame, start, line))
            if line is not None:
                entry.uint(LINE_LINE, line.line)
                with_lines.add(mapping)
            location_msgs.append(location.message(LOCATION_LINE, entry))
        return locations[key]

    def label(key: str, *, text: str = "", number: int = 0) -> Message:
        m = Message().uint(LABEL_KEY, strings(key))
        return m.uint(LABEL_STR, strings(text)) if text else m.uint(LABEL_NUM, number)

    for s in sorted(profile.samples, key=lambda s: s.timestamp):
        program = mapping_of_program.get(program_name(profile, s.pid), 0)
        ids = [location_id(s, i, kernel_mapping if f.kernel else program)
               for i, f in enumerate(s.frames)]
        if not ids:
            ids = [location_id(s, 0, 0)]
        sample = Message().packed(SAMPLE_LOCATION_ID, ids)
        sample.packed(SAMPLE_VALUE, [1, period_us * 1000] if period_us else [1])
        sample.message(SAMPLE_LABEL, label("pid", number=s.pid))
        sample.message(SAMPLE_LABEL, label("hart", text=str(s.hart)))
        sample.message(SAMPLE_LABEL, label("mode", text=s.mode))
        if profile.names.get(s.pid):
            sample.message(SAMPLE_LABEL, label("comm", text=profile.names[s.pid]))
        out.message(PROFILE_SAMPLE, sample)

    files = [*programs, KERNEL_MAPPING_FILE]
    for mapping_id, filename in enumerate(files, 1):
        if mapping_id not in extent:
            continue
        low, high = extent[mapping_id]
        lined = mapping_id in with_lines
        out.message(PROFILE_MAPPING, Message().uint(MAPPING_ID, mapping_id)
                    .uint(MAPPING_START, low).uint(MAPPING_LIMIT, high + 1)
                    .uint(MAPPING_FILENAME, strings(filename)).uint(MAPPING_HAS_FUNCTIONS, 1)
                    .uint(MAPPING_HAS_FILENAMES, lined).uint(MAPPING_HAS_LINE_NUMBERS, lined)
                    .uint(MAPPING_HAS_INLINE_FRAMES, mapping_id in with_inlines))
    for m in location_msgs:
        out.message(PROFILE_LOCATION, m)
    for m in function_msgs:
        out.message(PROFILE_FUNCTION, m)

    first, last = profile.time_span()
    end = profile.end_time if profile.end_time is not None else time.time()
    start_ns = round(end * 1e9) - (last - first) * 1000
    comment = strings(f"tern profile: the samples were taken {first / 1e6:.6f} s to "
                      f"{last / 1e6:.6f} s after the machine's boot")
    if period_us:
        out.message(PROFILE_PERIOD_TYPE, value_type(strings, "cpu", "nanoseconds"))
    # The string table is complete once nothing below adds to it.
    for text in strings.strings:
        out.string(PROFILE_STRING_TABLE, text, keep_empty=True)
    out.uint(PROFILE_TIME_NANOS, start_ns)
    out.uint(PROFILE_DURATION_NANOS, (last - first + (period_us or 0)) * 1000)
    if period_us:
        out.uint(PROFILE_PERIOD, period_us * 1000)
    out.packed(PROFILE_COMMENT, [comment])
    return out.encode()


def program_name(profile: Profile, pid: int) -> str:
    """The name of the program a process runs, as its mapping is called."""
    return profile.names.get(pid) or UNNAMED_PROGRAM


def program_order(profile: Profile) -> List[str]:
    """The user programs, the one with the most samples in user code first."""
    counts: Dict[str, int] = {}
    for s in profile.samples:
        if any(not f.kernel for f in s.frames):
            name = program_name(profile, s.pid)
            counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda name: (-counts[name], name))


def render(profile: Profile, period_us: Optional[int] = None,
           sources: Optional[Sources] = None) -> bytes:
    """The gzipped profile, as `pprof` reads it. mtime=0 makes equal profiles equal bytes."""
    return gzip.compress(encode(profile, period_us, sources), mtime=0)
