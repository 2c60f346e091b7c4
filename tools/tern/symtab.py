"""Turn `nm -C -n -S --defined-only` output into the binary symbol table of kern/lib/symtab.h.

Reads nm's text on stdin, writes the table to stdout. Only code symbols (types T, t, W, w)
are kept. A name is bytes, not text: whatever bytes nm prints (UTF-8 or not, control bytes)
go into the table as they are, whatever the locale. When several symbols share an address,
the global one with a size wins.

Usage: nm -C -n -S --defined-only ELF | tools/mksymtab.py > table.bin
"""
import io
import struct
import sys

MAGIC = 0x544D5953


def parse(lines):
    syms = {}
    for line in lines:
        parts = line.rstrip("\n").split(" ", 3)
        if len(parts) == 4 and len(parts[1]) > 1:
            addr, size, kind, name = int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]
        else:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) != 3:
                continue
            addr, size, kind, name = int(parts[0], 16), 0, parts[1], parts[2]
        if kind not in "TtWw" or not name or name.startswith("$") or name.startswith(".L"):
            continue
        rank = (size > 0, kind in "TW")
        old = syms.get(addr)
        if old is None or rank > old[0]:
            syms[addr] = (rank, size, name)
    return [(addr, size, name) for addr, (_, size, name) in sorted(syms.items())]


def build(symbols):
    strtab = bytearray()
    entries = bytearray()
    offsets = {}
    for addr, size, name in symbols:
        if name not in offsets:
            offsets[name] = len(strtab)
            strtab += name.encode("utf-8", "surrogateescape") + b"\0"
        entries += struct.pack("<QII", addr, min(size, 0xFFFFFFFF), offsets[name])
    if not strtab:
        strtab = bytearray(b"\0")
    header = struct.pack("<IIII", MAGIC, len(symbols), len(strtab), 0)
    return bytes(header + entries + strtab)


def main():
    # Bytes that are not UTF-8 become lone surrogates here and the same bytes again in build().
    lines = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape",
                             newline="\n")
    sys.stdout.buffer.write(build(parse(lines)))

