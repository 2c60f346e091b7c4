"""The host side of tern's profiler: from /proc/profile to pictures and standard formats.

The kernel samples a running program many times a second and, for each sample, writes down
which functions were on the stack (kern/profile/). Reading /proc/profile gives those samples
as JSON, one object per sample, innermost frame first. That file is the end of the kernel's
work and the start of this package's.

What happens here is plain bookkeeping, and every module is one view of the same list of
samples:

    model.py       reads and checks the JSON: a Profile is a list of Samples, each a stack
                   of Frames (a symbol, an address, and whether it is kernel code).
    top.py         counts, per function, the samples it was running in (self) and the
                   samples it was anywhere on the stack in (inclusive): `profile top`.
    folded.py      one line per distinct stack with its count: the input format of the
                   classic flame-graph tools.
    flame.py       merges the stacks into a tree and lays it out as rectangles: a flame
                   graph. svg.py draws it as a picture, report.py as an interactive page.
    timeline.py    when each process was sampled, and whether in user or kernel code.
    lines.py       the source file and line of every frame, from the DWARF line tables of
                   the binaries the build made, once they are known to be the ones that ran.
    speedscope.py, perf.py, pprof.py (with protobuf.py)
                   the file formats other profilers read, so a tern profile can be opened in
                   speedscope, the Firefox Profiler, or Go's pprof.
    export.py      unpacks a profile copied out of the machine through the export disk.
    cli.py         the `tools/profconv` command that ties them together.

Only the standard library is used, and any Python from 3.9 on runs it, so the tools work
on a student's laptop as well as on the lab machines. The one exception is optional:
lines.py reads DWARF with pyelftools where it is installed, and without it every view
works, with no source lines.
"""
