"""Source lines (tools/tern/prof/lines.py) against binutils' addr2line, and the refusal of
a binary that is not the one profiled.

addr2line is the independent reader here: it is part of the cross toolchain the build uses
(riscv64-linux-gnu-addr2line), and reads the same DWARF line tables with other code. The
addresses are drawn at random (seeded, printed) from each binary's code, and the ones a
real profile of the build holds are added; every one must get the same file and line
from both. These tests need the build (`make all`) and pyelftools, and skip without.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path
import pytest

from samples import ROOT
from tern.prof import lines, model

BUILD = ROOT / "build"
SEED = int(os.environ.get("LINES_SEED", "20261204"))
CASES = 300  # addresses per binary


def addr2line() -> str:
    for name in ("riscv64-linux-gnu-addr2line", "riscv64-unknown-elf-addr2line"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no RISC-V addr2line (Debian: binutils-riscv64-linux-gnu, which "
                "g++-riscv64-linux-gnu brings)")


@pytest.fixture(scope="module")
def built() -> None:
    if lines.ELFFile is None:
        pytest.skip("pyelftools is not installed (Debian: apt-get install -y "
                    "python3-pyelftools)")
    if not (BUILD / "kernel.elf").exists() or not (BUILD / "user" / "_primes.elf").exists():
        pytest.skip("needs the build: run `make all`")


@pytest.mark.parametrize("elf, sym", [("kernel.elf", "ksyms.bin"),
                                      ("user/_primes.elf", "user/_primes.sym"),
                                      ("user/_sh.elf", "user/_sh.sym")])
def test_lines_match_addr2line(built: None, elf: str, sym: str) -> None:
    rng = random.Random(SEED)
    symbols = lines.SymbolTable((BUILD / sym).read_bytes())
    table = lines.LineTable(BUILD / elf, ROOT)
    addresses = []
    sized = [(a, size) for a, size, _ in symbols.entries if size]
    for _ in range(CASES):
        start, size = rng.choice(sized)
        addresses.append(start + rng.randrange(size))
    result = subprocess.run([addr2line(), "-e", str(BUILD / elf)] + [hex(a) for a in addresses],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    answers = result.stdout.splitlines()
    assert len(answers) == len(addresses)
    compared = 0
    for address, answer in zip(addresses, answers):
        file, _, number = answer.rpartition(":")
        number = number.split()[0]  # "12 (discriminator 3)"
        mine = table.lookup(address)
        if file == "??" or number in ("?", "0"):
            assert mine is None or mine.line == 0, (hex(address), mine)
            continue
        assert mine is not None, f"{address:#x}: addr2line says {answer}, lines.py nothing"
        assert (os.path.normpath(file), int(number)) == (mine.path, mine.line), hex(address)
        compared += 1
    print(f"seed {SEED}: {compared} of {len(addresses)} addresses of {elf} compared")
    assert compared > CASES * 0.9


def test_a_rebuilt_binary_is_refused(built: None, tmp_path: Path) -> None:
    """A profile whose frames name other functions than the binary does gets no lines
    from it, and a note that says so; the other binaries still give theirs."""
    symbols = lines.SymbolTable((BUILD / "user" / "_primes.sym").read_bytes())
    address, _, _ = next(e for e in symbols.entries if e[2] == "is_prime")
    good = {"pid": 3, "comm": "primes", "timestamp": 1, "samples": [
        {"address": address, "symbol": "is_prime", "kernel": False}]}
    bad = dict(good, pid=4, comm="sh")  # sh has no is_prime at that address
    profile = model.loads(json.dumps([good, bad]))
    found = lines.for_profile(profile, BUILD)
    assert found.line(profile.samples[0], 0) is not None
    assert found.line(profile.samples[1], 0) is None
    assert any("_sh.elf is not the binary that was profiled" in n for n in found.notes)


def test_each_sample_is_looked_up_in_the_program_it_ran(built: None) -> None:
    """A process sampled between its fork and its exec runs its parent's program: its
    samples say so ("comm" is the program when sampled) and get their lines from that
    program, while its later samples get theirs from the program it exec'd."""
    def sample(program: str, symbol: str) -> dict:
        symbols = lines.SymbolTable((BUILD / "user" / f"_{program}.sym").read_bytes())
        address, _, _ = next(e for e in symbols.entries if e[2] == symbol)
        return {"pid": 5, "comm": program, "timestamp": 1, "samples": [
            {"address": address, "symbol": symbol, "kernel": False}]}
    before, after = sample("sh", "main"), sample("primes", "is_prime")
    profile = model.loads(json.dumps([before, after]))
    assert [s.comm for s in profile.samples] == ["sh", "primes"]
    assert profile.names == {5: "primes"}, "the process is named for what it exec'd"
    found = lines.for_profile(profile, BUILD)
    assert found.notes == []
    sh, primes = (found.line(s, 0) for s in profile.samples)
    assert sh is not None and sh.path.endswith("user/bin/sh.cc"), sh
    assert primes is not None and primes.path.endswith("user/demo/primes.cc"), primes


def test_no_build_no_lines(tmp_path: Path) -> None:
    profile = model.loads('[{"pid":3,"comm":"primes","timestamp":1,"samples":'
                          '[{"address":16,"symbol":"main","kernel":false}]}]')
    found = lines.for_profile(profile, tmp_path)
    assert not found.found() and found.line(profile.samples[0], 0) is None
    assert found.notes


def test_which_frames_are_pcs() -> None:
    """The first frame and the first user frame under kernel frames are interrupted pcs;
    the others are return addresses, looked up one byte earlier."""
    s = model.loads('[{"pid":3,"timestamp":1,"samples":['
                    '{"address":100,"symbol":"a","kernel":true},'
                    '{"address":200,"symbol":"b","kernel":true},'
                    '{"address":300,"symbol":"c","kernel":false},'
                    '{"address":400,"symbol":"d","kernel":false}]}]').samples[0]
    assert [lines.is_pc(s, i) for i in range(4)] == [True, False, True, False]


@pytest.mark.parametrize("elf, sym", [("kernel.elf", "ksyms.bin"),
                                      ("user/_spin.elf", "user/_spin.sym")])
def test_inline_chains_match_addr2line(built: None, elf: str, sym: str) -> None:
    """At an address of inlined code, the chain of lines (the inlined code's own, then each
    call out to the function of the frame) is what `addr2line -i` prints."""
    from samples import addr2line as addr2line_chains
    rng = random.Random(SEED + 1)
    symbols = lines.SymbolTable((BUILD / sym).read_bytes())
    table = lines.LineTable(BUILD / elf, ROOT)
    sized = [(a, size) for a, size, _ in symbols.entries if size]
    addresses = []
    for _ in range(CASES):
        start, size = rng.choice(sized)
        addresses.append(start + rng.randrange(size))
    # And addresses known to be inlined code, so that the chains are tried.
    calls = [c for c in table.inlined if c.high > c.low]
    picked = rng.sample(calls, min(100, len(calls)))
    addresses += [c.low + rng.randrange(c.high - c.low) for c in picked]
    chains = addr2line_chains(BUILD / elf, addresses)
    deep = 0
    for address, want in zip(addresses, chains):
        got = [(l.path, l.line) for _, l in table.chain(address)]
        assert got == want, hex(address)
        deep += len(want) > 1
    print(f"seed {SEED + 1}: {len(addresses)} addresses of {elf}, {deep} in inlined code")
    assert deep > 20


def test_debug_information_is_read_once_per_version(built: None, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The views of one profile (each of profconv's formats filters the profile first, so
    each finds its lines anew) read a binary's line table once; a rebuilt binary (another
    size or time) is read again."""
    build = tmp_path / "build"
    (build / "user").mkdir(parents=True)
    for name in ("_primes.elf", "_primes.sym"):
        shutil.copy2(BUILD / "user" / name, build / "user" / name)
    reads: list[Path] = []

    class Counted(lines.LineTable):
        def __init__(self, path: Path, root: Path) -> None:
            reads.append(path)
            super().__init__(path, root)

    monkeypatch.setattr(lines, "LineTable", Counted)
    symbols = lines.SymbolTable((build / "user" / "_primes.sym").read_bytes())
    address, _, _ = next(e for e in symbols.entries if e[2] == "is_prime")
    profile = model.loads(json.dumps([{"pid": 3, "comm": "primes", "timestamp": 1, "samples": [
        {"address": address, "symbol": "is_prime", "kernel": False}]}]))
    first = [lines.for_profile(view, build).line(view.samples[0], 0)
             for view in (profile, profile.of_cpu("on"), profile.of_cpu("both"))]
    assert first[0] is not None and first.count(first[0]) == 3, first
    assert len(reads) == 1, reads
    elf = build / "user" / "_primes.elf"
    os.utime(elf, ns=(elf.stat().st_atime_ns, elf.stat().st_mtime_ns + 1_000_000_000))
    assert lines.for_profile(profile, build).line(profile.samples[0], 0) == first[0]
    assert len(reads) == 2, reads
