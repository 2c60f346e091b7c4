"""gdb commands for tern: the current process, and symbolized kernel and user backtraces.

Loaded by the top-level .gdbinit. At any stop in the kernel:

    tern-proc        the hart, and the process it runs (pid, name, state)
    tern-bt          the kernel frame chain (gdb's own `bt`), then the user frame chain of the
                     current process, walked through its page table, symbolized from
                     build/user/_NAME.elf
    tern-sample      what the profiler's sampler sees at this stop in the timer trap: the
                     interrupted pc (sepc), where it came from, and both frame chains.
                     Stopped anywhere else, it says so: sepc is then only where the last
                     trap was taken, and sstatus.SPP may say "user" for a kernel pc (sret
                     sets it to user mode), so the origin comes from sepc's address

User memory is not mapped while the kernel runs (satp holds the kernel page table), so the
user walk translates each address through the process's Sv39 page table itself, reading
page-table pages through the kernel's direct map of RAM.
"""

import os
import re
import subprocess

try:
    import gdb  # provided by gdb itself
    gdb.Command
except (ImportError, AttributeError):  # imported by a host test, for describe_trap alone
    gdb = None  # (where tools/ is on the path, `import gdb` finds the folder tools/gdb)

PGSIZE = 4096
PTE_V, PTE_R, PTE_U = 1, 2, 16
STATES = ["unused", "used", "sleeping", "runnable", "running", "zombie"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_nm = []


def nm():
    """The cross toolchain's nm: TERN_NM, else the prefix the Makefile chose (gdb's Python
    cannot import tools/tern, so it asks `make print-toolprefix` as tern.toolchain does)."""
    if not _nm:
        prefix = subprocess.run(["make", "-s", "--no-print-directory", "print-toolprefix"],
                                cwd=ROOT, capture_output=True, text=True).stdout.strip()
        _nm.append(os.environ.get("TERN_NM") or prefix + "nm")
    return _nm[0]


def u64(expr):
    return int(gdb.parse_and_eval(expr)) & 0xFFFFFFFFFFFFFFFF


def read_u64(addr):
    mem = gdb.selected_inferior().read_memory(addr, 8)
    return int.from_bytes(bytes(mem), "little")


def current_proc():
    hart = u64("$tp")
    proc = gdb.parse_and_eval("cpus[%d].proc" % hart)
    return hart, (None if int(proc) == 0 else proc.dereference())


def translate(pagetable, va):
    """Physical (= kernel virtual) address of user va, or None if not user-readable."""
    if va >= 1 << 38:
        return None
    table = pagetable
    for level in (2, 1, 0):
        pte = read_u64(table + 8 * ((va >> (12 + 9 * level)) & 0x1FF))
        if not pte & PTE_V:
            return None
        pa = (pte >> 10) << 12
        if level and not pte & 0xE:
            table = pa
            continue
        if level or (pte & (PTE_U | PTE_R)) != PTE_U | PTE_R:
            return None
        return pa + (va & (PGSIZE - 1))
    return None


_symbols = {}


def user_symbols(name):
    """Sorted [(start, size, name)] for build/user/_NAME.elf, or []."""
    if name not in _symbols:
        path = os.path.join(ROOT, "build", "user", "_%s.elf" % name)
        table = []
        if os.path.exists(path):
            out = subprocess.run([nm(), "-C", "-n", "-S", "--defined-only", path],
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                m = re.match(r"([0-9a-f]+) ([0-9a-f]+) [Tt] (.*)", line)
                if m:
                    table.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
        _symbols[name] = table
    return _symbols[name]


def user_symbol(name, addr):
    for start, size, sym in user_symbols(name):
        if start <= addr < start + size:
            return "%s+%d" % (sym, addr - start)
    return "??"


def read_user_bytes(pagetable, va, n):
    out = b""
    for a in range(va, va + n):
        pa = translate(pagetable, a & ~7)
        if pa is None:
            return None
        out += bytes(gdb.selected_inferior().read_memory(pa + (a & 7), 1))
    return out


def in_syscall_stub(pagetable, pc):
    """kern/profile/walk.h's in_syscall_stub, on the bytes at [pc - 4, pc + 8)."""
    code = read_user_bytes(pagetable, pc - 4, 12) if pc >= 4 else None
    ecall = b"\x73\x00\x00\x00"
    return code is not None and any(code[i:i + 4] == ecall for i in (0, 4, 6, 8))


def user_chain(proc, pc, fp, ra, limit=32):
    """The profiler's rules (kern/profile/walk.h), in Python: pc, then return addresses."""
    pagetable = int(proc["pagetable"])
    text_end = int(proc["text_end"])
    chain = [pc]
    first = True
    if in_syscall_stub(pagetable, pc) and 0 < ra < text_end:
        chain.append(ra)  # a stub keeps no frame: its caller is in ra
        first = False
    while len(chain) < limit and fp % 8 == 0 and 16 <= fp < (1 << 38):
        lo, hi = translate(pagetable, fp - 16), translate(pagetable, fp - 8)
        if lo is None or hi is None:
            break
        w16, w8 = read_u64(lo), read_u64(hi)
        ret, nxt = w8, w16
        if first and w8 % 8 == 0 and fp < w8 < (1 << 38):
            ret, nxt = ra, w8  # a leaf: the return address is still in ra
        first = False
        if ret == 0 or ret >= text_end:
            break
        chain.append(ret)
        if nxt <= fp:
            break
        fp = nxt
    return chain


def print_user_chain(proc, pc, fp, ra):
    name = proc["name"].string()
    for i, addr in enumerate(user_chain(proc, pc, fp, ra)):
        look = addr if i == 0 else addr - 1
        print("  u#%-2d 0x%016x %s" % (i, addr, user_symbol(name, look)))


def kernel_symbol(addr):
    text = gdb.execute("info symbol 0x%x" % addr, to_string=True).strip()
    m = re.match(r"(.*?) \+ (\d+) in section", text) or re.match(r"(.*?) in section", text)
    if not m:
        return "??"
    return "%s+%s" % (m.group(1), m.group(2) if m.lastindex and m.lastindex > 1 else "0")


def kernel_chain(limit=32):
    """Follow kernel frame records from this frame's fp, through kernelvec's record into the
    interrupted code, the way the kernel's own backtraces do (kern/lib/backtrace.cc):
    [(address, symbol)], the pc first, then return addresses."""
    fp = u64("$s0")
    pc = u64("$pc")
    chain = [(pc, kernel_symbol(pc))]
    etext = u64("(unsigned long)&etext")
    start = u64("(unsigned long)&kernel_start")
    for _ in range(1, limit):
        if fp % 8 or fp < 0x80000000:
            break
        try:
            ret, prev = read_u64(fp - 8), read_u64(fp - 16)
        except gdb.MemoryError:
            break
        if not start <= ret < etext:
            break
        chain.append((ret, kernel_symbol(ret - 1)))
        if prev <= fp:
            break
        fp = prev
    return chain


def print_kernel_chain(chain=None):
    for i, (addr, name) in enumerate(chain or kernel_chain()):
        print("  k#%-2d 0x%016x %s" % (i, addr, name))


TIMER_INTERRUPT = (1 << 63) | 5
CAUSES = {(1 << 63) | 1: "software interrupt", TIMER_INTERRUPT: "timer interrupt",
          (1 << 63) | 9: "external interrupt", 2: "illegal instruction",
          8: "system call from user mode", 12: "instruction page fault", 13: "load page fault",
          15: "store page fault"}


def describe_trap(in_timer_trap, scause, sstatus, sepc, text_lo, text_hi):
    """What a stop's trap registers say, as (a line to print, whether sepc is user code):
    kernel text is [text_lo, text_hi). in_timer_trap says whether the stop is inside the
    timer trap's handler (timer_interrupt is on the kernel stack): elsewhere scause and
    sepc belong to whatever trap came last, maybe one that has returned. The origin is
    taken from sepc's address, since sstatus.SPP reads "user" after any sret, even one back
    into the kernel; where SPP disagrees with the address, the line says so."""
    kernel_pc = text_lo <= sepc < text_hi
    spp_user = (sstatus >> 8) & 1 == 0
    where = "a kernel pc" if kernel_pc else "a user pc"
    if not in_timer_trap or scause != TIMER_INTERRUPT:
        cause = CAUSES.get(scause, "cause %#x" % scause)
        return ("not stopped in a timer trap (scause: %s): the sampler is not running here; "
                "sepc 0x%x is %s, where the last trap was taken" % (cause, sepc, where),
                not kernel_pc)
    line = "timer trap from %s mode, sepc 0x%x" % ("supervisor" if kernel_pc else "user", sepc)
    if spp_user == kernel_pc:
        line += " (sstatus.SPP says %s mode: stale)" % ("user" if spp_user else "supervisor")
    return line, not kernel_pc


# Outside gdb (a host test of describe_trap) the commands are defined but not registered.
Command = gdb.Command if gdb is not None else object


class TernProc(Command):
    """Print the hart and the process it is running."""

    def __init__(self):
        super().__init__("tern-proc", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        hart, proc = current_proc()
        if proc is None:
            print("hart %d: no process (scheduler or boot)" % hart)
            return
        state = STATES[int(proc["state"])] if int(proc["state"]) < len(STATES) else "?"
        print("hart %d: pid %d (%s) %s, %d bytes, profiled=%d" % (
            hart, int(proc["pid"]), proc["name"].string(), state, int(proc["sz"]),
            int(proc["prof"]["profiled"])))


class TernBacktrace(Command):
    """Print the kernel backtrace and the current process's user backtrace."""

    def __init__(self):
        super().__init__("tern-bt", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        print("kernel:")
        print_kernel_chain()
        hart, proc = current_proc()
        if proc is None:
            return
        tf = proc["trapframe"].dereference()
        print("user (pid %d, %s), from its trapframe:" % (int(proc["pid"]), proc["name"].string()))
        print_user_chain(proc, int(tf["epc"]), int(tf["s0"]), int(tf["ra"]))


class TernSample(Command):
    """At a stop inside the timer trap, show what the sampler records."""

    def __init__(self):
        super().__init__("tern-sample", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        hart, proc = current_proc()
        chain = kernel_chain()
        in_timer_trap = any(name.startswith("timer_interrupt") for _, name in chain)
        line, from_user = describe_trap(in_timer_trap, u64("$scause"), u64("$sstatus"),
                                        u64("$sepc"), u64("(unsigned long)&kernel_start"),
                                        u64("(unsigned long)&etext"))
        print("hart %d: %s" % (hart, line))
        if proc is None:
            print("no process on this hart: nothing to sample")
            return
        tf = proc["trapframe"].dereference()
        if not from_user or not in_timer_trap:
            print("kernel chain (through the trap into the interrupted code):")
            print_kernel_chain(chain)
        print("user chain (pid %d, %s):" % (int(proc["pid"]), proc["name"].string()))
        print_user_chain(proc, int(tf["epc"]), int(tf["s0"]), int(tf["ra"]))


if gdb is not None:
    TernProc()
    TernBacktrace()
    TernSample()
