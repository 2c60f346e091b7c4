"""Regenerate the real profiles in tests/tools/data/ by booting tern and profiling in it.

    PYTHONPATH=tools /usr/bin/python3 tests/tools/capture_fixtures.py [spin|mixed|bytewise]...
                                                      (after `make all`; all three by default)

The profiles are read over the console with `cat /proc/profile`, the same way a student
would copy one by hand, so this works even on a kernel without the export disk. They are
kept small (a low sampling rate, a short run) so that the copy takes seconds and the files
stay reviewable:

    spin.json    `profile run spin 2` at 200 Hz: one process, the known chain
                 main -> outer -> middle -> hot, a few samples in system calls.
    mixed.json   `profile all on` at 100 Hz while `spin 2 & psys 2` run: several processes
                 (the shell, spin, psys), kernel stacks with demangled C++ names.
    bytewise.json  `profile run bytewise 32` at 10,000 Hz on one hart under -icount, copied
                 out through the export disk, its first BYTEWISE_KEPT samples: skid, about
                 half of them held off by disabled interrupts ("irqoff", "late").

Both change from run to run (sampling is timing); the tests check relations that hold for
any run, never exact counts from these files.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
from tern.machine import Machine

CAT_TIMEOUT = 300
BYTEWISE_KEPT = 120


def save(name: str, text: str) -> None:
    samples = json.loads(text)  # refuse to save something that is not JSON
    (DATA / f"{name}.json").write_text(text, encoding="utf-8")
    print(f"{name}.json: {len(samples)} samples, {len(text)} bytes")


def capture_spin() -> None:
    with Machine(3, name="capture-spin") as m:
        m.boot()
        m.run("profile clear")
        m.run("profile rate 200")
        print(m.run("profile run spin 2", timeout=60))
        save("spin", m.run("cat /proc/profile", timeout=CAT_TIMEOUT))


def capture_mixed() -> None:
    with Machine(3, name="capture-mixed") as m:
        m.boot()
        m.run("profile clear")
        m.run("profile rate 100")
        m.run("profile all on")
        m.run("spin 2 & psys 2", timeout=60)
        time.sleep(1.5)  # spin runs on in the background after psys has finished
        m.pump(0.5)
        m.run("echo")
        m.run("profile all off")
        save("mixed", m.run("cat /proc/profile", timeout=CAT_TIMEOUT))


def capture_bytewise(tmp: Path) -> None:
    from tern import export_disk
    from tern.bench import icount
    image = tmp / "export.img"
    with Machine(1, name="capture-bytewise",
                 extra_args=icount.ICOUNT_ARGS + export_disk.drive_args(image)) as m:
        m.boot()
        m.run("profile clear")
        m.run("profile rate 10000")
        print(m.run("profile run bytewise 32", timeout=300))
        samples = json.loads(export_disk.copy_out(m, image, "/proc/profile"))
    kept = [s for s in samples if s.get("comm") == "bytewise"][:BYTEWISE_KEPT]
    save("bytewise", "[\n" + ",\n".join(json.dumps(s, separators=(",", ":")) for s in kept)
         + "\n]\n")


if __name__ == "__main__":
    import sys
    import tempfile
    DATA.mkdir(exist_ok=True)
    which = sys.argv[1:] or ["spin", "mixed", "bytewise"]
    if "spin" in which:
        capture_spin()
    if "mixed" in which:
        capture_mixed()
    if "bytewise" in which:
        with tempfile.TemporaryDirectory() as tmp:
            capture_bytewise(Path(tmp))
