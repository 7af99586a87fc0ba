"""The house rules for tierank's layout, checked on the source text (ast; nothing of tierank is imported).

A *room* is a top-level module or subpackage of ``tierank`` (``io``, ``measures``, ``cli``, ...;
``tierank/__init__.py`` is the room ``__init__``).  The rooms sit in layers, low to high::

    errors, extras, version, processes, compute  <  io  <  ties, measures  <  results, evaluate, settings
    <  stream, cluster  <  analysis  <  report  <  integrations, hps  <  cli, examples  <  __init__

``examples`` is data with the helpers that locate it and the script that builds it (which reads
through ``io``): it sits with ``cli``.  The package root
``tierank/__init__.py`` is the top: it re-exports the public API (eagerly or lazily through a
module ``__getattr__``), so no room may import ``tierank`` itself, not even for ``__version__``.
Rooms of one layer may import each other (check (b) keeps them free of circles).

Checks, each printing every violation as ``file:line``:

(a) no room imports a higher one, at module level or inside a function (a lazy import is still an
    arrow).  Imports under ``if TYPE_CHECKING:`` are allowed to point upwards: they exist for the
    type checker only, never run, and cannot create an import-time dependency;
(b) no import circle among modules, from the imports that run when a module is imported
    (module level, class bodies, ``try``/``if`` at module level; not function bodies and not
    ``TYPE_CHECKING`` blocks): strongly connected components of that graph must be single modules;
(c) no private name (one leading underscore; dunders are not private) is imported from another
    room, whether as ``from X import _name``, a private module in the dotted path, or an attribute
    ``mod._name`` of a module imported from another room.  ``TYPE_CHECKING`` imports count here too.

A new room fails :func:`test_every_room_has_a_layer` until it is placed in :data:`LAYERS`.
Imports by string (``importlib.import_module``, registries naming ``"module:Class"``) are not seen:
keep them inside their own room.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "tierank"

LAYERS: list[tuple[str, ...]] = [
    ("errors", "extras", "version", "processes", "compute"),
    ("io",),
    ("ties", "measures"),
    ("results", "evaluate", "settings", "tensor", "provenance"),
    ("stream", "cluster"),
    ("analysis",),
    ("report",),
    ("integrations", "hps", "compat"),
    ("cli", "examples"),  # examples: shipped data and the script that builds it (uses io)
    ("__init__", "__main__"),  # __main__: `python -m tierank`, the command line
]
LAYER = {room: i for i, rooms in enumerate(LAYERS) for room in rooms}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    where: str  # path:line, relative to the repository
    target: str  # the imported tierank module, dotted
    names: tuple[str, ...]  # names taken from it (from-imports); () for ``import X``
    lazy: bool  # inside a function body
    type_only: bool  # under ``if TYPE_CHECKING:``


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _files() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def room(module: str) -> str:
    """``tierank.io.readers`` -> ``io``; ``tierank`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _is_package(module: str) -> bool:
    return _files()[module].name == "__init__.py"


def _existing(dotted: str) -> str:
    """The longest prefix of ``dotted`` that is a module of the package."""
    parts = dotted.split(".")
    while parts and ".".join(parts) not in _files():
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Visitor(ast.NodeVisitor):
    def __init__(self, module: str, rel: str):
        self.module, self.rel = module, rel
        self.imports: list[Import] = []
        self.bound: dict[str, str] = {}  # local name -> tierank module it names
        self.attrs: list[tuple[str, int, str]] = []  # (bound name, line, attribute)
        self._lazy = 0
        self._type_only = 0

    def _add(self, node: ast.stmt, target: str, names: tuple[str, ...] = ()) -> None:
        if target:
            self.imports.append(
                Import(
                    self.module,
                    f"{self.rel}:{node.lineno}",
                    target,
                    names,
                    self._lazy > 0,
                    self._type_only > 0,
                )
            )

    def _function(self, node: ast.AST) -> None:
        self._lazy += 1
        self.generic_visit(node)
        self._lazy -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self._type_only += 1
            for stmt in node.body:
                self.visit(stmt)
            self._type_only -= 1
            for stmt in node.orelse:
                self.visit(stmt)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                target = _existing(alias.name)
                self._add(node, target, ())
                if alias.asname:
                    self.bound[alias.asname] = target
                else:
                    self.bound[PACKAGE] = PACKAGE

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.module.split(".")
            if not _is_package(self.module):
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if not (source == PACKAGE or source.startswith(PACKAGE + ".")):
            return
        plain: list[str] = []
        for alias in node.names:
            sub = f"{source}.{alias.name}"
            if sub in _files():  # ``from pkg import module``
                self._add(node, sub, ())
                self.bound[alias.asname or alias.name] = sub
            else:
                plain.append(alias.name)
        if plain or not node.names:
            self._add(node, _existing(source), tuple(plain))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name):
            self.attrs.append((node.value.id, node.lineno, node.attr))
        self.generic_visit(node)


@functools.cache
def _scan() -> tuple[list[Import], list[tuple[str, str, str]]]:
    """Every tierank import of every module, and every ``mod._private`` attribute across rooms
    (as (module, path:line, text))."""
    imports: list[Import] = []
    private_attrs: list[tuple[str, str, str]] = []
    root = SRC.parent
    for module, path in _files().items():
        rel = path.relative_to(root).as_posix()
        v = _Visitor(module, rel)
        v.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        imports += v.imports
        for name, line, attr in v.attrs:
            target = v.bound.get(name)
            if target and _private(attr) and room(target) != room(module):
                private_attrs.append((module, f"{rel}:{line}", f"{name}.{attr} ({target})"))
    return imports, private_attrs


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _report(title: str, lines: list[str]) -> str:
    text = f"{len(lines)} {title}:\n" + "\n".join(sorted(set(lines)))
    print(text)
    return text


def test_every_room_has_a_layer():
    rooms = {room(m) for m in _files()}
    unplaced = sorted(rooms - set(LAYER))
    assert not unplaced, f"rooms without a layer (add them to LAYERS in {__name__}): {unplaced}"
    assert len(LAYER) == sum(len(r) for r in LAYERS), "a room is listed in two layers"


def test_no_room_imports_a_higher_one():
    imports, _ = _scan()
    bad = [
        f"{i.where}: {room(i.module)} (layer {LAYER[room(i.module)]}) imports {i.target} "
        f"({room(i.target)}, layer {LAYER[room(i.target)]}){' inside a function' if i.lazy else ''}"
        for i in imports
        if not i.type_only and LAYER.get(room(i.target), 0) > LAYER.get(room(i.module), 0)
    ]
    assert not bad, _report("upward imports", bad)


def _sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    out.append(sorted(comp))
    return out


def test_sccs_helper():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": set()}
    assert sorted(_sccs(g)) == [["a", "b", "c"], ["d"], ["e"]]


def test_no_import_circles():
    imports, _ = _scan()
    eager = [i for i in imports if not i.lazy and not i.type_only and i.target != i.module]
    graph: dict[str, set[str]] = {m: set() for m in _files()}
    for i in eager:
        graph[i.module].add(i.target)
    bad = []
    for comp in _sccs(graph):
        if len(comp) > 1:
            members = set(comp)
            arrows = [
                f"    {i.where}: {i.module} -> {i.target}"
                for i in eager
                if i.module in members and i.target in members
            ]
            bad.append(
                f"circle of {len(comp)} modules: {', '.join(comp)}\n"
                + "\n".join(sorted(set(arrows)))
            )
    assert not bad, _report("import circles", bad)


def test_no_private_name_imported_from_another_room():
    imports, private_attrs = _scan()
    bad = []
    for i in imports:
        if room(i.target) == room(i.module):
            continue
        hidden = [n for n in i.names if _private(n)]
        hidden += [p for p in i.target.split(".") if _private(p)]
        if hidden:
            bad.append(f"{i.where}: {i.module} imports {', '.join(hidden)} from {i.target}")
    bad += [f"{where}: {module} uses {text}" for module, where, text in private_attrs]
    assert not bad, _report("private names used across rooms", bad)
