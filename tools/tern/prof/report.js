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
//   range   dragging across the timeline chooses a stretch of time; the flame graph and the
//           table of functions then count only the samples taken in it. The page holds
//           every sample's time in the flame graph's order (#sample-times), in which each
//           box's samples are the slice [start, start + count): with a running count of
//           the samples in the range over that list, a box's count is a difference of two
//           entries and its place the entry at its start.
//   fit     the graph is as wide as the page: the script measures the width it has, draws
//           the boxes for it (the page comes with them drawn for data-width pixels and
//           scaled), and does it again when the window changes. It notes the width it
//           drew for in the svg's data-drawn-width, and the window's in the body's
//           data-viewport (and where the timeline's bars end in data-timeline-right), for
//           a test to compare.
//
// The state lives in the address's fragment (#search=hot&zoom=12&from=T&to=T, times in
// microseconds since boot), so a zoomed view can
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

  // The time range: null for the whole profile, else [from, to] in microseconds.
  const timesNode = document.getElementById("sample-times");
  const times = timesNode ? JSON.parse(timesNode.textContent) : [];
  let range = null;
  let inRange = null; // inRange[i]: samples in the range among the first i; null: all are

  function pos(i) {
    return inRange === null ? i : inRange[i];
  }
  function cnt(b) {
    return pos(b.start + b.count) - pos(b.start);
  }
  function setRange(r) {
    range = r;
    inRange = null;
    if (r === null || times.length !== root.count) return;
    inRange = new Int32Array(times.length + 1);
    for (let i = 0; i < times.length; i++) {
      inRange[i + 1] = inRange[i] + (times[i] >= r[0] && times[i] <= r[1] ? 1 : 0);
    }
  }

  // Each box's children, for the samples that ended in a box (its own code).
  const children = new Map(boxes.map((b) => [b.id, []]));
  const open = [];
  for (const b of boxes) { // parents before children, left to right
    while (open.length && open[open.length - 1].depth >= b.depth) open.pop();
    if (open.length) children.get(open[open.length - 1].id).push(b);
    open.push(b);
  }

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
    const total = cnt(zoomed);
    const scale = total > 0 ? width / total : 0;
    for (const b of boxes) {
      if (b.depth >= zoomed.depth && contains(zoomed, b)) {
        const w = cnt(b) * scale;
        if (w < minWidth) b.g.style.display = "none";
        else place(b, (pos(b.start) - pos(zoomed.start)) * scale, w, false);
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
        matched += cnt(b);
        coveredUntil = b.start + b.count;
      }
    }
    const total = cnt(root);
    matchedLine.dataset.matched = String(re === null ? 0 : matched);
    matchedLine.textContent = re === null ? "" :
      "matched " + matched + " of " + total + " samples (" +
      (total ? 100 * matched / total : 0).toFixed(1) + "%)";
  }

  // The table of functions, counted again for the time range (and sorted again).
  const table = document.querySelector("#top tbody");
  const rows = table ? Array.from(table.rows) : [];
  const original = rows.map((row) => Array.from(row.cells).slice(0, 4)
    .map((cell) => cell.textContent));
  function recount() {
    if (range === null) {
      rows.forEach((row, i) => original[i].forEach((text, j) => {
        row.cells[j].textContent = text;
      }));
      rows.forEach((row) => table.appendChild(row));
      for (const row of rows) {
        delete row.dataset.self;
        delete row.dataset.incl;
      }
      return;
    }
    const own = new Map();
    const any = new Map();
    const coveredUntil = new Map();
    let total = 0;
    for (const b of byStart) {
      if (b.kind !== "user" && b.kind !== "kernel") continue;
      let self = cnt(b);
      for (const c of children.get(b.id)) self -= cnt(c);
      own.set(b.name, (own.get(b.name) || 0) + self);
      total += self;
      if (b.start >= (coveredUntil.get(b.name) || 0)) { // a recursion counts once
        any.set(b.name, (any.get(b.name) || 0) + cnt(b));
        coveredUntil.set(b.name, b.start + b.count);
      }
    }
    const percent = (n) => (total ? 100 * n / total : 0).toFixed(1) + "%";
    for (const row of rows) {
      const self = own.get(row.dataset.name) || 0;
      const incl = any.get(row.dataset.name) || 0;
      row.dataset.self = String(self);
      row.dataset.incl = String(incl);
      row.cells[0].textContent = String(self);
      row.cells[1].textContent = percent(self);
      row.cells[2].textContent = String(incl);
      row.cells[3].textContent = percent(incl);
    }
    rows.slice()
      .sort((a, b) => b.dataset.self - a.dataset.self || b.dataset.incl - a.dataset.incl)
      .forEach((row) => table.appendChild(row));
  }

  function saveState() {
    const parts = [];
    if (pattern) parts.push("search=" + encodeURIComponent(pattern));
    if (zoomed !== root) parts.push("zoom=" + zoomed.id);
    if (range !== null) parts.push("from=" + range[0], "to=" + range[1]);
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

  // Choosing a time range on the timeline.
  const timeline = document.querySelector(".timeline");
  const rangeLine = document.getElementById("range");
  const first = timeline ? Number(timeline.dataset.first) : 0;
  const last = timeline ? Number(timeline.dataset.last) : 0;

  function showRange() {
    const selection = timeline && timeline.querySelector(".selection");
    if (range === null) {
      rangeLine.textContent = "The whole profile.";
      delete rangeLine.dataset.count;
      if (selection) selection.hidden = true;
      return;
    }
    const n = cnt(root);
    rangeLine.dataset.count = String(n);
    rangeLine.textContent = n + " of " + root.count + " samples, from " +
      (range[0] / 1e6).toFixed(4) + " s to " + (range[1] / 1e6).toFixed(4) + " s:";
    const bars = timeline && timeline.querySelector("svg.timeline-row");
    if (selection && bars && last > first) {
      const box = bars.getBoundingClientRect();
      const outer = timeline.getBoundingClientRect();
      const x0 = box.left - outer.left + box.width * (range[0] - first) / (last - first);
      const x1 = box.left - outer.left + box.width * (range[1] - first) / (last - first);
      selection.style.left = Math.max(box.left - outer.left, x0) + "px";
      selection.style.width = Math.max(1, Math.min(x1, box.right - outer.left) -
                                       Math.max(box.left - outer.left, x0)) + "px";
      selection.style.height = (box.bottom - outer.top) + "px";
      selection.hidden = false;
    }
  }

  function chooseRange(r) {
    setRange(r);
    if (cnt(zoomed) === 0) zoomed = root;
    layout();
    search();
    recount();
    showRange();
    saveState();
  }

  if (timeline) {
    let dragFrom = null;
    const timeAt = (event) => {
      const bars = timeline.querySelector("svg.timeline-row").getBoundingClientRect();
      const f = Math.min(1, Math.max(0, (event.clientX - bars.left) / bars.width));
      return Math.round(first + f * (last - first));
    };
    timeline.addEventListener("mousedown", (event) => {
      if (!event.target.closest("svg.timeline-row")) return;
      dragFrom = timeAt(event);
      event.preventDefault();
    });
    window.addEventListener("mouseup", (event) => {
      if (dragFrom === null) return;
      const to = timeAt(event);
      const r = [Math.min(dragFrom, to), Math.max(dragFrom, to)];
      dragFrom = null;
      chooseRange(r[1] > r[0] ? r : null);
    });
  }
  document.getElementById("whole").addEventListener("click", () => chooseRange(null));

  // The initial state, from the address: #search=PATTERN&zoom=ID&from=T&to=T.
  let from = null;
  let to = null;
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const key = part.slice(0, eq);
    const value = decodeURIComponent(part.slice(eq + 1));
    if (key === "search") pattern = value;
    if (key === "zoom" && byId.has(Number(value))) zoomed = byId.get(Number(value));
    if (key === "from") from = Number(value);
    if (key === "to") to = Number(value);
  }
  if (from !== null && to !== null && from <= to) setRange([from, to]);
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
    resizing = setTimeout(() => {
      fitToPage();
      showRange();
    }, 100);
  });

  searchBox.value = pattern;
  fitToPage();
  layout();
  search();
  recount();
  showRange();
  document.body.dataset.ready = "yes";
})();
