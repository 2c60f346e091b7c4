"""Reading a file that tern copied out through its export disk.

The console is a slow way to get a large file out of the machine (about 150 KB a
second), so QEMU gives tern a second, raw disk: /dev/export inside, an ordinary image file
outside. `expcopy FILE` writes FILE there in a small container (kern/abi/export.h), and this
module unpacks it on the host:

    bytes [0, 4096)            the header, little-endian:
                                 char magic[8]    "TERNEXP1"
                                 u64 length       bytes of data
                                 u32 crc32        IEEE CRC-32 of the data (as zlib computes it)
                                 u32 reserved
                                 char name[64]    the file's name, NUL-terminated
    bytes [4096, 4096+length)  the data

The checks are there because a disk has no notion of "end of file": a blank disk, a copy
that was cut short or an image left over from an earlier run would otherwise be read as
data. The magic says something was written, the length says how much, and the checksum
says it all arrived.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Union

MAGIC = b"TERNEXP1"
HEADER_SIZE = 4096
HEADER = struct.Struct("<8sQII64s")  # the fields at the start of the header block


class ExportError(ValueError):
    """The image does not hold a complete, intact exported file."""


@dataclass(frozen=True)
class Exported:
    name: str
    data: bytes


@dataclass(frozen=True)
class Header:
    name: str
    length: int
    crc: int


def parse_header(head: bytes, room: int) -> Header:
    """The header at the start of an image (`head`: its first HEADER_SIZE bytes, or all of
    a shorter image), checked against the `room` for data that the image has after it."""
    if len(head) < HEADER_SIZE:
        raise ExportError(f"the image is {len(head)} bytes, shorter than the "
                          f"{HEADER_SIZE}-byte header")
    magic, length, crc, _reserved, raw_name = HEADER.unpack_from(head)
    if magic != MAGIC:
        if not any(head[:HEADER_SIZE]):
            raise ExportError("the image is blank: nothing was exported (did expcopy run?)")
        raise ExportError(f"bad magic {magic!r}, expected {MAGIC!r}: not an export image")
    if length > room:
        raise ExportError(f"the header announces {length} bytes of data but the image holds "
                          f"only {room} after the header")
    name = raw_name.split(b"\0", 1)[0].decode("utf-8", errors="replace")
    return Header(name, length, crc)


def check(header: Header, data: bytes) -> Exported:
    """The exported file, once its data is known to match the header's checksum."""
    actual = zlib.crc32(data) & 0xFFFFFFFF
    if actual != header.crc:
        raise ExportError(f"checksum mismatch: the header says {header.crc:#010x}, the data "
                          f"has {actual:#010x} (a copy cut short, or a stale image?)")
    return Exported(header.name, data)


def parse(image: bytes) -> Exported:
    """The file held in an export image's bytes."""
    header = parse_header(image[:HEADER_SIZE], max(len(image) - HEADER_SIZE, 0))
    return check(header, image[HEADER_SIZE:HEADER_SIZE + header.length])


def read(path: Union[str, Path]) -> Exported:
    """The file held in the export image at `path`.

    Only the header and the data are read: the image is usually far bigger than the file
    (profget makes a 64 MB one), and reading the rest would take longer than the copy.
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            header = parse_header(f.read(HEADER_SIZE), max(size - HEADER_SIZE, 0))
            data = f.read(header.length)
        return check(header, data)
    except ExportError as err:
        raise ExportError(f"{path}: {err}") from None


def pack(data: bytes, name: str = "", size: int = 0) -> bytes:
    """An export image holding `data`, padded with zeros to `size` bytes if that is larger.

    expcopy writes these inside tern; this is the same thing on the host, for tests and for
    preparing images by hand.
    """
    raw_name = name.encode("utf-8")[:63]
    header = HEADER.pack(MAGIC, len(data), zlib.crc32(data) & 0xFFFFFFFF, 0, raw_name)
    image = header.ljust(HEADER_SIZE, b"\0") + data
    return image.ljust(size, b"\0")
