"""The registry imports a family's module when a name is asked for (``measures.registry``): its index
``MODULES`` is the truth about the family modules, a lookup imports one module, a listing all of
them in ``MODULES``' order, and an index that does not know a name (or is wrong about it) only
costs imports, never a family."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tierank.measures import REGISTRY
from tierank.measures.lazy import MODULES, Registry
from tierank.measures.trec_naming import family_forms


def test_every_entry_of_the_index_is_true():
    """Each module of MODULES registers exactly the names listed under it (its families, their
    aliases, the trec_eval names they declare).  A family module MODULES does not list is no error
    (its names are found by importing every module: a start-up cost, which
    ``benchmarks/bench_startup.py`` can report, not a wrong answer)."""
    REGISTRY.load_all()  # type: ignore[attr-defined]
    declared: dict[str, set[str]] = {m: set() for m in MODULES}
    for name, cls in REGISTRY.items():
        module = cls.__module__.rpartition(".")[2]
        if cls.__module__ != f"tierank.measures.{module}" or module not in MODULES:
            continue  # a module the index does not list
        declared[module].add(name)
        declared[module].update(f.name for f in family_forms(cls))
    assert {m: set(names) for m, names in MODULES.items()} == declared


def test_the_listing_is_in_the_index_order():
    """The indexed modules' families first, in MODULES' order; the others' after them."""
    modules = list(dict.fromkeys(cls.__module__.rpartition(".")[2] for cls in REGISTRY.values()))
    indexed = [m for m in modules if m in MODULES]
    assert indexed == list(MODULES)
    assert modules[: len(indexed)] == indexed


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A package ``fakefam`` of three modules that register into ``fakefam.REG``."""
    pkg = tmp_path / "fakefam"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from tierank.measures.lazy import Registry\n"
        "REG = Registry('fakefam', {'a': ('A', 'a_trec'), 'b': ('B', 'Moved'), 'c': ('C',)})\n"
    )
    for mod, names in {"a": ("A", "Moved"), "b": ("B",), "c": ("C", "Unlisted")}.items():
        body = "".join(f"REG[{n!r}] = type({n!r}, (), {{}})\n" for n in names)
        (pkg / f"{mod}.py").write_text(f"from fakefam import REG\n{textwrap.dedent(body)}")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for m in [m for m in sys.modules if m == "fakefam" or m.startswith("fakefam.")]:
        del sys.modules[m]


def loaded() -> set[str]:
    return {m for m in sys.modules if m.startswith("fakefam.")}


def test_a_name_imports_its_module_only(fake):
    from fakefam import REG

    assert isinstance(REG, Registry) and loaded() == set()
    assert REG["A"].__name__ == "A" and loaded() == {"fakefam.a"}
    assert REG.find("a_trec") and loaded() == {"fakefam.a"}  # a trec_eval name: its module
    assert REG.get("B").__name__ == "B" and loaded() == {"fakefam.a", "fakefam.b"}
    assert not REG.find("nothing") and loaded() == {"fakefam.a", "fakefam.b"}


def test_a_listing_imports_every_module_in_the_index_order(fake):
    from fakefam import REG

    assert REG["C"].__name__ == "C"  # c first
    assert list(REG) == ["A", "Moved", "B", "C", "Unlisted"]  # a, b, c: the index's order
    assert len(REG) == 5 and loaded() == {"fakefam.a", "fakefam.b", "fakefam.c"}


@pytest.mark.parametrize("name", ["Unlisted", "Moved"])
def test_an_index_that_is_wrong_costs_imports_not_families(fake, name):
    from fakefam import REG

    assert name in REG  # not listed / listed under b: every module imported
    assert loaded() == {"fakefam.a", "fakefam.b", "fakefam.c"}
    assert "Nothing" not in REG and REG.get("Nothing") is None
    with pytest.raises(KeyError):
        REG["Nothing"]
