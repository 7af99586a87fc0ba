"""The docstrings are written for mkdocstrings, which renders them as Markdown: no Sphinx role
(``:func:`x```, ``:class:`x```, ...) that the API pages would show as text. Cross-references are
written ``[`x`][tierank.module.x]`` (checked by ``mkdocs build --strict``: an unknown target fails the
build); the browser tier checks the rendered pages as well."""

from __future__ import annotations

import re
from pathlib import Path

import tierank

SRC = Path(tierank.__file__).resolve().parent
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|ref|doc|math):`")


def test_no_sphinx_role_in_the_sources():
    found = [
        f"{path.relative_to(SRC.parent)}:{n}: {line.strip()[:80]}"
        for path in sorted(SRC.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ROLE.search(line)
    ]
    assert not found, (
        f"{len(found)} Sphinx roles (write [`name`][tierank.path.name] or `name`):\n"
        + "\n".join(found[:40])
    )


def test_the_pattern_finds_a_role():
    assert ROLE.search("see :func:`tierank.evaluate`") and ROLE.search(":py:class:`Run`")
    assert ROLE.search("with :math:`R = 0`")
    assert not ROLE.search("see [`evaluate`][tierank.evaluate]")
