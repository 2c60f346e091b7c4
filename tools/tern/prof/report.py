"""The HTML report: one file with the flame graph, the timeline and the table of functions.

The page is self-contained: its style sheet and script (report.css, report.js beside this
file) are copied into it, and it loads nothing from the network, so it can be mailed,
archived, or opened on a machine with no connection. It has three parts:

  * the flame graph (flame.py), which the script makes interactive: click a box to zoom
    into it, type in the search box to highlight matching functions and see their share;
  * the timeline (timeline.py): one row per process, samples over time, user and kernel
    in two colours;
  * the table of functions (top.py), by self and inclusive samples; clicking a row
    searches the flame graph for that function.

Everything is drawn here, in Python, as SVG; the script only moves, hides and recolours
what is already on the page. So the report reads correctly even where scripts are off,
and what the script does is small enough to read in one sitting.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import List

from . import flame, timeline, top
from .model import Profile

HERE = Path(__file__).resolve().parent
WIDTH = 1200
TOP_ROWS = 100  # rows of the table of functions


def summary(profile: Profile) -> str:
    """One sentence about the profile: how many samples, of whom, when, and where."""
    n = len(profile.samples)
    if n == 0:
        return "The profile has no samples."
    pids = profile.pids()
    first, last = profile.time_span()
    kernel = sum(1 for s in profile.samples if s.mode == "kernel")
    who = ", ".join(profile.process_label(p) for p in pids)
    text = (f"{n} sample{'s' if n != 1 else ''} from {len(pids)} "
            f"process{'es' if len(pids) != 1 else ''} ({who}), taken between "
            f"{first / 1e6:.3f} s and {last / 1e6:.3f} s after boot; "
            f"{100.0 * (n - kernel) / n:.1f}% in user code, "
            f"{100.0 * kernel / n:.1f}% in the kernel.")
    period = profile.period_us()
    if period:
        text += f" Samples came about every {period / 1000:.1f} ms on each hart."
    return text


def top_table(profile: Profile) -> str:
    total = sum(1 for s in profile.samples if s.frames)
    body: List[str] = []
    for r in top.rows(profile)[:TOP_ROWS]:
        label = f"{r.name} [k]" if r.kernel else r.name  # the flame graph's name for it
        body.append(
            f'<tr data-name="{escape(label)}"><td>{r.self_count}</td>'
            f"<td>{top.percent(r.self_count, total):.1f}%</td><td>{r.incl_count}</td>"
            f"<td>{top.percent(r.incl_count, total):.1f}%</td>"
            f'<td class="where">{"kernel" if r.kernel else "user"}</td>'
            f'<td class="name">{escape(r.name)}</td></tr>')
    return ('<table id="top"><thead><tr><th>self</th><th>%</th><th>incl</th><th>%</th>'
            '<th class="where">where</th><th class="name">function</th></tr></thead>\n<tbody>\n'
            + "\n".join(body) + "\n</tbody></table>")


def flame_graph(profile: Profile) -> str:
    # Several processes are kept apart: their stacks would merge at "_start" otherwise.
    boxes = flame.layout(flame.build(profile, with_pid=len(profile.pids()) > 1))
    height = (flame.max_depth(boxes) + 1) * flame.FRAME_HEIGHT + 2
    return (f'<svg xmlns="http://www.w3.org/2000/svg" id="flame" width="{WIDTH}" '
            f'height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="monospace" '
            f'font-size="{flame.FONT_SIZE}" data-width="{WIDTH}" '
            f'data-char-width="{flame.CHAR_WIDTH}">\n'
            f"{flame.frames_svg(boxes, WIDTH, 1, min_width=None, interactive=True)}\n</svg>")


def render(profile: Profile, title: str = "tern profile") -> str:
    """The HTML document."""
    style = (HERE / "report.css").read_text(encoding="utf-8")
    script = (HERE / "report.js").read_text(encoding="utf-8")
    timeline_svg, _ = timeline.render(profile, WIDTH)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>
{style}</style>
</head>
<body>
<h1>{escape(title)}</h1>
<p class="summary">{escape(summary(profile))}</p>

<section id="flame-section">
<h2>Flame graph</h2>
<p class="help">Each box is a function on a call path, as wide as the number of samples in
which that path was on the stack; callers are below their callees, and the top edge is the
code that was running. Warm colours are user code, cool ones kernel code (marked [k]).
Click a box to zoom in, click a faded box below it or Reset to zoom out. The search box
takes a regular expression.</p>
<div class="controls"><input id="search" type="search" size="40"
 placeholder="search functions (regular expression)" aria-label="search functions">
<button id="reset" type="button">Reset zoom</button><span id="matched"></span></div>
{flame_graph(profile)}
<div id="details" class="details">Point at a box to see its numbers.</div>
</section>

<section id="timeline-section">
<h2>Timeline</h2>
<p class="help">One row per process; time runs to the right. Each bar counts the samples in
a short slice of time, the warm part in user code and the blue part in the kernel; a full
bar means the process was found running at every tick. Gaps are times it was not running.</p>
{timeline_svg}
</section>

<section id="top-section">
<h2>Functions</h2>
<p class="help">self: samples taken in the function's own code. incl: samples with the
function anywhere on the stack. Click a row to find the function in the flame graph.</p>
{top_table(profile)}
</section>

<script>
{script}</script>
</body>
</html>
"""
