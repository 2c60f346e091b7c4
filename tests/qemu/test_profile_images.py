"""What the profiler keeps of the programs it has sampled, and what it must not keep.

The profiler names user addresses only when /proc/profile is read, perhaps long after the
program exited or was unlinked, so it keeps something of every program it sampled, up to 32
of them. These tests hold it to three promises (user/tests/tprofimg.cc makes the programs):

* keeping 32 programs does not starve the file system: after 32 distinct profiled
  programs, 3 or 4 processes can still hold 10 or 11 files open each at the same time;
* an executable unlinked after its profiled run frees its disk space when it is unlinked
  (the image after `halt` has no orphan inode), and its samples still name its functions;
* after `profile clear`, a program that reuses an image slot is not judged by what the
  profiler remembered of the slot's previous program (the system-call stub check).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tern import fsimage
from tern import profile_check as pc
from tern.machine import REPO, Machine
from tern.profile_props import seed_from_env

CAT_TIMEOUT = 60
TINY_ELF_CODE = 120  # user/tests/tinyelf.h: where a tiny program's code starts


@pytest.mark.parametrize("cpus", [3, 1])
def test_32_programs_kept_then_many_files(boot, cpus: int) -> None:
    m = boot(cpus)
    s = seed_from_env("TPROFIMG_SEED")
    out = m.run(f"tprofimg keep {s}", timeout=120)
    print(out)
    assert "tprofimg: keep ok" in out, out


def test_unlinked_executable_frees_its_space(boot, tmp_path: Path) -> None:
    image = tmp_path / "fs.img"
    shutil.copyfile(REPO / "fs.img", image)
    m = Machine(3, name=boot.name, image=image)
    boot.machines.append(m)
    m.boot()
    out = m.run("tprofimg unlinked", timeout=60)
    found = re.search(r"tprofimg: victim pid (\d+) unlinked", out)
    assert found, out
    samples = pc.of_pid(pc.parse_profile(m.run("cat /proc/profile", timeout=CAT_TIMEOUT)),
                        int(found[1]))
    assert samples, "the unlinked program left no samples"
    named = [s for s in samples if pc.innermost_user(s) in ("hot", "middle", "outer", "main")]
    print(f"{len(named)} of {len(samples)} samples of the unlinked program named")
    assert len(named) * 2 > len(samples), (
        "the samples of an unlinked program must still name its functions:\n"
        + "\n".join(pc.describe(s) for s in samples[:10]))
    m.halt()
    problems = [str(p) for p in fsimage.check(image, replay_log=False)]
    assert problems == [], ("after `halt` the unlinked executable must be gone from the disk:\n  "
                            + "\n  ".join(problems))


def test_stub_check_forgets_a_cleared_program(boot) -> None:
    m = boot(3)
    out = m.run("tprofimg stubs", timeout=60)
    found = re.search(r"tprofimg: A pid (\d+) .*B pid (\d+)", out)
    assert found and "tprofimg: stubs ok" in out, out
    samples = pc.of_pid(pc.parse_profile(m.run("cat /proc/profile", timeout=CAT_TIMEOUT)),
                        int(found[2]))
    loop = range(TINY_ELF_CODE + 8, TINY_ELF_CODE + 24)  # B's loop: no system call in it
    in_loop = [s for s in samples if pc.user_frames(s)
               and pc.user_frames(s)[0]["address"] in loop]
    print(f"{len(in_loop)} of {len(samples)} samples of B in its loop")
    assert len(in_loop) >= 10, "B's loop was hardly sampled:\n" + "\n".join(
        pc.describe(s) for s in samples[:10])
    wrong = [s for s in in_loop if len(pc.user_frames(s)) != 1]
    assert not wrong, (
        f"{len(wrong)} of {len(in_loop)} samples of B in its loop have a caller inserted as "
        "if B were in a system-call stub (its code has no ecall there; the previous program "
        "in the same image slot had):\n" + "\n".join(pc.describe(s) for s in wrong[:5]))
