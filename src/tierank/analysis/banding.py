"""Geometric rank bands (Yang, Moffat & Turpin, "How precise does document scoring need to be?").

With rho > 1, b_1 = 1 and b_{g+1} = ceil(rho * b_g); band g covers ranks b_g .. b_{g+1} - 1.
A banded run keeps only which band each document falls in: every document of band g
gets the score 1/g, so the documents of a band tie.

Examples
--------
>>> band_starts(2.0, 10).tolist()
[1, 2, 4, 8, 16]
>>> band_starts(1.62, 12).tolist()
[1, 2, 4, 7, 12, 20]
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction

import numpy as np
import pyarrow as pa

from ..errors import TierankInputError
from ..io.model import Run
from ..ties import layout

_INT64_MAX = int(np.iinfo(np.int64).max)


def check_rho(rho) -> float:
    """``rho`` as a float if it is a band parameter (a finite number > 1), else [`TierankInputError`][tierank.analysis.banding.TierankInputError].

    >>> check_rho(1.4)
    1.4
    >>> check_rho(float("inf"))
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: band parameter rho must be a finite number > 1, got inf
    """
    ok = isinstance(rho, (int, float, np.integer, np.floating)) and not isinstance(rho, bool)
    if not (ok and math.isfinite(rho) and rho > 1.0):
        raise TierankInputError(
            f"band parameter rho must be a finite number > 1, got {float(rho) if ok else rho!r}"
        )
    return float(rho)


def band_starts(rho: float, depth: int) -> np.ndarray:
    """Band starts b_1 = 1, b_{g+1} = ceil(rho * b_g), up to the first start beyond ``depth``.

    Computed in exact rational arithmetic on the decimal ``rho`` (``ceil(1.4 * 5)`` is 7, not 8
    as float noise can make it at large ranks).  ``rho`` must be finite and > 1 ([`check_rho`][tierank.analysis.banding.check_rho]);
    a last start beyond the int64 range is stored as the largest int64 (no rank reaches it).
    """
    r = Fraction(str(check_rho(rho)))
    starts = [1]
    while starts[-1] <= depth:
        starts.append(min(max(math.ceil(r * starts[-1]), starts[-1] + 1), _INT64_MAX))
    return np.asarray(starts, dtype=np.int64)


def band_of_rank(rank: np.ndarray, rho: float) -> np.ndarray:
    """Band index g (1-based) of each 1-based rank."""
    rank = np.asarray(rank, dtype=np.int64)
    starts = band_starts(rho, int(rank.max()) if len(rank) else 1)
    return np.searchsorted(starts, rank, side="right")


def band_run(run: Run, rho: float) -> Run:
    """The banded version of ``run``: ranks from the run's own order (score descending, file
    order inside ties, the paper's reference), each document scored 1/band."""
    qid = run.qid.dictionary_decode() if pa.types.is_dictionary(run.qid.type) else run.qid
    rank = layout(run).ranks()
    score = 1.0 / band_of_rank(rank, rho)
    return Run(
        qid=qid,
        docid=run.docid,
        score=score,
        rank=rank.astype(np.float64),
        source=f"{run.source} [band{rho:g}]",
    )


# ---------------------------------------------------------------------------
# Worst-case bounds (the paper's Section 4, "Worst-Case Bounds", and Table 2)
# ---------------------------------------------------------------------------

_KINDS = ("loss", "gain", "abs")


def _check_kind(kind: str) -> None:
    if kind not in _KINDS:
        raise TierankInputError(f"kind must be one of {_KINDS}, got {kind!r}")


def _check_depth(depth) -> int:
    try:
        ok = not isinstance(depth, bool) and int(depth) == depth and depth >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise TierankInputError(f"depth must be a positive integer, got {depth!r}")
    return int(depth)


def _bands(rho: float, depth: int):
    """(b_g, e_g) of every band that starts at or before ``depth``, e_g cut at ``depth``."""
    starts = band_starts(rho, depth)
    for b, nxt in zip(starts[:-1].tolist(), starts[1:].tolist()):
        yield b, min(nxt - 1, depth)


def _tied_bands(rho: float, depth: int):
    """The bands of `_bands` with more than one document (a singleton band changes nothing)."""
    return ((b, e) for b, e in _bands(rho, depth) if e > b)


def _worst(kind: str, changes, combine) -> float:
    """The worst case of ``kind`` from the per-band ``(loss, gain)`` pairs of ``changes``, each side
    folded with ``combine`` from 0 (``max``: one band decides; ``operator.add``: the bands add up)."""
    loss = gain = 0.0
    for band_loss, band_gain in changes:
        loss, gain = combine(loss, band_loss), combine(gain, band_gain)
    return loss if kind == "loss" else gain if kind == "gain" else max(loss, gain)


def _rr_gain_of_band(b: int, e: int) -> float:
    """Largest E[RR(banded)] - RR(original) with the first relevant document in band [b, e].

    With the first relevant document at offset j of the band, making every later document of
    the band relevant maximises the banded value (more relevant documents can only move the
    first one up), so the candidates are "the last k documents of the band relevant",
    k = 1 .. w. With k relevant among w tied places, the offset M of the first one has
    P(M >= i) = prod_{t<i} (w-k-t)/(w-t), and E[1/(b+M)] = 1/b - sum_{i>=1} P(M >= i)
    (1/(b+i-1) - 1/(b+i)) (summation by parts).
    """
    w = e - b + 1
    i = np.arange(1, w, dtype=np.float64)[:, None]  # i = 1 .. w-1
    step = 1.0 / (b + i[:, 0] - 1.0) - 1.0 / (b + i[:, 0])  # 1/(b+i-1) - 1/(b+i)
    best = 0.0
    for k0 in range(1, w + 1, max(1, 4_000_000 // w)):  # columns in blocks: memory O(4M)
        k = np.arange(k0, min(k0 + max(1, 4_000_000 // w), w + 1), dtype=np.float64)[None, :]
        ratio = np.maximum(w - k - (i - 1.0), 0.0) / (w - (i - 1.0))
        surv = np.cumprod(ratio, axis=0)  # P(M >= i), rows i = 1 .. w-1
        banded = 1.0 / b - step @ surv
        gain = banded - 1.0 / (b + w - k[0])  # original: first relevant at b+w-k
        best = max(best, float(gain.max()))
    return best


def _rr_loss_of_band(b: int, e: int) -> float:
    """Largest RR(original) - E[RR(banded)] with the first relevant document in band [b, e]: a lone
    relevant document at b, 1/b against the band's mean reciprocal rank."""
    return 1.0 / b - float(np.mean(1.0 / np.arange(b, e + 1, dtype=np.float64)))


def _rr_changes(rho: float, depth: int, kind: str):
    """Per band, the largest RR loss and (unless only the loss is asked for) the largest gain."""
    for b, e in _tied_bands(rho, depth):
        yield _rr_loss_of_band(b, e), (_rr_gain_of_band(b, e) if kind != "loss" else 0.0)


def _rbp_changes(rho: float, p: float, depth: int):
    """Per band, the sums of the positive and of the negative parts of w_k - m_g (RBP's loss and gain),
    until the weights underflow (no further band can contribute)."""
    for b, e in _tied_bands(rho, depth):
        w = (1.0 - p) * p ** (np.arange(b, e + 1, dtype=np.float64) - 1.0)
        dev = w - w.mean()
        # relevant exactly where w_k > m_g (loss), exactly where w_k < m_g (gain)
        yield float(dev[dev > 0].sum()), -float(dev[dev < 0].sum())
        if w[-1] == 0.0:
            return


def worst_case_rr(rho: float, depth: int = 1000, kind: str = "loss") -> float:
    r"""Largest change of reciprocal rank that banding can cause (paper, Table 2, column RR).

    Over every binary relevance vector of an original ranking of ``depth``
    documents, the largest difference between RR of that ranking and the
    expected RR over the orderings inside the bands of its banded version
    ([`band_run`][tierank.analysis.banding.band_run]; the last band is cut at ``depth``).

    Parameters
    ----------
    rho : float
        Band parameter, > 1 (see [`band_starts`][tierank.analysis.banding.band_starts]).
    depth : int
        Length of the original ranking.
    kind : {"loss", "gain", "abs"}
        ``"loss"``: max of RR(original) - E[RR(banded)], the paper's bound.
        ``"gain"``: max of E[RR(banded)] - RR(original).
        ``"abs"``: max of the absolute difference, i.e. the larger of the two.

    Returns
    -------
    float

    Notes
    -----
    Both values depend only on the band $[b, e]$ (width $w$)
    holding the first relevant document, which banding leaves in place, and
    on the relevant documents of that band.

    *Loss.* With the first relevant document at $b$ the original RR is
    $1/b$, the largest possible, and further relevant documents of the
    band only raise the banded value; so the worst case is a lone relevant
    document at $b$ (the paper's argument):

    $$
    L_g = \frac{1}{b_g} - \frac{1}{w_g}\sum_{k=b_g}^{e_g}\frac1k .
    $$

    *Gain.* It is *not* a lone relevant document at $e$: with the first
    relevant document at offset $j$, every later document of the band
    should be relevant too (they do not change the original RR but raise the
    banded one), so $G_g = \max_j \big(E[1/(b+M)] - 1/(b+j)\big)$,
    $M$ the offset of the first of $w-j$ relevant documents
    placed uniformly in the band; computed exactly ($O(w^2)$ per band,
    only for ``kind="gain"``/``"abs"``). For $w = 2$,
    $G = L = 1/(2b(b+1))$; e.g. for band [1..3] the best gain is ranks 2 and 3
    relevant: $5/6 - 1/2 = 1/3$, not $11/18 - 1/3$.

    The result is $\max_g L_g$, $\max_g G_g$, or the larger of
    the two (``"abs"``); singleton bands give 0. The maximum is taken over
    all bands. The paper says the loss is largest in the first band with more
    than one document; that held in a scan of $\rho \in (1, 4]$
    (step 0.001, depth 100,000). The first such band starts at
    $v = \lfloor 1/(\rho-1) \rfloor + 1$, not at the paper's
    $1 + \lceil 1/(\rho-1) \rceil$ (see [`worst_case_table`][tierank.analysis.banding.worst_case_table]),
    and for $\rho \le 3$ it has exactly two documents, so there
    ``"gain"`` equals ``"loss"``. For a single band much wider than its start
    the gain can exceed the loss (e.g. band [9..22]); still, over a whole banding ``"abs"`` equalled
    ``"loss"`` for every $\rho$ scanned in $(1, 12)$ at depth
    1000, with the gain strictly smaller once the first multi-document band
    has three or more documents ($\rho > 3$).

    Examples
    --------
    rho = 2: bands [1], [2..3], ...; the worst case is a lone relevant document at rank 2,
    1/2 - (1/2 + 1/3)/2 = 1/12:

    >>> round(worst_case_rr(2.0), 4)
    0.0833
    >>> round(worst_case_rr(1.4), 6), 1 / 24     # bands [1], [2], [3..4], ...
    (0.041667, 0.041666666666666664)
    >>> round(worst_case_rr(2.0, kind="gain"), 4)  # rank 3 alone: (1/2 + 1/3)/2 - 1/3
    0.0833
    >>> round(worst_case_rr(4.0), 4), round(worst_case_rr(4.0, kind="gain"), 4)  # [1..3], [4..11], ...
    (0.3889, 0.3333)
    >>> worst_case_rr(2.0, depth=1)                # one document: nothing can tie
    0.0
    """
    _check_kind(kind)
    depth = _check_depth(depth)
    return _worst(kind, _rr_changes(rho, depth, kind), max)


def worst_case_rbp(rho: float, p: float, depth: int = 1000, kind: str = "loss") -> float:
    r"""Largest change of RBP(p) that banding can cause (paper, Table 2, columns RBP).

    Over every binary relevance vector of an original ranking of ``depth``
    documents, the largest difference between RBP of that ranking and the
    expected RBP over the orderings inside the bands of its banded version
    (no residual; the last band is cut at ``depth``).

    Parameters
    ----------
    rho : float
        Band parameter, > 1 (see [`band_starts`][tierank.analysis.banding.band_starts]).
    p : float
        RBP persistence, 0 < p < 1.
    depth : int
        Length of the original ranking. Ranks beyond it carry weight
        ``p**depth`` in all, negligible at the default 1000 unless p is very
        close to 1.
    kind : {"loss", "gain", "abs"}
        ``"loss"``: max of RBP(original) - E[RBP(banded)], the paper's bound;
        ``"gain"``: max of E[RBP(banded)] - RBP(original); ``"abs"``: max of
        the absolute difference. All three are equal (see Notes).

    Returns
    -------
    float

    Notes
    -----
    RBP is a sum over relevant documents of $w_k = (1-p)p^{k-1}$; after
    banding each relevant document of band $g$ contributes the band mean
    $m_g = W_g/(e_g-b_g+1)$, $W_g = \sum_{k=b_g}^{e_g} w_k$.
    The difference is therefore a sum of independent per-document terms
    $w_k - m_g$, maximised by making exactly the documents with
    $w_k > m_g$ relevant:

    $$
    \Delta\mathrm{RBP} = \sum_g \sum_{k=b_g}^{e_g} (w_k - m_g)^+ .
    $$

    As the weights decrease, those documents are the first $t_g$ of
    the band, the paper's construction, with the $t_g$ that maximises
    the paper's per-band expression; the maximisation here is exact over all
    $0 \le t_g \le e_g-b_g+1$. As $w$ is convex, the band mean is
    at least the weight at the band's midpoint, so
    $t_g \le \lfloor (e_g-b_g+1)/2 \rfloor$: the relevant documents
    end before the band's middle rank $(b_g+e_g)/2$. The paper's
    printed range $1 \le t_g \le (e_g+b_g)/2$ bounds a *count* by that
    middle *rank*; it is true but loose (it grows with the rank, not with the
    band width); read as $b_g + t_g - 1 < (e_g+b_g)/2$ it is exact.
    Singleton bands contribute 0 for any $t_g$.

    Because $\sum_k (w_k - m_g) = 0$ inside each band, the positive
    and negative parts are equal, so the largest gain (the complementary
    relevance vector) equals the largest loss and all three kinds coincide.

    Examples
    --------
    rho = 2, p = 0.5: band [2..3] has weights 1/4, 1/8 (mean 3/16), so a relevant document
    at rank 2 (and none at 3) loses 1/4 - 3/16 = 1/16; at rank 3 instead it gains 1/16:

    >>> worst_case_rbp(2.0, 0.5, depth=3), worst_case_rbp(2.0, 0.5, depth=3, kind="gain")
    (0.0625, 0.0625)
    >>> round(worst_case_rbp(2.0, 0.5), 4), round(worst_case_rbp(2.0, 0.85), 4)
    (0.1016, 0.0971)
    >>> import math
    >>> math.isclose(worst_case_rbp(2.0, 0.85, kind="gain"), worst_case_rbp(2.0, 0.85))
    True
    """
    _check_kind(kind)
    depth = _check_depth(depth)
    if not 0.0 < p < 1.0:
        raise TierankInputError(f"RBP persistence p must be in (0, 1), got {p}")
    return _worst(kind, _rbp_changes(rho, p, depth), operator.add)


PAPER_TABLE2 = (
    {"rho": 1.1, "RR": 0.0038, "RBP(p=0.5)": 0.0002, "RBP(p=0.85)": 0.0087},
    {"rho": 1.2, "RR": 0.0119, "RBP(p=0.5)": 0.0052, "RBP(p=0.85)": 0.0231},
    {"rho": 1.4, "RR": 0.0417, "RBP(p=0.5)": 0.0429, "RBP(p=0.85)": 0.0482},
    {"rho": 1.7, "RR": 0.0833, "RBP(p=0.5)": 0.0945, "RBP(p=0.85)": 0.0777},
    {"rho": 2.0, "RR": 0.0833, "RBP(p=0.5)": 0.1016, "RBP(p=0.85)": 0.0971},
)
"""Table 2 of the paper as printed (worst-case loss, 4 decimals)."""


def worst_case_table(
    rhos=(1.1, 1.2, 1.4, 1.7, 2.0), ps=(0.5, 0.85), depth: int = 1000, kind: str = "loss"
) -> list[dict]:
    r"""The paper's Table 2: worst-case score changes from banding, one row per rho.

    Parameters
    ----------
    rhos : sequence of float
        Band parameters.
    ps : sequence of float
        RBP persistences; one column ``"RBP(p=...)"`` each.
    depth, kind
        As in [`worst_case_rr`][tierank.analysis.banding.worst_case_rr] and [`worst_case_rbp`][tierank.analysis.banding.worst_case_rbp].

    Returns
    -------
    list of dict
        ``{"rho": rho, "RR": ..., "RBP(p=0.5)": ..., ...}`` per rho (unrounded floats).

    Notes
    -----
    With the defaults this reproduces all 15 cells of the paper's Table 2 to
    the 4 printed decimals ([`PAPER_TABLE2`][tierank.analysis.banding.PAPER_TABLE2]). It does so with the band
    recursion the paper defines, $b_{g+1} = \lceil \rho\, b_g \rceil$
    ([`band_starts`][tierank.analysis.banding.band_starts]), and with a first multi-document band at
    $v = \lfloor 1/(\rho-1) \rfloor + 1$. It does *not* follow the
    paper's closed form $v = 1 + \lceil 1/(\rho-1) \rceil$, which is
    wrong whenever $1/(\rho-1)$ is not an integer: the band starting
    at $b$ is a singleton iff $\lceil \rho b \rceil = b+1$ iff
    $b \le 1/(\rho-1)$, and all bands before the first multi-document
    band are singletons ($b_g = g$), so $v$ is the smallest
    integer $> 1/(\rho-1)$. For rho = 1.4 the bands are [1], [2],
    [3..4], [5..6], ... so v = 3, not 4 (4 is not even a band start); for
    rho = 1.7 (and the paper's own 1.62 example, [1], [2..3], ...) v = 2, not
    3. Table 2's RR entries are those of v = 3 (1/24 = .0417) and v = 2
    (1/12 = .0833), so the table was computed from the recursion and only the
    closed form in the text is off by one. (For rho = 1.1, 1.2, 2.0,
    1/(rho-1) is an integer and both forms agree in exact arithmetic.)

    The other variants tried do not reproduce the table:
    $b_{g+1} = b_g + \lceil(\rho-1) b_g\rceil$ is the same recursion;
    ``floor(rho*b)`` and ``round(rho*b)`` (with at least +1) agree only at
    rho = 2, e.g. for rho = 1.4 they give RR .0167 / .0250 against .0417.

    Examples
    --------
    >>> rows = worst_case_table()
    >>> [round(r["RR"], 4) for r in rows]
    [0.0038, 0.0119, 0.0417, 0.0833, 0.0833]
    >>> [round(r["RBP(p=0.5)"], 4) for r in rows]
    [0.0002, 0.0052, 0.0429, 0.0945, 0.1016]
    >>> [round(r["RBP(p=0.85)"], 4) for r in rows]
    [0.0087, 0.0231, 0.0482, 0.0777, 0.0971]
    """
    rhos = [check_rho(rho) for rho in rhos]  # every rho checked before the first row is computed
    rows = []
    for rho in rhos:
        row = {"rho": rho, "RR": worst_case_rr(rho, depth, kind)}
        for p in ps:
            row[f"RBP(p={p:g})"] = worst_case_rbp(rho, p, depth, kind)
        rows.append(row)
    return rows
