"""Source lines: the file and line of the program that each frame of a sample was in.

A profile names functions, but "which line of is_prime?" needs more: the line tables that
the compiler wrote into the binaries' DWARF debug information (-g). For every machine
address they give the source file and line it was compiled from, and the build keeps them
in build/kernel.elf and in build/user/_NAME.elf, beside the stripped copies that go on the
disk. pyelftools reads them.

Which binary a frame belongs to: kernel frames come from the kernel; user frames from the
program the process ran, which the profile names ("comm"). Which address to look up: the
first frame of a sample, and the first user frame below kernel frames, are interrupted pcs
and are looked up as they are; every other frame is a return address, looked up one byte
earlier so that it lands on the call instruction (as the kernel itself does, see
kern/profile/report.cc).

A function the compiler inlined leaves no frame: its code sits inside its caller's, and the
line table gives the inlined function's own file and line (xorshift's line in
user/lib/user.h, inside `hot`). The debug information also records each inlined call
(DW_TAG_inlined_subroutine: the addresses it covers, the function, and the file and line of
the call), so an address has a chain of lines: the inlined code's, then the call in each
caller out to the function the frame names. `chain()` gives it innermost first, as pprof's
inline frames want it; `line()` gives the outermost, the line of the named function's own
code, which is what its row in the table and its annotated source count.

A binary rebuilt since the profile was taken would give lines that look right and are
not. So before a binary is used, every frame that lands in it is checked against the
binary's own symbol table (build/ksyms.bin for the kernel, build/user/_NAME.sym for a
program: the tables the kernel names frames with): if any frame's function is not the one
the profile names, the binary is not used, and `notes` says why.

Without pyelftools (it is not part of Python's standard library, unlike everything else
in this package) or without a build, there are no lines, and `notes` says that too: every
view works without them.
"""

from __future__ import annotations

import bisect
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from .model import UNKNOWN_SYMBOL, Profile, Sample

try:  # Debian: python3-pyelftools
    from elftools.elf.elffile import ELFFile
except ImportError:  # pragma: no cover - depends on the machine
    ELFFile = None

SYMTAB_MAGIC = 0x544D5953  # "SYMT", kern/lib/symtab.h
LONG_NAME = 64  # names at least this long may have been cut by the kernel: compare prefixes


@dataclass(frozen=True)
class Inlined:
    """An inlined call: the addresses [low, high) hold `function`'s code, called from
    line `call` of the function it was inlined into; `depth` counts the nesting."""
    low: int
    high: int
    depth: int
    function: str
    call: "Line"


@dataclass(frozen=True)
class Line:
    path: str  # the source file, absolute, as the compiler saw it
    line: int
    shown: str  # the path relative to the source tree when inside it, for reports

    def __str__(self) -> str:
        return f"{self.shown}:{self.line}"

    @property
    def short(self) -> str:
        """file:line with the file's name only, for narrow tables."""
        return f"{os.path.basename(self.path)}:{self.line}"


class SymbolTable:
    """A table in the format of kern/lib/symtab.h: sorted code symbols, demangled."""

    def __init__(self, data: bytes) -> None:
        magic, count, strtab_size, _ = struct.unpack_from("<IIII", data)
        if magic != SYMTAB_MAGIC:
            raise ValueError("not a symbol table (bad magic)")
        strtab = data[16 + 16 * count:16 + 16 * count + strtab_size]
        self.starts: List[int] = []
        self.entries: List[Tuple[int, int, str]] = []
        for i in range(count):
            addr, size, name = struct.unpack_from("<QII", data, 16 + 16 * i)
            end = strtab.index(b"\0", name)
            self.starts.append(addr)
            self.entries.append((addr, size, strtab[name:end].decode("utf-8", "replace")))

    def lookup(self, address: int) -> Optional[Tuple[int, str]]:
        """The start and name of the function holding `address`, as the kernel finds it."""
        i = bisect.bisect_right(self.starts, address) - 1
        if i < 0:
            return None
        addr, size, name = self.entries[i]
        if size and address >= addr + size:
            return None
        return addr, name


class LineTable:
    """The DWARF line table of one ELF file: address ranges to (file, line)."""

    def __init__(self, path: Path, root: Path) -> None:
        rows: List[Tuple[int, int, Optional[Line]]] = []  # (address, order, line or None)
        names: Dict[str, Line] = {}
        self.inlined: List[Inlined] = []
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if not elf.has_dwarf_info():
                raise ValueError("it has no debug information")
            dwarf = elf.get_dwarf_info()
            for cu in dwarf.iter_CUs():
                program = dwarf.line_program_for_CU(cu)
                if program is None:
                    continue
                files = self._file_names(cu, program)
                self._inlined_of(dwarf, cu, files, root, names)
                for entry in program.get_entries():
                    state = entry.state
                    if state is None:
                        continue
                    if state.end_sequence:
                        rows.append((state.address, len(rows), None))
                        continue
                    path_text = files.get(state.file)
                    if path_text is None:
                        continue
                    key = f"{path_text}:{state.line}"
                    if key not in names:
                        names[key] = Line(path_text, state.line, _shown(path_text, root))
                    rows.append((state.address, len(rows), names[key]))
        # Of several rows at one address, the last one written is the line the address
        # belongs to (the earlier ones are empty views of lines with no code of their own).
        rows.sort(key=lambda r: (r[0], r[1]))
        self.addresses: List[int] = []
        self.lines: List[Optional[Line]] = []
        for address, _, line in rows:
            if self.addresses and self.addresses[-1] == address:
                self.lines[-1] = line if line is not None else self.lines[-1]
            else:
                self.addresses.append(address)
                self.lines.append(line)

    @staticmethod
    def _file_names(cu, program) -> Dict[int, str]:
        top = cu.get_top_DIE()
        comp_dir = top.attributes.get("DW_AT_comp_dir")
        base = comp_dir.value.decode("utf-8", "replace") if comp_dir else ""
        header = program.header
        version = header.version
        dirs = [d.decode("utf-8", "replace") for d in header.include_directory]
        out: Dict[int, str] = {}
        for i, entry in enumerate(header.file_entry):
            # DWARF 5 counts files and directories from 0 (directory 0 is the compilation
            # directory); earlier versions count from 1, and directory 0 means the
            # compilation directory.
            index = i if version >= 5 else i + 1
            d = entry.dir_index
            if version >= 5:
                folder = dirs[d] if d < len(dirs) else base
            else:
                folder = dirs[d - 1] if 0 < d <= len(dirs) else base
            name = entry.name.decode("utf-8", "replace")
            out[index] = os.path.normpath(os.path.join(base, folder, name))
        return out

    def _inlined_of(self, dwarf, cu, files: Dict[int, str], root: Path,
                    names: Dict[str, "Line"]) -> None:
        """Every inlined call of a compilation unit, with the addresses it covers."""
        ranges = dwarf.range_lists()
        top = cu.get_top_DIE()
        low_attr = top.attributes.get("DW_AT_low_pc")
        base = low_attr.value if low_attr else 0

        def covered(die) -> List[Tuple[int, int]]:
            a = die.attributes
            if "DW_AT_low_pc" in a and "DW_AT_high_pc" in a:
                low, high = a["DW_AT_low_pc"].value, a["DW_AT_high_pc"]
                end = high.value if high.form == "DW_FORM_addr" else low + high.value
                return [(low, end)]
            if "DW_AT_ranges" in a and ranges is not None:
                out, start = [], base
                for entry in ranges.get_range_list_at_offset(a["DW_AT_ranges"].value, cu=cu):
                    if hasattr(entry, "base_address"):
                        start = entry.base_address
                    elif hasattr(entry, "begin_offset"):
                        shift = 0 if getattr(entry, "is_absolute", False) else start
                        out.append((entry.begin_offset + shift, entry.end_offset + shift))
                return out
            return []

        def name_of(die) -> str:
            for _ in range(4):  # through abstract_origin and specification
                if "DW_AT_name" in die.attributes:
                    return die.attributes["DW_AT_name"].value.decode("utf-8", "replace")
                for link in ("DW_AT_abstract_origin", "DW_AT_specification"):
                    if link in die.attributes:
                        die = die.get_DIE_from_attribute(link)
                        break
                else:
                    break
            return UNKNOWN_SYMBOL

        def walk(die, depth: int) -> None:
            for child in die.iter_children():
                inner = depth
                if child.tag == "DW_TAG_inlined_subroutine":
                    a = child.attributes
                    path_text = files.get(a["DW_AT_call_file"].value) \
                        if "DW_AT_call_file" in a else None
                    number = a["DW_AT_call_line"].value if "DW_AT_call_line" in a else 0
                    if path_text is not None and number:
                        key = f"{path_text}:{number}"
                        if key not in names:
                            names[key] = Line(path_text, number, _shown(path_text, root))
                        for low, high in covered(child):
                            self.inlined.append(Inlined(low, high, depth, name_of(child),
                                                        names[key]))
                    inner = depth + 1
                walk(child, inner)

        walk(top, 0)

    def lookup(self, address: int) -> Optional[Line]:
        """The line the address's code was compiled from (an inlined function's own)."""
        i = bisect.bisect_right(self.addresses, address) - 1
        return self.lines[i] if i >= 0 else None

    def chain(self, address: int) -> List[Tuple[Optional[str], Line]]:
        """The address's lines, innermost first, each with the inlined function it lies
        in (None for the last: the function of the frame itself). Empty if unknown."""
        line = self.lookup(address)
        if line is None:
            return []
        calls = sorted((c for c in self.inlined if c.low <= address < c.high),
                       key=lambda c: -c.depth)
        out: List[Tuple[Optional[str], Line]] = []
        for call in calls:
            out.append((call.function, line))
            line = call.call
        out.append((None, line))
        return out


def _shown(path: str, root: Path) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return path


def is_pc(sample: Sample, index: int) -> bool:
    """Whether frame `index` of a sample (innermost first) is an interrupted pc rather than
    a return address: the first frame, and the first user frame below kernel frames."""
    frames = sample.frames
    return index == 0 or (not frames[index].kernel and frames[index - 1].kernel)


BinaryKey = Tuple[bool, str]  # (kernel, program name; "" for the kernel)


class Sources:
    """The source line of every frame of a profile, where the build can tell.

    `build` is the build folder (build/ of the tree by default); `root` is the source
    tree, to which file names are shown relative. `line(sample, i)` gives the line of frame
    i of a sample (innermost first), or None.
    """

    def __init__(self, profile: Profile, build: Path, root: Path) -> None:
        self.build = build
        self.root = root
        self.notes: List[str] = []
        self.functions: Dict[Tuple[BinaryKey, str], Line] = {}  # where each function starts
        self._tables: Dict[BinaryKey, LineTable] = {}
        self._cache: Dict[Tuple[BinaryKey, int], List[Tuple[Optional[str], Line]]] = {}
        self.profile = profile
        if ELFFile is None:
            self.notes.append("no source lines: pyelftools is not installed "
                              "(Debian: apt-get install -y python3-pyelftools)")
            return
        self._load(profile)

    def binary_key(self, sample: Sample, index: int) -> BinaryKey:
        """Which binary a frame is in: the kernel, or the program the process ran when
        sampled (its name for all its samples if the sample does not say)."""
        if sample.frames[index].kernel:
            return (True, "")
        return (False, sample.comm or self.profile.names.get(sample.pid, ""))

    def paths(self, key: BinaryKey) -> Tuple[Path, Path]:
        """The ELF file with debug information, and the symbol table, of a binary."""
        if key[0]:
            return self.build / "kernel.elf", self.build / "ksyms.bin"
        return (self.build / "user" / f"_{key[1]}.elf", self.build / "user" / f"_{key[1]}.sym")

    def _load(self, profile: Profile) -> None:
        wanted: Dict[BinaryKey, List[Tuple[int, str]]] = {}
        unnamed = set()
        for s in profile.samples:
            for i, f in enumerate(s.frames):
                key = self.binary_key(s, i)
                if key[1] == "" and not key[0]:
                    unnamed.add(s.pid)  # a process without a name: its program is unknown
                    continue
                lookup = f.address if is_pc(s, i) else f.address - 1
                wanted.setdefault(key, []).append((lookup, f.symbol))
        if unnamed:
            pids = ", ".join(map(str, sorted(unnamed)))
            self.notes.append(f"no source lines for the user code of pid {pids}: the profile "
                              "does not name the program (profconv's --name PID=PROGRAM does)")
        for key, frames in sorted(wanted.items()):
            elf, sym = self.paths(key)
            what = "the kernel" if key[0] else key[1]
            if not elf.exists() or not sym.exists():
                self.notes.append(f"no source lines for {what}: {elf} is not there")
                continue
            try:
                symbols = SymbolTable(sym.read_bytes())
            except (OSError, ValueError, struct.error) as err:
                self.notes.append(f"no source lines for {what}: {sym}: {err}")
                continue
            wrong = self._mismatch(symbols, frames)
            if wrong:
                self.notes.append(f"no source lines for {what}: {elf} is not the binary that "
                                  f"was profiled ({wrong}); rebuild it as it was, or profile "
                                  "again")
                continue
            try:
                table = line_table(elf, self.root)
            except (OSError, ValueError) as err:
                self.notes.append(f"no source lines for {what}: {elf}: {err}")
                continue
            except Exception as err:  # pyelftools raises its own errors for damaged files
                self.notes.append(f"no source lines for {what}: {elf}: cannot read its "
                                  f"debug information ({err})")
                continue
            self._tables[key] = table
            for lookup, symbol in frames:
                found = symbols.lookup(lookup)
                if found and (key, symbol) not in self.functions:
                    start = table.lookup(found[0])
                    if start is not None:
                        self.functions[(key, symbol)] = start

    @staticmethod
    def _mismatch(symbols: SymbolTable, frames: Sequence[Tuple[int, str]]) -> str:
        """The first frame whose function the symbol table names otherwise, or ""."""
        for lookup, symbol in sorted(set(frames)):
            found = symbols.lookup(lookup)
            name = found[1] if found else UNKNOWN_SYMBOL
            # A long name is cut, and the kernel ends the cut with "...".
            cut = symbol[:-3] if symbol.endswith("...") else symbol
            if symbol == name or (len(symbol) >= LONG_NAME and name.startswith(cut)):
                continue
            return f"{lookup:#x} is in {name!r} there, {symbol!r} in the profile"
        return ""

    def chain(self, sample: Sample, index: int) -> List[Tuple[Optional[str], Line]]:
        """Frame `index`'s lines, innermost first: the code of any inlined functions (with
        their names), then the line of the frame's own function (named None)."""
        key = self.binary_key(sample, index)
        table = self._tables.get(key)
        if table is None:
            return []
        f = sample.frames[index]
        lookup = f.address if is_pc(sample, index) else f.address - 1
        cached = self._cache.get((key, lookup))
        if cached is None:
            cached = self._cache[(key, lookup)] = table.chain(lookup)
        return cached

    def line(self, sample: Sample, index: int) -> Optional[Line]:
        """The line of frame `index` in its own function's code (for an inlined function's
        code, the line of the call)."""
        chain = self.chain(sample, index)
        return chain[-1][1] if chain else None

    def start(self, sample: Sample, index: int) -> Optional[Line]:
        """Where the function of frame `index` starts (its first line with code)."""
        return self.functions.get((self.binary_key(sample, index), sample.frames[index].symbol))

    def found(self) -> bool:
        """Whether any binary gave lines."""
        return bool(self._tables)


# Line tables already read, by file (with its size and time, so a rebuilt binary is read
# again) and source root: the views of one profile each find their lines (profconv's
# formats filter the profile first, so they do not share one Sources), and reading the
# kernel's debug information is most of what a view costs.
_line_tables: Dict[Tuple[str, int, int, str], LineTable] = {}


def line_table(path: Path, root: Path) -> LineTable:
    """LineTable(path, root), read once for each version of the file."""
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size, str(root))
    table = _line_tables.get(key)
    if table is None:
        table = _line_tables[key] = LineTable(path, root)
    return table


def default_build() -> Path:
    from .. import REPO
    return REPO / "build"


def for_profile(profile: Profile, build: Optional[Path] = None) -> Sources:
    """The lines of a profile's frames from the binaries in `build` (build/ by default)."""
    from .. import REPO
    return Sources(profile, build or default_build(), REPO)
