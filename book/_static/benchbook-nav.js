// Run `fn` once the page's elements are there (now, if they already are); every part below uses it.
function benchbookReady(fn) {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
  else fn();
}

// Phone navigation for pydata-sphinx-theme 0.17 under sphinx-book-theme 1.3.
// The theme binds its sidebar dialogs to the *first* .primary-toggle and .secondary-toggle
// only (pydata-sphinx-theme issue 2451, 2026-07-22); sphinx-book-theme renders a second,
// visible pair in the article header, which then does nothing below the 960 px breakpoint.
// Each later button forwards its click to the first one there. Wider screens keep the book
// theme's own behaviour (collapse the sidebar). Remove when the theme is fixed.
(function () {
  var narrow = window.matchMedia("(max-width: 959.98px)");
  function bind() {
    ["primary-toggle", "secondary-toggle"].forEach(function (name) {
      var buttons = document.querySelectorAll("." + name);
      for (var i = 1; i < buttons.length; i++) {
        buttons[i].addEventListener("click", function (event) {
          if (!narrow.matches) return;
          event.preventDefault();
          event.stopImmediatePropagation();
          buttons[0].click();
        }, true);
      }
    });
  }
  benchbookReady(bind);
})();

// Phone first: below 600 px the introduction of a page with key results (the paragraphs right
// after its title) is cut to a few lines (benchbook.css), with a button that shows it whole, so
// the key results come within the first two screens. Without JavaScript the text is whole.
(function () {
  var phone = window.matchMedia("(max-width: 600px)");
  function shorten() {
    var title = document.querySelector("article.bd-article section > h1");
    var section = title && title.parentElement;
    if (!section || !phone.matches || !document.querySelector(".benchbook-key-results")) return;
    var intro = [];
    for (var el = title.nextElementSibling; el && el.tagName === "P"; el = el.nextElementSibling) {
      intro.push(el);
    }
    if (!intro.length || intro.reduce(function (h, p) { return h + p.offsetHeight; }, 0) < 160) return;
    intro.forEach(function (p) { p.classList.add("benchbook-intro"); });
    var button = document.createElement("button");
    button.type = "button";
    button.className = "benchbook-intro-toggle";
    button.setAttribute("aria-expanded", "false");
    button.textContent = "Read the whole introduction";
    button.addEventListener("click", function () {
      var open = section.classList.toggle("benchbook-intro-short") === false;
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Shorten the introduction" : "Read the whole introduction";
    });
    intro[intro.length - 1].after(button);
    section.classList.add("benchbook-intro-short");
  }
  benchbookReady(shorten);
})();

// Print: open every fold before printing and close again the ones that were closed after, for
// browsers whose print stylesheet cannot open them (benchbook.css opens them where it can).
(function () {
  var opened = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (d) { d.open = true; opened.push(d); });
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (d) { d.open = false; });
    opened = [];
  });
})();

// Phone outline and menu: a tap on a link inside the drawer closes the drawer, so the reader
// sees the section they chose instead of the drawer over most of the screen. (The theme closes
// it only on a tap outside.)
(function () {
  function bind() {
    ["pst-primary-sidebar-modal", "pst-secondary-sidebar-modal"].forEach(function (id) {
      var drawer = document.getElementById(id);
      if (!drawer) return;
      drawer.addEventListener("click", function (event) {
        var link = event.target.closest("a[href]");
        if (link && drawer.open) drawer.close();
      });
    });
  }
  benchbookReady(bind);
})();

// A table wider than its box scrolls sideways inside the box (benchbook.css). Such a box is
// made reachable with the keyboard, to scroll it with the arrow keys, and named for screen
// readers by its table's caption (WCAG 2.1.1; axe-core's scrollable-region-focusable).
(function () {
  function reachable() {
    document.querySelectorAll("div.cell_output, div.admonition").forEach(function (box) {
      var overflow = getComputedStyle(box).overflowX;
      if (!box.querySelector("table.benchbook-table") || box.hasAttribute("tabindex")) return;
      if ((overflow !== "auto" && overflow !== "scroll") || box.scrollWidth <= box.clientWidth + 1) return;
      var name = box.querySelector("caption, summary, .admonition-title");
      box.tabIndex = 0;
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", (name ? name.textContent.trim() + ": " : "") + "table, scrolls sideways");
    });
  }
  function watch() {
    reachable();
    // a box can start to scroll after the page has loaded (a ledger's DataTables layout comes
    // when it nears the screen, a late font widens a table): look again whenever a table resizes
    if (!("ResizeObserver" in window)) return;
    var seen = new ResizeObserver(reachable);
    document.querySelectorAll("div.cell_output table.benchbook-table, div.admonition table.benchbook-table")
      .forEach(function (table) { seen.observe(table); });
  }
  if (document.readyState === "complete") watch();
  else window.addEventListener("load", watch);
  window.addEventListener("resize", reachable);
})();

// A raised 'ᵃ' after a number or phrase glued into the prose (myst-nb's span.pasted-text) is
// held there by a word joiner (benchbook.study.marks.marked_html), which a narrow column that
// breaks words anywhere can still break at. Here the value's last word and the mark share a
// no-wrap span, as a table cell's do, so the mark never stands on a line of its own.
(function () {
  function hold() {
    document.querySelectorAll(".benchbook-assumed-mark").forEach(function (mark) {
      if (mark.closest(".benchbook-marked")) return;
      var joiner = mark.previousSibling, value = joiner && joiner.previousSibling;
      if (!joiner || joiner.nodeType !== 3 || joiner.textContent !== "\u2060") return;
      if (!value || value.nodeType !== 1 || !value.classList.contains("pasted-text")) return;
      var last = value.lastChild;
      if (!last || last.nodeType !== 3) return;
      var word = last.splitText(Math.max(0, last.textContent.search(/\S+\s*$/)));
      var span = document.createElement("span");
      span.className = "benchbook-marked";
      value.insertBefore(span, word);
      span.appendChild(word);
      span.appendChild(mark);
      joiner.remove();
    });
  }
  benchbookReady(hold);
})();
