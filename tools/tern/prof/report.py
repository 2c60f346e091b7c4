"""The HTML report: one file with the flame graph, the timeline and the table of functions.

The page is self-contained: its style sheet and script (report.css, report.js beside this
file) are copied into it, and it loads nothing from the network, so it can be mailed,
archived, or opened on a machine with no connection. It has three parts:

  * the flame graph (flame.py), which the script makes interactive: click a box to zoom
    into it, type in the search box to highlight matching functions and see their share;
  * the timeline (timeline.py): one row per process, samples over time, user and kernel
    in two colours; dragging across it chooses a stretch of time, and the flame graph
    and the table then count only the samples taken in it;
  * the table of functions (top.py), by self and inclusive samples, with each one's
    hottest source line; clicking a row searches the flame graph for that function;
  * when the build's debug information gives source lines (lines.py), the source of the
    hottest functions with the samples of each line beside it, as `perf annotate` shows
    it: "self" samples were executing that line, "incl" ones were there or in a function
    that line called.

Everything is drawn here, in Python, as SVG; the script only moves, hides and recolours
what is already on the page. So the report reads correctly even where scripts are off,
and what the script does is small enough to read in one sitting.

The page fills the window, whatever its width: a lecture projector may show 1024 pixels,
a desktop 1920. The flame graph is drawn for WIDTH pixels and scaled to the window's
width where scripts are off; the script lays it out again for the width it really has
(and again when the window changes), so that its labels keep their size. The timeline's
bars stretch with the page and its labels do not (timeline.py). Labels are larger than in
the picture of svg.py, to be read from the back of a lecture room.
"""

from __future__ import annotations

import json
import statistics
from html import escape
from pathlib import Path
from typing import Dict, List, Optional

from . import flame, timeline, top
from .lines import Line, Sources
from .model import Profile

HERE = Path(__file__).resolve().parent
WIDTH = 1200  # the flame graph's width before the script measures the window's
FONT_SIZE = 15  # of the flame graph's labels
FRAME_HEIGHT = 21
CHAR_WIDTH = 9.0  # of the monospace font at FONT_SIZE
TOP_ROWS = 100  # rows of the table of functions
ANNOTATED = 5  # functions whose source is shown
CONTEXT = 2  # lines shown around the lines that have samples
MAX_GAP = 8  # a longer run of lines without samples is cut out


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
    held = [s for s in profile.samples if s.irqoff]
    if held:
        text += (f" {len(held)} samples ({100.0 * len(held) / n:.1f}%) were taken late, a median "
                 f"{statistics.median(s.late for s in held):g} us after their deadline, "
                 f"because interrupts were off: they sit where interrupts came back on "
                 f"(pop_off, usertrap), not where the time went (profconv --late shows "
                 f"only them, --on-time the rest).")
    return text


def top_table(profile: Profile, rows: List[top.Row]) -> str:
    total = sum(1 for s in profile.samples if s.frames)
    body: List[str] = []
    for r in rows[:TOP_ROWS]:
        label = f"{r.name} [k]" if r.kernel else r.name  # the flame graph's name for it
        hottest = r.hottest
        body.append(
            f'<tr data-name="{escape(label)}"><td>{r.self_count}</td>'
            f"<td>{top.percent(r.self_count, total):.1f}%</td><td>{r.incl_count}</td>"
            f"<td>{top.percent(r.incl_count, total):.1f}%</td>"
            f'<td class="where">{"kernel" if r.kernel else "user"}</td>'
            f'<td class="line">{escape(str(hottest)) if hottest else ""}</td>'
            f'<td class="name">{escape(r.name)}</td></tr>')
    return ('<table id="top"><thead><tr><th>self</th><th>%</th><th>incl</th><th>%</th>'
            '<th class="where">where</th><th class="line">hottest line</th>'
            '<th class="name">function</th></tr></thead>\n<tbody>\n'
            + "\n".join(body) + "\n</tbody></table>")


def read_source(path: str) -> Optional[List[str]]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return None


def annotated(rows: List[top.Row], sources: Optional[Sources]) -> str:
    """The source of the functions with the most self samples, a count beside each line."""
    if sources is None:
        return ""
    chosen = [r for r in rows if r.self_count and r.lines][:ANNOTATED]
    if not chosen:
        notes = "".join(f"<li>{escape(n)}</li>" for n in sources.notes)
        return ('<section id="source-section"><h2>Source</h2><p class="help">No source '
                f'lines are known for this profile.</p><ul class="notes">{notes}</ul></section>')
    parts = ['<section id="source-section"><h2>Source</h2>'
             '<p class="help">The source of the functions with the most self samples, from '
             "the build's debug information. self: samples that were executing the line. "
             "incl: samples at the line, running it or a function it called. The code of a "
             "function inlined into this one counts at the line that calls it. On QEMU a "
             "sample lands where a block of translated code begins, so the counts gather "
             "on the first line of each loop or branch.</p>"]
    for r in chosen:
        label = f"{r.name} [k]" if r.kernel else r.name
        parts.append(f'<div class="function" data-name="{escape(label)}"><h3>'
                     f'{escape(r.display)} <span class="counts">{r.self_count} self, '
                     f'{r.incl_count} incl</span></h3>')
        by_file: Dict[str, List[Line]] = {}
        for line in r.lines:
            by_file.setdefault(line.path, []).append(line)
        # The file of the hottest line first.
        hottest = r.hottest
        order = sorted(by_file, key=lambda p: (p != (hottest.path if hottest else ""), p))
        for path in order:
            parts.append(source_block(path, by_file[path], r))
        parts.append("</div>")
    parts.append("</section>")
    return "\n".join(parts)


def source_block(path: str, hit: List[Line], row: top.Row) -> str:
    """One file's lines around those with samples, as a table."""
    text = read_source(path)
    numbers = sorted({l.line for l in hit})
    counts = {l.line: (row.self_lines[l], row.lines[l]) for l in hit}
    most = max(c for _, c in counts.values())
    shown: List[int] = []
    for n in numbers:
        for k in range(max(1, n - CONTEXT), n + CONTEXT + 1):
            if text is not None and k > len(text):
                break
            if not shown or k > shown[-1]:
                shown.append(k)
    body = []
    for i, n in enumerate(shown):
        if i and n - shown[i - 1] > 1:
            body.append('<tr class="gap"><td></td><td></td><td>...</td><td></td></tr>')
        self_n, incl_n = counts.get(n, (0, 0))
        heat = f' style="background: rgba(232,116,59,{0.1 + 0.6 * incl_n / most:.2f})"' \
            if incl_n else ""
        code = escape(text[n - 1]) if text is not None and n <= len(text) else ""
        body.append(f'<tr data-line="{n}" data-self="{self_n}" data-incl="{incl_n}"{heat}>'
                    f'<td>{self_n or ""}</td><td>{incl_n or ""}</td><td class="number">{n}</td>'
                    f'<td class="code"><code>{code}</code></td></tr>')
    shown_path = hit[0].shown
    missing = "" if text is not None else " (the file is not there: counts only)"
    return (f'<table class="annotate" data-file="{escape(shown_path)}"><caption>'
            f"{escape(shown_path)}{missing}</caption><thead><tr><th>self</th><th>incl</th>"
            '<th>line</th><th class="code">source</th></tr></thead><tbody>\n'
            + "\n".join(body) + "\n</tbody></table>")


def sample_times(profile: Profile, with_pid: bool, boxes: List[flame.Box]) -> List[int]:
    """Each sample's time, in the order of the flame graph: the samples of a box are the
    slice [start, start + count) of this list, so the script can count a box's samples in
    any time range. Within a box, its own samples (those that ended in it) come after its
    children's, in the order of time."""
    where = {id(b.node): b.start + sum(c.count for c in b.node.children.values())
             for b in boxes}
    times = [0] * len(profile.samples)
    for sample in sorted(profile.samples, key=lambda s: s.timestamp):
        node = boxes[0].node
        if with_pid:
            node = node.children[(profile.process_label(sample.pid), "process")]
        for key in flame.path(sample):
            node = node.children[key]
        times[where[id(node)]] = sample.timestamp
        where[id(node)] += 1
    return times


def flame_graph(profile: Profile) -> str:
    # Several processes are kept apart: their stacks would merge at "_start" otherwise.
    with_pid = len(profile.pids()) > 1
    boxes = flame.layout(flame.build(profile, with_pid=with_pid))
    times = json.dumps(sample_times(profile, with_pid, boxes), separators=(",", ":"))
    height = (flame.max_depth(boxes) + 1) * FRAME_HEIGHT + 2
    frames = flame.frames_svg(boxes, WIDTH, 1, min_width=None, interactive=True,
                              frame_height=FRAME_HEIGHT, char_width=CHAR_WIDTH)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" id="flame" width="100%" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="monospace" '
            f'font-size="{FONT_SIZE}" data-width="{WIDTH}" data-height="{height}" '
            f'data-char-width="{CHAR_WIDTH}">\n'
            f"{frames}\n</svg>\n"
            f'<script type="application/json" id="sample-times">{times}</script>')


def render(profile: Profile, title: str = "tern profile",
           sources: Optional[Sources] = None) -> str:
    """The HTML document; with sources, the table and the source view show lines."""
    style = (HERE / "report.css").read_text(encoding="utf-8")
    script = (HERE / "report.js").read_text(encoding="utf-8")
    timeline_html = timeline.render(profile)
    rows = top.rows(profile, sources)
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
bar means the process was found running at every tick. Gaps are times it was not running.
Drag across the bars to look at that stretch of time only: the flame graph and the table of
functions then count the samples taken in it.</p>
<div class="controls"><span id="range">The whole profile.</span>
<button id="whole" type="button">Whole profile</button></div>
{timeline_html}
</section>

<section id="top-section">
<h2>Functions</h2>
<p class="help">self: samples taken in the function's own code. incl: samples with the
function anywhere on the stack. hottest line: the line of the function that most of those
samples were at. Click a row to find the function in the flame graph.</p>
{top_table(profile, rows)}
</section>

{annotated(rows, sources)}

<script>
{script}</script>
</body>
</html>
"""
