"""tern's Python code: the test harness, the grader, the benchmarks and the host tools.

One package, imported as `tern.NAME` by the executables beside it in tools/ (a script's own
folder is on Python's path), by the tests (the root pytest.ini puts tools/ on the path) and
by `python -m tern....`:

    machine.py      one QEMU running tern, driven through its console (the test harness)
    fixtures.py     the pytest plugin that gives tests their machines (pytest.ini loads it)
    strict_skips.py the pytest plugin that turns skips into failures under CI=true
    host.py, jobs.py, gdbstub.py, export_disk.py
                    what tests do around a machine: host files, background jobs, gdb's
                    remote protocol, profiles copied out through the export disk
    fsimage.py      an independent reader and checker of tern's file-system images
    profile_check.py, profile_props.py
                    checks of what the profiler prints, shared by tests/qemu and the lab
    toolchain.py    the cross toolchain and the QEMU command line, asked of the Makefile
    ports.py        a free TCP port
    labs.py         the labs (labs/NAME/) and what each one's lab.toml says
    starter.py, symtab.py, profget.py, demo.py
                    the logic of tools/mkstarter, mksymtab.py, profget and demo
    prof/           the profile model and its views and formats (tools/profconv)
    grade/          the grader (tools/grade, `make grade`), Gradescope and handin
    bench/          the benchmarks (tools/bench, `make bench`)
"""

from pathlib import Path

# The root of the tree this package belongs to (tools/tern/ is two levels down).
REPO = Path(__file__).resolve().parents[2]
