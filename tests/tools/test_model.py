"""tools/tern/prof/model.py: reading /proc/profile, and refusing what is not a profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import profile_synth
from samples import raw_samples
from tern.prof import model


def test_real_profiles_load(spin_path: Path, mixed_path: Path) -> None:
    for path in (spin_path, mixed_path):
        raw = raw_samples(path)
        p = model.load(str(path))
        assert len(p.samples) == len(raw)
        for s, r in zip(p.samples, raw):
            assert (s.pid, s.tid, s.timestamp, s.hart, s.mode) == \
                (r["pid"], r["tid"], r["timestamp"], r["hart"], r["mode"])
            assert [(f.address, f.symbol, f.kernel) for f in s.frames] == \
                [(f["address"], f["symbol"], f["kernel"]) for f in r["samples"]]


def test_spin_is_what_the_fixture_should_be(spin_path: Path) -> None:
    """The committed real profile is of spin alone, with its known call chain."""
    p = model.load(str(spin_path))
    assert len(p.pids()) == 1 and len(p.samples) > 100
    chains = {tuple(f.label for f in s.stack()) for s in p.samples}
    assert ("_start", "main", "outer", "middle", "hot") in chains


def test_stack_is_outermost_first() -> None:
    p = model.loads(profile_synth.make_text(seed=2))
    s = next(s for s in p.samples if any(f.kernel for f in s.frames))
    assert s.stack()[0].symbol == "_start"
    assert s.stack()[-1] == s.frames[0]
    # Kernel frames are innermost, so they end the outermost-first stack.
    kinds = [f.kernel for f in s.stack()]
    assert kinds == sorted(kinds)


def test_labels_mark_kernel_frames() -> None:
    assert model.Frame(1, "sys_write", True).label == "sys_write [k]"
    assert model.Frame(1, "write", False).label == "write"
    assert model.Frame(1, "", False).label == "??"


def test_period_is_estimated_per_hart() -> None:
    p = model.loads(profile_synth.make_text(seed=3))
    assert p.period_us() == profile_synth.PERIOD_US


def test_missing_optional_fields_get_defaults() -> None:
    p = model.loads('[{"pid":5,"timestamp":10,"samples":[{"address":1,"symbol":"f","kernel":true}],'
                    '"future_field":[1,2]}]')
    s = p.samples[0]
    assert (s.tid, s.hart, s.mode) == (5, 0, "kernel")


def test_empty_profile() -> None:
    p = model.loads("[\n]\n")
    assert p.samples == [] and p.pids() == [] and p.period_us() is None


@pytest.mark.parametrize("text, message", [
    ("", "not valid JSON"),
    ('[{"pid":1,', "not valid JSON"),
    ('{"pid":1}', "JSON array of samples, not a object"),
    ("[1]", "sample 0: should be an object"),
    ('[{"timestamp":1,"samples":[]}]', 'sample 0: has no "pid"'),
    ('[{"pid":true,"timestamp":1,"samples":[]}]', '"pid" should be a whole number'),
    ('[{"pid":-2,"timestamp":1,"samples":[]}]', '"pid" should be a whole number'),
    ('[{"pid":1,"timestamp":"x","samples":[]}]', '"timestamp" should be a whole number'),
    ('[{"pid":1,"timestamp":1,"samples":{}}]', '"samples" should be an array'),
    ('[{"pid":1,"timestamp":1,"mode":"idle","samples":[]}]', '"mode" should be'),
    ('[{"pid":1,"timestamp":1,"samples":[3]}]', "sample 0, frame 0: should be an object"),
    ('[{"pid":1,"timestamp":1,"samples":[{"address":1,"symbol":7}]}]', '"symbol" should be'),
    ('[{"pid":1,"timestamp":1,"samples":[{"address":1,"symbol":"f","kernel":1}]}]',
     '"kernel" should be true or false'),
])
def test_bad_input_is_named_precisely(text: str, message: str) -> None:
    with pytest.raises(model.ProfileError) as err:
        model.loads(text)
    assert message in str(err.value)


def test_error_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    good = json.loads(profile_synth.make_text(seed=1))
    good[4]["pid"] = "four"
    bad.write_text(json.dumps(good))
    with pytest.raises(model.ProfileError, match=r"bad\.json: sample 4: \"pid\""):
        model.load(str(bad))


def test_pid_filter_and_names() -> None:
    p = model.loads(profile_synth.make_text(seed=1))
    p.names[3] = "spin"
    only = p.of_pids([3])
    assert only.pids() == [3]
    assert only.process_label(3) == "pid 3 (spin)" and only.process_label(4) == "pid 4"
    assert only.process_name(3) == "spin" and only.process_name(4) == "pid4"


def test_comm_names_the_process() -> None:
    p = model.loads('[{"pid":5,"timestamp":10,"comm":"spin","samples":[]},'
                    '{"pid":6,"timestamp":11,"samples":[]}]')
    assert p.names == {5: "spin"}


def test_the_last_comm_names_the_process() -> None:
    """Sampled before its exec, a child carries its parent's name: the program wins."""
    p = model.loads('[{"pid":5,"timestamp":10,"comm":"sh","samples":[]},'
                    '{"pid":5,"timestamp":11,"comm":"spin","samples":[]}]')
    assert p.process_name(5) == "spin"


def test_period_of_a_process_that_sleeps() -> None:
    """Gaps of several periods (the process slept) must not inflate the estimate, nor must
    ticks that come a little late or early."""
    multiples = [1, 1, 4, 1, 9, 1, 1, 2, 30, 1, 1, 3, 1, 1, 7, 1]
    jitter = [0, 40, -35, 12, 0, -60, 25, 0]
    t, samples = 1_000_000, []
    for i, k in enumerate(multiples * 4):
        t += k * 1000 + jitter[i % len(jitter)]
        samples.append(f'{{"pid":3,"timestamp":{t},"hart":0,"samples":[]}}')
    p = model.loads("[" + ",".join(samples) + "]")
    assert abs(p.period_us() - 1000) <= 30


SKID = ('[{"pid":5,"timestamp":10,"mode":"kernel","samples":[{"address":2147483700,'
        '"symbol":"pop_off()","kernel":true}],"late":901,"irqoff":true},'
        '{"pid":5,"timestamp":110,"mode":"user","samples":[{"address":4096,"symbol":"spin_to",'
        '"kernel":false}],"late":0},'
        '{"pid":5,"timestamp":210,"mode":"user","samples":[{"address":4096,"symbol":"spin_to",'
        '"kernel":false}]}]')


def test_skid_fields_are_read() -> None:
    """"late" and "irqoff" (kern/profile/report.cc) are read; a profile of an older kernel,
    without them, reads as on time."""
    p = model.loads(SKID)
    assert [(s.late, s.irqoff) for s in p.samples] == [(901, True), (0, False), (0, False)]
    held = p.held_off(True)
    assert [s.timestamp for s in held.samples] == [10]
    assert [s.timestamp for s in p.held_off(False).samples] == [110, 210]
    assert p.held_off(None) is p


@pytest.mark.parametrize("field, message", [
    ('"late":-1', '"late" should be a whole number'),
    ('"late":"x"', '"late" should be a whole number'),
    ('"irqoff":1', '"irqoff" should be true or false'),
    ('"irqoff":"yes"', '"irqoff" should be true or false'),
])
def test_bad_skid_fields_are_named(field: str, message: str) -> None:
    with pytest.raises(model.ProfileError, match=message):
        model.loads('[{"pid":1,"timestamp":1,"samples":[],' + field + "}]")
