"""The checker's remaining promises: every kind of damage fsimage.check() says it finds.

test_image.py damages an image one way per test. This file covers the checks it leaves out,
so that each place in fsimage.py that reports a problem is shown to fire at least once:
the superblock's region layout field by field, a negative log count, block pointers held in
or naming an indirect block, a size that needs an indirect block the inode lacks, the
directory rules (entry size, names, ".", the root, a directory with two names), a whole
directory cut off from the tree, and the log seen as a crash leaves it: uncommitted blocks
ignored, a committed transaction half installed.

Damage that breaks several invariants at once names each of them; the tests say which
kinds are expected beside the one under test, and why.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from tern import fsimage
from tern.fsimage import BSIZE, NDIRECT, ROOTINO, Image
from test_image import (FILES, add_subdir, entry_offset, kinds, patch, set_inode_field,
                        with_fields)


@pytest.fixture
def image_path(make_image: Callable[..., Path]) -> Path:
    return make_image(FILES)


def set_super_field(data: bytearray, index: int, value: int) -> None:
    """Field `index` of the superblock: magic, size, nblocks, ninodes, nlog, logstart,
    inodestart, bmapstart."""
    struct.pack_into("<I", data, BSIZE + 4 * index, value)


def problems_of(path: Path, **kw: bool) -> list[fsimage.Problem]:
    return fsimage.check(path, **kw)


# --- The superblock, one field at a time ---------------------------------------------------

SUPER_DAMAGE = {
    # name: (field index, new value as a function of the superblock, words in the message)
    "one-inode": (3, lambda sb: 1, "ninodes"),
    "log-moved": (5, lambda sb: sb.logstart + 1, "log starts"),
    "log-too-small": (4, lambda sb: 1, "nlog"),
    "bitmap-inside-inodes": (7, lambda sb: sb.inodestart + 1, "bitmap starts"),
    "no-room-for-metadata": (2, lambda sb: sb.size, "leaves no room"),
    "data-inside-bitmap": (2, lambda sb: sb.size - sb.bmapstart, "data starts"),
}


@pytest.mark.parametrize("name", list(SUPER_DAMAGE))
def test_superblock_layout(image_path: Path, name: str) -> None:
    index, value, words = SUPER_DAMAGE[name]

    def change(img: Image, data: bytearray) -> None:
        set_super_field(data, index, value(img.sb))
    problems = problems_of(patch(image_path, change))
    assert {p.kind for p in problems} == {fsimage.SUPERBLOCK_BAD}
    assert any(words in p.message for p in problems), problems


def test_negative_log_count(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        struct.pack_into("<i", data, img.sb.logstart * BSIZE, -1)
    bad = patch(image_path, change)
    assert kinds(bad) == {fsimage.LOG_BAD}
    assert Image.open(bad).replayed == 0, "a bad header must not be replayed"


# --- Block pointers and the indirect block -------------------------------------------------

def test_indirect_block_pointer_outside_the_data_region(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        set_inode_field(img, data, img.lookup("thirteen"), addr12=img.sb.inodestart)
    found = kinds(patch(image_path, change))
    # The file's 13th block can no longer be found, and the real indirect block and the
    # block it held are now used by nothing while the bitmap still marks them.
    assert found == {fsimage.BLOCK_RANGE, fsimage.SIZE_BAD, fsimage.BITMAP_LEAK}


def test_pointer_in_an_indirect_block_outside_the_data_region(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        inode = img.inode(img.lookup("max"))
        struct.pack_into("<I", data, inode.addrs[NDIRECT] * BSIZE + 4 * 9, 1)  # the superblock
    # The block that slot held is now used by nothing.
    assert kinds(patch(image_path, change)) == {fsimage.BLOCK_RANGE, fsimage.BITMAP_LEAK}


def test_indirect_block_shared_with_another_file(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        indirect = img.inode(img.lookup("thirteen")).addrs[NDIRECT]
        set_inode_field(img, data, img.lookup("cat"), addr4=indirect)
    problems = problems_of(patch(image_path, change))
    assert any("indirect block" in p.message for p in problems if p.kind == fsimage.BLOCK_DUP)
    # An indirect block already claimed is not followed, so the second file's 13th block
    # counts as missing, and the block it really had, like cat's own 5th block, as leaked.
    assert {p.kind for p in problems} == {fsimage.BLOCK_DUP, fsimage.SIZE_BAD,
                                          fsimage.BITMAP_LEAK}


def test_size_needing_an_indirect_block_that_is_missing(image_path: Path) -> None:
    size = (NDIRECT + 1) * BSIZE
    assert kinds(with_fields(image_path, "twelve", size=size)) == {fsimage.SIZE_BAD}


# --- Directories ---------------------------------------------------------------------------

def test_directory_size_not_a_whole_number_of_entries(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        set_inode_field(img, data, ROOTINO, size=img.inode(ROOTINO).size + 8)
    assert kinds(patch(image_path, change)) == {fsimage.DIR_BAD}


@pytest.mark.parametrize("name", [b"", b"RE/ADME"])
def test_entry_with_an_invalid_name(image_path: Path, name: bytes) -> None:
    def change(img: Image, data: bytearray) -> None:
        off = entry_offset(img, ROOTINO, "README")
        data[off + 2:off + 16] = name.ljust(14, b"\0")
    assert kinds(patch(image_path, change)) == {fsimage.DIR_BAD}


def test_missing_dot(image_path: Path) -> None:
    # "." does not count as a link, so nothing else changes.
    def change(img: Image, data: bytearray) -> None:
        struct.pack_into("<H", data, entry_offset(img, ROOTINO, "."), 0)
    problems = problems_of(patch(image_path, change))
    assert [p.kind for p in problems] == [fsimage.DIR_BAD]
    assert "'.'" in problems[0].message


def test_root_that_is_not_a_directory(image_path: Path) -> None:
    problems = problems_of(with_fields(image_path, ROOTINO, type=fsimage.T_FILE))
    assert any(p.kind == fsimage.DIR_BAD and "root" in p.message for p in problems)
    # Its entries are no longer read as a directory, so no file is named by anything.
    assert {p.kind for p in problems} == {fsimage.DIR_BAD, fsimage.NLINK_BAD}


def add_entry(img: Image, data: bytearray, dir_inum: int, name: str, inum: int) -> None:
    """Append an entry to a directory whose first block has room, growing its size."""
    d = img.inode(dir_inum)
    assert d.size + 16 <= BSIZE
    fsimage.DIRENT.pack_into(data, d.addrs[0] * BSIZE + d.size, inum, name.encode())
    set_inode_field(img, data, dir_inum, size=d.size + 16)


def test_root_named_by_a_subdirectory(make_image: Callable[..., Path]) -> None:
    path = make_image({"_a": b"a"})

    def change(img: Image, data: bytearray) -> None:
        inum, _ = add_subdir(img, data, "d")
        add_entry(Image(bytes(data)), data, inum, "up", ROOTINO)
    problems = problems_of(patch(path, change))
    # The extra name is also one link more than the root's count.
    assert {p.kind for p in problems} == {fsimage.DIR_BAD, fsimage.NLINK_BAD}
    assert any("root directory is named" in p.message for p in problems)


def test_directory_with_two_names(make_image: Callable[..., Path]) -> None:
    path = make_image({"_a": b"a"})

    def change(img: Image, data: bytearray) -> None:
        inum, _ = add_subdir(img, data, "d")
        now = Image(bytes(data))
        add_entry(now, data, ROOTINO, "e", inum)
        # Keep the link count right, so that only the second name itself is wrong.
        set_inode_field(Image(bytes(data)), data, inum, nlink=2)
    problems = problems_of(patch(path, change))
    assert [p.kind for p in problems] == [fsimage.DIR_BAD]
    assert "more than one entry" in problems[0].message


def test_directory_cut_off_from_the_tree(make_image: Callable[..., Path]) -> None:
    path = make_image({"_a": b"a"})

    def change(img: Image, data: bytearray) -> None:
        inum, block = add_subdir(img, data, "d")
        now = Image(bytes(data))
        # A file inside d, then d's name removed from the root: both are lost.
        file_inum = next(i for i in range(2, now.sb.ninodes)
                         if not now.inode(i).allocated)
        set_inode_field(now, data, file_inum, type=fsimage.T_FILE, nlink=1)
        fsimage.DIRENT.pack_into(data, block * BSIZE + 32, file_inum, b"f")
        set_inode_field(now, data, inum, size=48, nlink=0)
        struct.pack_into("<H", data, entry_offset(Image(bytes(data)), ROOTINO, "d"), 0)
    problems = problems_of(patch(path, change))
    # The link counts still agree (d is named by nothing and has nlink 0; its ".." still
    # counts for the root), so being unreachable is all that is wrong, with both of them.
    assert [p.kind for p in problems] == [fsimage.ORPHAN, fsimage.ORPHAN], problems
    assert "directory" in problems[0].message and "file" in problems[1].message


# --- The log as a crash leaves it ----------------------------------------------------------

def test_uncommitted_log_blocks_are_ignored(image_path: Path) -> None:
    # A crash before the commit point leaves copies in the log but a header with n = 0.
    def change(img: Image, data: bytearray) -> None:
        log = img.sb.logstart
        for i in range(1, img.sb.nlog):
            data[(log + i) * BSIZE:(log + i + 1) * BSIZE] = bytes([0xA5]) * BSIZE
        struct.pack_into("<ii", data, log * BSIZE, 0, img.sb.inodestart)
    bad = patch(image_path, change)
    assert fsimage.check(bad) == []
    assert Image.open(bad).replayed == 0


def test_transaction_installed_half_way(make_image: Callable[..., Path]) -> None:
    # mkdir as one transaction (new inode, its block, the bitmap, the root's inode and its
    # block), committed to the log, with only some of its blocks copied home before the
    # crash. Without replay the image is inconsistent; with it, it is exactly the new state.
    path = make_image({"_a": b"a"})
    before = Image.open(path)
    after_data = bytearray(before.data)
    add_subdir(before, after_data, "d")
    changed = [b for b in range(before.sb.size)
               if after_data[b * BSIZE:(b + 1) * BSIZE] != before.data[b * BSIZE:(b + 1) * BSIZE]]
    assert len(changed) >= 3

    crashed = bytearray(before.data)
    log = before.sb.logstart
    for i, home in enumerate(changed):
        crashed[(log + 1 + i) * BSIZE:(log + 2 + i) * BSIZE] = after_data[home * BSIZE:
                                                                          (home + 1) * BSIZE]
    struct.pack_into(f"<i{len(changed)}i", crashed, log * BSIZE, len(changed), *changed)
    for home in changed[:len(changed) // 2]:
        crashed[home * BSIZE:(home + 1) * BSIZE] = after_data[home * BSIZE:(home + 1) * BSIZE]
    bad = path.with_suffix(".crashed")
    bad.write_bytes(crashed)

    assert fsimage.check(bad, replay_log=False) != []
    assert fsimage.check(bad) == []
    replayed = Image.open(bad)
    assert replayed.replayed == len(changed)
    start = before.sb.inodestart * BSIZE
    assert replayed.data[start:] == after_data[start:]


def test_cli_no_replay(image_path: Path) -> None:
    def change(img: Image, data: bytearray) -> None:
        inum = img.lookup("cat")
        home = img.inode_offset(inum) // BSIZE
        log = img.sb.logstart
        data[(log + 1) * BSIZE:(log + 2) * BSIZE] = data[home * BSIZE:(home + 1) * BSIZE]
        struct.pack_into("<ii", data, log * BSIZE, 1, home)
        set_inode_field(img, data, inum, nlink=4)
    bad = patch(image_path, change)
    run = [sys.executable, fsimage.__file__]
    replayed = subprocess.run(run + [str(bad)], capture_output=True, text=True)
    assert (replayed.returncode, replayed.stdout) == (0, "clean\n")
    raw = subprocess.run(run + ["--no-replay", str(bad)], capture_output=True, text=True)
    assert raw.returncode == 1 and raw.stdout.startswith("nlink: ")


def test_every_problem_kind_is_exercised() -> None:
    # Each kind fsimage declares is expected by name somewhere in its tests, so a new kind
    # cannot be added without one.
    kinds_declared = [name for name, value in vars(fsimage).items()
                      if name.isupper() and isinstance(value, str)]
    tests = Path(__file__).read_text() + (Path(__file__).parent / "test_image.py").read_text()
    assert len(kinds_declared) == 12
    assert [n for n in kinds_declared if f"fsimage.{n}" not in tests] == []
