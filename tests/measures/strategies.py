"""Hypothesis strategies shared by the measure tests: small multi-query runs with heavy ties.

Scores come from four values, so tie groups are frequent; grades include unjudged
documents (None), judged non-relevant ones (0, -1) and graded relevance; some
relevant documents are never retrieved (``extra``), some queries have none.
"""

from __future__ import annotations

from hypothesis import strategies as st

DOCIDS = ["d0", "d1", "d2", "D3", "d10", "a", "zz", "d9", "b_1", "B"]


@st.composite
def query(draw, max_docs=7):
    """(docs, extra): docs = [(docid, score, grade or None)], extra = {unretrieved docid: grade}."""
    n = draw(st.integers(1, max_docs))
    docids = draw(st.permutations(DOCIDS))[:n]
    scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, -2.5]), min_size=n, max_size=n))
    grades = draw(
        st.lists(
            st.sampled_from([None, None, -1.0, 0.0, 1.0, 1.0, 2.0, 3.0]), min_size=n, max_size=n
        )
    )
    unretrieved = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), max_size=3))
    docs = list(zip(docids, scores, grades))
    extra = {f"u{i}": g for i, g in enumerate(unretrieved)}
    return docs, extra


@st.composite
def collection(draw, max_queries=3):
    """(qs, run, qrels) with queries q0, q1, ...; a query with no judgment is absent from qrels."""
    nq = draw(st.integers(1, max_queries))
    qs = [draw(query()) for _ in range(nq)]
    run = {f"q{i}": {d: s for d, s, _ in docs} for i, (docs, _) in enumerate(qs)}
    qrels = {}
    for i, (docs, extra) in enumerate(qs):
        j = {d: g for d, _, g in docs if g is not None}
        j.update(extra)
        if j:
            qrels[f"q{i}"] = j
    return qs, run, qrels


def judged_info(docs, extra, level=1, candidates_only=False):
    """N+ and the judged grades (for the ideal DCG) of one query, as the reference needs them."""
    judged = [g for _, _, g in docs if g is not None]
    if not candidates_only:
        judged += list(extra.values())
    nrel = sum(1 for g in judged if g >= level)
    return nrel, judged
