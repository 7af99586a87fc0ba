"""Agreement of relevance judges with a reference: Cohen's kappa, Krippendorff's alpha, binarised
agreement and the confusion matrix, pooled and per query, with bootstrap confidence intervals over
queries.

Everything is computed from confusion matrices (reference grade x judge grade counts), built for all
judges, all queries and all bootstrap resamples at once (``np.bincount`` and one matrix product: no
Python loop per pair, per judge or per resample).

* **Cohen's kappa** (Cohen 1960; weighted: Cohen 1968): ``1 - sum(W * O) / sum(W * E)`` with ``O`` the
  observed and ``E`` the expected (product of the margins) proportions; ``W`` is 0 on the diagonal and
  1 off it (unweighted), ``|i - j|`` (linear) or ``(i - j)^2`` (quadratic), ``i, j`` the ranks of the
  grades among those the pair of judges uses, as scikit-learn's ``cohen_kappa_score`` takes them.
* **Krippendorff's alpha** (Krippendorff 2011, "Computing Krippendorff's alpha-reliability") for two
  coders and no missing value: ``1 - (n - 1) sum(o * d) / sum(n_c n_k d)`` from the coincidence matrix
  ``o = C + C^T`` (``n = 2 * pairs``, ``n_c`` its margins); ``d`` nominal (``c != k``), ordinal
  (``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2``) or interval (``(v_c - v_k)^2``).
* **Binarised** at ``rel``: the share of pairs both sides call relevant (grade >= rel) or both call
  non-relevant, and Cohen's kappa of those binary labels.

A value that is undefined (no disagreement is possible: one grade only) is NaN, never a made-up 0 or 1.

Confidence intervals: percentile bootstrap over queries (the queries resampled with replacement,
``samples`` times, seeded); the result says so (``ci_method``, ``samples``, ``seed``, ``confidence``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import TierankInputError

#: the agreement statistics of each record, in order
STATISTICS = (
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "krippendorff_alpha_nominal",
    "krippendorff_alpha_ordinal",
    "krippendorff_alpha_interval",
    "binary_agreement",
    "binary_kappa",
)

#: the fields of a record (pooled: ``query`` is ``all``); each statistic also has ``_ci_low`` and
#: ``_ci_high`` in the pooled records
FIELDS = (
    "judge",
    "query",
    "n_pairs",
    *STATISTICS,
    *(f"{s}_ci_{end}" for s in STATISTICS for end in ("low", "high")),
)

#: bootstrap resamples by default
DEFAULT_SAMPLES = 1000
#: bootstrap resamples drawn and summarised at a time (bounded memory)
BOOTSTRAP_CHUNK = 2000


def _codes(reference: np.ndarray, grades: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct grades (sorted) and each grade's index among them (reference, judges)."""
    values, inv = np.unique(np.concatenate([reference, grades.ravel()]), return_inverse=True)
    n = len(reference)
    return values, inv[:n], inv[n:].reshape(grades.shape)


def _confusions(
    rc: np.ndarray, jc: np.ndarray, groups: np.ndarray, n_groups: int, k: int
) -> np.ndarray:
    """``(judges, groups, k, k)`` counts: rows the reference's grade, columns the judge's; a pair a judge
    left out (code -1) is not counted."""
    m = jc.shape[0]
    ok = jc >= 0
    judge = np.broadcast_to(np.arange(m)[:, None], jc.shape)
    flat = ((judge * n_groups + groups[None, :]) * k + rc[None, :]) * k + jc
    counts = np.bincount(flat[ok], minlength=m * n_groups * k * k)
    return counts.reshape(m, n_groups, k, k).astype(np.float64)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 1e-12 * np.maximum(1.0, np.abs(num)))
    # an expected disagreement of (numerically) zero: one grade only, undefined
    return out


def kappas(c: np.ndarray) -> dict[str, np.ndarray]:
    """Cohen's kappa, unweighted, linear and quadratic, of confusion matrices ``c`` (``(..., k, k)``)."""
    k = c.shape[-1]
    n = c.sum(axis=(-2, -1))
    rows = c.sum(axis=-1)
    cols = c.sum(axis=-2)
    used = (rows + cols) > 0  # the grades this pair of judges uses
    rank = np.cumsum(used, axis=-1) - 1.0  # each grade's rank among them
    diff = np.abs(rank[..., :, None] - rank[..., None, :])
    expected = rows[..., :, None] * cols[..., None, :] / np.where(n > 0, n, 1.0)[..., None, None]
    out = {}
    for name, w in (
        ("cohen_kappa", (diff > 0).astype(np.float64)),
        ("cohen_kappa_linear", diff),
        ("cohen_kappa_quadratic", diff**2),
    ):
        obs = (w * c).sum(axis=(-2, -1))
        exp = (w * expected).sum(axis=(-2, -1))
        out[name] = 1.0 - _ratio(obs, exp)
    del k
    return out


def alphas(c: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """Krippendorff's alpha (nominal, ordinal, interval) of two coders' confusion matrices ``c``
    (``(..., k, k)``; ``values``: the grade of each of the k categories)."""
    o = c + np.swapaxes(c, -1, -2)  # the coincidence matrix
    nc = o.sum(axis=-1)
    n = nc.sum(axis=-1)
    idx = np.arange(len(values))
    lo = np.minimum(idx[:, None], idx[None, :])
    hi = np.maximum(idx[:, None], idx[None, :])
    csum = np.concatenate([np.zeros((*nc.shape[:-1], 1)), np.cumsum(nc, axis=-1)], axis=-1)
    between = csum[..., hi + 1] - csum[..., lo]  # sum of n_g for g from lo to hi
    ordinal = (between - (nc[..., :, None] + nc[..., None, :]) / 2.0) ** 2
    metrics = {
        "krippendorff_alpha_nominal": (idx[:, None] != idx[None, :]).astype(np.float64),
        "krippendorff_alpha_ordinal": ordinal,
        "krippendorff_alpha_interval": (values[:, None] - values[None, :]) ** 2,
    }
    ee = nc[..., :, None] * nc[..., None, :]
    out = {}
    for name, d in metrics.items():
        do = (o * d).sum(axis=(-2, -1))
        de = (ee * d).sum(axis=(-2, -1))
        out[name] = 1.0 - _ratio((n - 1.0) * do, de)
    return out


def binary(c: np.ndarray, values: np.ndarray, rel: float) -> dict[str, np.ndarray]:
    """The share of pairs that agree when both sides' grades are cut at ``rel``, and its kappa."""
    r = (values >= rel).astype(np.intp)
    b = np.zeros((*c.shape[:-2], 2, 2))
    for i in (0, 1):
        for j in (0, 1):
            b[..., i, j] = c[..., r == i, :][..., :, r == j].sum(axis=(-2, -1))
    n = b.sum(axis=(-2, -1))
    agree = _ratio(b[..., 0, 0] + b[..., 1, 1], n)
    return {"binary_agreement": agree, "binary_kappa": kappas(b)["cohen_kappa"]}


def statistics(c: np.ndarray, values: np.ndarray, rel: float) -> dict[str, np.ndarray]:
    """Every statistic of `STATISTICS` for confusion matrices ``c`` (``(..., k, k)``)."""
    return {**kappas(c), **alphas(c, values), **binary(c, values, rel)}


@dataclass(frozen=True)
class Agreement:
    """Agreement of each judge with the reference: ``pooled`` (one record per judge, with bootstrap
    CIs), ``per_query`` (one record per judge and query), the confusion matrices (``grades`` x
    ``grades``: rows the reference), and the settings (``rel``, the bootstrap's ``samples``, ``seed``,
    ``confidence``, ``ci_method``)."""

    judges: tuple[str, ...]
    grades: np.ndarray
    pooled: list[dict]
    per_query: list[dict]
    confusion: np.ndarray
    settings: dict = field(default_factory=dict)

    def to_dict(self, per_query: bool = False) -> dict:
        """A JSON-ready document: settings, each judge's record with its confusion matrix (and the
        per-query records)."""
        grades = [float(g) for g in self.grades]
        doc = {
            "settings": dict(self.settings),
            "judges": [
                {
                    **{k: _plain(v) for k, v in rec.items()},
                    "confusion": {
                        "grades": grades,
                        "rows": "reference",
                        "counts": self.confusion[j].astype(int).tolist(),
                    },
                }
                for j, rec in enumerate(self.pooled)
            ],
        }
        if per_query:
            doc["per_query"] = [{k: _plain(v) for k, v in r.items()} for r in self.per_query]
        return doc


def _plain(v):
    if isinstance(v, (float, np.floating)):
        return None if not np.isfinite(v) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def _check_arguments(
    ref: np.ndarray, g: np.ndarray, samples: int, seed: int, confidence: float
) -> None:
    """Refuse grades of another length than the reference, a confidence outside (0, 1), a negative
    number of resamples or seed."""
    if g.shape[1] != len(ref):
        raise ValueError("grades and reference differ in length")
    if not 0 < confidence < 1:
        raise TierankInputError(f"confidence {confidence}: must be in (0, 1)")
    if samples < 0:
        raise TierankInputError(f"bootstrap samples {samples}: must be at least 0")
    if seed < 0:
        raise TierankInputError(f"seed {seed}: must be at least 0")


def _bootstrap(
    cq: np.ndarray, values: np.ndarray, rel: float, samples: int, seed: int, confidence: float
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per statistic the percentile bounds (per judge) over ``samples`` resamples of the queries of the
    confusion matrices ``cq`` (``(judges, queries, k, k)``), a chunk of resamples at a time."""
    nj, nq, k = cq.shape[0], cq.shape[1], len(values)
    rng = np.random.default_rng(seed)
    flat = np.swapaxes(cq, 0, 1).reshape(nq, -1)  # (queries, judges*k*k)
    parts: dict[str, list[np.ndarray]] = {s: [] for s in STATISTICS}
    for start in range(0, samples, BOOTSTRAP_CHUNK):  # bounded memory
        size = min(BOOTSTRAP_CHUNK, samples - start)
        counts = rng.multinomial(nq, np.full(nq, 1.0 / nq), size)
        boot = (counts.astype(np.float64) @ flat).reshape(size, nj, k, k)
        for s, v in statistics(boot, values, rel).items():
            parts[s].append(v)
    a = (1 - confidence) / 2
    lo_hi: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for s, chunks in parts.items():
        v = np.concatenate(chunks)
        with warnings.catch_warnings():  # a judge undefined in every resample: NaN bounds
            warnings.simplefilter("ignore", RuntimeWarning)
            lo_hi[s] = (np.nanquantile(v, a, axis=0), np.nanquantile(v, 1 - a, axis=0))
    return lo_hi


def _pooled_records(
    names: tuple, pooled_c: np.ndarray, cq: np.ndarray, pooled: dict, lo_hi: dict
) -> list[dict]:
    """A record per judge over every query: pairs, queries, the statistics and their bounds (NaN: no
    CI)."""
    n_pairs = pooled_c.sum(axis=(-2, -1))
    nq_pairs = cq.sum(axis=(-2, -1))
    out = []
    for j, name in enumerate(names):
        rec: dict = {"judge": name, "query": "all", "n_pairs": int(n_pairs[j])}
        rec["n_queries"] = int((nq_pairs[j] > 0).sum())
        for s in STATISTICS:
            rec[s] = float(pooled[s][j])
        for s in STATISTICS:
            lo, hi = lo_hi.get(s, (None, None))
            rec[f"{s}_ci_low"] = float(lo[j]) if lo is not None else float("nan")
            rec[f"{s}_ci_high"] = float(hi[j]) if hi is not None else float("nan")
        out.append(rec)
    return out


def _per_query_records(names: tuple, queries: np.ndarray, cq: np.ndarray, perq: dict) -> list[dict]:
    """A record per judge and query it graded: pairs and the statistics."""
    nq_pairs = cq.sum(axis=(-2, -1))
    return [
        {
            "judge": name,
            "query": str(q),
            "n_pairs": int(nq_pairs[j, i]),
            **{s: float(perq[s][j, i]) for s in STATISTICS},
        }
        for j, name in enumerate(names)
        for i, q in enumerate(queries)
        if nq_pairs[j, i] > 0
    ]


def agreement(
    reference,
    grades,
    qid,
    judges=None,
    rel: float = 1,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> Agreement:
    """Agreement of each judge (a row of ``grades``, ``(judges, pairs)``, NaN: not graded) with the
    ``reference`` grades (``(pairs,)``), pairs grouped in queries by ``qid``; ``samples`` bootstrap
    resamples of the queries (0: no CI), ``seed`` for them.

    >>> a = agreement([0, 1, 2, 2], [[0, 1, 2, 1]], ["q", "q", "q", "q"], ["j"], samples=0)
    >>> round(a.pooled[0]["cohen_kappa"], 4), a.pooled[0]["binary_agreement"]
    (0.6364, 1.0)
    """
    ref = np.asarray(reference, dtype=np.float64)
    g = np.atleast_2d(np.asarray(grades, dtype=np.float64))
    _check_arguments(ref, g, samples, seed, confidence)
    names = tuple(judges) if judges is not None else tuple(f"judge{i + 1}" for i in range(len(g)))
    queries, group = np.unique(np.asarray(qid, dtype=str), return_inverse=True)
    missing = np.isnan(g)
    values, rc, jc = _codes(ref, np.where(missing, ref[None, :], g))
    jc = np.where(missing, -1, jc)
    cq = _confusions(rc, jc, group, len(queries), len(values))  # (judges, queries, k, k)
    pooled_c = cq.sum(axis=1)
    lo_hi = (
        _bootstrap(cq, values, rel, samples, seed, confidence)
        if samples > 0 and len(queries) >= 2
        else {}
    )
    pooled_records = _pooled_records(names, pooled_c, cq, statistics(pooled_c, values, rel), lo_hi)
    per_query = _per_query_records(names, queries, cq, statistics(cq, values, rel))
    settings = {
        "rel": rel,
        "queries": len(queries),
        "ci_method": "percentile bootstrap over queries" if lo_hi else "none",
        "samples": samples if lo_hi else 0,
        "seed": seed,
        "confidence": confidence,
        "kappa_weights": "ranks of the grades either side uses (as scikit-learn)",
    }
    return Agreement(names, values, pooled_records, per_query, pooled_c, settings)


__all__ = [
    "DEFAULT_SAMPLES",
    "FIELDS",
    "STATISTICS",
    "Agreement",
    "agreement",
    "alphas",
    "binary",
    "kappas",
    "statistics",
]
