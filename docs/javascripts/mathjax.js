// MathJax 3 (served from this site: docs/hooks.py copies it from the pinned django-static-mathjax
// package; no request to another host). pymdownx.arithmatex (generic mode) wraps every formula of the
// pages and docstrings in an element of class "arithmatex" holding \( ... \) or \[ ... \]; only
// those are typeset.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
    // the context menu's accessibility extensions would be loaded on demand: keep the page self-contained
    enableMenu: false,
  },
};
