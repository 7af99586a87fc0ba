"""The HTML page kit: self-contained pages, one file, inline CSS, figures embedded, no network needed.

A page is a title and a list of [`Section`][tierank.report.page.Section] s; a section has a heading,
optional paragraphs, figures ([`FigureBlock`][tierank.report.page.FigureBlock]: a matplotlib figure, PNG
bytes or SVG text, embedded as a ``data:image/png;base64`` URI or inline
``<svg>``) and tables ([`Table`][tierank.report.page.Table]: records and a column order; floats are
written with 4 decimals, None and NaN as ``-``).  All text is escaped with
`html.escape`; the page loads no script, style sheet, font or image
from anywhere.  [`render_report`][tierank.report.page.render_report] renders a page; it knows nothing of
tierank's results (the builders in [`tierank.report.html`][tierank.report.html] do).

Examples
--------
>>> page = render_report("Demo", [Section("Numbers", paragraphs=["x < y"],
...                                        tables=[Table([{"name": "a", "v": 0.5, "w": None}])])])
>>> '<td>a</td><td class="num">0.5000</td><td class="num">-</td>' in page and "x &lt; y" in page
True
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np


@dataclass(frozen=True)
class Table:
    """A table of records.

    Attributes
    ----------
    records : sequence of mappings
    columns : sequence of str, optional
        Column order (default: the keys of the first record, then new keys as met).
    caption : str, optional
    labels : mapping of str -> str, optional
        Header text per column (default: the column name).
    formats : mapping of str -> callable, optional
        Per-column formatter (value -> str, escaped afterwards); the default writes
        floats with 4 decimals, None/NaN as ``-``, booleans as yes/no.
    max_rows : int, optional
        Show at most this many rows and say how many were left out.
    row_classes : sequence of str or None, optional
        A CSS class per record (``"flag"`` highlights a row).
    collapsed : bool
        Wrap the table in a closed ``<details>`` element (caption as its summary).
    """

    records: Sequence[Mapping]
    columns: Sequence[str] | None = None
    caption: str | None = None
    labels: Mapping[str, str] | None = None
    formats: Mapping[str, Callable] | None = None
    max_rows: int | None = None
    row_classes: Sequence[str | None] | None = None
    collapsed: bool = False


@dataclass(frozen=True)
class FigureBlock:
    """A figure to embed.

    Attributes
    ----------
    figure : matplotlib Figure, bytes (PNG) or str (SVG text)
    caption : str, optional
    alt : str, optional
        Alternative text (default: the caption): the ``alt`` of a PNG, the ``aria-label`` of an
        inline SVG (``role="img"``).
    format : {"png", "svg"}
        How a matplotlib figure is embedded: base64 PNG (default) or inline SVG.
    """

    figure: object
    caption: str | None = None
    alt: str | None = None
    format: str = "png"


@dataclass(frozen=True)
class Section:
    """A heading with paragraphs, figures and tables (rendered in that order)."""

    heading: str
    paragraphs: Sequence[str] = ()
    tables: Sequence[Table] = ()
    figures: Sequence[FigureBlock] = ()


CSS = """
:root { --fg: #1d1d1f; --muted: #5f6368; --line: #d9dce1; --head: #f3f4f6; --flag: #fff4d6; --accent: #1f5fa8; }
* { box-sizing: border-box; }
body { font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--fg); margin: 0; background: #fff; }
main { max-width: 1080px; margin: 0 auto; padding: 28px 24px 64px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.22em; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
p { margin: 6px 0 10px; }
.meta { color: var(--muted); font-size: 0.9em; }
nav { margin: 10px 0 0; font-size: 0.92em; }
nav a { color: var(--accent); text-decoration: none; margin-right: 14px; }
figure { margin: 14px 0 18px; }
figure img, figure svg { max-width: 100%; height: auto; display: block; border: 1px solid var(--line);
                         border-radius: 4px; }
figcaption, caption, summary { color: var(--muted); font-size: 0.88em; text-align: left; padding: 4px 0; }
summary { cursor: pointer; }
.tablewrap { overflow-x: auto; margin: 10px 0 18px; }
table { border-collapse: collapse; font-size: 0.88em; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { background: var(--head); text-align: left; position: sticky; top: 0; }
td.num { text-align: right; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
tr.flag td { background: var(--flag); }
.more { color: var(--muted); font-size: 0.85em; }
h1, h2, p, nav, figcaption, summary { overflow-wrap: anywhere; }
"""


# --------------------------------------------------------------------------------------------
# rendering


def _is_num(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_)
    )


def format_value(v) -> str:
    """Default cell text: floats with 4 decimals, None/NaN as ``-``, booleans as yes/no.

    Examples
    --------
    >>> [format_value(v) for v in (0.123456, -1e-9, None, float("nan"), 3, True, "a")]
    ['0.1235', '0.0000', '-', '-', '3', 'yes', 'a']
    """
    if v is None:
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        text = f"{v:.4f}"
        return "0.0000" if text == "-0.0000" else text
    return str(v)


def p_value(x) -> str:
    """A p-value: 4 decimals, ``<1e-4`` below that, ``-`` for None/NaN.

    >>> p_value(0.04321), p_value(3e-5), p_value(None)
    ('0.0432', '<1e-4', '-')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "<1e-4" if x < 1e-4 else f"{x:.4f}"


def percent(x) -> str:
    """A share as a percentage with 2 decimals, ``-`` for None/NaN.

    >>> percent(2 / 3), percent(None)
    ('66.67%', '-')
    """
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.2f}%"


def _render_table(t: Table) -> str:
    records = list(t.records)
    cols = (
        list(t.columns)
        if t.columns is not None
        else list(dict.fromkeys(k for r in records for k in r))
    )
    labels = dict(t.labels or {})
    formats = dict(t.formats or {})
    shown = records if t.max_rows is None else records[: max(int(t.max_rows), 0)]
    classes = list(t.row_classes) if t.row_classes is not None else [None] * len(records)
    out = ["<table>"]
    if t.caption and not t.collapsed:
        out.append(f"<caption>{escape(t.caption)}</caption>")
    out.append(
        "<thead><tr>"
        + "".join(f"<th>{escape(str(labels.get(c, c)))}</th>" for c in cols)
        + "</tr></thead><tbody>"
    )
    for i, r in enumerate(shown):
        cls = classes[i] if i < len(classes) else None
        cells = []
        for c in cols:
            v = r.get(c)
            text = formats[c](v) if c in formats else format_value(v)
            num = _is_num(v) or v is None
            cells.append(
                f'<td class="num">{escape(text)}</td>' if num else f"<td>{escape(text)}</td>"
            )
        attr = f' class="{escape(cls)}"' if cls else ""
        out.append(f"<tr{attr}>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    html = '<div class="tablewrap">' + "".join(out)
    if len(shown) < len(records):
        html += f'<p class="more">showing {len(shown)} of {len(records)} rows</p>'
    html += "</div>"
    if t.collapsed:
        html = f"<details><summary>{escape(t.caption or 'table')}</summary>{html}</details>"
    return html


_SVG_DROP = (
    re.compile(r"<\?xml[^>]*\?>\s*"),
    re.compile(r"<!DOCTYPE[^>]*>\s*", re.I),
    re.compile(r"<metadata>.*?</metadata>\s*", re.S),
    re.compile(r'\s+xmlns(:\w+)?="[^"]*"'),
)


def _inline_svg(svg: str) -> str:
    """SVG text made safe to inline: no XML prolog, doctype, metadata or namespace URLs (HTML5 needs none)."""
    for pat in _SVG_DROP:
        svg = pat.sub("", svg)
    return svg.strip()


def _render_figure(f: FigureBlock) -> str:
    fig, alt = f.figure, f.alt if f.alt is not None else (f.caption or "figure")
    if isinstance(fig, (bytes, bytearray)):
        body = f'<img alt="{escape(alt)}" src="data:image/png;base64,{base64.b64encode(bytes(fig)).decode("ascii")}">'
    elif isinstance(fig, str):
        body = _inline_svg(fig)
    else:
        from .plots import figure_bytes

        if f.format == "svg":
            body = _inline_svg(figure_bytes(fig, "svg").decode("utf-8"))
        else:
            data = base64.b64encode(figure_bytes(fig, "png")).decode("ascii")
            body = f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'
    if not body.startswith("<img"):  # inline SVG: an image with the alternative text as its label
        body = re.sub(
            r"<svg\b", lambda m: f'<svg role="img" aria-label="{escape(alt)}"', body, count=1
        )
    cap = f"<figcaption>{escape(f.caption)}</figcaption>" if f.caption else ""
    return f"<figure>{body}{cap}</figure>"


def _anchor(i: int, heading: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")[:40]
    return f"s{i}-{slug}" if slug else f"s{i}"


def made_by() -> str:
    """Which tierank made a page: ``"tierank <version>"`` (`tierank.__version__`)."""
    from ..version import __version__

    return f"tierank {__version__}"


def render_report(title: str, sections: Sequence[Section], *, subtitle: str | None = None) -> str:
    """One self-contained HTML page.

    Parameters
    ----------
    title : str
    sections : sequence of Section
    subtitle : str, optional
        A muted line under the title listing the settings (e.g. the inputs); the page's
        maker, ``tierank <version>`` ([`made_by`][tierank.report.page.made_by]), closes it, and is the page's
        ``generator`` too.

    Returns
    -------
    str
        The page: inline CSS, figures embedded, every text escaped.
    """
    maker = made_by()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="{escape(maker)}">',
        f"<title>{escape(title)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body><main>",
        f"<h1>{escape(title)}</h1>",
    ]
    parts.append(
        f'<p class="meta">{escape(f"{subtitle} · made by {maker}" if subtitle else f"made by {maker}")}</p>'
    )
    anchors = [_anchor(i, s.heading) for i, s in enumerate(sections)]
    if len(sections) > 2:
        parts.append(
            "<nav>"
            + "".join(f'<a href="#{a}">{escape(s.heading)}</a>' for a, s in zip(anchors, sections))
            + "</nav>"
        )
    for a, s in zip(anchors, sections):
        parts.append(f'<section id="{a}"><h2>{escape(s.heading)}</h2>')
        parts += [f"<p>{escape(p)}</p>" for p in s.paragraphs]
        parts += [_render_figure(f) for f in s.figures]
        parts += [_render_table(t) for t in s.tables]
        parts.append("</section>")
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


__all__ = [
    "Table",
    "FigureBlock",
    "Section",
    "render_report",
    "made_by",
    "format_value",
    "percent",
    "p_value",
    "CSS",
]
