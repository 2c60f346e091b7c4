"""The benchmarks counted in guest instructions: system calls and the profiler.

They run in one QEMU started with `-icount shift=0,sleep=off -smp 1`, where every guest
instruction takes one nanosecond of virtual time, so a count measures the kernel's code and
nothing of the host. The guest program `bsys` (user/bench/bsys.cc) does the measuring: each of its
subcommands settles at a fixed point of the timer's grid, reads the instruction counter around
the work, and prints one line of raw counts. This module types the commands, reads the lines,
and does the arithmetic. Each run of the suite boots a fresh machine and types the same
commands in the same order, so a run repeats the previous one instruction for instruction,
with one exception: `fwrite` waits for the disk, and QEMU fills idle time with jumps to the
next timer deadline, as many as the host's disk latency allows. bsys subtracts the time the
hart spent idle (/proc/cpustat) to count the work alone, and that repeats exactly: the
scheduler takes a finished request's interrupt at the same point wherever the host finished it
(kern/proc/proc.cc, scheduler), and tests/qemu/test_cpustat.py checks it on fresh machines.

The write path is exact on a second machine whose root file system is a RAM disk (fs.img
loaded with -initrd, kern/dev/ramdisk.cc): there every block moves with memmove, with no
interrupt and no wait, so `fwrite` costs the same instructions on every fresh boot. The
virtio write figures stay beside it: they are what the virtio disk costs, which the RAM disk
does not measure. A whole `usertests -q` is counted there too, exactly (see USERTESTS_NOTE):
it sleeps across more than a hundred ticks, so it repeats only because bsys settles at the
same nanosecond of the 100 ms grid on every boot, before its uncounted first run as well.

The profiler's figures are computed this way:

  whole timer trap with a sample = (instructions profiled - instructions unprofiled) / samples
  sampler's own work             = `sample cost ns` of /proc/profstat (tick() and record())
  slowdown                       = instructions profiled / instructions unprofiled - 1

where the profiled and unprofiled runs do exactly the same work from the same starting point.

The timer is armed through one of two clocks (kern/trap/timer.cc): with Sstc the kernel
writes `stimecmp` itself; without it (QEMU before 7.1) every re-arm is an ecall to OpenSBI's
TIME extension. The figures above use Sstc, QEMU 7.2's default. A second machine, started
with `-cpu rv64,sstc=off`, measures the 8-frame sample and the slowdowns again on the SBI
clock; for each clock, the whole trap less the sampler's own work is the cost of the timer
trap itself (entry, handler, re-arm, exit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tern.bench.figures import Figure, Target
from tern.machine import Machine, MachineError

ICOUNT_ARGS = ("-icount", "shift=0,sleep=off")
SBI_CLOCK_ARGS = ("-cpu", "rv64,sstc=off")  # no Sstc: the kernel re-arms through the SBI
CLOCKS = {"sstc": "Sstc clock (stimecmp)", "sbi": "SBI clock (ecall, no Sstc)"}
LINE = re.compile(r"(?m)^bsys: (\w+) (.*)$")
DEPTHS = (1, 8, 32, 64)
SLOWDOWN_HZ = (100, 1000, 4000)
COST_HZ = 1000  # the rate the per-sample costs are measured at
ICLOCK_EVERY = 1_000_000  # the instruction clock's period there: as many samples as COST_HZ
WAIT_TICKS = 3  # bsys wprof: sleep() ticks of 100 ms, about 300 wait samples at COST_HZ
MAX_FRAMES = 32  # the kernel's limit per sample (kern/profile/profiler.h)


@dataclass(frozen=True)
class Sizes:
    """How much work each benchmark does (the smoke pass uses small ones)."""

    null_calls: int
    fork_rounds: int
    exec_rounds: int
    pingpong_rounds: int
    pipe_bytes: int
    file_bytes: int       # fread's file (small enough to stay in the buffer cache)
    fread_rounds: int
    fwrite_bytes: int
    work_units: int       # bsys prof: 80,000 instructions a unit
    ksys_rounds: int      # bsys ksys: about 29,000 instructions a round
    render_samples: int   # samples rendered for the /proc/profile figures
    usertests_args: str | None  # on the RAM disk; None: the first quick test (smoke pass)


FULL = Sizes(null_calls=10_000, fork_rounds=200, exec_rounds=100, pingpong_rounds=1000,
             pipe_bytes=1 << 20, file_bytes=16 << 10, fread_rounds=50, fwrite_bytes=64 << 10,
             work_units=2500, ksys_rounds=5000, render_samples=10_000, usertests_args="-q")
SMOKE = Sizes(null_calls=1000, fork_rounds=20, exec_rounds=10, pingpong_rounds=100,
              pipe_bytes=128 << 10, file_bytes=16 << 10, fread_rounds=5, fwrite_bytes=16 << 10,
              work_units=400, ksys_rounds=1000, render_samples=1000, usertests_args=None)


def parse(out: str, name: str) -> list[dict[str, int]]:
    """The `bsys: NAME k v k v ...` lines of one command's output, as dictionaries."""
    found = []
    for match in LINE.finditer(out):
        if match.group(1) != name:
            continue
        words = match.group(2).split()
        found.append({k: int(v) for k, v in zip(words[::2], words[1::2])})
    if not found:
        raise MachineError(f"no `bsys: {name}` line in the output:\n{out}")
    return found


class Unavailable(Exception):
    """The kernel lacks what a benchmark needs: a lab's starter tree, whose profiler is still
    to be written, refuses profile(2). The figures are then n/a, and that is not a failure."""


# What bsys says when the kernel refuses the profiler's system call or files.
REFUSED = re.compile(r"(?m)^bsys: (cannot profile myself|the kernel refused the sampling rate|"
                     r"cannot clear the profile|the kernel refused the instruction clock|cannot (?:open|read) /proc/prof\w*)\s*$")


class Session:
    """One freshly booted machine under -icount, running bsys commands."""

    def __init__(self, machine: Machine) -> None:
        self.m = machine

    def bsys(self, args: str, name: str, timeout: float = 300) -> list[dict[str, int]]:
        out = self.m.run(f"bsys {args}", timeout=timeout)
        refused = REFUSED.search(out)
        if refused is not None:
            raise Unavailable(refused.group(1))
        return parse(out, name)

    def one(self, args: str, name: str, timeout: float = 300) -> dict[str, int]:
        return self.bsys(args, name, timeout)[0]

    def program(self, command: str, timeout: float = 300) -> int:
        """The instructions of one whole run of a program (`bsys run`: fork, exec, its work,
        exit and wait), after a first run that warms the buffer cache. A run that exits with
        a status other than 0 is an error."""
        out = self.m.run(f"bsys run {command}", timeout=timeout)
        found = parse(out, "run")[0]
        if found["status"] != 0:
            raise MachineError(f"`{command}` exited with status {found['status']}:\n{out}")
        return found["insns"]


# --- The figures ----------------------------------------------------------------------------


def syscall_figures(s: Sizes) -> dict[str, Figure]:
    def insns(key: str, name: str, unit: str = "instructions") -> Figure:
        return Figure(key, "syscalls", name, unit, "icount", digits=1, exact=True)

    def rate(key: str, name: str, exact: bool = True, digits: int = 0) -> Figure:
        return Figure(key, "syscalls", name, "bytes / M instructions", "icount", digits=digits,
                      exact=exact)

    kib = lambda n: f"{n >> 10} KiB"  # noqa: E731
    figs = [
        insns("sys.null", "null system call (getpid)"),
        insns("sys.fork", "fork + exit + wait"),
        insns("sys.exec_round", "fork + exec + exit + wait"),
        insns("sys.exec", "exec alone (the difference of the two above)"),
        insns("sys.pingpong", "pipe round trip, 1 byte, two processes"),
        rate("sys.pipe", f"pipe throughput, {kib(s.pipe_bytes)} in 4 KiB writes"),
        rate("sys.fread", f"file read, {kib(s.file_bytes)} file in the buffer cache"),
        rate("sys.fwrite", f"file write, {kib(s.fwrite_bytes)} in 4 KiB writes, per M busy "
             "instructions (idle time left out)"),
        rate("sys.fwrite.virtual", f"file write, {kib(s.fwrite_bytes)} in 4 KiB writes, per M "
             "instructions of virtual time (disk waits included)", exact=False, digits=2),
    ]
    return {f.key: f for f in figs}


def profiler_figures(s: Sizes) -> dict[str, Figure]:
    figs: list[Figure] = []
    for depth in DEPTHS + ("kernel",):
        what = ("system calls (kernel frames)" if depth == "kernel"
                else f"{depth}-frame user stack")
        # The profiler's targets are stated for an 8-frame user stack: 175 instructions of
        # the sampler's own work, 400 for the whole trap (the first design asked for 300 and
        # 800, which it meets). Deeper stacks cost about 16 instructions a frame more (each
        # frame's checks: in the page, text, alignment, rising); at 32 frames that alone is
        # over 400, so no bound is set for them.
        trap_target = Target(400) if depth == 8 else None
        own_target = Target(175) if depth == 8 else None
        figs.append(Figure(f"prof.sample.{depth}.trap", "profiler",
                           f"sample, {what}: whole timer trap", "instructions", "icount",
                           digits=1, exact=True, target=trap_target))
        figs.append(Figure(f"prof.sample.{depth}.own", "profiler",
                           f"sample, {what}: sampler's own work", "instructions", "icount",
                           digits=0, exact=True, target=own_target))
    for hz in SLOWDOWN_HZ:
        target = {1000: Target(0.5), 4000: Target(2.0)}.get(hz)
        figs.append(Figure(f"prof.slowdown.{hz}", "profiler",
                           f"slowdown of CPU-bound work profiled at {hz} Hz", "%", "icount",
                           digits=3, exact=True, target=target))
    figs.append(Figure("prof.sample.8.trap.sbi", "profiler",
                       f"sample, 8-frame user stack: whole timer trap, {CLOCKS['sbi']}",
                       "instructions", "icount", digits=1, exact=True))
    for clock, how in CLOCKS.items():
        figs.append(Figure(f"prof.trap.{clock}", "profiler",
                           f"timer trap less the sampler's own work, {how}",
                           "instructions", "icount", digits=1, exact=True))
    for hz in SLOWDOWN_HZ[1:]:
        figs.append(Figure(f"prof.slowdown.{hz}.sbi", "profiler",
                           f"slowdown of CPU-bound work profiled at {hz} Hz, {CLOCKS['sbi']}",
                           "%", "icount", digits=3, exact=True))
    figs.append(Figure("prof.sample.8.trap.iclock", "profiler",
                       "sample, 8-frame user stack: whole counter-overflow trap, instruction "
                       "clock", "instructions", "icount", digits=1, exact=True))
    figs.append(Figure("prof.sample.wait", "profiler",
                       "wait sample of a sleeping process: the sweep's lock, check and record",
                       "instructions", "icount", digits=0, exact=True))
    # The reader's target: at most 4,000 instructions a sample.
    figs.append(Figure("prof.render.per_sample", "profiler",
                       f"render /proc/profile, per sample ({s.render_samples:,} samples, "
                       "names cached)", "instructions", "icount", digits=0, exact=True,
                       target=Target(4000)))
    figs.append(Figure("prof.render.all", "profiler",
                       f"render /proc/profile, per sample, all mode ({s.render_samples:,} "
                       "samples, most of them waits; names cached)", "instructions", "icount",
                       digits=0, exact=True, target=Target(4000)))
    figs.append(Figure("prof.render.rate", "profiler",
                       "/proc/profile output (names cached)", "bytes / M instructions",
                       "icount", digits=0, exact=True))
    figs.append(Figure("prof.render.bytewise", "profiler",
                       "/proc/profile in 1-byte reads, against 4 KiB reads", "x", "icount",
                       digits=1, exact=True))
    figs.append(Figure("prof.render.bytewise_read", "profiler",
                       "/proc/profile, one 1-byte read beyond its share of 4 KiB reads",
                       "instructions", "icount", digits=0, exact=True))
    return {f.key: f for f in figs}


def run_syscalls(g: Session, s: Sizes, figs: dict[str, Figure]) -> None:
    null = g.one(f"null {s.null_calls}", "null")
    figs["sys.null"].add(null["insns"] / null["calls"])
    fork = g.one(f"fork {s.fork_rounds}", "fork")
    per_fork = fork["insns"] / fork["rounds"]
    figs["sys.fork"].add(per_fork)
    ex = g.one(f"exec {s.exec_rounds}", "exec")
    per_exec = ex["insns"] / ex["rounds"]
    figs["sys.exec_round"].add(per_exec)
    figs["sys.exec_round"].note = f"the program run is bsys itself ({ex['size']:,} bytes)"
    figs["sys.exec"].add(per_exec - per_fork)
    pp = g.one(f"pingpong {s.pingpong_rounds}", "pingpong")
    figs["sys.pingpong"].add(pp["insns"] / pp["rounds"])
    pipe = g.one(f"pipe {s.pipe_bytes}", "pipe")
    figs["sys.pipe"].add(pipe["bytes"] * 1e6 / pipe["insns"])
    fr = g.one(f"fread {s.file_bytes} {s.fread_rounds}", "fread")
    figs["sys.fread"].add(fr["bytes"] * fr["rounds"] * 1e6 / fr["insns"])
    fw = g.one(f"fwrite {s.fwrite_bytes}", "fwrite")
    figs["sys.fwrite"].add(fw["bytes"] * 1e6 / (fw["insns"] - fw["idle"]))
    figs["sys.fwrite"].note = (
        "virtual time less the time the hart was idle (/proc/cpustat): the writer's work, the "
        "virtio driver's included. QEMU finishes a disk request on another host thread, but "
        "the scheduler handles its interrupt at the same point wherever it comes, so the "
        "count repeats")
    figs["sys.fwrite.virtual"].add(fw["bytes"] * 1e6 / fw["insns"])
    figs["sys.fwrite.virtual"].note = (
        "while the writer waits for the disk QEMU (sleep=off) jumps to the next timer deadline "
        "as often as the host's disk latency allows: this one mostly measures those jumps")


RAM_DISK = re.compile(r"(?m)^tern: disk: ram, (\d+) KiB$")
USERTESTS_NOTE = (
    "exact: bsys settles before both runs at a fixed nanosecond 1,000 time units past a tick "
    "(the kernel's ticks fall on whole multiples of 100 ms of `time`), so the uncounted run "
    "leaves the kernel in the same state, and every tick of the counted run, and every sleep "
    "that ends on one, comes at the same instruction on every boot")


def ramdisk_figures(s: Sizes) -> dict[str, Figure]:
    args = s.usertests_args if s.usertests_args is not None else "NAME"
    what = "usertests -q" if args == "-q" else "usertests, one quick test (smoke pass)"
    figs = [
        Figure("ram.fwrite", "ramdisk", f"file write, {s.fwrite_bytes >> 10} KiB in 4 KiB "
               "writes, RAM disk", "bytes / M instructions", "icount", digits=0, exact=True),
        Figure("ram.usertests", "ramdisk", f"{what}, RAM disk, CPUS=1", "instructions",
               "icount", digits=0, exact=True),
    ]
    return {f.key: f for f in figs}


def run_ramdisk(g: Session, s: Sizes, figs: dict[str, Figure]) -> None:
    """The write path and usertests on a machine booted with Machine(ramdisk=True)."""
    ram = RAM_DISK.search(g.m.boot_output)
    if ram is None:
        raise MachineError("booted with an initrd, but the kernel did not say "
                           "`tern: disk: ram, N KiB`")
    fw = g.one(f"fwrite {s.fwrite_bytes}", "fwrite")
    if fw["idle"] != 0:
        raise MachineError(f"bsys fwrite was idle for {fw['idle']} instructions on the RAM "
                           "disk, which never waits")
    fig = figs["ram.fwrite"]
    fig.add(fw["bytes"] * 1e6 / fw["insns"])
    fig.note = (f"the same workload as the virtio figure, on a {ram.group(1)} KiB RAM disk "
                "(-initrd): blocks move with memmove, nothing waits, so this is the file "
                "system's and the log's own work, exactly")
    args = s.usertests_args
    if args is None:
        quick = re.findall(r"(?m)^(\S+) \(quick\)$", g.m.run("usertests -l", timeout=30))
        if not quick:
            figs["ram.usertests"].missing = "usertests -l lists no quick test"
            return
        args = quick[0]
    fig = figs["ram.usertests"]
    fig.add(g.program(f"usertests {args}", timeout=1800))
    fig.note = (f"`bsys run usertests {args}`: the second of two runs, from fork to wait, "
                "idle time and console output included"
                + ("; " + USERTESTS_NOTE if args == "-q" else ""))


def run_profiler(g: Session, s: Sizes, figs: dict[str, Figure]) -> None:
    for depth in DEPTHS:
        base = g.one(f"prof {depth} {s.work_units} 0", "prof")
        prof = g.one(f"prof {depth} {s.work_units} {COST_HZ}", "prof")
        add_sample_cost(figs, str(depth), base, prof, expect_frames=min(depth, MAX_FRAMES))
        if depth == 8:
            add_trap_cost(figs["prof.trap.sstc"], base, prof)
            figs["prof.slowdown.1000"].add(slowdown(base, prof))
            for hz in SLOWDOWN_HZ:
                if hz != COST_HZ:
                    other = g.one(f"prof 8 {s.work_units} {hz}", "prof")
                    figs[f"prof.slowdown.{hz}"].add(slowdown(base, other))
                    figs[f"prof.slowdown.{hz}"].note = (
                        f"{other['samples']} samples over {base['insns'] / 1e6:,.0f} M "
                        "instructions of work, 8 frames deep")
    run_instruction_clock(g, s, figs)
    run_wait_samples(g, figs)
    base = g.one(f"ksys {s.ksys_rounds} 0", "ksys")
    prof = g.one(f"ksys {s.ksys_rounds} {COST_HZ}", "ksys")
    add_sample_cost(figs, "kernel", base, prof, expect_frames=None)


def run_wait_samples(g: Session, figs: dict[str, Figure]) -> None:
    """A wait sample (kern/profile/sampler.cc, sweep_waits): bsys asleep for a few ticks,
    profiled at COST_HZ, and `wait cost ns` of /proc/profstat."""
    fig = figs["prof.sample.wait"]
    w = g.one(f"wprof {WAIT_TICKS} {COST_HZ}", "wprof")
    if w["waits"] == 0:
        fig.missing = "no wait samples"
        return
    fig.add(w["cost_ns"])
    fig.note = (f"{w['waits']} wait samples of bsys in sleep() at {COST_HZ} Hz: `wait cost "
                "ns` of /proc/profstat, instret around the sweep's p->lock, its check and "
                "record() (the kernel chain, about 6 frames, and a short user chain)")


def run_instruction_clock(g: Session, s: Sizes, figs: dict[str, Figure]) -> None:
    """The 8-frame sample taken by the instruction clock (kern/profile/iclock.cc), at the
    same number of samples per instruction as the timer's COST_HZ under -icount."""
    fig = figs["prof.sample.8.trap.iclock"]
    if "tern: instruction clock: sscofpmf" not in g.m.boot_output:
        fig.missing = "the machine has no instruction clock (no Sscofpmf)"
        return
    every = ICLOCK_EVERY
    base = g.one(f"prof 8 {s.work_units} 0", "prof")
    prof = g.one(f"iprof 8 {s.work_units} {every}", "iprof")
    if prof["samples"] == 0:
        fig.missing = "no samples: the work was too short"
        return
    fig.add((prof["insns"] - base["insns"]) / prof["samples"])
    fig.note = (f"{prof['samples']} samples, one every {every:,} instructions: the trap, "
                f"the sample ({prof['cost_ns']} of them its own work) and the re-arm, which "
                "stops and starts the counter through two SBI calls")


def run_sbi_clock(g: Session, s: Sizes, figs: dict[str, Figure]) -> None:
    """The 8-frame sample and the slowdowns on a machine booted with SBI_CLOCK_ARGS."""
    if "tern: timer: sbi" not in g.m.boot_output:
        raise MachineError("booted with sstc=off, but the kernel did not say "
                           "`tern: timer: sbi`")
    base = g.one(f"prof 8 {s.work_units} 0", "prof")
    prof = g.one(f"prof 8 {s.work_units} {COST_HZ}", "prof")
    if prof["samples"] == 0:
        figs["prof.sample.8.trap.sbi"].missing = "no samples: the work was too short"
        return
    figs["prof.sample.8.trap.sbi"].add((prof["insns"] - base["insns"]) / prof["samples"])
    figs["prof.sample.8.trap.sbi"].note = (
        f"{prof['samples']} samples at {COST_HZ} Hz on a machine started with "
        f"`{' '.join(SBI_CLOCK_ARGS)}`: each re-arm of the timer is an ecall to OpenSBI")
    add_trap_cost(figs["prof.trap.sbi"], base, prof)
    figs["prof.trap.sbi"].note = "the same on the SBI clock: each re-arm also enters OpenSBI"
    figs["prof.slowdown.1000.sbi"].add(slowdown(base, prof))
    for hz in SLOWDOWN_HZ[2:]:
        other = g.one(f"prof 8 {s.work_units} {hz}", "prof")
        figs[f"prof.slowdown.{hz}.sbi"].add(slowdown(base, other))


def add_trap_cost(fig: Figure, base: dict[str, int], prof: dict[str, int]) -> None:
    """The whole trap with a sample less the sampler's own work: the clock's trap."""
    if prof["samples"] == 0:
        fig.missing = "no samples: the work was too short"
        return
    fig.add((prof["insns"] - base["insns"]) / prof["samples"] - prof["cost_ns"])
    fig.note = ("the whole timer trap with an 8-frame sample less `sample cost ns`: trap entry "
                "and exit, the timer handler and the re-arm")


def slowdown(base: dict[str, int], prof: dict[str, int]) -> float:
    return (prof["insns"] - base["insns"]) * 100 / base["insns"]


def add_sample_cost(figs: dict[str, Figure], depth: str, base: dict[str, int],
                    prof: dict[str, int], expect_frames: int | None) -> None:
    samples = prof["samples"]
    trap, own = figs[f"prof.sample.{depth}.trap"], figs[f"prof.sample.{depth}.own"]
    if samples == 0:
        trap.missing = own.missing = "no samples: the work was too short"
        return
    trap.add((prof["insns"] - base["insns"]) / samples)
    own.add(prof["cost_ns"])
    frames = prof["frames_total"] / samples
    kernel = prof["kernel_frames"] / samples
    note = f"{samples} samples at {COST_HZ} Hz, {frames:.1f} frames each"
    if expect_frames is None:
        note += (f" ({kernel:.1f} kernel, {frames - kernel:.1f} user); "
                 f"{prof['kernel_samples']} taken in the kernel")
    elif abs(frames - expect_frames) > 0.05:
        note += f" (expected {expect_frames})"
    elif expect_frames < int(depth):
        note += f" (the kernel keeps at most {MAX_FRAMES})"
    if depth == "8":
        own.note = ("the sampler's own work is `sample cost ns` of /proc/profstat: the "
                    "instructions of tick() on a sampled tick, from its first line to the end "
                    "of record(), counted with instret and averaged; the whole trap is the "
                    "extra instructions of the profiled run per sample")
    trap.note = note


# The fill waits until this long after boot, so that every sample's timestamp (microseconds
# since boot) has nine digits: rendering a longer number costs more. Run early in a fresh boot,
# the fill then starts at the same moment every time.
RENDER_AFTER_S = 100
NINE_DIGITS_UNTIL_TICKS = 1000 * 10_000_000  # 1,000 s of the 10 MHz clock


def fill_and_read(g: Session, s: Sizes,
                  mode: str = "") -> tuple[dict[str, int], dict[str, int]]:
    """`bsys fill` (in `mode`: "" or "all"), then two reads of /proc/profile: the fill's line
    and the second read's, which finds every frame's text kept."""
    fill = g.one(f"fill {s.render_samples} {RENDER_AFTER_S} {mode}".rstrip(), "fill",
                 timeout=600)
    if fill["idle"] != 0:
        raise MachineError(f"bsys fill {mode} was idle for {fill['idle']} instructions: it "
                           "waited for something, and the profile it made will not repeat")
    warm = g.bsys("readtime /proc/profile 2", "readtime", timeout=600)[1]
    return fill, warm


def ten_digits(fill: dict[str, int]) -> str:
    """What to add to a render figure's note if the fill's timestamps had ten digits."""
    if fill["start"] + fill["ticks"] < NINE_DIGITS_UNTIL_TICKS:
        return ""
    return ("; the fill ran more than 1,000 s after boot, so timestamps had ten digits and "
            "the figure is not comparable with other runs")


def run_render(g: Session, s: Sizes, figs: dict[str, Figure]) -> None:
    """Fill the profile and time reading it; to be run first after boot (see above)."""
    fill, warm = fill_and_read(g, s)
    # One pass of 1-byte reads, after the passes above have cached every name: each read is
    # a system call, but no read may render a sample again (the kernel keeps the piece).
    bytewise = g.one("readtime /proc/profile 1 1", "readtime", timeout=1800)
    samples = fill["samples"]
    figs["prof.render.per_sample"].add(warm["insns"] / samples)
    figs["prof.render.rate"].add(warm["bytes"] * 1e6 / warm["insns"])
    per_sample = warm["bytes"] / samples
    figs["prof.render.per_sample"].note = (
        f"{samples:,} samples of mixed user work and system calls, {per_sample:,.0f} bytes "
        "of JSON each; the second read of the file (the first also looks up each frame once "
        "and keeps its text)" + ten_digits(fill))
    if bytewise["bytes"] == warm["bytes"]:
        figs["prof.render.bytewise"].add(bytewise["insns"] / warm["insns"])
        figs["prof.render.bytewise_read"].add(
            (bytewise["insns"] - warm["insns"]) / bytewise["reads"])
        figs["prof.render.bytewise"].note = (
            f"{bytewise['reads']:,} reads of one byte against {warm['reads']:,} of 4 KiB: "
            "the system calls themselves, not rendering, make the difference")
    else:
        figs["prof.render.bytewise"].missing = figs["prof.render.bytewise_read"].missing = (
            f"1-byte reads gave {bytewise['bytes']:,} bytes, 4 KiB reads {warm['bytes']:,}")
    # The same in all mode: init and the shell, asleep, give a wait sample each per period,
    # and a wait sample's "wchan" is decided from its kernel frames' names.
    fill, warm = fill_and_read(g, s, "all")
    figs["prof.render.all"].add(warm["insns"] / fill["samples"])
    figs["prof.render.all"].note = (
        f"{fill['samples']:,} samples, {warm['bytes'] / fill['samples']:,.0f} bytes of JSON "
        "each: `bsys fill` in all mode, where init and the shell sleep in wait() throughout; "
        "the second read of the file" + ten_digits(fill))
