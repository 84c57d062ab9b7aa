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
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", bind);
  else bind();
})();
