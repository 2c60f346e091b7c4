"""Programs whose symbol tables lie: the profiler reads them, and must survive every one.

When a profiled process execs, the kernel reads the program's section headers and symbol
tables (kern/profile/symbolize.cc: probe(), copy_sorted(), copy_elf(), find_windows()), and
looks addresses up in its copy whenever /proc/profile is read. Exec itself reads only the
ELF header but for its section fields, the program headers and the loaded segments, so a
program with any bytes elsewhere still runs: whoever can write a file can hand the profiler
any table.

This test writes such programs: copies of sleep and of spin (a few, so that the shell is
not starved), half with the table the build adds (`.symtab.sorted`), half with only the
standard `.symtab` (the sorted one renamed away), each with one to three seeded corruptions
of what exec never reads: the ELF header's section fields; the name, type, offset, size,
link, info or entsize of any section header; the sorted table's header and entries; the ELF
symbols; the string tables (names without their NUL); random bytes; a well-formed table of
hundreds of symbols with names of up to 300 bytes appended, 64 KiB, four times what the
profiler keeps of a program; or the file cut short after its last loaded byte. Values are
chosen to break arithmetic: 0, the file's size, 2^31, 2^32 - 1, 2^63, lengths that fit the
file, entries out of order. Every corruption is checked to leave what exec reads untouched,
so each copy runs as sleep or spin does.

They all run at once under `profile all on`, in two rounds of 20 (the profiler keeps 32
programs, kern/profile/images.cc, in a 128 KiB arena that the appended tables can use up, so
that later copies keep a shorter table or none). Each round waits until every copy has been
sampled under its own name. Then the machine must not have panicked or trapped in the
kernel, /proc/profile must be one valid JSON document of the documented schema, each copy's
samples after its exec must name that copy, and each of its user frames must be named "??"
or with bytes of the copy's own file, whole or cut with "...". Last, the machine must still
run commands. The seed is printed, and each round's corruptions (shown with a failure);
SYMTAB_SEED=N replays a run.
"""

from __future__ import annotations

import random
import struct
import time
from pathlib import Path
from typing import Callable

from tern import export_disk
from tern import jobs
from tern import profile_check as pc
from tern.host import PROGRAMS, image_with
from tern.machine import Machine, timeout_scale
from tern.profile_props import CUT_MARK, seed_from_env, symbol_bytes

COPIES = 20  # a round: with init, the shell and the commands typed, within its 32 programs
ROUNDS = 2
SPIN_EVERY = 5  # one copy in 5 is spin's, which runs user code; the others sleep's
WAIT = 60  # s for every copy to be sampled, at GRADE_TIMEOUT_SCALE=1
RATE = 50  # Hz: a few thousand samples a round, where every copy has some

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")  # the ELF64 header
PHDR = struct.Struct("<IIQQQQQQ")
SHDR = struct.Struct("<IIQQQQIIQQ")
SHDR_FIELDS = {"name": (0, "I"), "type": (4, "I"), "offset": (24, "Q"), "size": (32, "Q"),
               "link": (40, "I"), "info": (44, "I"), "entsize": (56, "Q")}
EHDR_FIELDS = {"shoff": (0x28, "Q"), "shentsize": (0x3A, "H"), "shnum": (0x3C, "H"),
               "shstrndx": (0x3E, "H")}
SORTED = b".symtab.sorted"
HIDDEN = b".symtab.sortex"  # the same length: the kernel then falls back to .symtab
SYMT_HEADER = 16  # kern/lib/symtab.h: magic, count, strtab_size, reserved
SYMT_ENTRY = 16  # addr u64, size u32, name u32
ELF_SYM = 24
HUGE_BYTES = 64 * 1024  # a table huge_table() appends: four times what the profiler keeps
IMAGE_BLOCKS = 20000  # of 1 KiB: room for the copies beside the programs


def value(rng: random.Random, kind: str, size: int) -> int:
    """A value for a field of struct kind `kind` ("H", "I" or "Q") that arithmetic trips on:
    an edge, a number within the file (an offset or a length that still fits, a little or a
    lot wrong), or any number at all."""
    bits = {"H": 16, "I": 32, "Q": 64}[kind]
    top = (1 << bits) - 1
    edges = [0, 1, size - 1, size, size + 1, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000,
             0xFFFFFFF0, 0xFFFFFFFF, 1 << 32, (1 << 32) + 64, 1 << 63, top]
    pick = rng.choice([rng.choice(edges), rng.randrange(size), rng.randrange(top + 1)])
    return pick & top


def put(data: bytearray, offset: int, kind: str, number: int) -> None:
    struct.pack_into("<" + kind, data, offset, number)


class Layout:
    """Where a (maybe already corrupted) program keeps what the profiler reads."""

    def __init__(self, data: bytes) -> None:
        (_, _, _, _, _, self.phoff, self.shoff, _, _, _, self.phnum, _, self.shnum,
         self.shstrndx) = EHDR.unpack_from(data)
        self.sections: list[tuple[int, bytes, tuple]] = []  # (header offset, name, fields)
        if not (0 < self.shoff and self.shoff + self.shnum * SHDR.size <= len(data)):
            return
        headers = [SHDR.unpack_from(data, self.shoff + i * SHDR.size) for i in range(self.shnum)]
        names = headers[self.shstrndx] if self.shstrndx < self.shnum else None
        for i, h in enumerate(headers):
            name = b""
            if names is not None and names[4] + h[0] < len(data):
                name = data[names[4] + h[0]:].split(b"\0", 1)[0]
            self.sections.append((self.shoff + i * SHDR.size, name, h))

    def section(self, name: bytes) -> tuple[int, int] | None:
        """The file offset and size of the section named `name`, if it lies in the file."""
        for _, n, h in self.sections:
            if n == name:
                return h[4], h[5]
        return None


def protected(data: bytes) -> list[tuple[int, int]]:
    """The byte ranges exec reads (kern/proc/exec.cc): the header but for the section
    fields (e_shoff at 0x28, e_shentsize, e_shnum and e_shstrndx from 0x3A), the program
    headers and the loaded segments."""
    layout = Layout(data)
    ranges = [(0, 0x28), (0x30, 0x3A), (layout.phoff, layout.phoff + layout.phnum * PHDR.size)]
    for i in range(layout.phnum):
        ph = PHDR.unpack_from(data, layout.phoff + i * PHDR.size)
        if ph[0] == 1:  # PT_LOAD
            ranges.append((ph[2], ph[2] + ph[5]))
    return ranges


# --- The corruptions: each changes `data` in place and says what it did, or returns None ----


def elf_header(data: bytearray, rng: random.Random) -> str | None:
    field = rng.choice(list(EHDR_FIELDS))
    offset, kind = EHDR_FIELDS[field]
    number = value(rng, kind, len(data))
    put(data, offset, kind, number)
    return f"e_{field} = {number:#x}"


def section_field(data: bytearray, rng: random.Random) -> str | None:
    layout = Layout(data)
    if not layout.sections:
        return None
    wanted = [s for s in layout.sections if s[1] in (SORTED, b".symtab", b".strtab")]
    where, name, _ = rng.choice(wanted if wanted and rng.random() < 0.75 else layout.sections)
    field = rng.choice(list(SHDR_FIELDS))
    offset, kind = SHDR_FIELDS[field]
    number = 2 if field == "type" and rng.random() < 0.5 else value(rng, kind, len(data))
    put(data, where + offset, kind, number)  # type 2 is SHT_SYMTAB
    return f"section {name.decode(errors='replace')!r} sh_{field} = {number:#x}"


def sorted_header(data: bytearray, rng: random.Random) -> str | None:
    found = Layout(data).section(SORTED)
    if found is None or found[0] + SYMT_HEADER > len(data):
        return None
    field, offset = rng.choice([("magic", 0), ("count", 4), ("strtab_size", 8)])
    count = struct.unpack_from("<I", data, found[0] + 4)[0]
    number = rng.choice([count + rng.randint(1, 2000), value(rng, "I", len(data))])
    put(data, found[0] + offset, "I", number & 0xFFFFFFFF)
    return f"sorted table {field} = {number & 0xFFFFFFFF:#x}"


def sorted_entries(data: bytearray, rng: random.Random) -> str | None:
    found = Layout(data).section(SORTED)
    if found is None or found[0] + SYMT_HEADER > len(data):
        return None
    count = struct.unpack_from("<I", data, found[0] + 4)[0]
    first = found[0] + SYMT_HEADER
    count = min(count, (len(data) - first) // SYMT_ENTRY)
    if count < 2:
        return None
    if rng.random() < 0.3:  # out of order: the table claims to be sorted
        entries = [bytes(data[first + i * SYMT_ENTRY:first + (i + 1) * SYMT_ENTRY])
                   for i in range(count)]
        rng.shuffle(entries)
        data[first:first + count * SYMT_ENTRY] = b"".join(entries)
        return f"sorted table's {count} entries shuffled"
    picked = rng.sample(range(count), min(count, rng.randint(1, 8)))
    field, offset, kind = rng.choice([("addr", 0, "Q"), ("size", 8, "I"), ("name", 12, "I")])
    for i in picked:
        put(data, first + i * SYMT_ENTRY + offset, kind, value(rng, kind, len(data)))
    return f"sorted table entries {sorted(picked)}: {field} changed"


def elf_symbols(data: bytearray, rng: random.Random) -> str | None:
    found = Layout(data).section(b".symtab")
    if found is None or found[0] + ELF_SYM > len(data):
        return None
    count = min(found[1], len(data) - found[0]) // ELF_SYM
    if count == 0:
        return None
    picked = rng.sample(range(count), min(count, rng.randint(1, 16)))
    field, offset, kind = rng.choice([("name", 0, "I"), ("value", 8, "Q"), ("size", 16, "Q")])
    for i in picked:
        at = found[0] + i * ELF_SYM
        data[at + 4] = (data[at + 4] & 0xF0) | 2  # STT_FUNC: the kernel copies these
        put(data, at + offset, kind, value(rng, kind, len(data)))
    return f".symtab symbols {sorted(picked)[:4]}...: st_{field} changed"


def unterminated(data: bytearray, rng: random.Random) -> str | None:
    layout = Layout(data)
    tables = []
    if (found := layout.section(SORTED)) is not None and found[0] + SYMT_HEADER <= len(data):
        count, size = struct.unpack_from("<II", data, found[0] + 4)
        tables.append(("sorted table's", found[0] + SYMT_HEADER + count * SYMT_ENTRY, size))
    if (found := layout.section(b".strtab")) is not None:
        tables.append((".strtab's", *found))
    tables = [(n, start, size) for n, start, size in tables if 0 < size and start < len(data)]
    if not tables:
        return None
    name, start, size = rng.choice(tables)
    end = min(start + size, len(data))
    lo = rng.randrange(start, end)
    hi = end if rng.random() < 0.5 else min(end, lo + rng.randint(1, 400))
    for i in range(lo, hi):
        if data[i] == 0:
            data[i] = rng.randrange(1, 256)
    return f"{name} NULs from {lo - start} to {hi - start} replaced"


def random_bytes(data: bytearray, rng: random.Random) -> str | None:
    after = max(end for _, end in protected(bytes(data)))
    if after >= len(data):
        return None
    spots = [rng.randrange(after, len(data)) for _ in range(rng.randint(1, 32))]
    for i in spots:
        data[i] = rng.randrange(256)
    return f"{len(spots)} random bytes after the code"


def huge_table(data: bytearray, rng: random.Random) -> str | None:
    """A well-formed table far larger than the profiler keeps of a program (16 KiB,
    images.cc): HUGE_BYTES of symbols with names of up to 300 bytes, appended to the file,
    which the table's section header then points to."""
    layout = Layout(data)
    sorted_table = layout.section(SORTED) is not None
    wanted = [s for s in layout.sections if s[1] == (SORTED if sorted_table else b".symtab")]
    if not wanted:
        return None
    where = wanted[0][0]
    link = SHDR.unpack_from(data, where)[6]
    if not sorted_table and link >= len(layout.sections):
        return None
    names = bytearray(b"\0")
    offsets: list[int] = []
    while len(names) + len(offsets) * ELF_SYM < HUGE_BYTES:  # files hold 268 KiB at most
        offsets.append(len(names))
        names += b"f%d_" % len(offsets) + b"x" * rng.choice([0, 8, 150, 300]) + b"\0"
    count = len(offsets)
    addrs = sorted(rng.randrange(0x1000, 0x10000) for _ in range(count))
    if sorted_table:
        entries = b"".join(struct.pack("<QII", a, rng.choice([0, 4, 64]), o)
                           for a, o in zip(addrs, offsets))
        blob = struct.pack("<IIII", 0x544D5953, count, len(names), 0) + entries + names
    else:  # the symbols, then their names; sh_link keeps naming .strtab, whose header moves
        entries = b"".join(struct.pack("<IBBHQQ", o, 0x12, 0, 1, a, rng.choice([4, 64]))
                           for a, o in zip(addrs, offsets))
        strtab = layout.sections[link][0]
        put(data, strtab + 24, "Q", len(data) + len(entries))
        put(data, strtab + 32, "Q", len(names))
        blob = entries + names
    put(data, where + 24, "Q", len(data))
    put(data, where + 32, "Q", len(blob))
    data += blob
    return f"a table of {count} symbols ({len(blob)} bytes) appended"


def cut_short(data: bytearray, rng: random.Random) -> str | None:
    after = max(end for _, end in protected(bytes(data)))
    if after >= len(data):
        return None
    keep = rng.randrange(after, len(data))
    del data[keep:]
    return f"cut to {keep} bytes"


CORRUPTIONS: list[Callable[[bytearray, random.Random], str | None]] = [
    elf_header, section_field, section_field, sorted_header, sorted_entries, elf_symbols,
    unterminated, random_bytes, huge_table, cut_short]


def corrupt(program: bytes, rng: random.Random) -> tuple[bytes, list[str]]:
    """`program` with one to three corruptions, none of them in what exec reads."""
    keep = [(lo, hi, program[lo:hi]) for lo, hi in protected(program)]
    data = bytearray(program)
    said = []
    for _ in range(rng.randint(1, 3)):
        for _attempt in range(20):
            trial = bytearray(data)
            note = rng.choice(CORRUPTIONS)(trial, rng)
            if note is not None and all(trial[lo:hi] == old for lo, hi, old in keep):
                data, said = trial, said + [note]
                break
    return bytes(data), said


def foreign_names(samples: list[pc.Sample], program: bytes) -> list[str]:
    """The user frames of `samples` named with bytes that are not in `program`, the file
    the kernel read the names from: each must be "??", or bytes of the file, cut or not
    (a cut name ends in "..." after a prefix of the name)."""
    wrong = []
    for s in samples:
        for f in pc.user_frames(s):
            name = symbol_bytes(f)
            whole = name in program
            cut = name.endswith(CUT_MARK) and name[:-len(CUT_MARK)] in program
            if name != b"??" and not whole and not cut:
                wrong.append(f"{name[:60]!r} at {f['address']:#x}")
    return wrong


def test_corrupt_symbol_tables(tmp_path: Path) -> None:
    seed = seed_from_env("SYMTAB_SEED")
    rng = random.Random(seed)
    bases = {}
    for program in ("spin", "sleep"):
        ours = (PROGRAMS / f"_{program}").read_bytes()
        assert ours.count(SORTED + b"\0") == 1, f"{program} has no .symtab.sorted to hide"
        bases[program] = (ours, ours.replace(SORTED + b"\0", HIDDEN + b"\0"))
    copies: dict[str, bytes] = {}
    told: dict[str, list[str]] = {}
    command: dict[str, str] = {}
    for i in range(ROUNDS * COPIES):
        name = f"sy{i:02d}"
        spins = i % SPIN_EVERY == 0
        copies[name], told[name] = corrupt(bases["spin" if spins else "sleep"][i % 2], rng)
        command[name] = name if spins else f"{name} 100000"
        assert told[name], f"no corruption could be made for {name}"
    image = image_with(tmp_path, copies, blocks=IMAGE_BLOCKS)
    export = tmp_path / "export.img"

    def context(names: list[str]) -> str:
        return f"SYMTAB_SEED={seed}; the copies: " + "; ".join(
            f"{n}: {', '.join(told[n])}" for n in names)

    with Machine(3, name="test_profile_symtabs", image=image,
                 extra_args=export_disk.drive_args(export)) as m:
        m.boot()
        assert m.run(f"profile rate {RATE}") == ""
        for r in range(ROUNDS):
            names = list(copies)[r * COPIES:(r + 1) * COPIES]
            print(f"round {r + 1}: {context(names)}")  # shown with a failure
            assert m.run("profile clear") == ""
            assert m.run("profile all on") == ""
            pids: list[int] = []
            try:
                for line in range(0, COPIES, jobs.COPIES_A_LINE):
                    batch = names[line:line + jobs.COPIES_A_LINE]
                    out = m.run(" ".join(f"{command[n]} &" for n in batch))
                    pids += [int(p) for p in jobs.ANNOUNCE_ANY.findall(out)]
                    assert len(pids) == line + len(batch), (
                        f"starting {batch} printed {out!r}; {context(batch)}")
                # Every copy sampled under its own name: past its exec, its slot registered and
                # its tables read (sleep's copies give a wait sample every period, spin's when
                # they run).
                deadline = time.monotonic() + WAIT * timeout_scale()
                while unnamed := sorted({*names} - {
                        s["comm"] for s in export_disk.profile_samples(m, export)
                        if s["pid"] in pids}):
                    assert time.monotonic() < deadline, (
                        f"no sample of {unnamed} named after it in "
                        f"{WAIT * timeout_scale():g} s; {context(names)}")
                    time.sleep(0.2)
            finally:
                jobs.kill_all_and_wait_gone(m, pids)
            assert m.run("profile all off") == ""
            m.assert_no_failures()
            samples = export_disk.profile_samples(m, export)
            problems = pc.schema_problems(samples)
            assert not problems, "\n".join(problems[:10]) + "\n" + context(names)
            for pid, name in zip(pids, names):
                mine = pc.of_program(samples, pid, name)  # no other name after its exec
                wrong = foreign_names(mine, copies[name])
                assert not wrong, (f"{name}'s samples name functions with bytes that are not "
                                   f"in its file: {wrong[:5]}; {context([name])}")
            print(f"round {r + 1}: {len(samples)} samples, each copy named, each name its own")
        assert m.run("echo still alive").strip() == "still alive"
        m.assert_no_failures()
