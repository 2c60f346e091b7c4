"""Read an xv6-format file-system image and check that it is consistent.

This module is a second, independent reading of the disk format: it is written from the
format's description (block size 1024; boot block, superblock, log, inodes, bitmap, data; 64-byte
inodes with 12 direct blocks and one indirect block; 16-byte directory entries), not from the C++
headers that mkfs and the kernel share. If those headers were wrong, mkfs and the kernel would
agree with each other and still be wrong; this reader would not agree with them.

Two uses:

* ``Image`` reads an image: the superblock, inodes, directory entries, file contents by path.
  The host tests use it to see what mkfs wrote.
* ``check(path)`` lists every inconsistency it finds, as ``Problem`` values; an empty list means
  the image is clean. The crash-recovery tests run it on images taken after a crash. By default
  a committed transaction still in the log is applied first (in memory only, the file is not
  changed), because that is what the kernel does at boot: the state to judge is the one after
  recovery.

What "consistent" means here:

* the superblock has the magic number and its regions follow one another in order, each big
  enough for what it holds, and fit in the file;
* every data block in use is reachable from exactly one place (an inode's direct slot, its
  indirect slot, or an indirect block's slot) and lies in the data region;
* the free bitmap marks exactly the metadata blocks and the blocks in use;
* a file's size never needs a block that is not there;
* every directory holds ``.`` (itself) and ``..`` (its parent; the root's is itself), its
  entries name allocated inodes, and no name appears twice;
* every inode's link count equals the number of directory entries naming it, where ``.`` does
  not count (a directory's ``..`` entries do count for its parent);
* every allocated inode is reachable from the root directory. (An unreachable inode with no
  links is what a file unlinked while open leaves when the machine stops; the kernel frees
  it at the next boot. ``reclaimable_at_boot`` tells such orphans from the others.)

Run as a command, ``fsimage.py fs.img`` prints ``clean`` or one problem a line (exit status 1).
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

BSIZE = 1024
FSMAGIC = 0x10203040
ROOTINO = 1
NDIRECT = 12
NINDIRECT = BSIZE // 4
MAXFILE = NDIRECT + NINDIRECT
INODE_SIZE = 64
IPB = BSIZE // INODE_SIZE
BPB = BSIZE * 8
DIRENT_SIZE = 16
DIRSIZ = 14

T_FREE, T_DIR, T_FILE, T_DEVICE = 0, 1, 2, 3
TYPE_NAMES = {T_FREE: "free", T_DIR: "directory", T_FILE: "file", T_DEVICE: "device"}

# Little-endian: eight uint32 fields; four int16 then uint32 size and 13 uint32 block numbers;
# uint16 inum and 14 name bytes.
SUPERBLOCK = struct.Struct("<8I")
INODE = struct.Struct("<4hI13I")
DIRENT = struct.Struct("<H14s")
assert INODE.size == INODE_SIZE and DIRENT.size == DIRENT_SIZE

# The kinds of problem check() reports. Callers can filter on them; the crash tests, for
# example, may choose to tolerate ORPHAN if the kernel does not reclaim unlinked open files.
SUPERBLOCK_BAD = "superblock"   # magic, region layout or file length wrong; nothing else checked
LOG_BAD = "log"                 # log header out of range
INODE_BAD = "inode"             # unknown type, inode 0 in use, size beyond MAXFILE
BLOCK_RANGE = "block-range"     # a block pointer outside the data region
BLOCK_DUP = "block-dup"         # a block reachable from two places
SIZE_BAD = "size"               # the size needs a block the inode does not have
BITMAP_UNMARKED = "bitmap-unmarked"  # a block in use that the bitmap calls free
BITMAP_LEAK = "bitmap-leak"     # a block the bitmap calls used that nothing uses
DIR_BAD = "dir"                 # bad entries, missing or wrong "." / "..", duplicate names
FREE_REF = "free-inode-ref"     # a directory entry naming a free or nonexistent inode
NLINK_BAD = "nlink"             # link count differs from the entries naming the inode
ORPHAN = "orphan"               # allocated inode not reachable from the root


class FormatError(Exception):
    """The image cannot be read far enough to answer the question asked."""


@dataclass(frozen=True)
class Problem:
    kind: str
    message: str
    inum: int | None = None  # the inode the problem is about, where there is one

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class SuperBlock:
    magic: int
    size: int
    nblocks: int
    ninodes: int
    nlog: int
    logstart: int
    inodestart: int
    bmapstart: int

    @property
    def datastart(self) -> int:
        """The first data block: the data region is the last nblocks blocks of the image."""
        return self.size - self.nblocks


@dataclass(frozen=True)
class Inode:
    inum: int
    type: int
    major: int
    minor: int
    nlink: int
    size: int
    addrs: tuple[int, ...]

    @property
    def allocated(self) -> bool:
        return self.type != T_FREE

    @property
    def nblocks(self) -> int:
        """How many file blocks the size needs (not counting the indirect block)."""
        return -(-self.size // BSIZE)


@dataclass(frozen=True)
class DirEntry:
    offset: int
    inum: int
    name: str


def _decode_name(raw: bytes) -> str:
    # A name of exactly DIRSIZ bytes has no NUL; a shorter one ends at the first NUL.
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="surrogateescape")


class Image:
    """An image held in memory. Reads never touch the file again after loading."""

    def __init__(self, data: bytes, *, replay_log: bool = True) -> None:
        self.data = bytearray(data)
        if len(self.data) < 2 * BSIZE:
            raise FormatError(f"image is {len(self.data)} bytes, too short for a superblock")
        self.sb = SuperBlock(*SUPERBLOCK.unpack_from(self.data, BSIZE))
        # The number of logged blocks copied into place, if a committed transaction was found.
        self.replayed = 0
        if replay_log and not self.superblock_problems() and not self.log_problems():
            self.replay_log()

    @classmethod
    def open(cls, path: str | Path, *, replay_log: bool = True) -> Image:
        return cls(Path(path).read_bytes(), replay_log=replay_log)

    # --- Raw access -----------------------------------------------------------------------

    def block(self, b: int) -> bytes:
        if b < 0 or (b + 1) * BSIZE > len(self.data):
            raise FormatError(f"block {b} is outside the image")
        return bytes(self.data[b * BSIZE:(b + 1) * BSIZE])

    def inode_offset(self, inum: int) -> int:
        """Byte offset of inode `inum` in the image."""
        return (self.sb.inodestart + inum // IPB) * BSIZE + (inum % IPB) * INODE_SIZE

    def inode(self, inum: int) -> Inode:
        if not 0 <= inum < self.sb.ninodes:
            raise FormatError(f"inode {inum} does not exist (the image has {self.sb.ninodes})")
        fields = INODE.unpack_from(self.data, self.inode_offset(inum))
        return Inode(inum, *fields[:5], addrs=tuple(fields[5:]))

    def bitmap_location(self, b: int) -> tuple[int, int]:
        """The byte offset and bit mask of block `b`'s bit in the free bitmap."""
        return (self.sb.bmapstart + b // BPB) * BSIZE + (b % BPB) // 8, 1 << (b % 8)

    def bitmap_bit(self, b: int) -> bool:
        offset, mask = self.bitmap_location(b)
        return bool(self.data[offset] & mask)

    def in_data(self, b: int) -> bool:
        return self.sb.datastart <= b < self.sb.size

    def _data_block(self, b: int, strict: bool) -> bytes | None:
        """Block `b` if it is a data block. Otherwise raise FormatError when `strict`, or give
        None so that a checker can carry on past a bad pointer it has already reported."""
        if self.in_data(b):
            return self.block(b)
        if strict:
            raise FormatError(f"block pointer {b} is outside the data region "
                              f"[{self.sb.datastart}, {self.sb.size})")
        return None

    def indirect_slots(self, inode: Inode, *, strict: bool = True) -> list[int]:
        """The block numbers held in the inode's indirect block (empty if it has none)."""
        ind = inode.addrs[NDIRECT]
        if ind == 0:
            return []
        raw = self._data_block(ind, strict)
        return list(struct.unpack_from(f"<{NINDIRECT}I", raw)) if raw else []

    def block_map(self, inode: Inode, *, strict: bool = True) -> list[int]:
        """Disk block of each file block, 0 for a hole, as far as the size reaches."""
        slots = list(inode.addrs[:NDIRECT]) + self.indirect_slots(inode, strict=strict)
        slots += [0] * (MAXFILE - len(slots))
        return slots[:min(inode.nblocks, MAXFILE)]

    # --- Files and directories ------------------------------------------------------------

    def read(self, inum: int, *, strict: bool = True) -> bytes:
        """The contents of inode `inum`, holes read as zeros. With `strict` off, a pointer
        outside the data region reads as a hole too instead of raising FormatError."""
        inode = self.inode(inum)
        out = bytearray()
        for b in self.block_map(inode, strict=strict):
            raw = self._data_block(b, strict) if b else None
            out += raw if raw else bytes(BSIZE)
        return bytes(out[:min(inode.size, MAXFILE * BSIZE)])

    def entries(self, inum: int, *, strict: bool = True) -> list[DirEntry]:
        """The used entries of directory `inum`, in order."""
        raw = self.read(inum, strict=strict)
        result = []
        for off in range(0, len(raw) - DIRENT_SIZE + 1, DIRENT_SIZE):
            entry_inum, name = DIRENT.unpack_from(raw, off)
            if entry_inum != 0:
                result.append(DirEntry(off, entry_inum, _decode_name(name)))
        return result

    def listdir(self, path: str = "/") -> dict[str, int]:
        inum = self.lookup(path)
        if inum is None:
            raise FormatError(f"{path}: no such directory")
        return {e.name: e.inum for e in self.entries(inum)}

    def lookup(self, path: str) -> int | None:
        """The inode number `path` names, starting at the root, or None."""
        inum = ROOTINO
        for part in (p for p in path.split("/") if p):
            if self.inode(inum).type != T_DIR:
                return None
            found = [e.inum for e in self.entries(inum) if e.name == part]
            if not found:
                return None
            inum = found[0]
        return inum

    def read_file(self, path: str) -> bytes:
        inum = self.lookup(path)
        if inum is None:
            raise FormatError(f"{path}: no such file")
        return self.read(inum)

    # --- The log --------------------------------------------------------------------------

    def log_header(self) -> tuple[int, list[int]]:
        """The count and the home block numbers in the log header block."""
        header = self.block(self.sb.logstart)
        (n,) = struct.unpack_from("<i", header)
        count = max(0, min(n, (BSIZE - 4) // 4))
        return n, list(struct.unpack_from(f"<{count}i", header, 4))

    def replay_log(self) -> None:
        """Copy each committed log block to its home, in memory, as the kernel does at boot."""
        n, homes = self.log_header()
        for i, home in enumerate(homes[:n]):
            self.data[home * BSIZE:(home + 1) * BSIZE] = self.block(self.sb.logstart + 1 + i)
        self.replayed = max(n, 0)

    # --- Checks ---------------------------------------------------------------------------

    def superblock_problems(self) -> list[Problem]:
        sb = self.sb
        bad = []
        if sb.magic != FSMAGIC:
            return [Problem(SUPERBLOCK_BAD, f"magic is {sb.magic:#x}, not {FSMAGIC:#x}")]
        if sb.size * BSIZE > len(self.data):
            bad.append(f"size is {sb.size} blocks but the image holds {len(self.data) // BSIZE}")
        if sb.ninodes < 2:
            bad.append(f"ninodes is {sb.ninodes}: no room for the root inode")
        if sb.logstart != 2:
            bad.append(f"the log starts at block {sb.logstart}, not right after the superblock")
        if sb.nlog < 2:
            bad.append(f"nlog is {sb.nlog}: a log needs a header and at least one block")
        if sb.inodestart != sb.logstart + sb.nlog:
            bad.append(f"inodes start at {sb.inodestart}, not where the log ends "
                       f"({sb.logstart + sb.nlog})")
        need = -(-sb.ninodes // IPB)
        if sb.bmapstart < sb.inodestart + need:
            bad.append(f"the bitmap starts at {sb.bmapstart}, inside the {need} inode blocks "
                       f"starting at {sb.inodestart}")
        if sb.nblocks >= sb.size:
            bad.append(f"nblocks {sb.nblocks} leaves no room for metadata in {sb.size} blocks")
        elif sb.datastart < sb.bmapstart + -(-sb.size // BPB):
            bad.append(f"data starts at {sb.datastart}, inside the bitmap of "
                       f"{-(-sb.size // BPB)} blocks starting at {sb.bmapstart}")
        return [Problem(SUPERBLOCK_BAD, m) for m in bad]

    def log_problems(self) -> list[Problem]:
        sb = self.sb
        n, homes = self.log_header()
        if not 0 <= n < sb.nlog:
            return [Problem(LOG_BAD, f"log header counts {n} blocks; the log holds "
                                     f"{sb.nlog - 1}")]
        return [Problem(LOG_BAD, f"log entry {i} names block {home}, outside "
                                 f"[{sb.inodestart}, {sb.size})")
                for i, home in enumerate(homes[:n]) if not sb.inodestart <= home < sb.size]


class _Checker:
    """One pass of check() over one image; collects problems as it goes."""

    def __init__(self, image: Image) -> None:
        self.img = image
        self.sb = image.sb
        self.problems: list[Problem] = []
        self.owner: dict[int, str] = {}          # data block -> who uses it
        self.inodes = [image.inode(i) for i in range(self.sb.ninodes)]

    def report(self, kind: str, message: str, inum: int | None = None) -> None:
        self.problems.append(Problem(kind, message, inum))

    def run(self) -> list[Problem]:
        for inode in self.inodes:
            self.check_inode(inode)
        self.check_bitmap()
        refs, parents, dotdot = self.check_directories()
        self.check_links(refs)
        self.check_tree(parents, dotdot)
        return self.problems

    def claim(self, b: int, who: str) -> bool:
        """Record that `who` uses block `b`; False if `b` is not a usable data block."""
        if not self.sb.datastart <= b < self.sb.size:
            self.report(BLOCK_RANGE, f"{who} points to block {b}, outside the data region "
                                     f"[{self.sb.datastart}, {self.sb.size})")
            return False
        if b in self.owner:
            self.report(BLOCK_DUP, f"block {b} is used by both {self.owner[b]} and {who}")
            return False
        self.owner[b] = who
        return True

    def check_inode(self, inode: Inode) -> None:
        inum = inode.inum
        if inum == 0:
            if inode.allocated:
                self.report(INODE_BAD, "inode 0 is in use; it must stay free")
            return
        if not inode.allocated:
            return
        if inode.type not in TYPE_NAMES:
            self.report(INODE_BAD, f"inode {inum} has unknown type {inode.type}")
        if inode.size > MAXFILE * BSIZE:
            self.report(INODE_BAD, f"inode {inum} has size {inode.size}, more than "
                                   f"MAXFILE blocks")
        # A block past the size is allowed (a write that failed half-way can leave one), but it
        # is in use all the same, so it is claimed like any other.
        needed = min(inode.nblocks, MAXFILE)
        missing = []
        for i, b in enumerate(inode.addrs[:NDIRECT]):
            if b:
                self.claim(b, f"inode {inum} block {i}")
            elif i < needed:
                missing.append(i)
        ind = inode.addrs[NDIRECT]
        if ind and self.claim(ind, f"inode {inum} indirect block"):
            for i, b in enumerate(self.img.indirect_slots(inode, strict=False)):
                if b:
                    self.claim(b, f"inode {inum} block {NDIRECT + i}")
                elif NDIRECT + i < needed:
                    missing.append(NDIRECT + i)
        elif needed > NDIRECT:
            missing.extend(range(NDIRECT, needed))
        if missing:
            self.report(SIZE_BAD, f"inode {inum} has size {inode.size} ({needed} blocks) but "
                                  f"{len(missing)} of its blocks are missing (the first is "
                                  f"block {missing[0]} of the file)")

    def check_bitmap(self) -> None:
        sb = self.sb
        for b in range(sb.size):
            marked = self.img.bitmap_bit(b)
            if b < sb.datastart:
                if not marked:
                    self.report(BITMAP_UNMARKED, f"metadata block {b} is free in the bitmap")
            elif b in self.owner and not marked:
                self.report(BITMAP_UNMARKED, f"block {b} ({self.owner[b]}) is free in the bitmap")
            elif b not in self.owner and marked:
                self.report(BITMAP_LEAK, f"block {b} is marked in use but nothing uses it")
        nbitmap_bits = (sb.datastart - sb.bmapstart) * BPB
        for b in range(sb.size, nbitmap_bits):
            if self.img.bitmap_bit(b):
                self.report(BITMAP_LEAK, f"the bitmap marks block {b}, past the end of the image")

    def check_directories(self) -> tuple[dict[int, int], dict[int, list[int]], dict[int, int]]:
        """Check every directory's entries. Returns, for each inode, the number of entries
        naming it (other than "."); for each directory, the directories naming it; and each
        directory's ".." target."""
        refs: dict[int, int] = defaultdict(int)
        parents: dict[int, list[int]] = defaultdict(list)
        dotdot: dict[int, int] = {}
        for d in (i for i in self.inodes if i.type == T_DIR and i.inum != 0):
            if d.size % DIRENT_SIZE:
                self.report(DIR_BAD, f"directory {d.inum} has size {d.size}, not a multiple "
                                     f"of {DIRENT_SIZE}")
            seen: set[str] = set()
            for e in self.img.entries(d.inum, strict=False):
                where = f"entry {e.name!r} in directory {d.inum}"
                if not e.name or "/" in e.name:
                    self.report(DIR_BAD, f"{where} has an invalid name")
                if e.name in seen:
                    self.report(DIR_BAD, f"{where} appears more than once")
                seen.add(e.name)
                if e.inum >= self.sb.ninodes:
                    self.report(FREE_REF, f"{where} names inode {e.inum}, beyond the "
                                          f"{self.sb.ninodes} inodes")
                    continue
                if not self.inodes[e.inum].allocated:
                    self.report(FREE_REF, f"{where} names inode {e.inum}, which is free")
                    continue
                if e.name == ".":
                    if e.inum != d.inum:
                        self.report(DIR_BAD, f"{where} names inode {e.inum}, not itself")
                    continue
                refs[e.inum] += 1
                if e.name == "..":
                    dotdot[d.inum] = e.inum
                elif self.inodes[e.inum].type == T_DIR:
                    parents[e.inum].append(d.inum)
            for name in (".", ".."):
                if name not in seen:
                    self.report(DIR_BAD, f"directory {d.inum} has no {name!r} entry")
        return refs, parents, dotdot

    def check_links(self, refs: dict[int, int]) -> None:
        for inode in self.inodes[1:]:
            count = refs.get(inode.inum, 0)
            if inode.allocated and inode.nlink != count:
                entries = "1 directory entry names" if count == 1 else \
                    f"{count} directory entries name"
                self.report(NLINK_BAD, f"inode {inode.inum} ({TYPE_NAMES.get(inode.type, '?')}) "
                                       f"has nlink {inode.nlink} but {entries} it")

    def check_tree(self, parents: dict[int, list[int]], dotdot: dict[int, int]) -> None:
        root = self.inodes[ROOTINO]
        if root.type != T_DIR:
            self.report(DIR_BAD, f"the root inode {ROOTINO} is not a directory "
                                 f"(type {root.type})")
            return
        for d in (i.inum for i in self.inodes if i.type == T_DIR and i.inum != 0):
            names = parents.get(d, [])
            expected_parent = ROOTINO if d == ROOTINO else (names[0] if names else None)
            if d == ROOTINO and names:
                self.report(DIR_BAD, f"the root directory is named by directories {names}")
            if len(names) > 1:
                self.report(DIR_BAD, f"directory {d} is named by more than one entry, "
                                     f"in directories {names}")
            if expected_parent is not None and d in dotdot and dotdot[d] != expected_parent:
                self.report(DIR_BAD, f"directory {d}'s '..' names inode {dotdot[d]}, not its "
                                     f"parent {expected_parent}")
        # Walk down from the root through named entries; whatever is not reached is lost.
        reached = {ROOTINO}
        todo = [ROOTINO]
        while todo:
            d = todo.pop()
            for e in self.img.entries(d, strict=False):
                if e.name in (".", "..") or e.inum >= self.sb.ninodes or e.inum in reached:
                    continue
                target = self.inodes[e.inum]
                if not target.allocated:
                    continue
                reached.add(e.inum)
                if target.type == T_DIR:
                    todo.append(e.inum)
        for inode in self.inodes[1:]:
            if inode.allocated and inode.inum not in reached:
                self.report(ORPHAN, f"inode {inode.inum} ({TYPE_NAMES.get(inode.type, '?')}, "
                                    f"nlink {inode.nlink}) is in use but not reachable from "
                                    f"the root", inode.inum)


def check_image(image: Image) -> list[Problem]:
    """Every inconsistency in an already loaded image; empty when it is clean."""
    problems = image.superblock_problems()
    if problems:
        return problems
    problems = image.log_problems()
    return problems + _Checker(image).run()


def reclaimable_at_boot(image: Image, problem: Problem) -> bool:
    """Is `problem` an orphan with no links, which the kernel's next boot frees?"""
    return (problem.kind == ORPHAN and problem.inum is not None
            and image.inode(problem.inum).nlink == 0)


def check(path: str | Path, *, replay_log: bool = True) -> list[Problem]:
    """Every inconsistency in the image at `path`; empty when it is clean."""
    try:
        image = Image.open(path, replay_log=replay_log)
    except FormatError as e:
        return [Problem(SUPERBLOCK_BAD, str(e))]
    return check_image(image)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Check an xv6-format file-system image.")
    parser.add_argument("image")
    parser.add_argument("--no-replay", action="store_true",
                        help="judge the blocks as they are, without applying a committed log")
    args = parser.parse_args(argv)
    try:
        problems = check(args.image, replay_log=not args.no_replay)
    except OSError as e:
        print(f"fsimage: {e}", file=sys.stderr)
        return 2
    if not problems:
        print("clean")
        return 0
    for p in problems:
        print(p)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
