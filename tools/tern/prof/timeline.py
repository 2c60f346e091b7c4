"""A timeline of the samples: when each process ran, and whether in user or kernel code.

A flame graph forgets time: it shows where the samples went, not when. The timeline keeps
it. Time runs from left to right (seconds since boot), each profiled process has a row,
and the samples are counted in narrow slices of time (never shorter than one sampling
period). A bar's height is how many samples fell in its slice, full height meaning one at
every tick of the sampling clock; its lower part (warm) counts those taken in user code,
its upper part (cool) those taken in the kernel. A program that computes shows a solid
warm band; one that is mostly in system calls shows cool; gaps are times the process was
not running on any hart (waiting, or others had the processor).

The picture is plain SVG with a tooltip on every bar, so it needs no script.
"""

from __future__ import annotations

import math
from html import escape
from typing import Dict, List, Tuple

from .model import Profile

USER_COLOUR = "#e8743b"
KERNEL_COLOUR = "#3b7be8"
LABEL_WIDTH = 170  # the column of process names on the left
ROW_HEIGHT = 30
ROW_GAP = 6
BIN_WIDTH = 2  # the narrowest bar, in pixels
AXIS_HEIGHT = 42


def nice_step(span_us: float, target: int = 8) -> int:
    """A round tick interval (1, 2 or 5 times a power of ten microseconds) giving about
    `target` ticks over the span."""
    raw = max(span_us / target, 1.0)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return int(factor * power)
    return int(10 * power)


def tick_label(us: int, step: int) -> str:
    """Seconds with as many decimals as the step needs: 0.2 s steps give one."""
    zeros = len(str(step)) - len(str(step).rstrip("0"))
    return f"{us / 1e6:.{max(0, 6 - zeros)}f} s"


def render(profile: Profile, width: int = 1200) -> Tuple[str, int]:
    """The timeline as an <svg> element, and its height in pixels."""
    pids = profile.pids()
    plot = width - LABEL_WIDTH - 10
    first, last = profile.time_span()
    span = max(last - first, 1)
    # A slice is at least one sampling period long, so that a process that ran the whole
    # time shows as a solid band rather than as a comb of samples and empty slices.
    period = profile.period_us()
    slice_us = max(span * BIN_WIDTH / plot, period or 0)
    nbins = max(1, math.ceil(span / slice_us))
    bin_px = plot / nbins

    def bin_of(t: int) -> int:
        return min(nbins - 1, int((t - first) / slice_us))

    counts: Dict[int, List[List[int]]] = {pid: [[0, 0] for _ in range(nbins)] for pid in pids}
    for s in profile.samples:
        counts[s.pid][bin_of(s.timestamp)][1 if s.mode == "kernel" else 0] += 1
    # A full bar is a slice in which the process was sampled at every tick: it can run on
    # one hart at a time. Without a known period, the busiest slice sets the scale.
    if period:
        full = max(1.0, slice_us / period)
    else:
        full = max((u + k for rows in counts.values() for u, k in rows), default=1) or 1

    height = len(pids) * (ROW_HEIGHT + ROW_GAP) + AXIS_HEIGHT
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" '
           f'shape-rendering="crispEdges" '
           f'height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" '
           f'font-size="12">']
    for row, pid in enumerate(pids):
        top = row * (ROW_HEIGHT + ROW_GAP)
        base = top + ROW_HEIGHT
        n = sum(u + k for u, k in counts[pid])
        out.append(f'<g class="row" data-pid="{pid}">'
                   f'<text x="4" y="{top + 19}">{escape(profile.process_label(pid))}'
                   f'<tspan fill="#666"> {n}</tspan></text>'
                   f'<rect x="{LABEL_WIDTH}" y="{top}" width="{plot}" height="{ROW_HEIGHT}" '
                   f'fill="#f3f1ea"/>')
        for i, (u, k) in enumerate(counts[pid]):
            if u + k == 0:
                continue
            x = LABEL_WIDTH + i * bin_px
            t0 = first + i * slice_us
            tip = (f"{profile.process_label(pid)}, {t0 / 1e6:.4f} s: {u} user, {k} kernel "
                   f"sample{'s' if u + k != 1 else ''}")
            scale = ROW_HEIGHT * min(1.0, (u + k) / full) / (u + k)
            hu, hk = u * scale, k * scale
            out.append(f"<g><title>{escape(tip)}</title>")
            if u:
                out.append(f'<rect class="user" x="{x:.2f}" y="{base - hu:.2f}" '
                           f'width="{bin_px:.2f}" height="{hu:.2f}" fill="{USER_COLOUR}"/>')
            if k:
                out.append(f'<rect class="kernel" x="{x:.2f}" y="{base - hu - hk:.2f}" '
                           f'width="{bin_px:.2f}" height="{hk:.2f}" fill="{KERNEL_COLOUR}"/>')
            out.append("</g>")
        out.append("</g>")

    axis = len(pids) * (ROW_HEIGHT + ROW_GAP)
    out.append(f'<line x1="{LABEL_WIDTH}" x2="{LABEL_WIDTH + plot}" y1="{axis}" y2="{axis}" '
               f'stroke="#555"/>')
    step = nice_step(span)
    tick = -(-first // step) * step  # the first multiple of step at or after `first`
    while tick <= last:
        x = LABEL_WIDTH + (tick - first) * plot / span
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{axis}" y2="{axis + 5}" stroke="#555"/>'
                   f'<text x="{x:.1f}" y="{axis + 18}" text-anchor="middle">'
                   f"{tick_label(tick, step)}</text>")
        tick += step
    legend_y = axis + 32
    out.append(f'<text x="4" y="{legend_y - 14}" fill="#666">time since boot</text>'
               f'<rect x="{LABEL_WIDTH}" y="{legend_y - 10}" width="12" height="10" '
               f'fill="{USER_COLOUR}"/><text x="{LABEL_WIDTH + 16}" y="{legend_y}">user</text>'
               f'<rect x="{LABEL_WIDTH + 70}" y="{legend_y - 10}" width="12" height="10" '
               f'fill="{KERNEL_COLOUR}"/><text x="{LABEL_WIDTH + 86}" y="{legend_y}">kernel</text>')
    out.append("</svg>")
    return "\n".join(out), height
