"""mkfs run as a command: its arguments, and the inputs it must refuse.

Each refusal must come with a message on stderr and exit status 1, and must leave no image
behind: no new output file, an existing one unchanged, and no temporary file in its directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from tern import fsimage
from mkfs_run import Run
from tern.fsimage import BSIZE, MAXFILE

RunMkfs = Callable[..., Run]


def write(directory: Path, name: str, data: bytes) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def assert_refused(result: Run, tmp_path: Path, *words: str) -> None:
    """mkfs failed cleanly: status 1, a message naming `words`, no image, no leftovers."""
    assert result.returncode == 1, result
    assert result.stderr.strip(), "a refusal must say why"
    for word in words:
        assert word in result.stderr, (word, result.stderr)
    assert not (tmp_path / "fs.img").exists()
    assert not list(tmp_path.glob("fs.img.*")), "temporary file left behind"


def test_no_arguments_prints_usage(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    assert_refused(run_mkfs(), tmp_path, "usage")


def test_only_options_prints_usage(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    assert_refused(run_mkfs("-s", "3000"), tmp_path, "usage")


def test_bad_options(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    a = write(tmp_path, "a", b"a")
    for options in (["-x"], ["-s"], ["-s", "abc"], ["-s", "0"], ["-s", "-5"], ["-i", "12x"],
                    ["-i", "99999999999"]):
        assert_refused(run_mkfs(*options, "fs.img", a), tmp_path, "usage")


def test_no_files_makes_an_empty_file_system(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    result = run_mkfs("fs.img")
    assert result.returncode == 0, result.stderr
    img = fsimage.Image.open(tmp_path / "fs.img")
    assert img.listdir("/") == {".": 1, "..": 1}
    assert fsimage.check(tmp_path / "fs.img") == []


def test_success_reports_and_leaves_no_temporary(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    a = write(tmp_path, "_a", b"a" * 3000)
    result = run_mkfs("fs.img", a)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "2000 blocks" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_a", "fs.img"]
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "fs.img").stat().st_mode & 0o777 == 0o666 & ~mask


def test_missing_input(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    a = write(tmp_path, "a", b"a")
    assert_refused(run_mkfs("fs.img", a, tmp_path / "nope"), tmp_path, "nope")


def test_directory_as_input(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    (tmp_path / "somedir").mkdir()
    assert_refused(run_mkfs("fs.img", tmp_path / "somedir"), tmp_path, "somedir")


def test_existing_image_is_kept_on_failure(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    old = write(tmp_path, "fs.img", b"the previous image")
    result = run_mkfs("fs.img", tmp_path / "nope")
    assert result.returncode == 1
    assert old.read_bytes() == b"the previous image"
    assert not list(tmp_path.glob("fs.img.*"))


def test_existing_image_is_replaced_on_success(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    write(tmp_path, "fs.img", b"the previous image")
    a = write(tmp_path, "_a", b"new")
    assert run_mkfs("fs.img", a).returncode == 0
    assert fsimage.Image.open(tmp_path / "fs.img").read_file("a") == b"new"


def test_file_of_maxfile_blocks_and_one_byte_more(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    big = write(tmp_path, "in/big", b"\x5a" * (MAXFILE * BSIZE + 1))
    assert_refused(run_mkfs("fs.img", big), tmp_path, "big", "MAXFILE")
    exact = write(tmp_path, "in/exact", b"\xa5" * (MAXFILE * BSIZE))
    assert run_mkfs("fs.img", exact).returncode == 0
    img = fsimage.Image.open(tmp_path / "fs.img")
    assert img.read_file("exact") == b"\xa5" * (MAXFILE * BSIZE)


def test_name_of_fourteen_characters_and_fifteen(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    long = write(tmp_path, "in/abcdefghijklmno", b"x")
    assert_refused(run_mkfs("fs.img", long), tmp_path, "abcdefghijklmno", "14")
    # The underscore does not count: it is dropped before the length is checked.
    ok = write(tmp_path, "in/_abcdefghijklmn", b"y")
    assert run_mkfs("fs.img", ok).returncode == 0
    assert fsimage.Image.open(tmp_path / "fs.img").read_file("abcdefghijklmn") == b"y"


def test_name_that_is_only_an_underscore(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    assert_refused(run_mkfs("fs.img", write(tmp_path, "in/_", b"x")), tmp_path, "empty")


def test_duplicate_names(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    one = write(tmp_path, "a/_ls", b"1")
    two = write(tmp_path, "b/ls", b"2")
    assert_refused(run_mkfs("fs.img", one, two), tmp_path, '"ls"')
    assert_refused(run_mkfs("fs.img", one, one), tmp_path, '"ls"')


def test_more_files_than_inodes(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    files = [write(tmp_path, f"in/f{i}", b"x") for i in range(3)]
    # Inode 0 is never used and inode 1 is the root: 4 inodes hold two files.
    assert run_mkfs("-i", "4", "fs.img", *files[:2]).returncode == 0
    (tmp_path / "fs.img").unlink()
    assert_refused(run_mkfs("-i", "4", "fs.img", *files), tmp_path, "f2", "inode")


def test_more_data_than_blocks(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    files = [write(tmp_path, f"in/f{i}", bytes(10 * BSIZE)) for i in range(3)]
    # 47 metadata blocks, one for the root, then room for exactly two 10-block files.
    assert run_mkfs("-s", "68", "fs.img", *files[:2]).returncode == 0
    assert fsimage.check(tmp_path / "fs.img") == []
    (tmp_path / "fs.img").unlink()
    assert_refused(run_mkfs("-s", "68", "fs.img", *files), tmp_path, "f2", "blocks")


def test_image_too_small_for_its_metadata(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    assert_refused(run_mkfs("-s", "47", "fs.img"), tmp_path, "too small")


def test_more_files_than_the_root_directory_holds(run_mkfs: RunMkfs, tmp_path: Path) -> None:
    # The root directory is itself limited to MAXFILE blocks of 16-byte entries.
    capacity = MAXFILE * BSIZE // 16 - 2
    src = tmp_path / "in"
    src.mkdir()
    for i in range(capacity + 1):
        (src / f"f{i}").touch()
    files = [f"in/f{i}" for i in range(capacity + 1)]  # relative to mkfs's directory
    options = ["-i", str(capacity + 10), "-s", "3000"]
    assert run_mkfs(*options, "fs.img", *files[:capacity]).returncode == 0
    img = fsimage.Image.open(tmp_path / "fs.img")
    assert img.inode(1).size == MAXFILE * BSIZE
    (tmp_path / "fs.img").unlink()
    assert_refused(run_mkfs(*options, "fs.img", *files), tmp_path, "full")
