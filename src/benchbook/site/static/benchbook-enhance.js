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

// Interactive charts (benchbook.page.interactive): each chart's spec sits in a data block beside
// its static figure; it is drawn inline, unfolded, with Chart.js (0.2 MB, vendored:
// benchbook.site.assets) on a canvas at the column's width. Every text from the
// spec reaches the page as text: drawn on the canvas, or set as textContent (title, legend,
// tooltip), never parsed as HTML. Colours of text and grid are read from the page's CSS when the
// chart is drawn and again when the theme changes (pydata-sphinx-theme's html[data-theme]), so
// the chart follows dark mode; its series keep the palette's colours on a light plot panel.
const CHARTJS = "chart.umd.js";
const NARROW = 600;  // px: below it a chart's text is a little smaller
const TAP = 800;  // ms: a click this soon after a touch is a tap
const POINT_STYLES = { circle: "circle", square: "rect", diamond: "rectRot", triangle: "triangle" };
const SIGNIFICANT = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 4 });

function element(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

// The chart's colours from the page's CSS (benchbook.css sets them for light and dark).
function themeColours(box) {
  const style = getComputedStyle(box);
  const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: style.color,
    grid: read("--benchbook-chart-grid", "rgba(0, 0, 0, 0.12)"),
    axis: read("--benchbook-chart-axis", style.color),
    panel: read("--benchbook-chart-panel", "transparent"),
    font: style.fontFamily,
  };
}

// A log axis's ticks: at its values where the spec lists them (concurrencies), else at each power
// of ten in view; where fewer than two are in view (a filtered chart), at 1, 2 and 5 of each
// decade, or at every digit of it.
function logTicks(scale, axis) {
  const lo = scale.min * 0.999, hi = scale.max * 1.001;
  const inView = (values) => values.filter((v) => v >= lo && v <= hi);
  let values;
  if (Array.isArray(axis.ticks)) {
    values = inView(axis.ticks);
  } else {
    const decades = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) decades.push(Number(`1e${e}`));
    for (const digits of [[1], [1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]]) {
      values = inView(decades.flatMap((d) => digits.map((k) => Number((k * d).toPrecision(1)))));
      if (values.length >= 2) break;
    }
  }
  if (values.length) scale.ticks = values.map((value) => ({ value }));
}

function scaleOptions(axis, colours, small) {
  const font = () => ({ family: colours().font, size: small() ? 12 : 13 });
  const out = {
    type: axis.log ? "logarithmic" : "linear",
    title: { display: !!axis.label, text: axis.label, color: () => colours().text, font },
    ticks: { color: () => colours().text, font, maxRotation: 0 },
    grid: { color: () => colours().grid },
    border: { color: () => colours().axis },
  };
  if (axis.log) {
    // room around the outermost points, then ticks chosen as above, each labelled as a number
    out.afterDataLimits = (scale) => { scale.min /= 1.25; scale.max *= 1.25; };
    out.afterBuildTicks = (scale) => logTicks(scale, axis);
    out.ticks.callback = (value) => SIGNIFICANT.format(value);
  } else {
    out.grace = "5%";
  }
  return out;
}

// A legend entry's sample: its line (dash as drawn) and its marker, in an inline SVG.
function swatch(entry, lines) {
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 28 14");
  svg.setAttribute("width", "28");
  svg.setAttribute("height", "14");
  svg.setAttribute("aria-hidden", "true");
  const add = (tag, attrs) => {
    const el = document.createElementNS(NS, tag);
    Object.entries(attrs).forEach(([k, v]) => el.setAttribute(k, String(v)));
    svg.appendChild(el);
  };
  if (lines) {
    add("line", { x1: 1, y1: 7, x2: 27, y2: 7, stroke: entry.colour, "stroke-width": 2,
                  "stroke-dasharray": (entry.dash || []).join(" ") || "none" });
  }
  const open = entry.symbol.endsWith("-open");
  const paint = { fill: open ? "none" : entry.colour, stroke: entry.colour, "stroke-width": 1.5 };
  const base = entry.symbol.replace(/-open$/, "");
  if (base === "square") add("rect", { x: 10, y: 3, width: 8, height: 8, ...paint });
  else if (base === "diamond") add("polygon", { points: "14,2 19,7 14,12 9,7", ...paint });
  else if (base === "triangle") add("polygon", { points: "14,2 19,11 9,11", ...paint });
  else add("circle", { cx: 14, cy: 7, r: lines ? 3 : 4.5, ...paint });
  return svg;
}

function datasets(spec) {
  const lines = spec.kind === "lines";
  return spec.series.map((s) => {
    const open = s.symbol.endsWith("-open");
    return {
      label: s.name,
      data: s.x.map((x, i) => ({ x, y: s.y[i] })),
      showLine: lines,
      borderColor: s.colour,
      backgroundColor: s.colour,
      borderWidth: 2,
      borderDash: s.dash || [],
      pointStyle: POINT_STYLES[s.symbol.replace(/-open$/, "")] || "circle",
      pointRadius: lines ? 3 : 4.5,
      pointHoverRadius: lines ? 5 : 6.5,
      pointBorderWidth: 1.5,
      pointHitRadius: 6,
      pointBackgroundColor: open ? "rgba(0, 0, 0, 0)" : s.colour,
      pointBorderColor: s.colour,
    };
  });
}

// The tooltip as page text (Chart.js's external tooltip): the series, then the point's lines.
function tooltip(box, spec, how) {
  const tip = element("div", "benchbook-chart-tip");
  tip.hidden = true;
  tip.setAttribute("aria-live", "polite");  // a keyboard user's screen reader hears the point it steps to
  box.appendChild(tip);
  return ({ chart, tooltip: t }) => {
    const p = t.opacity && t.dataPoints && t.dataPoints[0];
    if (!p) { tip.hidden = true; return; }
    const s = spec.series[p.datasetIndex];
    tip.replaceChildren(element("strong", "", s.name));
    // its values under their labels (spec.tip), then any line past them (what it rests on)
    const values = s.tips[p.dataIndex] || [];
    values.forEach((v, i) => tip.appendChild(element("div", "", i < spec.tip.length ? `${spec.tip[i]}: ${v}` : v)));
    if (s.links && s.links[p.dataIndex]) {
      tip.appendChild(element("div", "benchbook-chart-tip-hint", `${OPEN[how()]}: open its chapter`));
    }
    tip.hidden = false;
    const frame = box.getBoundingClientRect(), canvas = chart.canvas.getBoundingClientRect();
    const x = canvas.left - frame.left + t.caretX, y = canvas.top - frame.top + t.caretY;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    let left = x + 14, top = y + 14;
    if (left + w > box.clientWidth) left = Math.max(0, x - 14 - w);
    if (top + h > box.clientHeight) top = Math.max(0, y - 14 - h);
    tip.style.left = `${left}px`;
    tip.style.top = `${top}px`;
  };
}

// How a reader reached a point decides the hint for opening its chapter.
const OPEN = { mouse: "click", touch: "tap again", keyboard: "Enter" };

// Points by keyboard: the canvas takes focus; Left and Right step through the points of one
// series, Up and Down move to the next shown series, Home and End jump to its ends, Enter
// opens the point's chapter and Escape hides the values. The values show as the hover's do.
function keyboard(canvas, chart, spec, follow) {
  canvas.tabIndex = 0;
  let at = null;  // [series, point]
  const shown = () => spec.series.map((s, i) => i).filter((i) => chart.isDatasetVisible(i) && spec.series[i].x.length);
  const show = (el) => {
    at = el;
    const active = el ? [{ datasetIndex: el[0], index: el[1] }] : [];
    const p = el && chart.getDatasetMeta(el[0]).data[el[1]];
    chart.setActiveElements(active);
    chart.tooltip.setActiveElements(active, p ? { x: p.x, y: p.y } : { x: 0, y: 0 });
    chart.update("none");
  };
  canvas.addEventListener("keydown", (ev) => {
    const series = shown();
    if (!series.length) return;
    const s = at && series.includes(at[0]) ? at[0] : null;
    const k = series.indexOf(s), n = s === null ? 0 : spec.series[s].x.length;
    let next;
    if (ev.key === "Escape") next = null;
    else if (ev.key === "Enter") { if (at) follow(at); ev.preventDefault(); return; }
    else if (s === null) {
      if (!["ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp", "Home", "End"].includes(ev.key)) return;
      next = [series[0], 0];
    } else if (ev.key === "ArrowRight") next = [s, (at[1] + 1) % n];
    else if (ev.key === "ArrowLeft") next = [s, (at[1] - 1 + n) % n];
    else if (ev.key === "Home") next = [s, 0];
    else if (ev.key === "End") next = [s, n - 1];
    else if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      const t = series[(k + (ev.key === "ArrowDown" ? 1 : series.length - 1)) % series.length];
      next = [t, Math.min(at[1], spec.series[t].x.length - 1)];
    } else return;
    ev.preventDefault();
    show(next);
  });
  canvas.addEventListener("blur", () => show(null));
}

// The legend as buttons (a thumb can hit them; a screen reader hears whether each is shown):
// pressing one hides or shows every series of its group.
function legend(spec, hidden, apply) {
  const list = element("ul", "benchbook-chart-legend");
  list.setAttribute("aria-label", "Series: press one to hide or show it");
  spec.legend.forEach((entry) => {
    const button = element("button");
    button.type = "button";
    button.setAttribute("aria-pressed", "true");
    button.append(swatch(entry, spec.kind === "lines"), element("span", "", entry.name));
    button.addEventListener("click", () => {
      const shown = hidden.has(entry.group);
      if (shown) hidden.delete(entry.group); else hidden.add(entry.group);
      button.setAttribute("aria-pressed", String(shown));
      apply();
    });
    const item = element("li");
    item.appendChild(button);
    list.appendChild(item);
  });
  return list;
}

// One chart: its title, canvas, legend and tooltip; its filters (filter_controls), if any, choose
// which series show, and the count line says how many points are shown; a click on a point that
// links somewhere opens it (on a touch screen the first tap shows its values, the second opens it).
function drawChart(box) {
  const Chart = window.Chart;  // set by chart.umd.js
  const spec = JSON.parse(box.querySelector("script[type='application/json']").textContent);
  let colours = themeColours(box);
  const small = () => box.clientWidth < NARROW;
  if (spec.title) box.appendChild(element("p", "benchbook-chart-title", spec.title));
  const frame = element("div", "benchbook-chart-canvas");
  const canvas = element("canvas");
  canvas.setAttribute("role", "application");  // it takes the arrow keys (keyboard, below)
  canvas.setAttribute("aria-roledescription", "chart");
  canvas.setAttribute("aria-label", `${spec.title || "Chart"}: ${spec.y.label} against ${spec.x.label}. `
                      + "Arrow keys step through the points, Enter opens a point's chapter; "
                      + "the figure and the tables of this section hold the same values");
  frame.appendChild(canvas);
  box.appendChild(frame);
  let touchedAt = 0, armed = null, keyed = false;
  const touched = () => Date.now() - touchedAt < TAP;
  const how = () => (keyed ? "keyboard" : touched() ? "touch" : "mouse");
  canvas.addEventListener("touchstart", () => { touchedAt = Date.now(); keyed = false; }, { passive: true });
  canvas.addEventListener("pointermove", () => { keyed = false; });
  canvas.addEventListener("keydown", () => { keyed = true; }, { capture: true });
  const linkAt = (els) => {
    const el = els && els[0];
    const s = el && spec.series[el.datasetIndex];
    return s && s.links ? [`${el.datasetIndex}:${el.index}`, s.links[el.index]] : [null, null];
  };
  const open = (link) => {
    const url = new URL(link, document.baseURI);
    if (url.protocol === location.protocol) location.href = url.href;  // a page of this site only
  };
  const panel = {  // the plot's own panel, behind the series
    id: "benchbookPanel",
    beforeDraw(chart) {
      const a = chart.chartArea;
      if (!a || colours.panel === "transparent") return;
      chart.ctx.save();
      chart.ctx.fillStyle = colours.panel;
      chart.ctx.fillRect(a.left, a.top, a.right - a.left, a.bottom - a.top);
      chart.ctx.restore();
    },
  };
  const chart = new Chart(canvas, {
    type: "scatter",
    data: { datasets: datasets(spec) },
    plugins: [panel],
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: spec.kind === "lines" ? { mode: "nearest", intersect: false, axis: "xy" }
                                         : { mode: "nearest", intersect: true },
      scales: { x: scaleOptions(spec.x, () => colours, small), y: scaleOptions(spec.y, () => colours, small) },
      plugins: {
        legend: { display: false },
        title: { display: false },
        tooltip: { enabled: false, external: tooltip(box, spec, how) },
      },
      onHover: (ev, els) => { canvas.style.cursor = linkAt(els)[1] ? "pointer" : "default"; },
      onClick: (ev, els) => {
        const [key, link] = linkAt(els);
        if (!link) { armed = null; return; }
        if (touched() && armed !== key) { armed = key; return; }  // a first tap shows the values
        open(link);
      },
    },
  });
  keyboard(canvas, chart, spec, ([s, i]) => {
    const link = linkAt([{ datasetIndex: s, index: i }])[1];
    if (link) open(link);
  });
  const hidden = new Set();
  const wrap = box.closest(".benchbook-interactive");
  const form = wrap && wrap.querySelector("form.benchbook-chart-filters");
  const count = wrap && wrap.querySelector(".benchbook-chart-count");
  const selects = form ? [...form.querySelectorAll("select[data-benchbook-filter]")] : [];
  const apply = () => {
    const want = selects.map((s) => [s.dataset.benchbookFilter, s.value]);
    let shown = 0, all = 0;
    spec.series.forEach((s, i) => {
      const keep = !hidden.has(s.group) && want.every(([k, v]) => !v || (s.filter || {})[k] === v);
      chart.setDatasetVisibility(i, keep);
      all += s.x.length;
      shown += keep ? s.x.length : 0;
    });
    chart.update();
    if (count) {
      count.textContent = shown === all ? `All ${all} points shown.`
        : `${shown} of ${all} points shown.${shown ? "" : " No point matches these choices."}`;
    }
  };
  box.appendChild(legend(spec, hidden, apply));
  if (form) {
    form.addEventListener("change", apply);
    form.addEventListener("submit", (ev) => ev.preventDefault());
  }
  apply();
  // the theme's light/dark switch: read the colours again and redraw
  new MutationObserver(() => { colours = themeColours(box); chart.update("none"); })
    .observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  box.dataset.drawn = "1";
}

// Charts are drawn as they come within about two screens of the window, so Chart.js (0.2 MB)
// is fetched with the first of them, not with the page: a reader who never scrolls near one
// downloads no more than the page, which keeps every page under 2 MB on a phone. The blocks
// show only with JavaScript (html.benchbook-js); a chart that cannot be drawn hides its block.
function charts() {
  const found = document.querySelectorAll("div.benchbook-chart");
  if (!found.length) return;
  document.documentElement.classList.add("benchbook-js");
  let ready = null;
  const draw = async (box) => {
    const block = box.closest(".benchbook-interactive") || box;
    try {
      ready = ready || classicScript(CHARTJS);
      await ready;
      drawChart(box);
    } catch (err) {
      block.classList.add("benchbook-failed");  // the figure above shows the same data
      console.error("benchbook: a chart could not be drawn", err);
    }
  };
  const near = new IntersectionObserver((entries) => {
    entries.filter((e) => e.isIntersecting).forEach((e) => { near.unobserve(e.target); draw(e.target); });
  }, { rootMargin: "1600px 0px" });
  found.forEach((box) => near.observe(box));
}

// Figures load lazily (benchbook.site.picture), as a reader nears them; a printed page needs
// every one, so printing loads them all first.
function figuresForPrint() {
  window.addEventListener("beforeprint", () => {
    document.querySelectorAll('img[loading="lazy"]').forEach((img) => { img.loading = "eager"; });
  });
}

tables();
charts();
figuresForPrint();
})();
