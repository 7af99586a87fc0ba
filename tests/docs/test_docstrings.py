"""The docstrings are written for mkdocstrings, which renders them as Markdown: no Sphinx role
(``:func:`x```, ``:class:`x```, ...) that the API pages would show as text. Cross-references are
written ``[`x`][tierank.module.x]`` (checked by ``mkdocs build --strict``: an unknown target fails the
build); the browser tier checks the rendered pages as well."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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


def _hooks():
    """docs/hooks.py (the MkDocs hooks; not a package module), loaded from its file."""
    import importlib.util

    pytest.importorskip("mkdocs", reason='the docs hooks need mkdocs: pip install -e ".[docs]"')
    pytest.importorskip("griffe", reason='the docs hooks need griffe: pip install -e ".[docs]"')
    path = SRC.parents[1] / "docs" / "hooks.py"
    if not path.is_file():
        pytest.skip("no docs/ beside the sources (an installed package)")
    spec = importlib.util.spec_from_file_location("tierank_docs_hooks", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_doctest_in_running_text_is_fenced_for_the_api_pages():
    """mkdocstrings would render ``>>>`` as three nested quotes and run the output into the
    paragraph; the docs hook fences such blocks as ``pycon`` code.  Doctests under ``Examples``
    (griffe renders them), inside a fence, or in a list section (Attributes, Parameters) are left."""
    fence = _hooks().fence_doctests
    text = "Sum.\n\n>>> 1 + 1\n2\n\nMore text."
    assert fence(text) == "Sum.\n\n```pycon\n>>> 1 + 1\n2\n```\n\nMore text."
    notes = "Sum.\n\nNotes\n-----\nSee:\n\n    >>> f()\n    3\n"
    assert (
        fence(notes) == "Sum.\n\nNotes\n-----\nSee:\n\n    ```pycon\n    >>> f()\n    3\n    ```\n"
    )
    for kept in (
        "Sum.\n\nExamples\n--------\n>>> 1 + 1\n2\n",
        "Sum.\n\n```python\n>>> 1 + 1\n```\n",
        "Sum.\n\nAttributes\n----------\nx\n    The x.\n\n    >>> x\n    1\n",
        "Sum: see >>> in running text.",
    ):
        assert fence(kept) == kept
