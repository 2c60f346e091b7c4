"""The HTML report: self-contained, and working in a real browser (headless Chromium).

The browser tests open the page in a tab of one headless Chromium (browser.py), shared by
the module's tests, which run on one pytest worker (their xdist_group) so that only one
browser starts, and it stops when they are done instead of idling through the rest of a
`make test`. They wait for the page's script to have run, read the document back, and fail
on any uncaught script error or console.error() the page produced. The page keeps its view
state in the address (#search=...&zoom=...), so opening it with a fragment drives the
script's search and zoom without a mouse. A screenshot of each report is left in build/
(report.png, report-mixed.png) for a person to look at.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import pytest

from browser import Browser
from samples import ROOT, raw_samples

BUILD = ROOT / "build"
# One worker runs this module's tests, so that they share one browser.
pytestmark = pytest.mark.xdist_group("report-browser")


class Elements(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: List[tuple] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))


def elements(html: str) -> List[tuple]:
    parser = Elements()
    parser.feed(html)
    return parser.tags


def frames(tags: List[tuple]) -> List[Dict[str, str]]:
    return [a for t, a in tags if t == "g" and "frame" in a.get("class", "").split()]


@pytest.fixture
def report(profconv: Callable, tmp_path: Path) -> Callable[[Path], Path]:
    def make(profile: Path) -> Path:
        out = tmp_path / f"{profile.stem}.html"
        result = profconv("html", profile, "-o", out)
        assert result.returncode == 0, result.stderr
        return out
    return make


def test_self_contained(any_profile: Path, report: Callable) -> None:
    html = report(any_profile).read_text(encoding="utf-8")
    tags = elements(html)
    for tag, attrs in tags:
        for key in ("src", "href"):
            assert key not in attrs or attrs[key].startswith("#"), \
                f"<{tag} {key}={attrs[key]!r}> loads something from outside the page"
    ids = {a["id"] for _, a in tags if "id" in a}
    assert {"flame", "search", "reset", "matched", "details", "top"} <= ids
    assert any(t == "svg" and "timeline" in a.get("class", "") for t, a in tags)
    samples = raw_samples(any_profile)
    root = frames(tags)[0]
    assert root["data-name"] == "all" and int(root["data-count"]) == len(samples)


def test_timeline_rows(mixed_path: Path, report: Callable) -> None:
    tags = elements(report(mixed_path).read_text(encoding="utf-8"))
    rows = [int(a["data-pid"]) for t, a in tags if t == "g" and a.get("class") == "row"]
    assert rows == sorted({s["pid"] for s in raw_samples(mixed_path)})
    kinds = {a.get("class") for t, a in tags if t == "rect"}
    assert {"user", "kernel"} <= kinds, "user and kernel samples are drawn in two colours"


def test_summary_counts_the_late_samples(bytewise_path: Path, spin_path: Path,
                                         report: Callable) -> None:
    """The summary says how many samples were held off by disabled interrupts (skid), and
    says nothing of it for a profile without them."""
    held = sum(1 for s in raw_samples(bytewise_path) if s.get("irqoff"))
    text = " ".join(unescape(report(bytewise_path).read_text(encoding="utf-8")).split())
    assert f"{held} samples (" in text and "taken late" in text and "--late" in text
    assert "taken late" not in report(spin_path).read_text(encoding="utf-8")


# --- In the browser --------------------------------------------------------------------------


def find_chromium() -> Optional[str]:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One browser for the module's tests (starting one costs about 2 s), closed after them:
    an idle one would still take a core's 2% and 380 MB through the rest of the run."""
    path = find_chromium()
    if path is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium); "
                    "the report was not checked in a browser")
    browser = Browser(path, tmp_path_factory.mktemp("chromium"))
    try:
        yield browser
    finally:
        browser.close()


# The room `chromium --dump-dom` gave the page, which the checks without a window size of
# their own were written for: headless Chromium's default window (780x580 on an 800x600
# screen) less what it keeps for its toolbars, as the page measures it.
DEFAULT_WINDOW = (780, 437)
# The report's script runs before the load event, so the page is ready once loaded or
# never: a short wait, so that a script that fails silently does not cost a minute a check.
READY_WAIT = 10.0


def dump(chromium: Browser, page: Path, fragment: str = "",
         size: Tuple[int, int] = DEFAULT_WINDOW, screenshot: Optional[Path] = None) -> str:
    """The document once the page's script has run, in a new tab of `size`; and a PNG of
    the tab, if `screenshot` says where."""
    with chromium.tab(size) as tab:
        tab.load(page.as_uri() + fragment)
        tab.wait_until("document.body.dataset.ready === 'yes'", READY_WAIT)
        dom = tab.dom()
        if screenshot:
            tab.screenshot(screenshot)
        errors = tab.errors()
    assert not errors, "\n".join(errors)
    assert 'data-ready="yes"' in dom, "the page's script did not finish"
    return dom


def matched(dom: str) -> int:
    m = re.search(r'<span id="matched" data-matched="(\d+)"', dom)
    assert m, "the search did not report a count"
    return int(m[1])


def visible(dom: str) -> List[Dict[str, str]]:
    return [a for a in frames(elements(dom)) if "display: none" not in a.get("style", "")]


def test_runs_without_errors(chromium: Browser, any_profile: Path, report: Callable) -> None:
    dom = dump(chromium, report(any_profile))
    assert matched(dom) == 0


def test_search_counts_samples(chromium: Browser, mixed_path: Path, report: Callable) -> None:
    page = report(mixed_path)
    samples = raw_samples(mixed_path)
    for pattern, regex in (("hot", re.compile("hot", re.I)),
                           ("^sys_", re.compile("^sys_", re.I)),
                           ("%5E(middle%7Couter)%24", re.compile("^(middle|outer)$", re.I)),
                           # The root box stands for the whole profile, not a function.
                           ("%5Eall%24", re.compile("^all$", re.I))):
        dom = dump(chromium, page, f"#search={pattern}")
        # A sample counts once however many of its frames match.
        want = sum(1 for s in samples if any(regex.search(f["symbol"] + (" [k]" if f["kernel"]
                                                                          else ""))
                                             for f in s["samples"]))
        assert matched(dom) == want, pattern
        marked = [a for a in frames(elements(dom)) if "match" in a.get("class", "").split()]
        assert all(regex.search(a["data-name"]) for a in marked)
        assert bool(marked) == (want > 0)


def test_zoom(chromium: Browser, spin_path: Path, report: Callable) -> None:
    page = report(spin_path)
    tags = frames(elements(page.read_text(encoding="utf-8")))
    middle = max((a for a in tags if a["data-name"] == "middle"),
                 key=lambda a: int(a["data-count"]))
    dom = dump(chromium, page, f"#zoom={middle['data-id']}")
    shown = visible(dom)
    width = drawn_width(dom)
    by_id = {a["data-id"]: a for a in shown}
    assert middle["data-id"] in by_id
    # The zoomed box spans the width; its callers are faded; everything else is inside it.
    rects = re.findall(r'data-id="(\d+)"[^>]*>(?:<title>[^<]*</title>)?<rect x="([\d.]+)"'
                       r'[^>]*width="([\d.]+)"', dom)
    geometry = {i: (float(x), float(w)) for i, x, w in rects}
    assert geometry[middle["data-id"]] == (0.0, float(width))
    start, count = int(middle["data-start"]), int(middle["data-count"])
    for a in shown:
        s, c, d = int(a["data-start"]), int(a["data-count"]), int(a["data-depth"])
        if d < int(middle["data-depth"]):
            assert "faded" in a["class"] and s <= start and start + count <= s + c
        else:
            assert start <= s and s + c <= start + count
            x, w = geometry[a["data-id"]]
            assert abs(w - c * width / count) < 0.02 and abs(x - (s - start) * width / count) < 0.02
    names = {a["data-name"] for a in shown}
    assert names >= {"all", "_start", "main", "outer", "middle", "hot"}


def drawn_width(dom: str) -> int:
    """The width the script laid the flame graph out for: the page's, not a fixed one."""
    m = re.search(r'<svg[^>]*id="flame"[^>]*data-drawn-width="(\d+)"', dom)
    assert m, "the script did not fit the flame graph to the page"
    return int(m[1])


def png_size(path: Path) -> tuple:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("size", [(1024, 768), (1920, 1080)], ids=["projector", "desktop"])
@pytest.mark.parametrize("name", ["spin", "mixed"])
def test_flame_graph_fills_the_window(chromium: Browser, name: str, size: tuple,
                                      report: Callable) -> None:
    """On a 1024-pixel projector and on a 1920-pixel screen, the flame graph is laid out for
    the window's width: every box inside the window, the whole graph using most of it, and
    the page never wider than the window. A screenshot is left in build/ to look at."""
    page = report(Path(__file__).resolve().parent / "data" / f"{name}.json")
    BUILD.mkdir(exist_ok=True)
    png = BUILD / f"report-{name}-{size[0]}.png"
    png.unlink(missing_ok=True)
    # One tab gives the document and the screenshot.
    dom = dump(chromium, page, size=size, screenshot=png)
    viewport = int(re.search(r'<body[^>]*data-viewport="(\d+)"', dom)[1])
    assert size[0] - 20 <= viewport <= size[0], "the window's width, less a scroll bar"
    width = drawn_width(dom)
    assert 0.9 * viewport <= width <= viewport - 20, (width, viewport)
    right = max(float(x) + float(w) for x, w in re.findall(
        r'<g class="frame[^"]*"[^>]*>(?:<title>[^<]*</title>)?<rect x="([\d.]+)"[^>]*'
        r'width="([\d.]+)"', dom))
    assert abs(right - width) < 0.5, f"the boxes end at {right}, the graph at {width}"
    timeline = int(re.search(r'<body[^>]*data-timeline-right="(\d+)"', dom)[1])
    assert 0.9 * viewport <= timeline <= viewport, "the timeline's bars fill the width too"
    # Every label fits its box at the report's font (CHAR_WIDTH pixels a letter).
    for w, text in re.findall(r'<rect [^>]*width="([\d.]+)"[^>]*/><text [^>]*>([^<]*)</text>',
                              dom):
        assert len(unescape(text)) * 9.0 <= float(w), (text, w)
    assert png.is_file(), "chromium took no screenshot"
    assert png_size(png) == size


@pytest.mark.parametrize("name", ["spin", "mixed"])
def test_screenshot(chromium: Browser, name: str, report: Callable) -> None:
    page = report(Path(__file__).resolve().parent / "data" / f"{name}.json")
    BUILD.mkdir(exist_ok=True)
    png = BUILD / ("report.png" if name == "spin" else f"report-{name}.png")
    png.unlink(missing_ok=True)
    dump(chromium, page, size=(1280, 900), screenshot=png)
    assert png_size(png) == (1280, 900)


# --- The annotated source --------------------------------------------------------------------


def test_annotated_source(profconv: Callable, tmp_path: Path) -> None:
    """The hottest functions' source, with addr2line's count of samples beside each line
    (of the function's own code: inlined code counts at its call), and the code of that
    line from the file."""
    from collections import Counter
    from samples import addr2line, primes_profile
    path, samples, seed = primes_profile(tmp_path, 5, 300)
    out = tmp_path / "primes.html"
    assert profconv("html", path, "-o", out).returncode == 0
    html = out.read_text(encoding="utf-8")
    truth = addr2line(ROOT / "build" / "user" / "_primes.elf",
                      [s["samples"][0]["address"] for s in samples])
    want = Counter(chain[-1] for s, chain in zip(samples, truth)
                   if chain and s["samples"][0]["symbol"] == "is_prime")
    section = html[html.index('<div class="function" data-name="is_prime">'):]
    section = section[:section.index("</div>")]
    got: Counter = Counter()
    for table in re.findall(r'<table class="annotate" data-file="([^"]+)">(.*?)</table>',
                            section, re.S):
        file, body = table
        source = (ROOT / file).read_text().splitlines()
        for number, self_n, incl_n, code in re.findall(
                r'<tr data-line="(\d+)" data-self="(\d+)" data-incl="(\d+)"[^>]*>'
                r'.*?<code>(.*?)</code>', body):
            assert self_n == incl_n, "one-frame samples: every sample is the line's own"
            assert unescape(code) == source[int(number) - 1]
            if int(self_n):
                got[(str(ROOT / file), int(number))] = int(self_n)
    print(f"seed {seed}: {sum(want.values())} samples in is_prime")
    assert got == want and sum(want.values()) > 100


def test_stale_build_shows_no_lines(mixed_path: Path, report: Callable) -> None:
    """The committed profiles come from an older build: no line may be made up for them."""
    html = report(mixed_path).read_text(encoding="utf-8")
    assert 'class="annotate"' not in html
    assert all(cell == "" for cell in re.findall(r'<td class="line">([^<]*)</td>', html))


def test_time_range_filters_the_graph_and_table(chromium: Browser, any_profile: Path,
                                                report: Callable) -> None:
    """A stretch of time chosen on the timeline (#from=T&to=T, as a drag sets it): the
    table counts the samples taken in it, self and inclusive, as the JSON gives them; the
    flame graph's boxes are as wide as their share of those samples."""
    import random
    from collections import Counter
    page = report(any_profile)
    samples = raw_samples(any_profile)
    times = sorted(s["timestamp"] for s in samples)
    seed = int(os.environ.get("RANGE_SEED", "3"))
    rng = random.Random(seed)
    for case in range(3):
        a, b = sorted(rng.sample(range(len(times)), 2))
        t0, t1 = times[a], times[b]
        dom = dump(chromium, page, f"#from={t0}&to={t1}")
        chosen = [s for s in samples if t0 <= s["timestamp"] <= t1]
        m = re.search(r'<span id="range" data-count="(\d+)"', dom)
        assert m and int(m[1]) == len(chosen), (t0, t1)
        own: Counter = Counter()
        anywhere: Counter = Counter()
        for s in chosen:
            names = [f["symbol"] + (" [k]" if f["kernel"] else "") for f in s["samples"]]
            if names:
                own[names[0]] += 1
            for name in set(names):
                anywhere[name] += 1
        rows = re.findall(r'<tr data-name="([^"]*)" data-self="(\d+)" data-incl="(\d+)"', dom)
        assert rows, "the table was not counted again"
        for name, self_n, incl_n in rows:
            name = unescape(name)
            assert (int(self_n), int(incl_n)) == (own[name], anywhere[name]), name
        counts = [int(r[1]) for r in rows]
        assert counts == sorted(counts, reverse=True), "sorted again by self samples"
        width = drawn_width(dom)
        # The boxes in view, as (name, width).
        boxes = [(unescape(n), float(w)) for n, attrs, w in re.findall(
            r'data-depth="\d+" data-name="([^"]*)"([^>]*)>'
            r'(?:<title>[^<]*</title>)?<rect x="[\d.]+"[^>]*width="([\d.]+)"', dom)
            if "display: none" not in attrs]
        assert abs(boxes[0][1] - width) < 0.5, "the root spans the graph"
        # A function's boxes together are as wide as its share of the chosen samples
        # (the boxes of a function that recurses overlap: then its outermost box is).
        name, most = anywhere.most_common(1)[0]
        widths = [w for n, w in boxes if n == name]
        share = width * most / len(chosen)
        assert abs(sum(widths) - share) < 1.0 or abs(max(widths) - share) < 1.0, name
        print(f"seed {seed} case {case}: {len(chosen)} of {len(samples)} samples")
