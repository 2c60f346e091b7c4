"""A timeline of the samples: when each process ran, and whether in user or kernel code.

A flame graph forgets time: it shows where the samples went, not when. The timeline keeps
it. Time runs from left to right (seconds since boot), each profiled process has a row,
and the samples are counted in narrow slices of time (never shorter than one sampling
period). A bar's height is how many samples fell in its slice, full height meaning one at
every tick of the sampling clock; its lower part (warm) counts those taken in user code,
its upper part (cool) those taken in the kernel. A program that computes shows a solid
warm band; one that is mostly in system calls shows cool; gaps are times the process was
not running on any hart (waiting, or others had the processor).

The timeline is HTML that stretches with the page: each row is the process's name in a
column of fixed width and, beside it, an SVG of the bars that fills the rest of the line.
That SVG holds no text and is stretched on its own (preserveAspectRatio="none"), so the
bars take the window's whole width while the names and the time axis, which are HTML,
keep their size. Every bar has a tooltip, and nothing needs a script.
"""

from __future__ import annotations

import math
from html import escape
from typing import Dict, List

from .model import Profile

USER_COLOUR = "#e8743b"
KERNEL_COLOUR = "#3b7be8"
PLOT_WIDTH = 1600  # the bars' own coordinates: enough slices for a wide window
ROW_HEIGHT = 30
BIN_WIDTH = 2  # the narrowest bar, in the bars' coordinates


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


def render(profile: Profile) -> str:
    """The timeline, as an HTML <div>."""
    pids = profile.pids()
    plot = PLOT_WIDTH
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

    # The span in data-*, for the report's script to turn a stretch dragged across the
    # bars into times (the bars cover [first, last] exactly, from edge to edge).
    out = [f'<div class="timeline" data-first="{first}" data-last="{first + span}">'
           '<div class="selection" hidden></div>']
    for pid in pids:
        n = sum(u + k for u, k in counts[pid])
        out.append(f'<div class="trow"><div class="tlabel">{escape(profile.process_label(pid))}'
                   f' <span class="count">{n}</span></div>'
                   f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline-row" '
                   f'viewBox="0 0 {plot} {ROW_HEIGHT}" preserveAspectRatio="none" '
                   f'height="{ROW_HEIGHT}" shape-rendering="crispEdges">'
                   f'<g class="row" data-pid="{pid}">'
                   f'<rect x="0" y="0" width="{plot}" height="{ROW_HEIGHT}" fill="#f3f1ea"/>')
        for i, (u, k) in enumerate(counts[pid]):
            if u + k == 0:
                continue
            x = i * bin_px
            t0 = first + i * slice_us
            tip = (f"{profile.process_label(pid)}, {t0 / 1e6:.4f} s: {u} user, {k} kernel "
                   f"sample{'s' if u + k != 1 else ''}")
            scale = ROW_HEIGHT * min(1.0, (u + k) / full) / (u + k)
            hu, hk = u * scale, k * scale
            out.append(f"<g><title>{escape(tip)}</title>")
            if u:
                out.append(f'<rect class="user" x="{x:.2f}" y="{ROW_HEIGHT - hu:.2f}" '
                           f'width="{bin_px:.2f}" height="{hu:.2f}" fill="{USER_COLOUR}"/>')
            if k:
                out.append(f'<rect class="kernel" x="{x:.2f}" y="{ROW_HEIGHT - hu - hk:.2f}" '
                           f'width="{bin_px:.2f}" height="{hk:.2f}" fill="{KERNEL_COLOUR}"/>')
            out.append("</g>")
        out.append("</g></svg></div>")

    # The axis: ticks at round times, placed in percent of the bars' width.
    ticks = []
    step = nice_step(span)
    tick = -(-first // step) * step  # the first multiple of step at or after `first`
    while tick <= last:
        ticks.append(f'<span class="tick" style="left: {100.0 * (tick - first) / span:.3f}%">'
                     f"{tick_label(tick, step)}</span>")
        tick += step
    out.append('<div class="trow taxis"><div class="tlabel">time since boot</div>'
               f'<div class="ticks">{"".join(ticks)}</div></div>')
    out.append('<div class="trow tlegend"><div class="tlabel"></div><div>'
               f'<span class="swatch" style="background: {USER_COLOUR}"></span> user '
               f'<span class="swatch" style="background: {KERNEL_COLOUR}"></span> kernel'
               "</div></div>")
    out.append("</div>")
    return "\n".join(out)
