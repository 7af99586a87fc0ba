"""MkDocs hook: keep ``mkdocs build --strict`` strict about real cross-references only.

The Python API pages render docstrings as Markdown, and doctest outputs written in running text
(``[0.2, 1.0]``, ``['P_5', 'map_cut_100']``) look like Markdown reference links to mkdocs-autorefs,
which then warns that no such object exists.  A cross-reference target is a dotted Python name;
warnings about any other text are dropped here.  Every other warning, including an unresolved
dotted name, still fails the strict build.
"""

from __future__ import annotations

import logging
import re

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
