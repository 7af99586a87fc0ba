r"""The checks of :mod:`tests.browser.checks` find what they look for: a page made with one of each
defect the docs site once had (an untypeset formula, ``.. math::`` and LaTeX shown as text, a
docstring's doctest read as Attributes rows or as nested quotes, ``2**53`` turned bold, a wide API
table hiding its descriptions at 390 px, a request to another host) fails each of them, and the
same page without the defects passes."""

from __future__ import annotations

import pytest

from .checks import check_page

GOOD = r"""<!doctype html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>t</title>
<style>pre { overflow-x: auto; }</style></head>
<body><article>
<p>An integer in <code>[-2**53, 2**53]</code>, and <strong>bold</strong> (<em>quoted</em>).</p>
<pre><code>\frac{1}{2} and $x$ and &gt;&gt;&gt; 1 + 1 in a code block</code></pre>
<p>The io page's <code>\toprule</code> is a LaTeX table rule, not a formula.</p>
<table><thead><tr><th>Name</th><th>Description</th></tr></thead>
<tbody><tr><td><code>rel</code></td><td>Minimum grade counted relevant.</td></tr></tbody></table>
</article></body></html>"""

BAD = r"""<!doctype html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>t</title>
<style>pre { overflow-x: auto; }</style></head>
<body><article>
<p>.. math:: L_g = 1/b</p>
<p>The result is <code>\max_g L_g</code>, and $x_1 + y$ in prose.</p>
<p><span class="arithmatex">\(x\)</span></p>
<p>An integer in [-2<strong>53, 2</strong>53], the range.</p>
<table><thead><tr><th>Name</th><th>Type</th><th>Description</th></tr></thead>
<tbody><tr><td>&gt;&gt;&gt; EvalSettings(rel=1)  # doctest</td><td>+ELLIPSIS</td><td>x</td></tr></tbody></table>
<blockquote><blockquote><blockquote><p>EvalSettings.of(EvalSettings(rel=2)).rel</p></blockquote></blockquote></blockquote>
<div style="overflow-x: auto"><table style="min-width: 900px"><thead><tr><th>Name</th><th>Type</th>
<th>Description</th><th>Default</th></tr></thead><tbody><tr><td style="width: 400px">samples</td>
<td style="width: 300px">int</td><td>Random tie orderings drawn.</td><td>1000</td></tr></tbody></table></div>
<img src="http://example.invalid/pixel.png" alt="a pixel from another host">
</article></body></html>"""


@pytest.fixture(scope="module")
def pages(served):
    root, base = served
    (root / "checks").mkdir(exist_ok=True)
    for name, html in (("good.html", GOOD), ("bad.html", BAD)):
        (root / "checks" / name).write_text(html, encoding="utf-8")
    return root, base


def test_a_page_without_the_defects_passes(browser, pages):
    root, base = pages
    for viewport in ("desktop", "phone"):
        assert check_page(browser, f"{base}/checks/good.html", root, base, viewport) == []


def test_each_defect_is_found(browser, pages):
    root, base = pages
    found = "\n".join(check_page(browser, f"{base}/checks/bad.html", root, base, "phone"))
    expected = {
        "raw .. math::": "a formula shown as text: '.. math:: L_g",
        "LaTeX in code": r"a formula shown as text: '\\max_g L_g'",
        "$...$ in prose": "a formula shown as text: ', and $x_1 + y$ in prose.'",
        "untypeset formula": "formula not typeset: '\\\\(x\\\\)'",
        "doctest as an Attributes row": "a doctest line outside a code block: '>>> EvalSettings(rel=1)",
        "doctest option in a cell": "a doctest line outside a code block: '+ELLIPSIS'",
        "doctest as nested quotes": "a doctest line outside a code block: 'EvalSettings.of(",
        "stray bold": "stray emphasis (** or * inside a word or an expression): 'ger in [-2[strong]53, 2[/]53]",
        "hidden description": "description of 'samples' outside the window",
        "another host": "request to another host: http://example.invalid/pixel.png",
    }
    missing = [what for what, text in expected.items() if text not in found]
    assert not missing, f"not found: {missing}\nfound:\n{found}"
