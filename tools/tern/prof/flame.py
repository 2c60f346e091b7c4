"""Flame graphs: every sampled stack merged into one tree, drawn as rows of boxes.

Each box is a function on some call path; its width is the number of samples in which that
path was on the stack, so wide boxes are where the time went. The bottom row is the whole
profile ("all"), each row above holds the functions called by the box below, and the top
edge of the picture is what the processor was actually executing. Reading one:

  * a wide box with nothing on top of it is a function spending time in its own code;
  * a wide box covered by its children only passes the time on to them;
  * the left-to-right order means nothing: children are sorted by name, so that stacks
    sharing a prefix merge and the same profile always gives the same picture.

Building it takes two steps. build() walks each sample's stack from the outermost frame
and adds one to every node along the way, creating nodes on first sight. layout() then
gives each node its place: its depth is its row, and its horizontal start (in samples) is
its parent's start plus the widths of the siblings before it.

Colours only help the eye: user functions are warm, kernel functions cool, process boxes
(when stacks are grouped per process) green. Waits are grey-violet: a wait sample (a process
asleep, off the CPU) has its kernel frames, where it went to sleep, drawn as waiting, and on
top of them a box that names what it waited for, "[wait: disk]"; so the time spent asleep
stands apart from the time spent computing, even under the same function. A function's shade comes from a hash of its
name, so it looks the same in every graph.

svg.py and report.py draw the boxes; this module only knows where they go.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from html import escape
from typing import Dict, List, Optional, Tuple

from .model import Profile, Sample

ROOT_NAME = "all"

# Drawing sizes, in pixels, shared by the SVG file and the HTML report.
FRAME_HEIGHT = 17
FONT_SIZE = 12
CHAR_WIDTH = 7.2  # of the monospace font at FONT_SIZE; used to cut labels to fit
MIN_WIDTH = 0.3  # narrower boxes are left out of a static picture


@dataclass
class Node:
    name: str
    kind: str  # "root", "process", "user", "kernel" or "wait"
    count: int = 0  # samples with this path on the stack
    self_count: int = 0  # samples that ended here
    children: Dict[Tuple[str, str], "Node"] = field(default_factory=dict)

    def child(self, name: str, kind: str) -> "Node":
        key = (name, kind)
        if key not in self.children:
            self.children[key] = Node(name, kind)
        return self.children[key]


@dataclass
class Box:
    node: Node
    depth: int  # 0 is the root row
    start: int  # in samples, from the left edge


def build(profile: Profile, with_pid: bool = False) -> Node:
    """The tree of all stacks; with_pid adds a level of one node per process."""
    root = Node(ROOT_NAME, "root")
    for sample in profile.samples:
        node = root
        node.count += 1
        if with_pid:
            node = node.child(profile.process_label(sample.pid), "process")
            node.count += 1
        for name, kind in path(sample):
            node = node.child(name, kind)
            node.count += 1
        node.self_count += 1
    return root


def path(sample: Sample) -> List[Tuple[str, str]]:
    """A sample's boxes from the bottom up, as (name, kind): its frames, outermost first,
    and for a wait sample its kernel frames drawn as waiting and the wait on top."""
    out = [(f.label, "user" if not f.kernel else "wait" if sample.waiting else "kernel")
           for f in sample.stack()]
    if sample.waiting:
        out.append((sample.wait_label, "wait"))
    return out


def layout(root: Node) -> List[Box]:
    """Every node with its row and start, parents before children, left to right."""
    boxes: List[Box] = []
    todo = [(root, 0, 0)]
    while todo:
        node, depth, start = todo.pop()
        boxes.append(Box(node, depth, start))
        offset = start
        placed = []
        for key in sorted(node.children):
            child = node.children[key]
            placed.append((child, depth + 1, offset))
            offset += child.count
        todo.extend(reversed(placed))  # so the leftmost child is laid out next
    return boxes


def colour(name: str, kind: str) -> str:
    """A fill colour: warm for user code, cool for the kernel, from a hash of the name."""
    h = zlib.crc32(name.encode("utf-8"))
    a, b, c = h & 0xFF, (h >> 8) & 0xFF, (h >> 16) & 0xFF
    if kind == "root":
        return "rgb(200,200,200)"
    if kind == "process":
        return f"rgb({120 + a % 40},{190 + b % 40},{120 + c % 30})"
    if kind == "kernel":
        return f"rgb({70 + a % 50},{150 + b % 50},{215 + c % 40})"
    if kind == "wait":
        return f"rgb({150 + a % 30},{140 + b % 25},{175 + c % 30})"
    return f"rgb({225 + a % 30},{90 + b % 130},{40 + c % 40})"


def fit_label(name: str, width: float, char_width: float = CHAR_WIDTH) -> str:
    """As much of `name` as fits in a box `width` pixels wide ("" if not even 3 letters)."""
    room = int((width - 6) / char_width)
    if room < 3:
        return ""
    return name if len(name) <= room else name[:room - 2] + ".."


def describe(node: Node, total: int) -> str:
    """The tooltip of a box."""
    share = 100.0 * node.count / total if total else 0.0
    text = f"{node.name}: {node.count} sample{'s' if node.count != 1 else ''} ({share:.1f}%)"
    if node.kind in ("user", "kernel"):
        text += f", {node.self_count} in its own code"
    elif node.kind == "wait":
        text += ", asleep (off the CPU)"
    return text


def max_depth(boxes: List[Box]) -> int:
    return max((b.depth for b in boxes), default=0)


def frames_svg(boxes: List[Box], width: float, top: float, *,
               min_width: Optional[float] = MIN_WIDTH, interactive: bool = False,
               frame_height: int = FRAME_HEIGHT, char_width: float = CHAR_WIDTH) -> str:
    """The boxes as SVG groups, root at the bottom, filling `width` pixels from x = 0.

    min_width drops boxes narrower than that many pixels (None keeps all). interactive
    adds the data-* attributes the HTML report's script uses to zoom and search.
    frame_height and char_width suit a larger font (the HTML report's).
    """
    if not boxes:
        return ""
    total = boxes[0].node.count or 1
    rows = max_depth(boxes)
    scale = width / total
    out = []
    for i, box in enumerate(boxes):
        w = box.node.count * scale
        if min_width is not None and w < min_width:
            continue
        x = box.start * scale
        y = top + (rows - box.depth) * frame_height
        name = escape(box.node.name)
        attrs = ""
        if interactive:
            attrs = (f' data-id="{i}" data-start="{box.start}" data-count="{box.node.count}"'
                     f' data-depth="{box.depth}" data-name="{name}" data-kind="{box.node.kind}"')
        out.append(
            f'<g class="frame {box.node.kind}"{attrs}>'
            f"<title>{escape(describe(box.node, total))}</title>"
            f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{frame_height - 1}" rx="2" '
            f'fill="{colour(box.node.name, box.node.kind)}"/>'
            f'<text x="{x + 3:.2f}" y="{y + frame_height - 5}">'
            f"{escape(fit_label(box.node.name, w, char_width))}</text></g>")
    return "\n".join(out)
