// What the site does with JavaScript, loaded on every page (benchbook.site.assets). Each
// library is fetched from this site's _static folder, only where a page needs it. A classic
// script, not a module: a page opened from disk (file://) may run classic scripts only.
(function () {
"use strict";
const here = new URL(".", document.currentScript.src);

function stylesheet(name) {
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = new URL(name, here).href;
  document.head.appendChild(link);
}

function classicScript(name) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = new URL(name, here).href;
    s.onload = resolve;
    s.onerror = reject;
    document.head.appendChild(s);
  });
}

// Long tables (the claims ledgers) sortable, searchable and filterable with DataTables, from
// the offline bundle of the itables package. Every row stays in the page (no paging), so
// links to a ledger row keep working; each column's menu sorts it and filters it. The
// library (0.7 MB) is fetched when a ledger comes near the screen, not with the page.
function tables() {
  const found = document.querySelectorAll("table.benchbook-filterable");
  if (!found.length) return;
  const near = new IntersectionObserver((entries) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    near.disconnect();
    enhanceTables(found);
  }, { rootMargin: "800px 0px" });
  found.forEach((table) => near.observe(table));
}

// A cell as the page prints a number (benchbook.format: true minus, thousands commas, '×' or
// a unit after it, '~' or a bound before it), and a dash for none.
const NUMBER = /^[~≈≥≤<>]?\s*[€$£]?([−-]?[\d,]*\.?\d+)\s*(\S*)/;
const NONE = new Set(["", "–", "—", "-"]);
const SECONDS = { "µs": 1e-6, ms: 1e-3, s: 1 };  // fmt_seconds writes ms below a second, s above

// The values of a column whose every cell is such a number followed by one and the same word
// ('t/s', '×', 'at' of '2,229 at c=32', or nothing), for sorting (a dash sorts first); null
// for any other column.
function numericColumn(cells) {
  const units = new Set();
  const values = cells.map((cell) => {
    const c = cell.replace(/\u2060/g, "");  // the joiner that holds a mark to its value
    if (NONE.has(c)) return -Infinity;
    const m = c.match(NUMBER);
    if (!m) return null;
    units.add(m[2]);
    return parseFloat(m[1].replace("−", "-").replace(/,/g, "")) * (SECONDS[m[2]] || 1);
  });
  const times = [...units].every((u) => u in SECONDS);
  return values.includes(null) || (units.size !== 1 && !times) ? null : values;
}

async function enhanceTables(found) {
  stylesheet("datatables.css");
  await classicScript("datatables.js");
  const DataTable = window.BenchbookDataTable;  // set by datatables.js (benchbook.site.assets)
  // a cell's assumed-value marker (benchbook.study.marks) is shown, never filtered or searched
  // on: "does not holdᵃ" is one more "does not hold" in the verdict filter
  const MARK = /<span class="benchbook-assumed-mark"[^>]*>[^<]*<\/span>/g;
  const unmarked = (data, type) => (type === "filter" && typeof data === "string" ? data.replace(MARK, "") : data);
  const text = (cell) => {
    const copy = cell.cloneNode(true);
    copy.querySelectorAll(".benchbook-assumed-mark").forEach((m) => m.remove());
    return copy.textContent.trim();
  };
  found.forEach((table) => {
    // a column of few distinct values (verdict, kind, basis) filters by picking values;
    // the others by typing; a column of numbers with one unit sorts by their value
    const rows = [...table.tBodies[0].rows];
    const columnDefs = [...table.tHead.rows[0].cells].map((th, i) => {
      const cells = rows.map((row) => (row.cells[i] ? text(row.cells[i]) : ""));
      const values = new Set(cells);
      const numbers = numericColumn(cells);
      const render = numbers ? (data, type, row, meta) => (type === "sort" || type === "type"
        ? numbers[meta.row] : unmarked(data, type)) : unmarked;
      return { targets: i, render, type: numbers ? "num" : undefined,
               columnControl: ["order", [values.size <= 12 ? "searchList" : "search"]] };
    });
    new DataTable(table, {
      paging: false,
      order: [],
      autoWidth: false,
      columnDefs,
      ordering: { indicators: false, handler: false },
      language: { search: "Search:" },
    });
  });
}

// Interactive charts (benchbook.page.interactive): the chart's JSON sits in a data block; it is
// drawn with plotly.js's basic bundle (1.2 MB, vendored: benchbook.site.assets) when its folded
// section is first opened (plotly needs the size).
const PLOTLY = "plotly-basic.min.js";
const NARROW = 600;  // px: below it a chart takes a phone's layout (phoneLayout)

// A title broken into lines of about `width` characters (plotly draws one line as it is given).
function wrapTitle(text, width) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + word.length + 1 > width) { lines.push(line); line = ""; }
    line = line ? line + " " + word : word;
  }
  return lines.concat(line ? [line] : []).join("<br>");
}

// On a phone the legend goes under the plot, one series a line, so the plot keeps the whole
// width (beside it, long series names left the plot 70 px of a 390 px screen); the chart
// grows by the legend's height, and the title wraps.
function phoneLayout(layout, width, traces) {
  if (width >= NARROW) return layout;
  const title = layout.title || {};
  const lines = Math.ceil((title.text || "").length / 36);
  return Object.assign({}, layout, {
    title: Object.assign({}, title, { text: wrapTitle(title.text || "", 36) }),
    legend: Object.assign({}, layout.legend, { orientation: "h", x: 0, xanchor: "left", y: -0.18, yanchor: "top" }),
    margin: { l: 56, r: 12, t: 30 + 20 * lines, b: 40 },
    height: 340 + 20 * lines + 24 * traces,
  });
}

async function charts() {
  const found = document.querySelectorAll("div.benchbook-plotly");
  if (!found.length) return;
  let ready = null;
  const draw = async (box) => {
    if (box.dataset.drawn) return;
    box.dataset.drawn = "1";
    ready = ready || classicScript(PLOTLY);
    await ready;
    const spec = JSON.parse(box.querySelector("script[type='application/json']").textContent);
    const chart = document.createElement("div");
    chart.className = "benchbook-plotly-chart";
    box.appendChild(chart);
    const layout = phoneLayout(spec.layout, box.getBoundingClientRect().width, spec.data.length);
    window.Plotly.newPlot(chart, spec.data, layout, { displaylogo: false, responsive: true });
  };
  found.forEach((box) => {
    const fold = box.closest("details");
    if (!fold || fold.open) draw(box);
    else fold.addEventListener("toggle", () => fold.open && draw(box), { once: false });
  });
}

// Filters of a chart whose traces carry their values (benchbook.page.interactive.scatter and
// filter_controls): each select keeps the traces whose value it matches ("" matches all), the
// count line says how many points are shown, and a click on a point opens the page it links
// to. The chart is drawn when its fold opens (charts()), so each chart is wired once drawn.
function chartFilters() {
  document.querySelectorAll("form.benchbook-chart-filters").forEach((form) => {
    const fold = form.closest("details");
    const box = fold && fold.querySelector("div.benchbook-plotly");
    if (!box) return;
    const count = fold.querySelector(".benchbook-chart-count");
    const selects = [...form.querySelectorAll("select[data-benchbook-filter]")];
    const chart = () => box.querySelector(".benchbook-plotly-chart");
    const apply = () => {
      const c = chart();
      if (!c || !c.data) return;
      const want = selects.map((s) => [s.dataset.benchbookFilter, s.value]);
      const keep = c.data.map((t) => want.every(([k, v]) => !v || ((t.meta || {}).filter || {})[k] === v));
      window.Plotly.restyle(c, { visible: keep });
      const size = (t) => ((t.meta || {}).links || []).length;  // one link per point (x may be binary-encoded)
      const all = c.data.reduce((n, t) => n + size(t), 0);
      const shown = c.data.reduce((n, t, i) => n + (keep[i] ? size(t) : 0), 0);
      if (count) count.textContent = shown === all ? `All ${all} points shown.` : `${shown} of ${all} points shown.`;
    };
    const wire = (c) => {
      if (c.dataset.benchbookWired) return;
      c.dataset.benchbookWired = "1";
      c.on("plotly_click", (ev) => {
        const p = ev.points && ev.points[0];
        const link = p && ((p.data.meta || {}).links || [])[p.pointIndex];
        if (!link) return;
        const url = new URL(link, document.baseURI);
        if (url.protocol === location.protocol) location.href = url.href;  // a page of this site only
      });
      apply();
    };
    form.addEventListener("change", apply);
    form.addEventListener("submit", (ev) => ev.preventDefault());
    const seen = new MutationObserver(() => {
      const c = chart();
      if (c && c.on) wire(c);
    });
    seen.observe(box, { childList: true, subtree: true });
    if (chart() && chart().on) wire(chart());
  });
}

tables();
charts();
chartFilters();
})();
