"""tools/tern/profile_check.py's address check, on made-up samples against a real program's
symbol table (build/user/_spin, from `make all`)."""

from __future__ import annotations

import pytest

from tern import profile_check as pc


@pytest.fixture(scope="module")
def spin() -> pc.Symbols:
    if not (pc.BUILD / "user" / "_spin").exists():
        pytest.skip("needs build/user/_spin: run `make all`")
    return pc.user_symbols("spin")


def sample(comm: str, *frames: tuple[str, int]) -> pc.Sample:
    return {"pid": 5, "comm": comm, "mode": "kernel",
            "samples": [{"symbol": name, "address": address, "kernel": False}
                        for name, address in frames]}


def test_a_named_frame_outside_its_function_is_a_problem(spin: pc.Symbols) -> None:
    hot = spin.by_name["hot"][0]
    good = sample("spin", ("hot", hot.start))
    wrong = sample("spin", ("outer", hot.start))
    assert pc.address_problems([good], spin, None) == []
    assert len(pc.address_problems([wrong], spin, None)) == 1


def test_an_unknown_frame_of_a_known_program_is_a_problem(spin: pc.Symbols) -> None:
    assert len(pc.address_problems([sample("spin", ("??", 0))], spin, None)) == 1


def test_a_sample_with_no_image_must_leave_its_user_frames_unknown(spin: pc.Symbols) -> None:
    # Taken inside exec, after the commit to the new program and before prof::on_exec()
    # registers it (kern/proc/exec.cc): no image, so no names for its user frames, by design.
    exec_window = sample("?", ("??", 0))
    assert pc.address_problems([exec_window], spin, None) == []
    named = sample("?", ("main", spin.by_name["main"][0].start))
    assert len(pc.address_problems([named], spin, None)) == 1
