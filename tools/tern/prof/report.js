// The interactive part of the HTML profile report (tools/tern/prof/report.py).
//
// The page arrives with the flame graph already drawn: report.py writes one SVG group per
// box, with its place in the tree in data-* attributes (data-start and data-count in
// samples, data-depth in rows). This script only moves and hides those boxes:
//
//   zoom    clicking a box makes it the full width. Its descendants are stretched by the
//           same factor, its ancestors stay full width but faded (click one to zoom back
//           out), everything else is hidden. Names are cut again to fit the new widths.
//   search  boxes whose name matches the regular expression in the search box turn
//           magenta, and the line beside it says how many samples had a match anywhere on
//           their stack. Nested matches (a recursive function) count once, so the figure
//           is a true share of the samples.
//
//   fit     the graph is as wide as the page: the script measures the width it has, draws
//           the boxes for it (the page comes with them drawn for data-width pixels and
//           scaled), and does it again when the window changes. It notes the width it
//           drew for in the svg's data-drawn-width, and the window's in the body's
//           data-viewport (and where the timeline's bars end in data-timeline-right), for
//           a test to compare.
//
// The state lives in the address's fragment (#search=hot&zoom=12), so a zoomed view can
// be bookmarked or sent to someone, and so a headless browser can open the page in a
// given state to test it. Without scripts the page still shows the full picture.
"use strict";

(function () {
  const svg = document.getElementById("flame");
  if (!svg) return;
  let width = Number(svg.dataset.width);
  const height = Number(svg.dataset.height);
  const charWidth = Number(svg.dataset.charWidth);
  const minWidth = 0.3; // narrower boxes are hidden: they would be noise
  const matchFill = "rgb(230,60,220)";
  const searchBox = document.getElementById("search");
  const matchedLine = document.getElementById("matched");
  const details = document.getElementById("details");

  const boxes = Array.from(svg.querySelectorAll("g.frame")).map((g) => {
    const rect = g.querySelector("rect");
    return {
      g: g,
      rect: rect,
      text: g.querySelector("text"),
      title: g.querySelector("title").textContent,
      id: Number(g.dataset.id),
      start: Number(g.dataset.start),
      count: Number(g.dataset.count),
      depth: Number(g.dataset.depth),
      name: g.dataset.name,
      kind: g.dataset.kind,
      fill: rect.getAttribute("fill"),
      match: false,
    };
  });
  if (boxes.length === 0) return;
  const root = boxes[0];
  const byId = new Map(boxes.map((b) => [b.id, b]));
  // Outer boxes before the boxes they contain: the order the match count needs.
  const byStart = boxes.slice().sort((a, b) => a.start - b.start || a.depth - b.depth);
  let zoomed = root;
  let pattern = "";

  function fit(name, w) {
    const room = Math.floor((w - 6) / charWidth);
    if (room < 3) return "";
    return name.length <= room ? name : name.slice(0, room - 2) + "..";
  }

  function contains(outer, inner) {
    return outer.start <= inner.start && inner.start + inner.count <= outer.start + outer.count;
  }

  function place(b, x, w, faded) {
    b.g.style.display = "";
    b.g.classList.toggle("faded", faded);
    b.rect.setAttribute("x", x.toFixed(2));
    b.rect.setAttribute("width", w.toFixed(2));
    b.text.setAttribute("x", (x + 3).toFixed(2));
    b.text.textContent = fit(b.name, w);
  }

  function layout() {
    const scale = width / zoomed.count;
    for (const b of boxes) {
      if (b.depth >= zoomed.depth && contains(zoomed, b)) {
        const w = b.count * scale;
        if (w < minWidth) b.g.style.display = "none";
        else place(b, (b.start - zoomed.start) * scale, w, false);
      } else if (b.depth < zoomed.depth && contains(b, zoomed)) {
        place(b, 0, width, true);
      } else {
        b.g.style.display = "none";
      }
    }
  }

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }

  // A pattern that is not a valid regular expression is searched for as plain text.
  function compile(text) {
    if (!text) return null;
    try {
      return new RegExp(text, "i");
    } catch (err) {
      return new RegExp(escapeRegExp(text), "i");
    }
  }

  function search() {
    const re = compile(pattern);
    for (const b of boxes) {
      b.match = re !== null && b !== root && re.test(b.name);
      b.rect.setAttribute("fill", b.match ? matchFill : b.fill);
      b.g.classList.toggle("match", b.match);
    }
    let matched = 0;
    let coveredUntil = -1;
    for (const b of byStart) {
      if (b.match && b.start >= coveredUntil) {
        matched += b.count;
        coveredUntil = b.start + b.count;
      }
    }
    matchedLine.dataset.matched = String(re === null ? 0 : matched);
    matchedLine.textContent = re === null ? "" :
      "matched " + matched + " of " + root.count + " samples (" +
      (100 * matched / root.count).toFixed(1) + "%)";
  }

  function saveState() {
    const parts = [];
    if (pattern) parts.push("search=" + encodeURIComponent(pattern));
    if (zoomed !== root) parts.push("zoom=" + zoomed.id);
    try {
      history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname);
    } catch (err) {
      // Some browsers refuse to change the address of a local file; the view still works.
    }
  }

  function zoom(b) {
    zoomed = b;
    layout();
    saveState();
  }

  function setPattern(text) {
    pattern = text;
    if (searchBox.value !== text) searchBox.value = text;
    search();
    saveState();
  }

  svg.addEventListener("click", (event) => {
    const g = event.target.closest("g.frame");
    if (g) zoom(byId.get(Number(g.dataset.id)) || root);
  });
  svg.addEventListener("mouseover", (event) => {
    const g = event.target.closest("g.frame");
    if (g) details.textContent = byId.get(Number(g.dataset.id)).title;
  });
  document.getElementById("reset").addEventListener("click", () => zoom(root));
  searchBox.addEventListener("input", () => setPattern(searchBox.value));

  // Clicking a row of the table of functions searches for that function.
  for (const row of document.querySelectorAll("#top tbody tr")) {
    row.addEventListener("click", () => setPattern("^" + escapeRegExp(row.dataset.name) + "$"));
  }

  // The initial state, from the address: #search=PATTERN&zoom=ID.
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const key = part.slice(0, eq);
    const value = decodeURIComponent(part.slice(eq + 1));
    if (key === "search") pattern = value;
    if (key === "zoom" && byId.has(Number(value))) zoomed = byId.get(Number(value));
  }
  // Draw for the width the page gives the graph: no viewBox scaling, so labels keep their
  // size and as many of them fit as the width allows.
  function fitToPage() {
    const room = Math.floor(svg.parentNode.getBoundingClientRect().width);
    if (room <= 0) return;
    width = room;
    svg.removeAttribute("viewBox");
    svg.setAttribute("width", String(width));
    svg.setAttribute("height", String(height));
    svg.dataset.drawnWidth = String(width);
    document.body.dataset.viewport = String(document.documentElement.clientWidth);
    const row = document.querySelector("svg.timeline-row");
    if (row) {
      document.body.dataset.timelineRight = String(Math.round(row.getBoundingClientRect().right));
    }
    layout();
  }
  let resizing = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(fitToPage, 100);
  });

  searchBox.value = pattern;
  fitToPage();
  layout();
  search();
  document.body.dataset.ready = "yes";
})();
