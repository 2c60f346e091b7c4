"""What the tests expect, computed on the host from the files that went into fs.img.

A test should not hard-code the README's word count or the list of programs: both change
whenever someone edits the README or adds a program. Instead it compares the machine's
answer with the same computation done here on the very files mkfs copied into the image.
A test that needs programs fs.img does not have makes an image of its own the same way
(image_with()).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from tern.machine import REPO

BUILD = REPO / "build"
PROGRAMS = BUILD / "user"  # _NAME in here is /NAME in fs.img


def image_file(name: str) -> bytes:
    """The bytes of a file as the Makefile put it into fs.img (README is build/README)."""
    if name == "README":
        copied = BUILD / "README"
        return (copied if copied.exists() else REPO / "README.md").read_bytes()
    return (PROGRAMS / f"_{name}").read_bytes()


def image_with(tmp: Path, replaced: dict[str, bytes], blocks: int | None = None) -> Path:
    """tmp/fs.img: a disk image of fs.img's files, made by mkfs as the Makefile makes fs.img,
    with some programs replaced or added (name -> the bytes of /name), and `blocks` blocks of
    1 KiB in all if given."""
    progs = sorted(p for p in PROGRAMS.glob("_*")
                   if "." not in p.name and p.name[1:] not in replaced)
    extra = []
    for name, data in replaced.items():
        path = tmp / f"_{name}"
        path.write_bytes(data)
        extra.append(path)
    image = tmp / "fs.img"
    size = ["-s", str(blocks)] if blocks else []
    result = subprocess.run([str(REPO / "mkfs" / "mkfs"), *size, str(image),
                             str(BUILD / "README"), *map(str, progs), *map(str, extra)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"mkfs failed: {result.stderr}"
    return image


def readme_text() -> str:
    return image_file("README").decode("utf-8", errors="replace")


# The folders of user programs (the Makefile's UPROGDIRS).
PROGRAM_DIRS = ("user/bin", "user/tests", "user/demo", "user/bench", "labs/*/user")


def user_programs() -> list[str]:
    """The names of the programs in the image: a file NAME.cc or a folder NAME/ in one of
    PROGRAM_DIRS becomes /NAME."""
    return sorted(p.stem for d in PROGRAM_DIRS for p in REPO.glob(f"{d}/*")
                  if p.suffix == ".cc" or p.is_dir())


@dataclass(frozen=True)
class Counts:
    lines: int
    words: int
    chars: int

    def __str__(self) -> str:
        return f"{self.lines} {self.words} {self.chars}"


def wc(data: bytes | str) -> Counts:
    """Line, word and byte counts the way xv6's wc counts them.

    A word is a run of characters other than space, tab, carriage return, newline and
    vertical tab; lines are counted by newline characters.
    """
    raw = data.encode() if isinstance(data, str) else data
    separators = b" \t\r\n\v"
    words = 0
    in_word = False
    for byte in raw:
        if byte in separators:
            in_word = False
        elif not in_word:
            in_word = True
            words += 1
    return Counts(raw.count(b"\n"), words, len(raw))


def grep_lines(text: str, needle: str) -> list[str]:
    """The lines of `text` that contain `needle` (a literal, which is all the tests use)."""
    return [line for line in text.split("\n") if needle in line]


def listing_names(ls_output: str) -> list[str]:
    """The file names in the output of xv6's `ls` (`name type inode size` per line)."""
    names = []
    for line in ls_output.splitlines():
        fields = line.split()
        if len(fields) >= 4:
            names.append(fields[0])
    return names
