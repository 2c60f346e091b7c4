"""/proc/profile is one valid JSON document, whatever the names, the depth and the reads.

Property tests of what the profile lab's reference solution once got wrong:

* Names. Every name byte that JSON must escape becomes six bytes (\\u00XX), so 32 frames of
  long non-ASCII names make a sample of tens of kilobytes. `pnames N` recurses N deep in a
  function whose UTF-8 name is longer than the kernel's name buffer, above one whose name
  fits; a copy of it whose two names are rewritten into random bytes 1..255 (seeded, the seed
  printed) stands for any ELF a user could run. Every document must parse, every sample keep
  at most 32 frames, and every name be whole or cut with a visible "..." after a true prefix.
  pnames sleeps a third of the time, so wait samples ("mode":"wait", "wchan") of the whole
  deep chain are among them.

* Reads. Each opening of /proc/profile reads exactly one document, whatever the read sizes
  and however many samples arrive meanwhile: `labread -r` opens it several times while a
  process is sampled, reads with random sizes (seeded) and goes on reading after the end.
  Every document must be valid JSON, nothing may come after a read has returned 0, and each
  document must hold the previous one's samples.

* Cost. Reading a byte at a time must not render a sample per read: under -icount, with the
  same bytes for reads of 1, 7 and 4096 bytes, a 1-byte read may cost only a few null
  system calls beyond its share of a pass of 4 KiB reads.

The profiles are copied out through the export disk (export_disk.py): the console is far too
slow for megabytes of JSON.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tern import export_disk
from tern import jobs
from tern import profile_check as pc
from tern.host import PROGRAMS, image_with
from tern.machine import Machine
from tern.profile_props import (BOTTOM, DESCEND, document_problems, hostile_names, name_problems,
                                parse_openings, seed_from_env, symbol_bytes)

RUN_TIMEOUT = 120

def rewrite_names(program: bytes, names: dict[bytes, bytes]) -> bytes:
    """The program with each old name replaced by a new one of the same length, in every
    string table (.symtab.sorted's and .strtab): the code does not change."""
    for old, new in names.items():
        assert len(old) == len(new)
        count = program.count(old + b"\0")
        assert count >= 1, f"{old[:20]!r}... is not in the program"
        program = program.replace(old + b"\0", new + b"\0")
    return program


def profile_pnames(m: Machine, image: Path, depth: int, seconds: int) -> tuple[int, bytes]:
    assert m.run("profile clear") == ""
    assert m.run("profile rate 20") == ""
    out = m.run(f"profile run pnames {depth} {seconds}", timeout=RUN_TIMEOUT)
    match = re.search(r"profile: pid (\d+) \(pnames\) exited with status 0", out)
    assert match and "pnames: done" in out, f"`profile run pnames` failed:\n{out}"
    return int(match.group(1)), export_disk.copy_out(m, image, "/proc/profile")


@pytest.mark.parametrize("cpus", [3, 1], ids=["cpus3", "cpus1"])
@pytest.mark.parametrize("names", ["utf8", "bytes"])
def test_long_escaped_names_at_full_depth(tmp_path: Path, cpus: int, names: str) -> None:
    """pnames 40: 32-frame samples of long escaped names, user, kernel and wait mode, all
    valid."""
    long_names = [DESCEND, BOTTOM]
    image = None
    if names == "bytes":
        rng = random.Random(seed_from_env("PROFILE_NAMES_SEED"))
        hostile = hostile_names(rng)
        program = rewrite_names((PROGRAMS / "_pnames").read_bytes(), dict(zip(long_names, hostile)))
        image = image_with(tmp_path, {"pnames": program})
        long_names = list(hostile)
    export_image = tmp_path / "export.img"
    m = Machine(cpus, name=f"test_profile_json.names.{names}.cpus{cpus}", image=image,
                extra_args=export_disk.drive_args(export_image))
    with m:
        m.boot()
        pid, data = profile_pnames(m, export_image, 40, 2)
        m.assert_no_failures()
    samples = pc.parse_profile(data.decode("ascii"))
    schema = pc.schema_problems(samples)  # the skid fields too, beside the longest names
    assert not schema, "\n".join(schema[:10])
    mine = pc.of_pid(samples, pid)
    assert len(mine) >= 5, f"expected samples of pnames (pid {pid}), got {len(mine)}"
    problems = name_problems(samples, pid, long_names)
    assert not problems, "\n".join(problems[:10])
    full = [s for s in mine if len(s["samples"]) == pc.MAX_FRAMES]
    assert full, (f"pnames 40 recurses 40 deep: samples should hold {pc.MAX_FRAMES} frames, "
                  f"got {sorted({len(s['samples']) for s in mine})}")
    deep = [s for s in full
            if sum(symbol_bytes(f).startswith(long_names[0][:8]) for f in pc.user_frames(s)) >= 20]
    assert deep, "no 32-frame sample is mostly the recursive function's frames"
    in_kernel = [s for s in full if s["mode"] == "kernel"]
    assert 0 < len(in_kernel) < len(full), (
        f"pnames calls uptime() often: its 32-frame samples should be taken both in the kernel "
        f"and in user mode, got {len(in_kernel)} of {len(full)} in the kernel")
    waiting = [s for s in full if s["mode"] == "wait"]
    assert waiting, (f"pnames sleeps a third of the time: some of its 32-frame samples "
                     f"should be wait samples, got modes "
                     f"{sorted({s['mode'] for s in full})}")
    problems = pc.schema_problems(samples)
    assert not problems, "\n".join(problems[:10])
    print(f"{len(samples)} samples, {len(full)} with {pc.MAX_FRAMES} frames "
          f"({len(in_kernel)} in the kernel, {len(waiting)} waiting), {len(data)} bytes of JSON")


# --- One opening, one document ------------------------------------------------------------

SAVED = "/profdoc"


def random_reads(m: Machine, export_image: Path, seed: int, opens: int):
    """`labread -r`: /proc/profile opened `opens` times, each read with random sizes and
    past its end; the openings' summaries, and the bytes of the last one."""
    out = m.run(f"labread -r {seed} {opens} /proc/profile {SAVED}", timeout=RUN_TIMEOUT)
    return parse_openings(out, opens), export_disk.copy_out(m, export_image, SAVED)


@pytest.mark.parametrize("cpus", [3, 1], ids=["cpus3", "cpus1"])
def test_each_open_reads_one_document_while_sampling(tmp_path: Path, cpus: int) -> None:
    """Random read sizes, reads past the end, several openings, while spin is sampled."""
    seed = seed_from_env("PROFILE_READ_SEED")
    export_image = tmp_path / "export.img"
    m = Machine(cpus, name=f"test_profile_json.documents.cpus{cpus}",
                extra_args=export_disk.drive_args(export_image))
    with m:
        m.boot()
        pid = jobs.start_background(m, "spin")
        assert m.run("profile rate 50") == ""
        assert m.run(f"profile {pid} on") == ""
        rounds = 3
        for r in range(rounds):
            # Each round from an empty profile: on one hart, where spin takes half the time,
            # a document that grew over the rounds would take seconds to read.
            assert m.run("profile clear") == ""
            openings, last = random_reads(m, export_image, seed + r, 4)
            problems = document_problems(openings, last)
            assert not problems, (f"PROFILE_READ_SEED={seed}, round {r}:\n  "
                                  + "\n  ".join(problems))
        assert m.run(f"profile {pid} off") == ""
        jobs.kill_and_wait_gone(m, pid)
        m.assert_no_failures()
    print(f"{rounds} rounds of 4 openings, the last {len(last)} bytes")


# --- The cost of small reads --------------------------------------------------------------

ICOUNT_ARGS = ("-icount", "shift=0,sleep=off")
READTIME = re.compile(r"bsys: readtime pass (\d+) size (\d+) bytes (\d+) reads (\d+) insns (\d+)")
LABREAD_LINE = re.compile(r"labread: (\d+) bytes, fnv1a ([0-9a-f]{8}), (\d+) reads")
COST_SAMPLES = 200
# What one 1-byte read of /proc/profile may cost beyond its share of a pass of 4 KiB reads,
# in null system calls (getpid) measured on the same machine: the system call, the lock and
# finding the kept piece, never a sample's rendering (some 35 null calls for bsys's samples).
PER_READ_LIMIT = 8


def readtime(m: Machine, path: str, size: int) -> tuple[int, int, int]:
    """Bytes, reads and guest instructions of the second of two passes over `path` (the
    first also looks names up on the disk)."""
    out = m.run(f"bsys readtime {path} 2 {size}", timeout=600)
    passes = READTIME.findall(out)
    assert len(passes) == 2, f"`bsys readtime {path} 2 {size}` failed:\n{out}"
    return int(passes[1][2]), int(passes[1][3]), int(passes[1][4])


def test_small_reads_cost_like_large_ones(boot) -> None:
    """1-, 7- and 4096-byte reads give the same bytes, and a 1-byte pass costs its system
    calls plus what a 4 KiB pass costs, not a sample's rendering per byte: counted in guest
    instructions under -icount, so the host's load does not matter."""
    m = boot(1, extra_args=ICOUNT_ARGS)
    null = re.search(r"bsys: null calls (\d+) insns (\d+)", m.run("bsys null 1000"))
    assert null, "`bsys null` failed"
    per_null = int(null[2]) / int(null[1])
    out = m.run(f"bsys fill {COST_SAMPLES}", timeout=300)
    assert "bsys: fill samples" in out, f"`bsys fill` failed:\n{out}"
    reads = {}
    for size in (4096, 7, 1):
        got = LABREAD_LINE.search(m.run(f"labread /proc/profile {size}", timeout=600))
        assert got, f"`labread /proc/profile {size}` failed"
        reads[size] = (int(got[1]), got[2])
    assert len(set(reads.values())) == 1, f"the bytes differ with the read size: {reads}"
    bytes_big, _, prof_big = readtime(m, "/proc/profile", 4096)
    bytes_one, reads_one, prof_one = readtime(m, "/proc/profile", 1)
    assert bytes_big == bytes_one == reads[1][0]
    per_read = (prof_one - prof_big) / reads_one
    print(f"{bytes_big} bytes of /proc/profile: 4 KiB reads {prof_big:,} instructions, 1-byte "
          f"reads {prof_one:,} ({prof_one / prof_big:.1f}x); each 1-byte read "
          f"{per_read:,.0f} instructions more, {per_read / per_null:.1f} null calls "
          f"({per_null:.0f} instructions)")
    assert per_read <= PER_READ_LIMIT * per_null, (
        f"a 1-byte read of /proc/profile costs {per_read:,.0f} instructions beyond its share "
        f"of a pass of 4 KiB reads, {per_read / per_null:.0f} null system calls: each small "
        f"read renders its sample again")
