"""MkDocs hooks: MathJax served from the site itself, and ``mkdocs build --strict`` strict about real
cross-references only.

Formulas are typeset in the browser by MathJax 3, whose files come from the pinned
``django-static-mathjax`` package (the ``docs`` extra; it ships MathJax's release files and needs no
Django to be read): ``on_files`` adds the one component the pages load (``tex-chtml-full.js``: every
TeX extension inside, so nothing is fetched on demand) and the fonts it asks for, so that the site
makes no request to another host.

A doctest written in a docstring's running text (not under an ``Examples`` heading, which griffe
reads as examples) would be Markdown to mkdocstrings: its ``>>>`` three nested quotes, its output
run into the paragraph.  ``DoctestBlocks`` (a griffe extension, named in mkdocs.yml) fences such
blocks as ``pycon`` code before the docstrings are parsed; the sources keep plain doctests, which
pytest runs.

The Python API pages render docstrings as Markdown, and doctest outputs written in running text
(``[0.2, 1.0]``, ``['P_5', 'map_cut_100']``) look like Markdown reference links to mkdocs-autorefs,
which then warns that no such object exists.  A cross-reference target is a dotted Python name;
warnings about any other text are dropped here.  Every other warning, including an unresolved
dotted name, still fails the strict build.
"""

from __future__ import annotations

import logging
import re
from importlib import resources

import griffe
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

#: where the site serves MathJax (mkdocs.yml's extra_javascript names its component there)
MATHJAX_DIR = "javascripts/mathjax"
#: the files of MathJax's ``es5`` folder that the site serves: the component and its CommonHTML fonts
MATHJAX_FILES = ("tex-chtml-full.js", "output/chtml/fonts/woff-v2/*.woff")

_TARGET = re.compile(r"Could not find cross-reference target '(.*)'$", re.S)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class _NotAName(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        m = _TARGET.search(record.getMessage())
        return m is None or bool(_NAME.fullmatch(m.group(1)))


def on_config(config):
    """Filter the loggers of mkdocs-autorefs (imported by now: the plugins are loaded)."""
    names = [n for n in logging.root.manager.loggerDict if n.startswith("mkdocs.plugins.mkdocs_autorefs")]
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _NotAName) for f in logger.filters):
            logger.addFilter(_NotAName())
    return config


def _mathjax_es5():
    try:
        root = resources.files("mathjax") / "static" / "mathjax" / "es5"
    except ModuleNotFoundError:
        root = None
    if root is None or not root.is_dir():
        raise PluginError(
            "the docs typeset formulas with MathJax from the django-static-mathjax package, which is "
            'not installed: pip install -e ".[docs]"'
        )
    return root


def on_files(files, config):
    """Add MathJax's component and fonts (:data:`MATHJAX_FILES`) to the site under :data:`MATHJAX_DIR`."""
    from pathlib import Path

    es5 = Path(str(_mathjax_es5()))
    for pattern in MATHJAX_FILES:
        found = sorted(es5.glob(pattern))
        if not found:
            raise PluginError(f"MathJax's {pattern} is missing from {es5}")
        for path in found:
            uri = f"{MATHJAX_DIR}/{path.relative_to(es5).as_posix()}"
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


#: the docstring sections whose text is free Markdown: a doctest there is fenced (under
#: ``Examples`` griffe renders doctests itself; in a list section a block would be read as items)
_FREE_SECTIONS = (None, "notes")


def fence_doctests(text: str) -> str:
    """``text`` with every doctest block of a free-text section fenced as ``pycon`` code
    (tests/docs/test_docstrings.py shows it)."""
    lines = text.split("\n")
    out: list[str] = []
    section, fenced, i = None, False, 0
    while i < len(lines):
        line = lines[i]
        body = line.lstrip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if body.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line == body and body and len(nxt) >= 3 and set(nxt) == {"-"}:
            section = body.lower()
        elif (
            not fenced
            and section in _FREE_SECTIONS
            and body.startswith(">>>")
            and (not out or not out[-1].strip())
        ):
            indent = line[: len(line) - len(body)]
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            out += [f"{indent}```pycon", *lines[i:j], f"{indent}```"]
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Fence the doctests of docstrings' running text (``fence_doctests``) before griffe parses them."""

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        seen: set[int] = set()
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = fence_doctests(obj.docstring.value)
            stack += [m for m in obj.members.values() if not m.is_alias]
