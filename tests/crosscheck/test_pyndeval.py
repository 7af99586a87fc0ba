"""Tie-free intent-aware values against pyndeval (ndeval 4.5, the reference of ir_measures' provider).

pyndeval (``pip install pyndeval==0.0.8``, in the ``test`` extra) wraps the TREC Web track's ndeval,
which ir_measures' ``pyndeval`` provider calls for alpha_nDCG, ERR_IA, NRBP, P_IA, AP_IA and StRecall.
Every measure ndeval computes is compared with :func:`tierank.measures.diversity.evaluate_diversity`'s
oblivious value, with ndeval's own cutoffs (5, 10, 20) and parameters (``alpha``, ``beta``,
``relevance_level``; ERR-IA, nERR-IA, P-IA, MAP-IA and strec at ndeval's default alpha 0.5, as
ir_measures invokes them): on the shipped ``tests/data/diversity`` files and on hypothesis-generated
tie-free queries (distinct scores, unjudged documents, relevant documents never retrieved, grades
below ``rel``, subtopics with no relevant document, more than 20 documents retrieved and relevant),
and ``judged_only=True`` against ndeval on the run without its unjudged documents (what ir_measures'
pyndeval provider does).

Only the region where the two agree by design is compared (the module docstring of
:mod:`tierank.measures.diversity` lists the differences):

* cutoffs: ndeval accepts ``@k`` up to 20 only and leaves ``@1`` of ERR-IA / alpha-DCG
  unnormalised; tierank allows any ``k`` and normalises every one the same way.  Only ndeval's
  own cutoffs 5, 10 and 20 are compared.
* a query with no relevant subtopic (``A = 0``): tierank scores 0 for every measure; ndeval's nNRBP
  is 0/0 = NaN there (its other measures are 0).  The test checks that this is the only NaN.
* ties: pyndeval orders tied documents by docid ascending, tierank's oblivious order is trec_eval's
  (docid descending, as ndeval's ``-traditional``); the run with ties is compared after breaking its
  ties in tierank's order (scores replaced by ranks).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import examples
from tierank.evaluate import evaluate_diversity

pyndeval = pytest.importorskip(
    "pyndeval",
    reason="pyndeval is not importable (pip install pyndeval==0.0.8, in the 'test' extra): "
    "the ndeval cross-check is skipped",
)

DATA = Path(__file__).resolve().parents[1] / "data" / "diversity"

#: ndeval's name -> tierank's family
FAMILY = {
    "ERR-IA": "ERR_IA",
    "nERR-IA": "nERR_IA",
    "alpha-DCG": "alpha_DCG",
    "alpha-nDCG": "alpha_nDCG",
    "P-IA": "P_IA",
    "strec": "StRecall",
    "NRBP": "NRBP",
    "nNRBP": "nNRBP",
    "MAP-IA": "AP_IA",
}
#: the families whose value depends on ndeval's alpha (the others use ndeval's default 0.5)
ALPHA = {"alpha-DCG", "alpha-nDCG", "NRBP", "nNRBP"}
CUTOFFS = (5, 10, 20)
NDEVAL = [
    f"{m}@{k}"
    for m in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec")
    for k in CUTOFFS
] + ["NRBP", "nNRBP", "MAP-IA"]


def tierank_name(measure: str, alpha: float = 0.5, beta: float = 0.5, rel: int = 1) -> str:
    """tierank's string form of ndeval's ``measure`` under ndeval's parameters."""
    name, _, k = measure.partition("@")
    params = []
    if name in ALPHA and alpha != 0.5:
        params.append(f"alpha={alpha}")
    if name in ("NRBP", "nNRBP") and beta != 0.5:
        params.append(f"beta={beta}")
    if rel != 1:
        params.append(f"rel={rel}")
    return FAMILY[name] + (f"({','.join(params)})" if params else "") + (f"@{k}" if k else "")


def compare(
    qrels: dict[str, dict[str, dict[str, int]]],
    run: dict[str, dict[str, float]],
    *,
    alpha: float = 0.5,
    beta: float = 0.5,
    rel: int = 1,
) -> int:
    """Assert tierank's oblivious values equal ndeval's on a tie-free run; return the values compared."""
    for docs in run.values():
        assert len(set(docs.values())) == len(docs), "the run must be tie-free"
    nd_qrels = [
        (q, s, d, g)
        for q, docs in qrels.items()
        for d, grades in docs.items()
        for s, g in grades.items()
    ]
    nd_run = [(q, d, s) for q in sorted(run) for d, s in run[q].items()]
    # two invocations, as ir_measures' provider makes them: alpha and beta reach only the families
    # that take them (ndeval's ERR-IA would read its global alpha too; ir_measures passes it 0.5)
    theirs: dict[str, dict[str, float]] = {}
    for group, a, b in (
        ([m for m in NDEVAL if m.partition("@")[0] in ALPHA], alpha, beta),
        ([m for m in NDEVAL if m.partition("@")[0] not in ALPHA], 0.5, 0.5),
    ):
        ev = pyndeval.RelevanceEvaluator(nd_qrels, group, relevance_level=rel, alpha=a, beta=b)
        for q, values in ev.evaluate(nd_run).items():
            theirs.setdefault(q, {}).update(values)
    names = [tierank_name(m, alpha, beta, rel) for m in NDEVAL]
    ours = evaluate_diversity(qrels, run, names)
    assert sorted(theirs) == ours.queries
    compared = 0
    for m, name in zip(NDEVAL, names):
        per = ours.per_query(name)
        for q, values in theirs.items():
            mine, ref = per[q]["oblivious"], values[m]
            if math.isnan(ref):
                # ndeval's nNRBP of a query without relevant subtopic (0/0); tierank scores 0
                assert m == "nNRBP" and not any(
                    g >= rel for d in qrels[q].values() for g in d.values()
                ), (q, m)
                assert mine == 0.0
                continue
            assert mine == pytest.approx(ref, rel=1e-9, abs=1e-12), (q, m, name)
            compared += 1
    return compared


def _read(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if line.strip()]


def shipped_qrels() -> dict[str, dict[str, dict[str, int]]]:
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    for q, s, d, g in _read(DATA / "qrels.txt"):
        qrels.setdefault(q, {}).setdefault(d, {})[s] = int(g)
    return qrels


def shipped_run(name: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for f in _read(DATA / name):
        run.setdefault(f[0], {})[f[2]] = float(f[4])
    return run


@pytest.mark.parametrize(("alpha", "beta", "rel"), [(0.5, 0.5, 1), (0.25, 0.8, 1), (0.5, 0.5, 2)])
def test_shipped_tie_free_run(alpha, beta, rel):
    assert compare(shipped_qrels(), shipped_run("run.txt"), alpha=alpha, beta=beta, rel=rel) > 0


def test_shipped_run_with_ties_in_trec_eval_order():
    """The oblivious value of the run with ties is ndeval's on the run ordered as trec_eval (docid descending)."""
    run = shipped_run("run-ties.txt")
    assert any(len(set(d.values())) < len(d) for d in run.values()), (
        "run-ties.txt has no tie any more"
    )
    ordered = {}
    for q, docs in run.items():
        ranking = sorted(
            sorted(docs, reverse=True), key=lambda d: -docs[d]
        )  # score desc, docid desc
        ordered[q] = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
    ours = evaluate_diversity(shipped_qrels(), run, [tierank_name(m) for m in NDEVAL])
    ref = evaluate_diversity(shipped_qrels(), ordered, [tierank_name(m) for m in NDEVAL])
    for m in NDEVAL:
        assert ours.per_query(tierank_name(m)) and all(
            a["oblivious"] == b["oblivious"]
            for a, b in zip(
                ours.per_query(tierank_name(m)).values(), ref.per_query(tierank_name(m)).values()
            )
        )
    assert compare(shipped_qrels(), ordered) > 0


@st.composite
def tie_free_case(draw):
    """Up to 3 queries: subtopic judgments (grades 0..2, some below rel), a tie-free run up to depth 30."""
    nq = draw(st.integers(1, 3))
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(nq):
        qid = str(100 + qi)
        nsub = draw(st.integers(1, 4))
        ndocs = draw(st.integers(1, 30))
        extra = draw(st.integers(0, 4))  # judged, never retrieved
        density = draw(st.sampled_from([0.2, 0.5, 0.9]))
        docs = [f"D{qi}-{i}" for i in range(ndocs + extra)]
        judged = {}
        for d in docs:
            grades = {}
            for s in range(1, nsub + 1):
                if draw(st.floats(0, 1)) < density:
                    grades[str(s)] = draw(st.sampled_from([0, 1, 1, 2]))
            if grades:
                judged[d] = grades
        if not judged:
            judged[docs[0]] = {"1": 0}
        qrels[qid] = judged
        scores = draw(st.permutations(range(3 * ndocs)))[:ndocs]
        run[qid] = {docs[i]: scores[i] / 7.0 for i in range(ndocs)}
    return qrels, run


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tie_free_case(),
    st.sampled_from([0.5, 0.25, 0.8, 1.0]),
    st.sampled_from([0.5, 0.2, 0.9]),
    st.sampled_from([1, 1, 2]),
)
def test_tie_free_cases(case, alpha, beta, rel):
    qrels, run = case
    compare(qrels, run, alpha=alpha, beta=beta, rel=rel)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tie_free_case())
def test_judged_only_is_ndeval_on_the_judged_documents(case):
    """``judged_only=True`` (ir_measures' parameter; its pyndeval provider drops unjudged documents
    from the run before calling ndeval) equals ndeval on the run without its unjudged documents."""
    qrels, run = case
    judged = {q: {d: s for d, s in docs.items() if d in qrels[q]} for q, docs in run.items()}
    judged = {q: docs for q, docs in judged.items() if docs}
    if not judged:
        return
    names = [m for m in NDEVAL if m.partition("@")[0] not in ("NRBP", "nNRBP", "strec")]
    ours = evaluate_diversity(
        qrels,
        run,
        [
            tierank_name(m).replace("@", "(judged_only=True)@")
            if "@" in m
            else tierank_name(m) + "(judged_only=True)"
            for m in names
        ],
    )
    ref = evaluate_diversity(qrels, judged, [tierank_name(m) for m in names])
    for m in names:
        mine = ours.per_query(
            tierank_name(m).replace("@", "(judged_only=True)@")
            if "@" in m
            else tierank_name(m) + "(judged_only=True)"
        )
        for q, v in ref.per_query(tierank_name(m)).items():
            assert mine[q]["oblivious"] == pytest.approx(v["oblivious"], rel=1e-9, abs=1e-12), (
                q,
                m,
            )
    compare(qrels, judged)
