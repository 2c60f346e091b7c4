"""Exec of any file: it runs the program or returns -1 to the old one, as the rules say.

Exec parses ELF files that any user can write (kern/proc/exec.cc). Its promise, for any file:
exec either runs the program or returns -1 to the old program, intact; it accepts exactly the
files that the loader's rules below accept; the kernel never panics; no page is lost.

This test writes, on the host, a small well-formed RISC-V program (base_program()), then COPIES
copies of it, each with one to three seeded corruptions aimed at every byte exec reads: a field
of the ELF header (magic, class, data, machine, type, version, entry, phoff, ehsize, phentsize,
phnum); a field of a program header (type, flags, offset, vaddr, paddr, filesz, memsz, align,
filesz and memsz together, or filesz 0 to make the segment all bss); two program headers
swapped, or one copied over another; the file cut short (in the header, the program headers,
the code or a segment); random bytes anywhere. Values are chosen to break arithmetic: 0, 1, all
ones, the page size and the file size and one either side, 2^31 + 1, 2^32, 2^32 + the original
(high bits over a valid low part), MAXVA, the trapframe's address and a page below each, the
original a little off, values that wrap around when added to an address. The first copy is
the program itself. The copies travel to the guest in a few pack files (250 files would not
fit the inodes that fs.img's 200 leave beside the build's programs); the guest program
`texecall PACK...`
(user/tests/texecall.cc) writes each copy to a file of its own, execs it in a child with a
watchdog, and prints what became of it.

The model (model()) is the loader's rules, written from what a loader must do rather than
from exec.cc's code. A file is a program if and only if:

1. it holds the 64-byte ELF header, with the magic "\\x7fELF", class 2 (64-bit) and machine
   243 (EM_RISCV). Nothing else in the header is checked: not the data encoding, e_type or
   the versions (xv6 checks only the magic, and tern must run xv6's programs), nor e_ehsize;
   e_phentsize is ignored as xv6 ignores it: program headers are 56 bytes apart, whatever it
   says. e_entry is not checked either (nor is it by xv6 or Linux): a bad entry point is the
   new program's own fault, which runs whatever is there or is killed (status -1) for a bad
   access, like any program that jumps astray;
2. its e_phnum program headers, 56 bytes each from e_phoff, lie wholly inside the file (in
   exact arithmetic: an offset of 2^32 or more is outside any file tern can hold);
3. each PT_LOAD header, in the order of the table, has memsz >= filesz; vaddr page-aligned;
   vaddr + memsz not wrapping around 2^64; vaddr at or above the end of the previous PT_LOAD
   (so segments come in increasing order and do not overlap); vaddr + memsz at or below the
   trapframe page (TRAPFRAME, kern/arch/riscv/memlayout.h); and its file bytes [offset,
   offset + filesz) wholly inside the file. A segment without file bytes (filesz 0, all bss)
   reads none, so its offset may be anything, as in xv6: linkers and strip tools leave such
   offsets past the end of the file. A segment may be empty (memsz 0), at address 0 too.
   p_flags gives the pages execute (PF_X) and write (PF_W) permission; every user page is
   readable. p_paddr and p_align are ignored, and so is p_offset's alignment. Headers of
   other types are ignored, whatever their fields say;
4. the PT_LOAD segments reach above address 0 (there is something to load), and the guard page
   and the stack page that exec adds above the last segment's page end at or below TRAPFRAME;
5. the machine has the memory: user memory is mapped from address 0 up, every page of it (a
   gap between two segments gets the later one's permissions), so a program whose pages
   outnumber the machine's 128 MiB is refused. A copy that asks for between MEMORY_SURE and
   128 MiB could go either way, and the generator does not make one.

For an accepted copy the model also builds the memory image exec must make (each segment's
file bytes at its vaddr, zeros after them; the guard page, then the stack page) and runs the
code from e_entry in a small interpreter of the few instructions the base program uses: it
predicts the exit status, or that the program is killed (a fetch, load or store its pages do
not allow), or, when the copy runs an instruction or reads a byte the interpreter does not
know, nothing but that exec did not return. So a copy whose executed bytes and the data they
read are unchanged must exit with the base program's own status, 42; one whose data was
loaded wrong exits with another status, which the model predicts too.

Checked: no kernel panic or trap; every copy has a verdict, which agrees with the model (a
refused copy: exec returned -1 and the child's memory was intact; an accepted one: exec did
not return, and the outcome is the one predicted); the kernel's free pages are the same before
the first copy and after the last; and the run was meaningful: at least MIN_ACCEPTED copies
ran, MIN_EXIT_42 of them to status 42, and MIN_REFUSED were refused. A tally of verdicts per
kind of corruption is printed. The seed is printed; EXECFUZZ_SEED=N replays a run, and a
failure names each copy that disagreed, its corruptions, the model's verdict and the kernel's.

The seeded copies seldom loop or fork, so a second test hands texecall copies that do: each
must be named as hung, and what one forked must be killed, with no page lost.
"""

from __future__ import annotations

import random
import re
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tern.host import image_with
from tern.machine import PANIC, TRAP, Machine, timeout_scale
from tern.profile_props import seed_from_env

COPIES = 250
PACK_BYTES = 200 * 1024  # a pack file, under the 268 KiB a file may hold
IMAGE_BLOCKS = 4000  # of 1 KiB: the packs beside the programs
MAX_COSTLY = 20  # copies whose exec takes all free memory before it refuses: 0.1 s each
RUN_TIMEOUT = 300
WATCH_TICKS = 30  # texecall's watchdog, at GRADE_TIMEOUT_SCALE=1: a copy that runs longer hung
# Of 250 copies, over seeds 0 to 99 the model had at least 83 run, 49 of them to status 42,
# and 131 refused.
MIN_ACCEPTED = 40
MIN_EXIT_42 = 20
MIN_REFUSED = 60

PGSIZE = 4096
MAXVA = 1 << 38  # kern/arch/riscv/riscv.h: Sv39, one bit less than the hardware allows
TRAPFRAME = MAXVA - 2 * PGSIZE  # below the trampoline page (memlayout.h)
RAM_PAGES = 128 * 1024 * 1024 // PGSIZE  # QEMU virt's default memory: more can never fit
MEMORY_SURE = 8 * 1024 * 1024 // PGSIZE  # this many pages are free whatever else runs
MASK64 = (1 << 64) - 1
EM_RISCV = 243
PT_LOAD = 1
PT_GNU_STACK = 0x6474E551
PF_X, PF_W, PF_R = 1, 2, 4
SYS_FORK, SYS_EXIT = 1, 2  # kern/abi/syscalls.def

EHDR = struct.Struct("<4sBBBBBxxxxxxxHHIQQQIHHHHHH")  # the ELF64 header
PHDR = struct.Struct("<IIQQQQQQ")
assert EHDR.size == 64 and PHDR.size == 56


# --- The base program ---------------------------------------------------------------------

T0, T1, T2, T3, A0, A1, A7 = 5, 6, 7, 28, 10, 11, 17


def lui(rd: int, imm20: int) -> int:
    return (imm20 << 12) | (rd << 7) | 0x37


def addi(rd: int, rs1: int, imm: int) -> int:
    return ((imm & 0xFFF) << 20) | (rs1 << 15) | (rd << 7) | 0x13


def add(rd: int, rs1: int, rs2: int) -> int:
    return (rs2 << 20) | (rs1 << 15) | (rd << 7) | 0x33


def lw(rd: int, rs1: int, imm: int) -> int:
    return ((imm & 0xFFF) << 20) | (rs1 << 15) | (2 << 12) | (rd << 7) | 0x03


def sw(rs2: int, rs1: int, imm: int) -> int:
    return (((imm >> 5) & 0x7F) << 25) | (rs2 << 20) | (rs1 << 15) | (2 << 12) | \
        ((imm & 0x1F) << 7) | 0x23


ECALL = 0x73

# The program: text (R+X) at 0 holds the headers and the code; rodata (R) at RODATA_VA, a page
# and 16 bytes, so that it is loaded in two pieces; data (R+W) at DATA_VA, 16 bytes from the
# file and a bss that reaches into the next page; a PT_GNU_STACK header. In the file the
# segments follow each other without padding, and TAIL, not zeros, follows the data's bytes:
# the bss must be zeros all the same.
PHNUM = 4
CODE_AT = EHDR.size + PHNUM * PHDR.size  # 0x120, the entry point
RODATA_VA, RODATA_SIZE = 0x1000, PGSIZE + 16
DATA_VA, DATA_FILESZ, DATA_MEMSZ = 0x3000, 16, PGSIZE + 32
STATUS = 42
TEXECALL_STATUSES = (7700001, 7700002, 7700003)  # texecall's own children exit with these
WORD_A, WORD_B = 0x1234567, -0x2345678
WORD_C = STATUS - WORD_A - WORD_B
TAIL = b"TAIL" * 4
CODE = [
    lui(T0, RODATA_VA >> 12), lw(A0, T0, 0),        # A, rodata's first word
    lui(T1, (RODATA_VA >> 12) + 1), lw(A1, T1, 8),  # B, in rodata's second page
    add(A0, A0, A1),
    lui(T2, DATA_VA >> 12), lw(A1, T2, 4), add(A0, A0, A1),  # C, from the data
    lw(A1, T2, DATA_FILESZ), add(A0, A0, A1),                # 0: the bss where the file has TAIL
    lui(T3, (DATA_VA >> 12) + 1), lw(A1, T3, 8), add(A0, A0, A1),  # 0: the bss's own page
    sw(A0, T3, 12), lw(A0, T3, 12),  # the bss and the data are writable
    sw(A0, T2, 8), lw(A0, T2, 8),
    addi(A7, 0, SYS_EXIT), ECALL,
]
RODATA_OFF = CODE_AT + 4 * len(CODE) + 4  # a word of padding
DATA_OFF = RODATA_OFF + RODATA_SIZE
REGIONS = {"the ELF header": (0, EHDR.size), "the program headers": (EHDR.size, CODE_AT),
           "the code": (CODE_AT, RODATA_OFF), "the rodata": (RODATA_OFF, DATA_OFF),
           "the data": (DATA_OFF, DATA_OFF + DATA_FILESZ),
           "the tail": (DATA_OFF + DATA_FILESZ, DATA_OFF + DATA_FILESZ + len(TAIL))}
SEGMENT_NAMES = ["text", "rodata", "data", "GNU_STACK"]


def base_program() -> bytes:
    headers = [
        (PT_LOAD, PF_R | PF_X, 0, 0, 0, RODATA_OFF, RODATA_OFF, PGSIZE),
        (PT_LOAD, PF_R, RODATA_OFF, RODATA_VA, RODATA_VA, RODATA_SIZE, RODATA_SIZE, PGSIZE),
        (PT_LOAD, PF_R | PF_W, DATA_OFF, DATA_VA, DATA_VA, DATA_FILESZ, DATA_MEMSZ, PGSIZE),
        (PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0, 0, 16),
    ]
    rodata = bytearray(random.Random(0).randbytes(RODATA_SIZE))  # not zeros: a wrong offset shows
    struct.pack_into("<i", rodata, 0, WORD_A)
    struct.pack_into("<i", rodata, PGSIZE + 8, WORD_B)
    data = bytearray(b"data" * 4)
    struct.pack_into("<i", data, 4, WORD_C)
    program = (EHDR.pack(b"\x7fELF", 2, 1, 1, 0, 0, 2, EM_RISCV, 1, CODE_AT, EHDR.size, 0, 0,
                         EHDR.size, PHDR.size, PHNUM, 0, 0, 0)
               + b"".join(PHDR.pack(*h) for h in headers)
               + b"".join(struct.pack("<I", c) for c in CODE) + bytes(4)
               + rodata + data + TAIL)
    assert len(program) == DATA_OFF + DATA_FILESZ + len(TAIL)
    return program


# --- The model ------------------------------------------------------------------------------


@dataclass
class Page:
    user: bool
    write: bool
    execute: bool
    data: bytearray = field(default_factory=lambda: bytearray(PGSIZE))
    known: int = PGSIZE  # bytes from here on are not predicted (the stack's arguments)


@dataclass
class Verdict:
    accept: bool | None  # None: it depends on the memory free at the time
    why: str  # the rule that refuses, or what the program does
    outcome: str = ""  # for an accepted copy: "exit N", "killed" or "any"
    costly: bool = False  # exec tries to take all memory before it refuses

    def __str__(self) -> str:  # of a copy made: never of an undecided verdict
        if self.accept:
            return f"accept, then {self.outcome}" + (f" ({self.why})" if self.why else "")
        return f"refuse: {self.why}"


def pg_round_up(a: int) -> int:
    return (a + PGSIZE - 1) // PGSIZE * PGSIZE


def model(data: bytes) -> Verdict:
    """What exec must do with the file `data`: the rules of the module's docstring."""
    size = len(data)
    if size < EHDR.size:
        return Verdict(False, f"the file ({size} bytes) is shorter than an ELF header")
    (magic, elf_class, _, _, _, _, _, machine, _, entry, phoff, _, _, _, _, phnum, _, _,
     _) = EHDR.unpack_from(data)
    if magic != b"\x7fELF":
        return Verdict(False, f"magic {magic!r}")
    if elf_class != 2:
        return Verdict(False, f"class {elf_class}, not 64-bit")
    if machine != EM_RISCV:
        return Verdict(False, f"machine {machine}, not RISC-V")
    if phnum and phoff + phnum * PHDR.size > size:
        return Verdict(False, f"{phnum} program headers from {phoff:#x} run past the end "
                       f"of the file ({size:#x})")
    pages: dict[int, Page] = {}
    end = 0  # how far user memory reaches: the end of the last PT_LOAD so far
    loads = 0
    for i in range(phnum):
        at = phoff + i * PHDR.size
        ptype, flags, off, vaddr, _, filesz, memsz, _ = PHDR.unpack_from(data, at)
        if ptype != PT_LOAD:
            continue
        loads += 1
        seg = f"segment {i} ({vaddr:#x}, filesz {filesz:#x}, memsz {memsz:#x}, offset {off:#x})"
        if memsz < filesz:
            return Verdict(False, f"{seg}: memsz < filesz")
        if vaddr + memsz > MASK64:
            return Verdict(False, f"{seg}: vaddr + memsz wraps around")
        if vaddr % PGSIZE:
            return Verdict(False, f"{seg}: vaddr is not page-aligned")
        if vaddr < end:
            return Verdict(False, f"{seg}: starts below the end of the previous one ({end:#x})")
        if vaddr + memsz > TRAPFRAME:
            return Verdict(False, f"{seg}: ends above the trapframe")
        if filesz and off + filesz > size:
            return Verdict(False, f"{seg}: its file bytes run past the end of the file "
                           f"({size:#x})")
        new_end = max(end, vaddr + memsz)
        need = pg_round_up(new_end) // PGSIZE
        if need > RAM_PAGES:
            return Verdict(False, f"{seg}: {need} pages, more than the machine has",
                           costly=True)
        if need > MEMORY_SURE:
            return Verdict(None, f"{seg}: {need} pages, maybe more than are free", costly=True)
        for page in range(pg_round_up(end) // PGSIZE, pg_round_up(new_end) // PGSIZE):
            pages[page] = Page(True, bool(flags & PF_W), bool(flags & PF_X))
        for k, byte in enumerate(data[off:off + filesz]):
            pages[(vaddr + k) // PGSIZE].data[(vaddr + k) % PGSIZE] = byte
        end = new_end
    if loads == 0:
        return Verdict(False, "no PT_LOAD segment")
    if end == 0:
        return Verdict(False, "the PT_LOAD segments load nothing")
    guard = pg_round_up(end)
    if guard + 2 * PGSIZE > TRAPFRAME:
        return Verdict(False, "no room for the guard and stack pages below the trapframe")
    pages[guard // PGSIZE] = Page(False, True, False)
    pages[guard // PGSIZE + 1] = Page(True, True, False, known=PGSIZE - 256)
    outcome, why = run(pages, entry)
    return Verdict(True, why, outcome)


def sext(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def run(pages: dict[int, Page], entry: int, steps: int = 64) -> tuple[str, str]:
    """What the program in `pages` does from `entry`: "exit N", "killed" or "any" (the
    interpreter cannot tell), with why. Registers start as exec leaves them: zero, but for
    a0 = argc = 1 and the stack pointer (and a1 = argv), which the model does not predict."""
    regs: list[int | None] = [0] * 32
    regs[A0], regs[2], regs[A1] = 1, None, None

    def access(addr: int, n: int, write: bool = False, fetch: bool = False) -> Page | str:
        page = pages.get(addr // PGSIZE) if 0 <= addr < MAXVA else None
        if page is None or not page.user or (write and not page.write) or \
                (fetch and not page.execute):
            return f"{'fetch' if fetch else 'store' if write else 'load'} at {addr:#x} faults"
        if addr % n:
            return "any"  # misaligned: the interpreter does not say what the hardware does
        if addr % PGSIZE + n > page.known:
            return "any"
        return page

    pc = entry
    for _ in range(steps):
        got = access(pc, 4, fetch=True) if pc % 4 == 0 else "any"
        if isinstance(got, str):
            return ("any", f"runs from {pc:#x}") if got == "any" else ("killed", got)
        word = int.from_bytes(got.data[pc % PGSIZE:pc % PGSIZE + 4], "little")
        op, rd, funct3 = word & 0x7F, (word >> 7) & 0x1F, (word >> 12) & 7
        rs1, rs2 = regs[(word >> 15) & 0x1F], regs[(word >> 20) & 0x1F]
        result: int | None = None
        if op == 0x37:
            result = sext(word & 0xFFFFF000, 32)
        elif op == 0x13 and funct3 == 0 and rs1 is not None:
            result = rs1 + sext(word >> 20, 12)
        elif op == 0x33 and funct3 == 0 and word >> 25 == 0 and None not in (rs1, rs2):
            result = rs1 + rs2
        elif op in (0x03, 0x23) and funct3 == 2 and rs1 is not None:
            store = op == 0x23
            imm = sext(((word >> 25) << 5) | rd if store else word >> 20, 12)
            addr = (rs1 + imm) & MASK64
            got = access(addr, 4, write=store)
            if isinstance(got, str):
                return ("any", f"reaches {addr:#x}") if got == "any" else ("killed", got)
            at = addr % PGSIZE
            if store:
                if rs2 is None:
                    return "any", "stores an unknown value"
                if got.execute:  # without a fence.i, which copy of the code runs is open
                    return "any", f"stores into its own code at {addr:#x}"
                got.data[at:at + 4] = (rs2 & 0xFFFFFFFF).to_bytes(4, "little")
                pc += 4
                continue
            result = sext(int.from_bytes(got.data[at:at + 4], "little"), 32)
        elif word == ECALL:
            if regs[A7] == SYS_EXIT and regs[A0] is not None:
                status = sext(regs[A0], 32)  # exit(int)
                if status in TEXECALL_STATUSES:
                    return "any", f"exits {status}, which texecall keeps for itself"
                return ("killed", "exit(-1)") if status == -1 else (f"exit {status}", "")
            return "any", f"makes system call {regs[A7]}"
        else:
            return "any", f"runs {word:#010x} at {pc:#x}"
        if rd != 0:
            regs[rd] = result & MASK64
        pc += 4
    return "any", f"runs {steps} instructions"


# --- The corruptions ------------------------------------------------------------------------


def value(rng: random.Random, orig: int, size: int, width: int) -> int:
    """A value for a field of `width` bytes that was `orig`, in a file of `size` bytes."""
    top = (1 << (8 * width)) - 1
    if width == 1:
        edges = [0, 1, 2, 3, 0xFF, orig - 1, orig + 1]
    elif width == 2:
        edges = [0, 1, 2, 3, 5, 0x8000, 0xFFFF, orig - 1, orig + 1, 56, 64]
    else:
        edges = [0, 1, top, 2, PGSIZE - 1, PGSIZE, PGSIZE + 1, size - 1, size, size + 1,
                 0x80000001, 1 << 32, MAXVA, MAXVA - PGSIZE, TRAPFRAME, TRAPFRAME - PGSIZE,
                 rng.randrange(top + 1)]
        edges += [orig + d for d in (-PGSIZE, -8, -4, -1, 1, 4, 8, PGSIZE, 2 * PGSIZE)]
        # High bits over the original, which a 32-bit truncation would not see.
        edges += [(1 << 32) + orig, orig | rng.randrange(1, 1 << 32) << 32]
        edges += [top + 1 - PGSIZE, top ^ orig]  # wrap around when added to an address
    return rng.choice(edges) & top


EHDR_FIELDS = {"magic": (0, 4), "class": (4, 1), "data": (5, 1), "ident version": (6, 1),
               "type": (16, 2), "machine": (18, 2), "version": (20, 4), "entry": (24, 8),
               "phoff": (32, 8), "ehsize": (52, 2), "phentsize": (54, 2), "phnum": (56, 2)}
PHDR_FIELDS = {"type": (0, 4), "flags": (4, 4), "offset": (8, 8), "vaddr": (16, 8),
               "paddr": (24, 8), "filesz": (32, 8), "memsz": (40, 8), "align": (48, 8)}


def get(data: bytearray, at: int, width: int) -> int:
    return int.from_bytes(data[at:at + width], "little")


def put(data: bytearray, at: int, width: int, number: int) -> bool:
    if at + width > len(data):
        return False
    data[at:at + width] = number.to_bytes(width, "little")
    return True


def elf_header(data: bytearray, rng: random.Random) -> str | None:
    name = rng.choice(list(EHDR_FIELDS))
    at, width = EHDR_FIELDS[name]
    if name == "magic" and rng.random() < 0.5:  # one byte of it
        at, width = at + rng.randrange(4), 1
        number = rng.randrange(256)
    else:
        number = value(rng, get(data, at, width), len(data), width)
    return f"e_{name} = {number:#x}" if put(data, at, width, number) else None


def program_header(data: bytearray, rng: random.Random) -> str | None:
    i = rng.randrange(PHNUM)
    base = EHDR.size + i * PHDR.size
    name = rng.choice([*PHDR_FIELDS, "filesz+memsz", "bss"])
    what = f"phdr {i} ({SEGMENT_NAMES[i]})"
    if name == "filesz+memsz":
        number = rng.choice([0, value(rng, get(data, base + 32, 8), len(data), 8)])
        ok = put(data, base + 32, 8, number) and put(data, base + 40, 8, number)
        return f"{what} p_filesz = p_memsz = {number:#x}" if ok else None
    if name == "bss":  # nothing from the file: all zeros, of the same size or another
        memsz, off = get(data, base + 40, 8), get(data, base + 8, 8)
        number = rng.choice([memsz, value(rng, memsz, len(data), 8), (1 << 64) - PGSIZE])
        if rng.random() < 0.5:  # and an offset that no longer matters, or should not
            off = value(rng, off, len(data), 8)
        ok = put(data, base + 8, 8, off) and put(data, base + 32, 8, 0) and \
            put(data, base + 40, 8, number)
        return f"{what} p_filesz = 0, p_memsz = {number:#x}, p_offset = {off:#x}" if ok else None
    at, width = PHDR_FIELDS[name]
    orig = get(data, base + at, width)
    if name == "type":
        number = rng.choice([0, PT_LOAD, 2, 6, PT_GNU_STACK, 0x70000003, 0xFFFFFFFF, orig + 1])
    elif name == "flags":
        number = rng.choice([rng.randrange(8), 0xFFFFFFFF])
    else:
        number = value(rng, orig, len(data), width)
    number &= (1 << (8 * width)) - 1
    return f"{what} p_{name} = {number:#x}" if put(data, base + at, width, number) else None


def headers_swapped(data: bytearray, rng: random.Random) -> str | None:
    i, j = sorted(rng.sample(range(PHNUM), 2))
    a, b = EHDR.size + i * PHDR.size, EHDR.size + j * PHDR.size
    if b + PHDR.size > len(data):
        return None
    data[a:a + PHDR.size], data[b:b + PHDR.size] = data[b:b + PHDR.size], data[a:a + PHDR.size]
    return f"phdrs {i} and {j} swapped"


def header_copied(data: bytearray, rng: random.Random) -> str | None:
    i, j = rng.sample(range(PHNUM), 2)
    a, b = EHDR.size + i * PHDR.size, EHDR.size + j * PHDR.size
    if max(a, b) + PHDR.size > len(data):
        return None
    data[b:b + PHDR.size] = data[a:a + PHDR.size]
    return f"phdr {i} copied over phdr {j}"


def cut_short(data: bytearray, rng: random.Random) -> str | None:
    where = rng.choice(list(REGIONS))
    lo, hi = REGIONS[where]
    keep = min(rng.randrange(lo, hi), len(data) - 1)
    if rng.random() < 0.2:
        keep = len(data) - 1
        where = "the end"
    if keep < 0:
        return None
    del data[keep:]
    return f"cut to {keep} bytes (in {where})"


def random_bytes(data: bytearray, rng: random.Random) -> str | None:
    where = rng.choice(list(REGIONS))
    lo, hi = REGIONS[where]
    hi = min(hi, len(data))
    if lo >= hi:
        return None
    spots = sorted(rng.randrange(lo, hi) for _ in range(rng.randint(1, 4)))
    for i in spots:
        data[i] = rng.randrange(256)
    return f"{len(spots)} random bytes in {where} at {', '.join(hex(s) for s in spots)}"


CORRUPTIONS: dict[str, Callable[[bytearray, random.Random], str | None]] = {
    "ELF header": elf_header, "program header": program_header,
    "headers swapped": headers_swapped, "header copied": header_copied,
    "cut short": cut_short, "random bytes": random_bytes}
WEIGHTS = {"ELF header": 3, "program header": 5, "headers swapped": 1, "header copied": 1,
           "cut short": 1, "random bytes": 2}


@dataclass
class Copy:
    name: str
    data: bytes
    kinds: list[str]
    notes: list[str]
    verdict: Verdict


def make_copies(rng: random.Random, count: int) -> list[Copy]:
    """The base program, then count - 1 corrupted copies: none that the model cannot decide,
    and at most MAX_COSTLY whose exec tries to take all memory."""
    base = base_program()
    first = model(base)
    assert first.accept and first.outcome == f"exit {STATUS}", f"the base program: {first}"
    copies = [Copy("x000", base, ["none"], ["the base program"], first)]
    costly = 0
    kinds = list(CORRUPTIONS)
    weights = [WEIGHTS[k] for k in kinds]
    while len(copies) < count:
        data, done, notes = bytearray(base), [], []
        for _ in range(rng.randint(1, 3)):
            for _attempt in range(20):
                kind = rng.choices(kinds, weights)[0]
                trial = bytearray(data)
                note = CORRUPTIONS[kind](trial, rng)
                if note is not None:
                    data, done, notes = trial, done + [kind], notes + [note]
                    break
        verdict = model(bytes(data))
        if verdict.accept is None or (verdict.costly and costly >= MAX_COSTLY):
            continue
        costly += verdict.costly
        copies.append(Copy(f"x{len(copies):03d}", bytes(data), done, notes, verdict))
    return copies


def packs(programs: list[bytes]) -> dict[str, bytes]:
    """The programs in pack files (user/tests/texecall.cc): a count, the sizes, the bytes."""
    out: dict[str, bytes] = {}
    group: list[bytes] = []

    def close() -> None:
        out[f"xpack{len(out)}"] = (struct.pack(f"<I{len(group)}I", len(group),
                                               *map(len, group)) + b"".join(group))
        group.clear()

    for data in programs:
        if group and sum(map(len, group)) + len(data) > PACK_BYTES:
            close()
        group.append(data)
    close()
    return out


def run_texecall(boot, tmp_path: Path, programs: list[bytes], ticks: int, name: str) -> str:
    """What `texecall -w TICKS` (ticks scaled like every timeout) says of `programs`, run as
    x000, x001, ... on a three-hart machine of its own, which must neither panic nor trap in
    the kernel, and must still answer afterwards."""
    files = packs(programs)
    image = image_with(tmp_path, files, blocks=IMAGE_BLOCKS)
    with Machine(3, name=name, image=image) as m:
        boot.machines.append(m)  # its console saved if the test fails
        m.boot()
        watch = max(ticks, round(ticks * timeout_scale()))
        out = m.run(f"texecall -w {watch} {' '.join(files)}", timeout=RUN_TIMEOUT,
                    failures=(PANIC, TRAP), quiet=60)
        m.assert_no_failures()
        assert m.run("echo still alive").strip() == "still alive"
    return out


# --- The test -------------------------------------------------------------------------------

LINE = re.compile(r"texecall: (x\d{3}) (returned|broken|hung|killed|exit -?\d+)\s*$", re.M)
PAGES = re.compile(r"texecall: free pages before (\d+) after (\d+)")


def agrees(verdict: Verdict, got: str) -> bool:
    if not verdict.accept:
        return got == "returned"
    return got not in ("returned", "broken") and verdict.outcome in ("any", got)


def category(got: str) -> str:
    return "refused" if got in ("returned", "broken") else \
        "exit 42" if got == f"exit {STATUS}" else "exit other" if got.startswith("exit") else got


def test_exec_fuzz(boot, tmp_path: Path) -> None:
    seed = seed_from_env("EXECFUZZ_SEED")
    copies = make_copies(random.Random(seed), COPIES)
    for c in copies:  # shown with a failure
        print(f"{c.name}: {'; '.join(c.notes)} -> {c.verdict}")
    out = run_texecall(boot, tmp_path, [c.data for c in copies], WATCH_TICKS, "test_exec_fuzz")
    tell = f"EXECFUZZ_SEED={seed}"
    assert "FAIL" not in out, f"texecall failed:\n{out[-2000:]}\n{tell}"
    assert f"texecall: done {len(copies)} copies" in out, f"texecall did not finish:\n" \
        f"{out[-2000:]}\n{tell}"
    got = dict(LINE.findall(out))
    wrong = []
    tally: dict[str, Counter[str]] = {}
    for c in copies:
        kernel = got.get(c.name, "no verdict")
        for kind in set(c.kinds):
            tally.setdefault(kind, Counter())[category(kernel)] += 1
        if not agrees(c.verdict, kernel):
            wrong.append(f"{c.name} ({'; '.join(c.notes)}): the model says {c.verdict}; "
                         f"the kernel: {kernel}")
    print(f"verdicts per corruption kind ({tell}):")
    for kind, counts in sorted(tally.items()):
        print(f"  {kind:16} " + ", ".join(f"{n} {what}" for what, n in sorted(counts.items())))
    assert not wrong, f"{len(wrong)} copies disagree with the model ({tell}):\n" + \
        "\n".join(wrong[:20])
    pages = PAGES.search(out)
    assert pages and pages[1] == pages[2], f"pages lost: {pages and pages.group(0)}; {tell}"
    every = Counter(category(got[c.name]) for c in copies)
    accepted = len(copies) - every["refused"]
    print(f"{len(copies)} copies: {dict(every)}")
    assert accepted >= MIN_ACCEPTED and every["exit 42"] >= MIN_EXIT_42 and \
        every["refused"] >= MIN_REFUSED, f"too few of a kind to mean much: {dict(every)}; {tell}"


J_SELF = 0x0000006F  # jal x0, 0: a loop of one instruction
HANG_TICKS = 5  # texecall's watchdog here: half a second


def test_hangs_are_named_and_strays_killed(boot, tmp_path: Path) -> None:
    """texecall's own promises, which the fuzzer's copies seldom reach: a copy that loops is
    named as hung when its watchdog fires; what a copy forked before it looped is killed, not
    left spinning; the copies after them run as before; and no page is lost."""
    base = base_program()

    def with_code(*words: int) -> bytes:
        data = bytearray(base)
        struct.pack_into(f"<{len(words)}I", data, CODE_AT, *words)
        return bytes(data)

    programs = [base, with_code(J_SELF), with_code(addi(A7, 0, SYS_FORK), ECALL, J_SELF), base]
    expected = {"x000": f"exit {STATUS}", "x001": "hung", "x002": "hung", "x003": f"exit {STATUS}"}
    out = run_texecall(boot, tmp_path, programs, HANG_TICKS, "test_exec_fuzz.hangs")
    assert dict(LINE.findall(out)) == expected, f"texecall said:\n{out}"
    assert "texecall: 1 stray processes killed" in out, f"the forked loop was not killed:\n{out}"
    pages = PAGES.search(out)
    assert pages and pages[1] == pages[2], f"pages lost: {out}"
