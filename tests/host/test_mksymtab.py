"""tools/mksymtab.py: from `nm -C -n -S --defined-only` text to the table of kern/lib/symtab.h.

The table is read back here by a small reader written from the layout that symtab.h documents
(a 16-byte header "SYMT", count, strtab_size, reserved; 16-byte entries addr u64, size u32,
name u32; then the NUL-terminated names), so these tests check the tool against the documented
format. symtab_test.cc checks that the kernel's lookup reads the same bytes the same way.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tern import symtab as mksymtab

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "mksymtab.py"
SAMPLE = Path(__file__).resolve().parent / "data" / "sample.nm"



def read_table(blob: bytes) -> list[tuple[int, int, str]]:
    """(addr, size, name) for each entry, checking the header and bounds as it goes."""
    magic, count, strtab_size, reserved = struct.unpack_from("<4I", blob)
    assert magic == 0x544D5953 and blob[:4] == b"SYMT"
    assert reserved == 0
    assert len(blob) == 16 + 16 * count + strtab_size
    strtab = blob[16 + 16 * count:]
    assert strtab_size >= 1 and strtab.endswith(b"\0")
    out = []
    for i in range(count):
        addr, size, name = struct.unpack_from("<QII", blob, 16 + 16 * i)
        assert name < strtab_size
        out.append((addr, size, strtab[name:strtab.index(b"\0", name)].decode()))
    return out


def table_from(text: str) -> list[tuple[int, int, str]]:
    return read_table(mksymtab.build(mksymtab.parse(text.splitlines(keepends=True))))


def test_sample_keeps_code_symbols_in_address_order() -> None:
    entries = table_from(SAMPLE.read_text())
    assert entries == [
        (0x80000000, 0, "asm_entry"),
        (0x80000004, 0, "asm_second"),
        (0x80000006, 8, "helper(int, char const*)"),
        (0x8000000E, 8, "Spinlock::acquire()"),
        (0x80000016, 0x2A, "user(char const*)"),
        (0x80000040, 0xA, "getb()"),
        (0x8000004A, 0x1E, "inst()"),
        (0x80000068, 6, "int twice<int>(int)"),
        (0x8000006E, 4, "long twice<long>(long)"),
    ]


def test_data_bss_and_absolute_symbols_are_dropped() -> None:
    text = ("0000000080001000 0000000000000004 D data_var\n"
            "0000000080001004 0000000000000004 b bss_var\n"
            "0000000080001008 B _end\n"
            "0000000080001800 A __global_pointer$\n"
            "0000000080002000 0000000000000010 R rodata\n")
    assert table_from(text) == []


def test_weak_and_local_code_symbols_are_kept() -> None:
    text = ("0000000000001000 0000000000000010 W weak_fn\n"
            "0000000000001010 0000000000000010 t local_fn\n"
            "0000000000001020 0000000000000010 w weak_local\n")
    assert [name for _, _, name in table_from(text)] == ["weak_fn", "local_fn", "weak_local"]


def test_one_address_keeps_the_global_symbol_with_a_size() -> None:
    lines = ["0000000000002000 t local_alias\n",
             "0000000000002000 0000000000000020 T the_function\n",
             "0000000000002000 0000000000000020 t local_sized\n"]
    for order in (lines, lines[::-1], lines[1:] + lines[:1]):
        assert table_from("".join(order)) == [(0x2000, 0x20, "the_function")], order


def test_assembler_labels_are_dropped() -> None:
    text = ("0000000000003000 t $x\n"
            "0000000000003000 t .L_local\n"
            "0000000000003000 T visible\n")
    assert table_from(text) == [(0x3000, 0, "visible")]


def test_huge_size_is_clamped_to_32_bits() -> None:
    text = "0000000000004000 0000000123456789 T huge\n"
    assert table_from(text) == [(0x4000, 0xFFFFFFFF, "huge")]


def test_repeated_names_share_one_string() -> None:
    text = ("0000000000005000 0000000000000010 t init\n"
            "0000000000006000 0000000000000010 t init\n")
    blob = mksymtab.build(mksymtab.parse(text.splitlines(keepends=True)))
    assert read_table(blob) == [(0x5000, 16, "init"), (0x6000, 16, "init")]
    strtab_size = struct.unpack_from("<I", blob, 8)[0]
    assert strtab_size == len(b"init\0")


def test_empty_input_gives_an_empty_valid_table() -> None:
    blob = mksymtab.build(mksymtab.parse([]))
    assert blob == struct.pack("<4I", 0x544D5953, 0, 1, 0) + b"\0"
    assert read_table(blob) == []


def test_runs_as_a_filter() -> None:
    text = SAMPLE.read_text()
    p = subprocess.run([sys.executable, str(TOOL)], input=text.encode(), capture_output=True,
                       timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stdout == mksymtab.build(mksymtab.parse(text.splitlines(keepends=True)))


@pytest.mark.skipif(shutil.which("nm") is None, reason="no host nm")
def test_real_nm_output(mkfs_bin: Path) -> None:
    """Every sized code symbol nm reports for a real binary is in the table, at its address."""
    nm = subprocess.run(["nm", "-C", "-n", "-S", "--defined-only", str(mkfs_bin)],
                        capture_output=True, text=True, check=True).stdout
    entries = table_from(nm)
    assert entries == sorted(entries)
    assert len({addr for addr, _, _ in entries}) == len(entries)
    by_addr = {addr: (size, name) for addr, size, name in entries}
    assert any(name == "main" for _, name in by_addr.values())
    for line in nm.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and len(parts[1]) > 1 and parts[2] in ("T", "W") and \
                not parts[3].startswith("$"):
            addr, size = int(parts[0], 16), int(parts[1], 16)
            assert addr in by_addr, line
            assert by_addr[addr][0] == size, line


def test_names_of_any_bytes_pass_through() -> None:
    """A name is bytes, not text: any byte but NUL and newline (which nm's lines cannot
    carry) reaches the table as it was, whatever the locale, UTF-8 or not."""
    names = [bytes(range(1, 10)) + bytes(range(11, 32)), bytes(range(0x7f, 0x100)),
             "ñandú_función".encode(), b"\xc3(\xff\xfe\"\\"]
    text = b"".join(b"%016x %016x T %s\n" % (0x1000 * (i + 1), 0x10, n)
                    for i, n in enumerate(names))
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "PYTHONUTF8": "0"}
    p = subprocess.run([sys.executable, str(TOOL)], input=text, capture_output=True,
                       timeout=30, env=env)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    blob = p.stdout
    count = struct.unpack_from("<4I", blob)[1]
    strtab = blob[16 + 16 * count:]
    got = []
    for i in range(count):
        _, _, name = struct.unpack_from("<QII", blob, 16 + 16 * i)
        got.append(strtab[name:strtab.index(b"\0", name)])
    assert got == names
