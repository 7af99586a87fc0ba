"""The lazy registry of measure families (`tierank.measures.registry.REGISTRY` is one), filled as
their modules are imported: a name (a family, an alias, a trec_eval name a family declares)
imports the one module that registers it, so that a command evaluating a few families imports
those only; anything that lists the families (iterating the registry, its size) imports them all
first.

`MODULES` says which module registers which names.  It only saves imports: a name it does not know
imports every module of the package (those it lists, then the others), so a new family's module
needs no line here to be found; listing it only spares that start-up cost
(``benchmarks/bench_startup.py`` names the family modules it does not list).  Once every module is
imported, the families are listed in the order of `MODULES` (each module's in its order of
registration), then those of the modules it does not list, whatever imported them first.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

#: each family module of ``tierank.measures`` and the names it registers: its families (and their
#: aliases), then the trec_eval names they declare (``FamilyNames.trec_eval``, ``trec_eval_cut``)
MODULES: dict[str, tuple[str, ...]] = {
    "linear": (
        *("P", "R", "F1", "Hits", "Judged", "Rprec", "RBP", "R_cap", "nDCG"),
        *("recall", "rbp", "ndcg", "ndcg_cut"),
    ),
    "ap": ("AP", "map", "map_cut"),
    "counts": (
        *("NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet"),
        *("SetP", "SetR", "SetF", "SetAP"),
        *("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"),
        *("set_P", "set_recall", "set_F", "set_map"),
    ),
    "bpref": ("Bpref", "bpref"),
    "cwl": ("SDCG", "INSQ", "NERR8", "NERR9", "NERR10", "NERR11", "INST"),
    "diversity": (
        *("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP"),
        *("P_IA", "AP_IA", "MAP_IA", "StRecall"),
    ),
    "err": ("ERR",),
    "gmap": ("GMAP", "gm_map"),
    "gmbpref": ("GMBpref", "gm_bpref"),
    "infap": ("infAP",),
    "iprec": ("IPrec", "IPrecAvg", "iprec_at_recall", "11pt_avg"),
    "pairs": ("Accuracy", "Compat"),
    "rank": ("RR", "Success", "recip_rank", "success"),
    "relstring": ("RelString", "relstring"),
    "trec_extra": (
        *("RelP", "SetRelP", "RprecMult", "Utility"),
        *("relative_P", "set_relative_P", "Rprec_mult", "utility"),
    ),
    "trec_gain": ("G", "nDCG_rel", "ndcg_rel"),
    "trec_gain_sums": ("BinG", "RnDCG", "binG", "Rndcg"),
    "unjudged": ("Unj", "RBP_resid", "unj", "rbp_resid"),
}


def _initializing(module: Any) -> bool:
    """Whether ``module`` is being imported (its families still registering)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


class Registry(dict):
    """``{family or alias name: Measure class}`` whose lookups import the module of a name
    (`MODULES`) and whose listings import every module first."""

    def __init__(self, package: str, modules: dict[str, tuple[str, ...]]) -> None:
        super().__init__()
        self._package = package
        self._modules = tuple(modules)
        self._where = {name: m for m, names in modules.items() for name in names}
        self._all = False
        self._loading = False
        self._lock = threading.RLock()

    def find(self, name: str) -> bool:
        """Import the module that registers ``name`` (a family, an alias or a trec_eval name of
        `MODULES`); False where `MODULES` does not know the name."""
        if dict.__contains__(self, name):
            return True
        module = self._where.get(name)
        if module is None:
            return False
        importlib.import_module(f"{self._package}.{module}")
        return True

    def _lookup(self, name: str) -> None:
        """Register family or alias ``name`` if any module does (every module imported where
        `MODULES` does not know it, or where its module does not register it after all)."""
        if dict.__contains__(self, name):
            return
        if not self.find(name):
            self.load_all()
        elif not dict.__contains__(self, name):
            module = self._where[name]
            if not _initializing(importlib.import_module(f"{self._package}.{module}")):
                self.load_all()

    def load_all(self) -> None:
        """Import every family module; the families then in the order of `MODULES`."""
        if self._all:
            return
        with self._lock:
            if self._all or self._loading:  # done, or a module of this import asks again
                return
            self._loading = True
            try:
                for module in self._modules:
                    importlib.import_module(f"{self._package}.{module}")
                for module in self._unlisted():  # a family module MODULES does not name yet
                    importlib.import_module(f"{self._package}.{module}")
                rank = {f"{self._package}.{m}": i for i, m in enumerate(self._modules)}
                items = sorted(  # stable: each module's families in their order of registration
                    dict.items(self), key=lambda kv: rank.get(kv[1].__module__, len(rank))
                )
                dict.clear(self)
                dict.update(self, items)
                self._all = True
            finally:
                self._loading = False

    def _unlisted(self) -> list[str]:
        """The package's modules that `MODULES` does not name (a new family's module among them),
        in name order."""
        import pkgutil

        package = importlib.import_module(self._package)
        listed = set(self._modules)
        return sorted(
            m.name
            for m in pkgutil.iter_modules(getattr(package, "__path__", []))
            if m.name not in listed and not m.name.startswith("_")
        )

    def loaded(self) -> list[Any]:
        """The classes registered so far, without importing anything."""
        return list(dict.values(self))

    def __missing__(self, name: str) -> Any:
        self._lookup(name)
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        self._lookup(name)
        return dict.get(self, name, default)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self._lookup(name)
        return dict.__contains__(self, name)

    def __iter__(self):
        self.load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self.load_all()
        return dict.__len__(self)

    def keys(self):
        self.load_all()
        return dict.keys(self)

    def values(self):
        self.load_all()
        return dict.values(self)

    def items(self):
        self.load_all()
        return dict.items(self)

    def __repr__(self) -> str:
        self.load_all()
        return dict.__repr__(self)
