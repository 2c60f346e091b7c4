"""What the tests of the profile tools share besides fixtures (conftest.py has those): the
tree's paths, the profiles, and the plain-json reference reading of a profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import profile_synth

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
DATA = Path(__file__).resolve().parent / "data"
PROFCONV = TOOLS / "profconv"

PROFILES = ("spin", "mixed", "synthetic")
# The exports are checked on a profile with wait samples too: their consumers must read it.
EXPORT_PROFILES = PROFILES + ("waits",)


def profile_text(kind: str) -> str:
    if kind == "synthetic":
        return profile_synth.make_text(seed=1)
    return (DATA / f"{kind}.json").read_text(encoding="utf-8")


def raw_samples(path: Path) -> List[Any]:
    """The samples of a profile file, read with nothing but the json module: the reference
    the converters' output is compared with."""
    return json.loads(path.read_text(encoding="utf-8"))


def process_names(samples: List[Any]) -> Dict[int, str]:
    """The name of each process that has one: the last "comm" its samples carry (a process
    sampled between its fork and its exec carries its parent's name at first)."""
    names: Dict[int, str] = {}
    for s in samples:
        if s.get("comm"):
            names[s["pid"]] = s["comm"]
    return names


def process_label(pid: int, names: Dict[int, str]) -> str:
    """How the reports title a process: "pid 3", or "pid 3 (spin)" when it has a name."""
    return f"pid {pid} ({names[pid]})" if pid in names else f"pid {pid}"


def profile_of_build(program: str, seed: int, count: int) -> List[Dict[str, Any]]:
    """`count` one-frame samples of `program` as the build made it (build/user/_PROGRAM),
    each at a random address inside one of its functions, about half of them inside
    is_prime when it has one: a profile whose every frame has a true source line."""
    import random
    from tern.prof.lines import SymbolTable
    rng = random.Random(seed)
    table = SymbolTable((ROOT / "build" / "user" / f"_{program}.sym").read_bytes())
    functions = [(a, size, name) for a, size, name in table.entries if size >= 2]
    favourite = [f for f in functions if f[2] == "is_prime"]
    samples = []
    for i in range(count):
        addr, size, name = rng.choice(favourite if favourite and rng.random() < 0.5
                                      else functions)
        pc = addr + 2 * rng.randrange(size // 2)  # instructions are 2 or 4 bytes long
        samples.append({"pid": 3, "tid": 3, "comm": program, "timestamp": 1_000_000 + 1000 * i,
                        "hart": i % 2, "mode": "user",
                        "samples": [{"address": pc, "symbol": name, "kernel": False}]})
    return samples


def primes_profile(tmp_path: Path, default_seed: int,
                   count: int) -> Tuple[Path, List[Any], int]:
    """A profile_of_build() of the built `primes`, written to tmp_path/primes.json: its path,
    its samples and the seed, LINES_SEED if set, else default_seed. Skips the test when there
    is no build to read lines from."""
    import os
    import pytest
    if not (ROOT / "build" / "user" / "_primes.elf").exists():
        pytest.skip("needs the build: run `make all`")
    seed = int(os.environ.get("LINES_SEED", default_seed))
    samples = profile_of_build("primes", seed, count)
    path = tmp_path / "primes.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path, samples, seed


def addr2line(elf: Path, addresses: List[int]) -> List[List[Any]]:
    """binutils' answer for each address: its lines innermost first, (file, line) each
    (the code's own, then the call in each function it was inlined into, as `addr2line
    -i` prints them), or [] where it knows none."""
    import os
    import shutil
    import subprocess
    tool = shutil.which("riscv64-linux-gnu-addr2line") or shutil.which(
        "riscv64-unknown-elf-addr2line")
    assert tool, "no RISC-V addr2line (it comes with g++-riscv64-linux-gnu)"
    result = subprocess.run([tool, "-a", "-i", "-f", "-e", str(elf)] + [hex(a) for a in addresses],
                            capture_output=True, text=True, timeout=120, check=True)
    out: List[List[Any]] = []
    lines = result.stdout.splitlines()
    i = 0
    while i < len(lines):
        assert lines[i].startswith("0x"), lines[i]
        chain: List[Any] = []
        i += 1
        while i < len(lines) and not lines[i].startswith("0x"):
            where = lines[i + 1]  # after the function's name
            i += 2
            file, _, number = where.split(" (discriminator")[0].rpartition(":")
            if file != "??" and number.isdigit() and number != "0":
                chain.append((os.path.normpath(file), int(number)))
        out.append(chain)
    assert len(out) == len(addresses)
    return out
