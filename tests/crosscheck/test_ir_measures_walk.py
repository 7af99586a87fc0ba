"""A walk over ir_measures' measure registry: every measure ir_measures names is answered by tierank's
provider, computed by tierank (or, for the ones listed in :data:`NOT_PROVIDED`, by ir_measures' own
provider, each value marked ``TieOblivious``), and its values equal those of ir_measures' own provider for it (pytrec_eval, cwl_eval, msmarco, compat, judged, ...) on a run without
ties, query by query.

Each registry name is tried as ir_measures writes it with a cutoff (10) or recall level (0.3) where
it takes one, ``max_rel=3`` / ``T=3`` where it needs them, and with ``judged_only=True`` and
``rel=2`` where it has those parameters.  The intent-aware and diversity families (``*_IA``,
``alpha_nDCG``, ``NRBP``, ``StRecall``) need subtopic qrels and are walked in
``tests/integrations/test_ir_measures_diversity.py``; ``Accuracy`` needs a run of its own kind.
What tierank does not provide or computes differently is listed with the reason
(:data:`NOT_PROVIDED`, :data:`DIFFERENT`).
"""

from __future__ import annotations

import math
import warnings

import pytest

from realdata import DATA

irm = pytest.importorskip("ir_measures")

#: registry names walked elsewhere or needing other inputs
ELSEWHERE = ("_IA", "alpha", "α", "NRBP", "StRecall", "Accuracy")
#: ir_measures measures tierank does not compute (its provider answers them with ir_measures' own
#: provider's values, marked ``TieOblivious``), and why
NOT_PROVIDED = {"BPM": "the Bejeweled Player Model (Zhang et al. 2017) is not in tierank"}
#: families whose reference provider computes another definition, and why (checked elsewhere)
DIFFERENT = {
    "IPrec": "pytrec_eval bundles trec_eval 9, which reads recall level x as the count "
    "(long)(x N+ + 0.9); tierank is trec_eval 10's lround(x N+) "
    "(tests/crosscheck/test_trec_eval_binary.py checks it against trec_eval 10)",
    "ERR": "gdeval reads query ids as numbers (2024-127266 -> 127266); "
    "tests/crosscheck/test_err_gdeval.py compares ERR with gdeval",
}


def _names() -> list[str]:
    return [n for n in sorted(irm.measures.registry) if not any(k in n for k in ELSEWHERE)]


def variants(cls) -> list:
    """``cls`` as ir_measures writes it: plain, and with judged_only=True and rel=2 where it takes them."""
    sp = cls.SUPPORTED_PARAMS
    base = {k: v for k, v in (("max_rel", 3), ("T", 3.0)) if k in sp}
    at = 10 if "cutoff" in sp else 0.3 if "recall" in sp else None
    out = []
    for extra in ({}, {"judged_only": True}, {"rel": 2}):
        if all(k in sp for k in extra):
            m = cls(**base, **extra)
            out.append(m @ at if at is not None else m)
    return out


@pytest.fixture(scope="module")
def data():
    """The rag24 qrels and candidates, each document scored by its rank (no ties)."""
    qrels: dict = {}
    for line in (DATA / "rag24/qrels.txt").read_text().splitlines():
        f = line.split()
        qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    run: dict = {}
    for line in (DATA / "rag24/candidates.run").read_text().splitlines():
        f = line.split()
        run.setdefault(f[0], {})[f[2]] = 1000.0 - float(f[3])
    return qrels, run


def _reference(m):
    """ir_measures' first provider other than tierank that computes ``m`` (None: none does here)."""
    for name, p in irm.providers.registry.items():
        if name == "tierank":
            continue
        try:
            if p.is_available() and p.supports(m):
                return p
        except Exception:  # a provider that refuses the parameters
            continue
    return None


@pytest.mark.parametrize("name", _names())
def test_every_ir_measures_measure_is_tierank_s_and_agrees_without_ties(data, name):
    from tierank.integrations.ir_measures import TieOblivious, UntieAwareFallback, provider

    qrels, run = data
    checked = 0
    for m in variants(irm.measures.registry[name]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UntieAwareFallback)
            supported = provider.supports(m)
        assert supported, f"{m} falls through to another provider"
        ref = _reference(m)
        if ref is None or m.NAME in DIFFERENT:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UntieAwareFallback)
            ours = {x.query_id: x.value for x in provider.iter_calc([m], qrels, run)}
        # tierank's own values are plain floats; the others say where they come from
        marked = {isinstance(v, TieOblivious) and v.provider == ref.NAME for v in ours.values()}
        assert marked == {name in NOT_PROVIDED}, (m, marked)
        theirs = {x.query_id: x.value for x in ref.iter_calc([m], qrels, run)}
        assert set(ours) == set(theirs), (m, ref.NAME)
        bad = [q for q in ours if not math.isclose(ours[q], theirs[q], abs_tol=1e-9)]
        assert not bad, (m, ref.NAME, [(q, ours[q], theirs[q]) for q in bad[:3]])
        checked += 1
    if name not in DIFFERENT and name not in ("RBP",):
        assert checked, f"{name}: no ir_measures provider to compare with"
