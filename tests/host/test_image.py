"""mkfs's output read by the independent parser, and the checker run on damaged images.

The first half builds one image from a handful of files chosen to sit on the format's edges
(empty, exactly the direct blocks, one byte into the indirect block, MAXFILE blocks, a 14-byte
name) and reads it back with fsimage.py. The second half damages copies of that image on purpose,
one kind of damage per test, and expects check() to name it.
"""

from __future__ import annotations

import random
import struct
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from tern import fsimage
from tern.fsimage import BSIZE, MAXFILE, NDIRECT, ROOTINO, Image

FILES = {
    "README": b"hello, disk\n",
    "_cat": random.Random(1).randbytes(5000),
    "_empty": b"",
    "_twelve": random.Random(2).randbytes(NDIRECT * BSIZE),
    "_thirteen": random.Random(3).randbytes(NDIRECT * BSIZE + 1),
    "_max": random.Random(4).randbytes(MAXFILE * BSIZE),
    "_abcdefghijklmn": b"fourteen-character name\n",
}
# The names the files get on disk: no leading underscore.
ON_DISK = {name.removeprefix("_"): data for name, data in FILES.items()}


@pytest.fixture
def image_path(make_image: Callable[..., Path]) -> Path:
    return make_image(FILES)


@pytest.fixture
def img(image_path: Path) -> Image:
    return Image.open(image_path)


def blocks_for(size: int) -> int:
    n = -(-size // BSIZE)
    return n + (1 if n > NDIRECT else 0)


# --- What mkfs wrote ---------------------------------------------------------------------------

def test_superblock(img: Image, image_path: Path) -> None:
    sb = img.sb
    assert sb.magic == 0x10203040
    assert sb.size == 2000
    assert image_path.stat().st_size == 2000 * BSIZE
    assert sb.ninodes == 200
    assert sb.nlog == 31
    assert sb.logstart == 2
    assert sb.inodestart == sb.logstart + sb.nlog == 33
    assert sb.bmapstart == sb.inodestart + 13 == 46
    assert sb.datastart == sb.bmapstart + 1 == 47
    assert sb.nblocks == 2000 - 47
    assert img.superblock_problems() == []
    # The log is empty: nothing to replay.
    assert img.log_header()[0] == 0
    assert img.replayed == 0


def test_root_directory(img: Image) -> None:
    root = img.inode(ROOTINO)
    assert root.type == fsimage.T_DIR
    assert root.nlink == 1
    entries = img.entries(ROOTINO)
    assert [(e.name, e.inum) for e in entries[:2]] == [(".", ROOTINO), ("..", ROOTINO)]
    assert root.size == len(entries) * 16
    assert img.inode(0).type == fsimage.T_FREE


def test_every_file_present_with_its_content(img: Image) -> None:
    names = img.listdir("/")
    assert set(names) == set(ON_DISK) | {".", ".."}
    for name, data in ON_DISK.items():
        inode = img.inode(names[name])
        assert inode.type == fsimage.T_FILE, name
        assert inode.nlink == 1, name
        assert inode.size == len(data), name
        assert img.read_file("/" + name) == data, name


def test_files_take_inodes_in_argument_order(img: Image) -> None:
    entries = img.entries(ROOTINO)[2:]
    assert [e.name for e in entries] == list(ON_DISK)
    assert [e.inum for e in entries] == list(range(2, 2 + len(ON_DISK)))


def test_block_pointers_direct_and_indirect(img: Image) -> None:
    twelve = img.inode(img.lookup("twelve"))
    assert all(twelve.addrs[:NDIRECT]) and twelve.addrs[NDIRECT] == 0
    thirteen = img.inode(img.lookup("thirteen"))
    slots = img.indirect_slots(thirteen)
    assert slots[0] != 0 and not any(slots[1:])
    biggest = img.inode(img.lookup("max"))
    assert all(img.indirect_slots(biggest))
    empty = img.inode(img.lookup("empty"))
    assert not any(empty.addrs)


def test_bitmap_marks_exactly_the_used_blocks(img: Image) -> None:
    # Walk the inodes here, without the checker, and compare with the bitmap bit by bit.
    sb = img.sb
    used = set(range(sb.datastart))
    for inum in range(1, sb.ninodes):
        inode = img.inode(inum)
        if not inode.allocated:
            continue
        owned = [b for b in inode.addrs if b] + [b for b in img.indirect_slots(inode) if b]
        assert not used & set(owned), f"inode {inum} shares a block"
        used |= set(owned)
    marked = {b for b in range(sb.size) if img.bitmap_bit(b)}
    assert marked == used
    root_size = img.inode(ROOTINO).size
    assert len(used) == sb.datastart + blocks_for(root_size) + sum(
        blocks_for(len(d)) for d in ON_DISK.values())
    # Bits past the end of the image are clear.
    assert not any(img.bitmap_bit(b) for b in range(sb.size, BSIZE * 8))


def test_check_finds_nothing(image_path: Path) -> None:
    assert fsimage.check(image_path) == []


def test_cli_says_clean(image_path: Path) -> None:
    p = subprocess.run([sys.executable, fsimage.__file__, str(image_path)],
                       capture_output=True, text=True)
    assert (p.returncode, p.stdout) == (0, "clean\n")


def test_options_change_size_and_inodes(make_image: Callable[..., Path]) -> None:
    path = make_image({"_a": b"x" * 3000}, "-s", "9000", "-i", "300")
    img = Image.open(path)
    assert (img.sb.size, img.sb.ninodes) == (9000, 300)
    assert img.sb.bmapstart - img.sb.inodestart == 19  # 300 inodes at 16 a block
    assert img.sb.datastart - img.sb.bmapstart == 2    # 9000 bits need two bitmap blocks
    assert img.read_file("a") == b"x" * 3000
    assert fsimage.check(path) == []


# --- Damage, one kind at a time ---------------------------------------------------------------

def patch(path: Path, change: Callable[[Image, bytearray], None]) -> Path:
    """Apply `change` to a copy of the image's bytes, write it next to the original."""
    img = Image.open(path)
    data = bytearray(img.data)
    change(img, data)
    out = path.with_suffix(".bad")
    out.write_bytes(data)
    return out


def set_inode_field(img: Image, data: bytearray, inum: int, **fields: int) -> None:
    inode = img.inode(inum)
    values = {"type": inode.type, "major": inode.major, "minor": inode.minor,
              "nlink": inode.nlink, "size": inode.size}
    addrs = list(inode.addrs)
    for key, value in fields.items():
        if key.startswith("addr"):
            addrs[int(key[4:])] = value
        else:
            values[key] = value
    fsimage.INODE.pack_into(data, img.inode_offset(inum), values["type"], values["major"],
                            values["minor"], values["nlink"], values["size"], *addrs)


def with_fields(path: Path, who: str | int, **fields: int) -> Path:
    """patch() that sets fields of one inode: `who` is a file in the root directory, or an
    inode number."""
    def change(img: Image, data: bytearray) -> None:
        set_inode_field(img, data, who if isinstance(who, int) else img.lookup(who), **fields)
    return patch(path, change)


def entry_offset(img: Image, dir_inum: int, name: str) -> int:
    """Byte offset in the image of the directory entry `name` (first block of the dir only)."""
    entry = next(e for e in img.entries(dir_inum) if e.name == name)
    block = img.block_map(img.inode(dir_inum))[entry.offset // BSIZE]
    return block * BSIZE + entry.offset % BSIZE


def kinds(path: Path, **kw: bool) -> set[str]:
    return {p.kind for p in fsimage.check(path, **kw)}


def test_bitmap_bit_set_for_a_free_block(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        offset, mask = img.bitmap_location(img.sb.size - 1)
        data[offset] |= mask
    assert kinds(patch(image_path, change)) == {fsimage.BITMAP_LEAK}


def test_bitmap_bit_clear_for_a_used_block(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        offset, mask = img.bitmap_location(img.inode(img.lookup("cat")).addrs[2])
        data[offset] &= ~mask
    assert kinds(patch(image_path, change)) == {fsimage.BITMAP_UNMARKED}


def test_bitmap_bit_clear_for_a_metadata_block(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        offset, mask = img.bitmap_location(img.sb.inodestart)
        data[offset] &= ~mask
    assert kinds(patch(image_path, change)) == {fsimage.BITMAP_UNMARKED}


def test_bitmap_bit_set_past_the_end(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        offset, mask = img.bitmap_location(img.sb.size + 5)
        data[offset] |= mask
    assert kinds(patch(image_path, change)) == {fsimage.BITMAP_LEAK}


def test_duplicate_direct_block_pointer(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        shared = img.inode(img.lookup("cat")).addrs[0]
        set_inode_field(img, data, img.lookup("README"), addr0=shared)
    problems = fsimage.check(patch(image_path, change))
    # README's own block is now used by nobody, so the bitmap is also wrong about it.
    assert {p.kind for p in problems} == {fsimage.BLOCK_DUP, fsimage.BITMAP_LEAK}
    assert any("inode 3 block 0" in p.message for p in problems if p.kind == fsimage.BLOCK_DUP)


def test_duplicate_pointer_in_an_indirect_block(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        inode = img.inode(img.lookup("max"))
        first = inode.addrs[0]
        struct.pack_into("<I", data, inode.addrs[NDIRECT] * BSIZE + 4 * 7, first)
    assert fsimage.BLOCK_DUP in kinds(patch(image_path, change))


def test_block_pointer_into_metadata_or_past_the_end(image_path: Path) -> None:
    for bad in (5, 1999 + 10):
        def change(img: Image, data: bytearray, bad: int = bad) -> None:
            set_inode_field(img, data, img.lookup("cat"), addr1=bad)
        assert fsimage.BLOCK_RANGE in kinds(patch(image_path, change)), bad


def test_wrong_nlink(image_path: Path) -> None:
    assert kinds(with_fields(image_path, "cat", nlink=2)) == {fsimage.NLINK_BAD}


def test_entry_naming_a_free_inode(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        struct.pack_into("<H", data, entry_offset(img, ROOTINO, "README"), 150)
    found = kinds(patch(image_path, change))
    # The file README named is now nameless, so it is also an orphan with one link too many.
    assert fsimage.FREE_REF in found
    assert found <= {fsimage.FREE_REF, fsimage.ORPHAN, fsimage.NLINK_BAD}


def test_entry_naming_a_freed_inode(image_path: Path) -> None:
    assert kinds(with_fields(image_path, "empty", type=0, nlink=0)) == {fsimage.FREE_REF}


def test_entry_naming_an_inode_past_the_table(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        struct.pack_into("<H", data, entry_offset(img, ROOTINO, "empty"), 60000)
    assert fsimage.FREE_REF in kinds(patch(image_path, change))


def test_size_larger_than_blocks(image_path: Path) -> None:
    assert kinds(with_fields(image_path, "README", size=5000)) == {fsimage.SIZE_BAD}


def test_size_reaching_past_the_last_indirect_slot(image_path: Path) -> None:
    size = (NDIRECT + 2) * BSIZE
    assert kinds(with_fields(image_path, "thirteen", size=size)) == {fsimage.SIZE_BAD}


def test_size_beyond_maxfile(image_path: Path) -> None:
    assert fsimage.INODE_BAD in kinds(with_fields(image_path, "max", size=MAXFILE * BSIZE + 1))


def test_block_past_the_size_is_allowed(image_path: Path) -> None:
    # A write that fails half-way may leave a block mapped beyond the size; it is still in use.
    assert kinds(with_fields(image_path, "README", size=0)) == set()


def test_inode_zero_in_use(image_path: Path) -> None:
    assert kinds(with_fields(image_path, 0, type=fsimage.T_FILE)) == {fsimage.INODE_BAD}


def test_unknown_inode_type(image_path: Path) -> None:
    assert kinds(with_fields(image_path, "README", type=7)) == {fsimage.INODE_BAD}


def test_orphan_inode(image_path: Path) -> None:
    problems = fsimage.check(with_fields(image_path, 150, type=fsimage.T_FILE, nlink=0))
    assert [p.kind for p in problems] == [fsimage.ORPHAN]
    assert "inode 150" in problems[0].message


def test_missing_dotdot(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        struct.pack_into("<H", data, entry_offset(img, ROOTINO, ".."), 0)
    # Without its "..", the root is named by nothing and its link count is one too many.
    assert kinds(patch(image_path, change)) == {fsimage.DIR_BAD, fsimage.NLINK_BAD}


def test_dot_naming_another_inode(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        struct.pack_into("<H", data, entry_offset(img, ROOTINO, "."), 2)
    assert fsimage.DIR_BAD in kinds(patch(image_path, change))


def test_duplicate_name(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        off = entry_offset(img, ROOTINO, "cat")
        data[off + 2:off + 16] = b"README".ljust(14, b"\0")
    assert kinds(patch(image_path, change)) == {fsimage.DIR_BAD}


def test_bad_magic_stops_the_check(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        data[BSIZE] ^= 0xFF
    problems = fsimage.check(patch(image_path, change))
    assert [p.kind for p in problems] == [fsimage.SUPERBLOCK_BAD]


def test_inconsistent_regions(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        struct.pack_into("<I", data, BSIZE + 6 * 4, img.sb.inodestart + 1)  # inodestart
    assert kinds(patch(image_path, change)) == {fsimage.SUPERBLOCK_BAD}


def test_truncated_image(image_path: Path, tmp_path: Path) -> None:
    short = tmp_path / "short.img"
    short.write_bytes(image_path.read_bytes()[:1000 * BSIZE])
    assert kinds(short) == {fsimage.SUPERBLOCK_BAD}
    tiny = tmp_path / "tiny.img"
    tiny.write_bytes(b"\0" * 100)
    assert kinds(tiny) == {fsimage.SUPERBLOCK_BAD}


def test_cli_lists_problems(image_path: Path) -> None:
    bad = with_fields(image_path, "cat", nlink=3)
    p = subprocess.run([sys.executable, fsimage.__file__, str(bad)],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert p.stdout.startswith("nlink: inode 3 ")


# --- Subdirectories and link counts ------------------------------------------------------------

def add_subdir(img: Image, data: bytearray, name: str, *,
               bump_parent: bool = True) -> tuple[int, int]:
    """Make directory /name by hand, as the kernel's mkdir would: a free inode, a free block,
    "." and "..", an entry in the root, and one more link on the root for the new "..".
    The root's entry goes into the free space of its first block. Returns the new directory's
    inode number and its block."""
    inum = next(i for i in range(2, img.sb.ninodes) if not img.inode(i).allocated)
    block = next(b for b in range(img.sb.datastart, img.sb.size) if not img.bitmap_bit(b))
    offset, mask = img.bitmap_location(block)
    data[offset] |= mask
    fsimage.DIRENT.pack_into(data, block * BSIZE, inum, b".")
    fsimage.DIRENT.pack_into(data, block * BSIZE + 16, ROOTINO, b"..")
    set_inode_field(img, data, inum, type=fsimage.T_DIR, nlink=1, size=32, addr0=block)
    root = img.inode(ROOTINO)
    assert root.size + 16 <= BSIZE
    fsimage.DIRENT.pack_into(data, root.addrs[0] * BSIZE + root.size, inum, name.encode())
    set_inode_field(img, data, ROOTINO, size=root.size + 16,
                    nlink=root.nlink + (1 if bump_parent else 0))
    return inum, block


def test_subdirectory_made_like_mkdir_is_clean(make_image: Callable[..., Path]) -> None:
    path = make_image({"_a": b"a"})
    made: list[tuple[int, int]] = []
    fixed = patch(path, lambda img, data: made.append(add_subdir(img, data, "d")))
    assert fsimage.check(fixed) == []
    img = Image.open(fixed)
    assert img.inode(ROOTINO).nlink == 2
    assert img.listdir("/d") == {".": made[0][0], "..": ROOTINO}


def test_parent_link_not_counted(make_image: Callable[..., Path]) -> None:
    path = make_image({"_a": b"a"})
    bad = patch(path, lambda img, data: add_subdir(img, data, "d", bump_parent=False))
    assert kinds(bad) == {fsimage.NLINK_BAD}


def test_subdirectory_dotdot_wrong(make_image: Callable[..., Path]) -> None:
    path = make_image({"_a": b"a"})

    def change(img: Image, data: bytearray) -> None:
        inum, block = add_subdir(img, data, "d")
        # Point the new directory's ".." at itself. Its link count and the root's are then
        # both off by one, and the ".." is wrong.
        struct.pack_into("<H", data, block * BSIZE + 16, inum)
    assert kinds(patch(path, change)) == {fsimage.DIR_BAD, fsimage.NLINK_BAD}


# --- The log ----------------------------------------------------------------------------------

def test_committed_log_is_replayed_before_checking(image_path: Path) -> None:
    # Damage an inode block on disk, and put its correct copy in the log as a committed
    # transaction: after replay (what the kernel does at boot) the image is clean.
    def change(img: Image, data: bytearray) -> None:
        inum = img.lookup("cat")
        home = img.inode_offset(inum) // BSIZE
        good = bytes(data[home * BSIZE:(home + 1) * BSIZE])
        log = img.sb.logstart
        data[(log + 1) * BSIZE:(log + 2) * BSIZE] = good
        struct.pack_into("<ii", data, log * BSIZE, 1, home)
        set_inode_field(img, data, inum, nlink=5)
    bad = patch(image_path, change)
    before = bad.read_bytes()
    assert kinds(bad, replay_log=False) == {fsimage.NLINK_BAD}
    assert fsimage.check(bad) == []
    assert Image.open(bad).replayed == 1
    assert bad.read_bytes() == before, "replay happens in memory only"
    assert Image.open(bad, replay_log=False).inode(3).nlink == 5


def test_log_header_count_too_large(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        struct.pack_into("<i", data, img.sb.logstart * BSIZE, img.sb.nlog)
    assert fsimage.LOG_BAD in kinds(patch(image_path, change))


def test_log_header_naming_the_superblock(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        struct.pack_into("<ii", data, img.sb.logstart * BSIZE, 1, 1)
    assert kinds(patch(image_path, change)) == {fsimage.LOG_BAD}
