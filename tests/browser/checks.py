r"""What the browser tier checks on every page, at every viewport.

:func:`check_page` opens a URL in a fresh page of the given size and returns the list of problems
found (empty: the page passed):

* no console error and no uncaught exception (requests to other hosts are aborted, and their
  failures are not the page's: the checks run offline);
* no page-level horizontal overflow: ``document.scrollingElement.scrollWidth <= innerWidth``
  (a wide table scrolls inside its own container);
* every ``<img>`` decoded (``naturalWidth > 0``, lazy images loaded first);
* every link to this server resolves: the file exists (a folder: its ``index.html``), and the
  ``#id`` exists in it (in-page anchors are checked in the live page);
* every ``<img>`` has alt text, and every figure's inline ``<svg>`` a label (``aria-label``,
  ``aria-labelledby`` or a ``<title>``);
* no request to another host (fonts, scripts, APIs): a page works offline and tells no third party
  who reads it;
* no clipped table: at the desktop width every table of the documentation fits the box it sits in;
  at any width (a report's tables at every width) a table wider than its box can be scrolled there
  (its box scrolls, it is not cut);
* no Sphinx role left as text (``:func:`x```): docstrings are rendered as Markdown;
* every formula typeset: each ``.arithmatex`` element (``$...$`` and ``$$...$$`` in the pages and
  docstrings, pymdownx.arithmatex) holds a MathJax rendering of nonzero size and no TeX error; no
  formula left as text: no ``.. math::`` and no ``$...$`` in prose, and no LaTeX command
  (``\frac``, ``\sum``, ...) outside a code block;
* no doctest outside a code block: no ``>>>``, ``# doctest:`` or ``Traceback`` line in a table cell
  (a docstring's example read as an Attributes row) and no ``>>>`` turned into three nested quotes;
* no stray emphasis: no bold or italic run glued to a letter or digit on either side, which is what
  ``**`` or ``*`` inside a word or an expression (``2**53``) turns into;
* every description visible: at every width, each cell of a table's ``Description`` column (the API
  pages' parameter and attribute tables) lies inside the window, not past its right edge.
"""

from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}

#: LaTeX commands that the formulas of the docs use: seen as text outside a code block, a formula
#: was not typeset
LATEX_COMMANDS = (
    "frac sum prod bar rho lceil rceil lfloor rfloor le ge max min binom mathrm Delta cdot qquad quad "
    "begin big Big text in"
).split()

_PROBE = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  const imgs = [...document.images];
  for (const i of imgs) { i.loading = "eager"; }
  const decoded = await Promise.all(imgs.map(i => i.decode().then(() => i.naturalWidth, () => 0)));
  const se = document.scrollingElement;
  const wide = [...document.body.querySelectorAll("*")].filter(e => {
      const r = e.getBoundingClientRect(); return r.right > innerWidth + 1 && r.width > 0;
  }).concat([...document.body.querySelectorAll("p, h1, h2, h3, li, figcaption, nav, td")].filter(e =>
      e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === "visible"))
    .filter(e => !e.closest(".tablewrap, .md-typeset__scrollwrap, pre, .highlight, .md-sidebar, .md-nav, .md-search, .md-header, .md-tabs, [hidden]"))
    .slice(0, 5).map(e => e.tagName.toLowerCase() + (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : "") + ": " + (e.textContent || "").trim().slice(0, 60));
  const tables = [...document.querySelectorAll("table")].filter(t => t.getBoundingClientRect().width > 0).map(t => {
      let box = t.parentElement;
      while (box && box !== document.body && getComputedStyle(box).display.startsWith("inline")) box = box.parentElement;
      const scroller = t.closest(".md-typeset__scrollwrap, .tablewrap, .md-typeset__table");
      const scrolls = [box, scroller].some(b => b && ["auto", "scroll"].includes(getComputedStyle(b).overflowX));
      return {width: Math.round(t.getBoundingClientRect().width), box: box ? box.clientWidth : 0, scrolls: scrolls,
              head: (t.querySelector("th, td") || t).textContent.trim().slice(0, 40)};
  });
  const maths = [...document.querySelectorAll(".arithmatex")].map(e => {
      const c = e.querySelector("mjx-container"); const r = c ? c.getBoundingClientRect() : null;
      return {text: e.textContent.trim().slice(0, 60), typeset: !!c && r.width > 0 && r.height > 0,
              error: !!e.querySelector("mjx-merror, [data-mjx-error]")};
  });
  const texts = []; const walk = document.createTreeWalker(document.querySelector("article") || document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const p = n.parentElement;
      if (!p || p.closest("pre, script, style, mjx-container, .arithmatex, [hidden]") || !n.textContent.trim()) continue;
      texts.push({text: n.textContent, code: !!p.closest("code, kbd, samp"), cell: !!p.closest("td, th"),
                  quoted: !!p.closest("blockquote blockquote blockquote")});
  }
  const glued = [...document.querySelectorAll("article strong, article em, article b, article i")].filter(e => {
      if (e.closest("pre, code, mjx-container") || e.matches("[class*=twemoji], .md-icon, i[class]")) return false;
      const before = e.previousSibling, after = e.nextSibling;
      const b = before && before.nodeType === 3 ? before.textContent.slice(-1) : "";
      const a = after && after.nodeType === 3 ? after.textContent.slice(0, 1) : "";
      return /[A-Za-z0-9]/.test(b) || /[A-Za-z0-9]/.test(a);
  }).map(e => (e.previousSibling ? e.previousSibling.textContent.slice(-10) : "") + "[" + e.tagName.toLowerCase() + "]" +
              e.textContent.slice(0, 30) + "[/]" + (e.nextSibling ? e.nextSibling.textContent.slice(0, 10) : ""));
  const hidden = [];
  for (const t of document.querySelectorAll("table")) {
      if (t.getBoundingClientRect().width === 0) continue;
      const heads = [...t.querySelectorAll("thead th")].map(h => h.textContent.trim());
      const col = heads.indexOf("Description");
      if (col < 0) continue;
      for (const row of t.querySelectorAll("tbody tr")) {
          const cell = row.children[col]; if (!cell) continue;
          const r = cell.getBoundingClientRect();
          if (r.width === 0 || r.left < -1 || r.right > innerWidth + 1) {
              hidden.push({left: Math.round(r.left), right: Math.round(r.right), width: Math.round(r.width),
                           name: row.children[0].textContent.trim().slice(0, 40)});
          }
      }
  }
  return {
    maths: maths, texts: texts, glued: glued.slice(0, 5), hiddenDescriptions: hidden,
    scrollWidth: se.scrollWidth, innerWidth: innerWidth, wide: wide, tables: tables,
    roles: (document.body.innerText.match(/:(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj):`?[A-Za-z0-9_.~]+`?/g) || []).slice(0, 5),
    images: imgs.map((i, k) => ({src: (i.getAttribute("src") || "").slice(0, 80), natural: decoded[k],
                                 alt: i.getAttribute("alt")})),
    svgs: [...document.querySelectorAll("figure svg")].map(s => ({
        label: s.getAttribute("aria-label") || s.getAttribute("aria-labelledby") ||
               (s.querySelector(":scope > title") ? s.querySelector(":scope > title").textContent : ""),
        hidden: s.getAttribute("aria-hidden") === "true"})),
    links: [...document.querySelectorAll("a[href]")].map(a => ({raw: a.getAttribute("href"), url: a.href})),
    ids: [...document.querySelectorAll("[id]")].map(e => e.id)
         .concat([...document.querySelectorAll("a[name]")].map(e => e.getAttribute("name"))),
  };
}"""


@cache
def _ids_of(path: Path) -> frozenset:
    text = path.read_text(encoding="utf-8", errors="replace")
    return frozenset(
        html.unescape(m) for m in re.findall(r"""\s(?:id|name)=["']?([^"'\s>]+)""", text)
    )


def _target_file(root: Path, url_path: str) -> Path:
    p = root / unquote(url_path).lstrip("/")
    return p / "index.html" if url_path.endswith("/") or p.is_dir() else p


def check_page(
    browser, url: str, root: Path, base: str, viewport: str, tables_fit: bool = True
) -> list[str]:
    """The problems of the page at ``url`` (served from ``root`` at ``base``) at ``viewport``;
    ``tables_fit`` False: a table may be wider than its box at the desktop width too, where its box
    scrolls (a report's tables have as many columns as the data)."""
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    problems: list[str] = []
    external: list[str] = []

    def route(r):
        if r.request.url.startswith(base) or r.request.url.startswith("data:"):
            r.continue_()
        else:
            external.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()

    def on_console(msg):
        if msg.type != "error":
            return
        where = (msg.location or {}).get("url", "")
        if "Failed to load resource" in msg.text and where and not where.startswith(base):
            return  # a request to another host, aborted: offline, not the page's fault
        if any(u in msg.text for u in external):
            return
        problems.append(f"console error: {msg.text} ({where})")

    page.on("console", on_console)
    page.on("pageerror", lambda exc: problems.append(f"uncaught exception: {exc}"))
    page.on(
        "requestfailed",
        lambda req: (
            problems.append(f"request failed: {req.url} ({req.failure})")
            if req.url.startswith(base)
            else None
        ),
    )
    page.on(
        "response",
        lambda resp: (
            problems.append(f"HTTP {resp.status}: {resp.url}")
            if resp.url.startswith(base) and resp.status >= 400
            else None
        ),
    )
    try:
        page.goto(url, wait_until="load")
        page.wait_for_timeout(150)  # late console errors of scripts run on load
        info = page.evaluate(_PROBE)
    finally:
        context.close()
    for url_ in dict.fromkeys(external):
        problems.append(f"request to another host: {url_}")
    for k, t in enumerate(info["tables"]):
        must_fit = tables_fit and viewport == "desktop"
        if t["width"] > t["box"] + 1 and (must_fit or not t["scrolls"]):
            problems.append(
                f"table {k + 1} ({t['head']!r}...) clipped: {t['width']}px wide in a {t['box']}px box"
                + ("" if t["scrolls"] else " that does not scroll")
            )
    for role in info["roles"]:
        problems.append(f"a Sphinx role shown as text: {role}")
    problems += _text_problems(info)
    if info["scrollWidth"] > info["innerWidth"]:
        problems.append(
            f"horizontal overflow: the page is {info['scrollWidth']}px wide in a "
            f"{info['innerWidth']}px window (wider than the window: {info['wide']})"
        )
    for img in info["images"]:
        if not img["natural"]:
            problems.append(f"image not decoded: {img['src']}")
        if not (img["alt"] or "").strip():
            problems.append(f"image without alt text: {img['src']}")
    for k, svg in enumerate(info["svgs"]):
        if not svg["hidden"] and not (svg["label"] or "").strip():
            problems.append(f"figure {k + 1}: inline svg without a label (aria-label or <title>)")
    here = urlsplit(url)
    ids = set(info["ids"])
    for link in info["links"]:
        target = urlsplit(link["url"])
        if target.scheme not in ("http", "https") or f"{target.scheme}://{target.netloc}" != base:
            continue  # another host (not checked offline), mailto:, data:
        frag = unquote(target.fragment)
        if target.path == here.path:
            if frag and frag not in ids:
                problems.append(f"in-page link {link['raw']!r}: no element with id {frag!r}")
            continue
        f = _target_file(root, target.path)
        if not f.is_file():
            problems.append(f"link {link['raw']!r}: {target.path} does not exist")
        elif frag and f.suffix == ".html" and frag not in _ids_of(f):
            problems.append(f"link {link['raw']!r}: {target.path} has no id {frag!r}")
    return problems


_LATEX = re.compile(r"\\(?:" + "|".join(LATEX_COMMANDS) + r")(?![A-Za-z])")
_DOLLARS = re.compile(r"\$[^\s$][^$]*?(?<=[^\s$])\$")
_DOCTEST = re.compile(r"^\s*>>>|#\s*doctest:|\+ELLIPSIS|Traceback \(most recent call last\)")


def _text_problems(info: dict) -> list[str]:
    """Formulas not typeset or left as text, doctests outside code blocks, stray emphasis, and
    descriptions pushed out of the window (the probe's findings, a few of each)."""
    found: list[str] = []
    for m in info["maths"]:
        if m["error"]:
            found.append(f"formula with a TeX error: {m['text']!r}")
        elif not m["typeset"]:
            found.append(f"formula not typeset: {m['text']!r}")
    raw, doctest = [], []
    for t in info["texts"]:
        text = t["text"]
        prose = not t["code"]
        if _LATEX.search(text) or (prose and (".. math::" in text or _DOLLARS.search(text))):
            raw.append(text.strip()[:60])
        if (t["cell"] and _DOCTEST.search(text)) or t["quoted"]:
            doctest.append(text.strip()[:60])
    found += [f"a formula shown as text: {x!r}" for x in raw[:5]]
    found += [f"a doctest line outside a code block: {x!r}" for x in doctest[:5]]
    found += [
        f"stray emphasis (** or * inside a word or an expression): {g!r}" for g in info["glued"]
    ]
    for h in info["hiddenDescriptions"][:5]:
        found.append(
            f"description of {h['name']!r} outside the window ({h['left']}..{h['right']}px, "
            f"{h['width']}px wide): the table hides it"
        )
    return found
