"""tools/tern/prof/export.py: reading what expcopy wrote to the export disk, and refusing what
is blank, cut short, stale or not an export image at all."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path
from typing import Callable

import pytest

from samples import ROOT
from tern.prof import export

HEADER_H = ROOT / "kern" / "abi" / "export.h"


def test_constants_match_the_kernel_header() -> None:
    text = HEADER_H.read_text()
    size = re.search(r"#define\s+EXPORT_HEADER_SIZE\s+(\d+)", text)
    magic = re.search(r'#define\s+EXPORT_MAGIC\s+"([^"]+)"', text)
    assert size and magic, f"{HEADER_H} should define EXPORT_HEADER_SIZE and EXPORT_MAGIC"
    assert int(size[1]) == export.HEADER_SIZE
    assert magic[1].encode() == export.MAGIC
    assert export.HEADER.size == 8 + 8 + 4 + 4 + 64 <= export.HEADER_SIZE


def image(data: bytes, name: bytes = b"/proc/profile", *, length: int = -1, crc: int = -1,
          magic: bytes = export.MAGIC, size: int = 0) -> bytes:
    """An image built field by field from the documented layout, not with export.pack."""
    header = magic + struct.pack("<QII", len(data) if length < 0 else length,
                                 zlib.crc32(data) if crc < 0 else crc, 0)
    header += name.ljust(64, b"\0")
    blob = header.ljust(4096, b"\0") + data
    return blob.ljust(size, b"\0")


def test_reads_what_was_written() -> None:
    data = b'[\n{"pid":3}\n]\n' * 1000
    got = export.parse(image(data, size=1 << 20))
    assert got.data == data and got.name == "/proc/profile"


def test_pack_matches_the_layout() -> None:
    data = bytes(range(256)) * 40
    assert export.pack(data, "/proc/profile", 1 << 16) == image(data, size=1 << 16)
    assert export.parse(export.pack(b"")).data == b""


def test_blank_disk() -> None:
    with pytest.raises(export.ExportError, match="blank: nothing was exported"):
        export.parse(bytes(1 << 16))


def test_bad_magic() -> None:
    with pytest.raises(export.ExportError, match="bad magic"):
        export.parse(image(b"x", magic=b"TERNEXP0"))


def test_too_short() -> None:
    with pytest.raises(export.ExportError, match="shorter than the 4096-byte header"):
        export.parse(b"TERNEXP1")


def test_length_beyond_the_image() -> None:
    with pytest.raises(export.ExportError, match="announces 5000 bytes"):
        export.parse(image(b"x" * 10, length=5000))


def test_checksum_mismatch() -> None:
    good = image(b"0123456789" * 100)
    damaged = bytearray(good)
    damaged[4096 + 500] ^= 1
    with pytest.raises(export.ExportError, match="checksum mismatch"):
        export.parse(bytes(damaged))


def test_read_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "export.img"
    path.write_bytes(bytes(8192))
    with pytest.raises(export.ExportError, match="export.img: the image is blank"):
        export.read(path)


def test_profconv_reads_export_images(spin_path: Path, profconv: Callable,
                                      tmp_path: Path) -> None:
    img = tmp_path / "export.img"
    img.write_bytes(image(spin_path.read_bytes(), size=1 << 20))
    direct = profconv("folded", spin_path)
    via_image = profconv("folded", img)
    assert via_image.returncode == 0, via_image.stderr
    assert via_image.stdout == direct.stdout

    damaged = bytearray(img.read_bytes())
    damaged[5000] ^= 0xFF
    img.write_bytes(bytes(damaged))
    bad = profconv("folded", img)
    assert bad.returncode == 1 and b"checksum mismatch" in bad.stderr
