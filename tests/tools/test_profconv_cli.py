"""tools/profconv as a command: every format, the options, and clear errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from samples import DATA, PROFCONV, raw_samples

FORMATS = ("top", "folded", "speedscope", "perf", "pprof", "svg", "html")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_to_file_and_stdout(fmt: str, spin_path: Path, profconv: Callable,
                                         tmp_path: Path) -> None:
    out = tmp_path / f"out.{fmt}"
    to_file = profconv(fmt, spin_path, "-o", out)
    assert to_file.returncode == 0, to_file.stderr
    assert to_file.stdout == b"" and out.stat().st_size > 0
    to_stdout = profconv(fmt, spin_path)
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout == out.read_bytes(), "the same bytes either way"


def test_standard_input(spin_path: Path, profconv: Callable) -> None:
    piped = profconv("folded", "-", input=spin_path.read_bytes())
    assert piped.returncode == 0 and piped.stdout == profconv("folded", spin_path).stdout


def test_empty_profile(profconv: Callable, tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[\n]\n")
    for fmt in FORMATS:
        result = profconv(fmt, empty, "-o", tmp_path / f"empty.{fmt}")
        assert result.returncode == 0, (fmt, result.stderr)


@pytest.mark.parametrize("args, code, message", [
    (("folded", "/nonexistent/profile.json"), 1, b"cannot read /nonexistent/profile.json"),
    (("svg", "{bad}"), 1, b"not valid JSON"),
    (("top", "{spin}", "--pid", "x"), 2, b"--pid wants process numbers"),
    (("top", "{spin}", "--pid", "99999"), 1, b"no samples of pid 99999"),
    (("top", "{spin}", "--name", "spin"), 2, b"--name wants PID=NAME"),
    (("pprof", "{spin}", "--rate", "0"), 2, b"--rate must be positive"),
    (("gif", "{spin}"), 2, b"invalid choice"),
])
def test_errors(args: tuple, code: int, message: bytes, spin_path: Path, profconv: Callable,
                tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"pid":1,')
    args = tuple(a.format(spin=spin_path, bad=bad) for a in args)
    result = profconv(*args)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert b"Traceback" not in result.stderr


def test_closed_pipe_is_quiet(mixed_path: Path) -> None:
    """`profconv perf x | head -1` must not end in a traceback."""
    result = subprocess.run(f"'{PROFCONV}' perf '{mixed_path}' | head -1", shell=True,
                            capture_output=True, timeout=60)
    assert result.returncode == 0 and result.stdout.count(b"\n") == 1
    assert b"Traceback" not in result.stderr and b"Error" not in result.stderr


def test_names_option(mixed_path: Path, profconv: Callable) -> None:
    pid = raw_samples(mixed_path)[0]["pid"]
    out = profconv("folded", mixed_path, "--with-pid", "--name", f"{pid}=sh").stdout.decode()
    assert f"pid {pid} (sh);" in out


@pytest.mark.parametrize("how", ["itself", "python3"])
def test_runs_under_plain_python3(how: str, spin_path: Path) -> None:
    """The command run as itself (its first lines pick the interpreter with tools/find-python)
    and under whichever python3 is on PATH must print the same."""
    if shutil.which("python3") is None:
        pytest.skip("no python3 on PATH")
    command = [str(PROFCONV)] if how == "itself" else ["python3", str(PROFCONV)]
    result = subprocess.run([*command, "top", str(spin_path)], capture_output=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    reference = subprocess.run([sys.executable, str(PROFCONV), "top", str(spin_path)],
                               capture_output=True, timeout=60)
    assert reference.returncode == 0, reference.stderr
    assert result.stdout == reference.stdout, (
        f"`profconv top` under the shebang's python3 printed\n{result.stdout.decode()}\n"
        f"but under {sys.executable}\n{reference.stdout.decode()}")
    # And the report is right: hot first, with as many self samples as the JSON gives it.
    hot_self = sum(1 for s in raw_samples(spin_path) if s["samples"][0]["symbol"] == "hot")
    first_row = result.stdout.decode().splitlines()[1].split()
    assert (first_row[0], first_row[-1]) == (str(hot_self), "hot"), result.stdout.decode()


def test_help_tells_the_truth(profconv: Callable, any_profile: Path) -> None:
    """What --help says of the options is what they do: every format is listed, the
    profile's own names are not denied, and --with-pid's examples are what folded writes."""
    text = " ".join(profconv("--help").stdout.decode().split())
    for fmt in FORMATS:
        assert fmt in text
    samples = raw_samples(any_profile)
    named = any(s.get("comm") for s in samples)
    folded = profconv("folded", any_profile, "--with-pid").stdout.decode()
    firsts = {line.split(";")[0] for line in folded.splitlines()}
    if named:
        assert "only numbers" not in text, "the profile names its processes (comm)"
        assert any("(" in f for f in firsts)
    option = text[text.index("--with-pid "):]
    option = option[:option.index(" -n N")]
    examples = re.findall(r'"([^"]+)"', option)
    assert examples, option
    patterns = [re.compile(re.sub(r"\\\(.*\\\)", r"\\([^)]+\\)", re.escape(e)).replace("3", r"\d+")
                           + "$") for e in examples]
    for first in firsts:
        assert any(p.match(first) for p in patterns), (first, examples)


def function_rows(top_text: str) -> list[str]:
    """The function column of `top`'s rows, most self samples first."""
    return [line.split("%  ", 2)[-1] for line in top_text.splitlines()[1:-1]]


def test_late_and_on_time(bytewise_path: Path, profconv: Callable) -> None:
    """--late keeps the samples held off by disabled interrupts, the skid at pop_off and
    usertrap; --on-time the others; top says on standard error how many were late."""
    samples = raw_samples(bytewise_path)
    held = [s for s in samples if s.get("irqoff")]
    assert 0 < len(held) < len(samples)
    whole = profconv("top", bytewise_path, "--no-source")
    assert whole.returncode == 0, whole.stderr
    assert f"{len(held)} of {len(samples)} samples".encode() in whole.stderr
    assert b"--late" in whole.stderr

    late = profconv("top", bytewise_path, "--no-source", "--late", "-n", "0")
    assert late.returncode == 0, late.stderr
    text = late.stdout.decode()
    assert text.endswith(f"{len(held)} samples from 1 process\n"), text
    rows = function_rows(text)
    assert rows[0] == "[k] pop_off()", text
    assert set(rows[:2]) <= {"[k] pop_off()", "[k] usertrap"}, text

    on_time = profconv("top", bytewise_path, "--no-source", "--on-time", "-n", "0")
    assert on_time.returncode == 0, on_time.stderr
    text = on_time.stdout.decode()
    assert text.endswith(f"{len(samples) - len(held)} samples from 1 process\n"), text
    assert "[k] usertrap" not in function_rows(text)[:3], text

    # The filter applies to every format: the folded stacks of --late are the held ones.
    folded = profconv("folded", bytewise_path, "--late").stdout.decode()
    assert sum(int(line.rsplit(" ", 1)[1]) for line in folded.splitlines()) == len(held)


def test_late_counts_what_the_cpu_choice_shows(bytewise_path: Path, tmp_path: Path,
                                               profconv: Callable) -> None:
    """With wait samples in the profile, the late note and --late count the samples that
    --cpu keeps, not the whole file."""
    on_cpu = raw_samples(bytewise_path)
    waits = json.loads((DATA / "waits.json").read_text())
    waits = [w for w in waits if w.get("mode") == "wait"]
    assert waits and not any(w.get("irqoff") for w in waits)
    merged = tmp_path / "merged.json"
    merged.write_text(json.dumps(on_cpu + waits))
    held = sum(1 for s in on_cpu if s.get("irqoff"))
    result = profconv("top", merged, "--no-source", "--cpu", "on")
    assert result.returncode == 0, result.stderr
    assert f"{held} of {len(on_cpu)} samples".encode() in result.stderr, result.stderr
    none = profconv("top", merged, "--no-source", "--cpu", "off", "--late")
    assert none.returncode == 1 and b"no late" in none.stderr, (none.stdout, none.stderr)


@pytest.mark.parametrize("args, code, message", [
    (("top", "{bytewise}", "--late", "--on-time"), 2, b"not allowed with"),
    (("top", "{spin}", "--late"), 1, b"no late"),
])
def test_late_errors(args: tuple, code: int, message: bytes, spin_path: Path,
                     bytewise_path: Path, profconv: Callable) -> None:
    result = profconv(*(a.format(spin=spin_path, bytewise=bytewise_path) for a in args))
    assert result.returncode == code, result.stderr
    assert message in result.stderr and b"Traceback" not in result.stderr
