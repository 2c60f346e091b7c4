"""A flame graph as one self-contained SVG file: open it in any browser or image viewer.

The picture needs no script: each box carries a <title>, which browsers show as a tooltip
when the pointer rests on it (name, samples, share of the total, samples in its own code).
Boxes too narrow to see are left out, and names are cut to fit their box, so that a
profile with thousands of distinct stacks still gives a light file. For zooming and
searching, use the HTML report (report.py), which draws the same boxes.
"""

from __future__ import annotations

from html import escape

from . import flame
from .model import Profile

WIDTH = 1200
MARGIN = 10
TITLE_HEIGHT = 52  # the title and the legend above the boxes


def legend(x: float, y: float) -> str:
    """Small swatches saying which colour is which kind of code."""
    items = [("user code", flame.colour("user code", "user")),
             ("kernel code [k]", flame.colour("kernel code", "kernel")),
             ("asleep (wait)", flame.colour("asleep", "wait"))]
    out = []
    for label, fill in items:
        out.append(f'<rect x="{x}" y="{y - 11}" width="12" height="12" rx="2" fill="{fill}"/>'
                   f'<text x="{x + 16}" y="{y}">{escape(label)}</text>')
        x += 16 + len(label) * flame.CHAR_WIDTH + 20
    return "".join(out)


def render(profile: Profile, title: str = "Flame graph", with_pid: bool = False) -> str:
    """The SVG document."""
    root = flame.build(profile, with_pid)
    boxes = flame.layout(root)
    rows = flame.max_depth(boxes) + 1
    height = TITLE_HEIGHT + rows * flame.FRAME_HEIGHT + 2 * MARGIN
    inner = WIDTH - 2 * MARGIN
    pids = profile.pids()
    subtitle = (f"{root.count} samples from {len(pids)} process{'es' if len(pids) != 1 else ''}"
                f" ({', '.join(profile.process_label(p) for p in pids)})")
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="monospace" '
        f'font-size="{flame.FONT_SIZE}">\n'
        f"<style>text {{ fill: #000; }} .frame:hover rect {{ stroke: #000; stroke-width: 0.7; }}"
        f"</style>\n"
        f'<rect width="100%" height="100%" fill="#fbfaf5"/>\n'
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="17">{escape(title)}</text>\n'
        f'<text x="{MARGIN}" y="42">{escape(subtitle)}</text>\n'
        f"{legend(WIDTH - MARGIN - 300, 42)}\n"
        f'<g transform="translate({MARGIN},{TITLE_HEIGHT + MARGIN})">\n'
        f"{flame.frames_svg(boxes, inner, 0)}\n"
        f"</g>\n</svg>\n")
