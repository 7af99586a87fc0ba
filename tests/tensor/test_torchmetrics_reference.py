"""TieAwareRetrieval and tierank.tensor.evaluate against torchmetrics' retrieval metrics, on inputs
built as torchmetrics' own retrieval tests build theirs (tests/unittests/retrieval/_inputs.py of
Lightning-AI/torchmetrics: 4 batches of 32 entries over 10 queries, random scores, binary, integer,
fractional, all-zero and all-one targets, ``ignore_index`` padding, an extra dimension, many small
queries for ``adaptive_k``), with their ``top_k`` (None, 1, 4, 10), ``empty_target_action``
(skip, neg, pos) and ``adaptive_k`` variants, plus scores that may be negative (logits).

Without ties the expected value, min and max are one number, and it is torchmetrics' value, except
where the definitions differ (the docstring of TieAwareRetrieval lists them); each such case is
checked too: torchmetrics' value is what the documented definition gives from tierank's own numbers:

* ``ap_normaliser``: ``RetrievalMAP(top_k=k)`` is tierank's ``AP@k / R@k`` (relevant in the top k
  instead of all relevant), and TieAwareRetrieval's ``AP@k`` with ``ap_normaliser="retrieved"``;
* ``precision_length``: ``RetrievalPrecision`` with ``top_k=None`` is N+ / list length, with
  ``adaptive_k`` and a list shorter than k it is ``P@k * k / length``;
* ``nonpositive_scores``: torchmetrics' MRR, MAP, precision and recall count a relevant target with
  a score <= 0 as not relevant (tierank evaluated with those targets set to 0; recall keeps N+).

``tally`` returns the counts of comparisons by outcome; the full tier runs more seeds.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tierank import tensor

NO_METRIC = (
    'the torchmetrics reference needs torch and torchmetrics: pip install -e ".[torchmetrics]"'
)
torch = pytest.importorskip("torch", reason=NO_METRIC)
pytest.importorskip("torchmetrics", reason=NO_METRIC)

from torchmetrics.functional import retrieval as F  # noqa: E402
from torchmetrics.retrieval import (  # noqa: E402
    RetrievalHitRate,
    RetrievalMAP,
    RetrievalMRR,
    RetrievalNormalizedDCG,
    RetrievalPrecision,
    RetrievalRecall,
    RetrievalRPrecision,
)

from tierank.tensor.metric import TieAwareRetrieval  # noqa: E402

NUM_BATCHES, BATCH_SIZE, EXTRA_DIM = 4, 32, 3
TOP_KS = (None, 1, 4, 10)
ACTIONS = ("skip", "neg", "pos")


def inputs(seed: int) -> dict[str, tuple]:
    """(indexes, preds, target) per variant, as torchmetrics' _inputs.py draws them."""
    g = torch.Generator().manual_seed(seed)
    nb, bs = NUM_BATCHES, BATCH_SIZE

    def ri(high, size, low=0):
        return torch.randint(low, high, size, generator=g)

    def rand(*size):
        return torch.rand(*size, generator=g)

    ii_target = ri(2, (nb, bs)).masked_fill(torch.randn(nb, bs, generator=g) > 0.5, -100)
    return {
        "binary": (ri(10, (nb, bs)), rand(nb, bs), ri(2, (nb, bs))),
        "adaptive_k": (ri(nb * bs // 2, (nb, bs)), rand(nb, bs), ri(2, (nb, bs))),
        "extra_dim": (
            ri(10, (nb, bs, EXTRA_DIM)),
            rand(nb, bs, EXTRA_DIM),
            ri(2, (nb, bs, EXTRA_DIM)),
        ),
        "int_target": (ri(10, (nb, 2 * bs)), rand(nb, 2 * bs), ri(4, (nb, 2 * bs), low=-1) + 1),
        "float_target": (ri(10, (nb, 2 * bs)), rand(nb, 2 * bs), rand(nb, 2 * bs)),
        "ignore_index": (ri(10, (nb, bs)), rand(nb, bs), ii_target),
        "no_target": (ri(10, (nb, bs)), rand(nb, bs), ri(1, (nb, bs))),
        "all_target": (ri(10, (nb, bs)), rand(nb, bs), ri(2, (nb, bs), low=1)),
        "logits": (ri(10, (nb, bs)), torch.randn(nb, bs, generator=g), ri(2, (nb, bs))),
    }


GRADED = ("int_target", "float_target")  # only nDCG takes non-binary targets in torchmetrics


def kinds(variant: str):
    """(kind, top_k, adaptive_k) of the torchmetrics metrics compared on a variant."""
    out = [("ndcg", k, False) for k in TOP_KS]
    if variant in GRADED:
        return out
    out += [(kind, k, False) for kind in ("mrr", "map", "recall", "hit_rate") for k in TOP_KS]
    out += [("precision", k, a) for k in TOP_KS for a in (False, True)]
    out.append(("r_precision", None, False))
    return out


def tierank_name(kind: str, k):
    fam = {
        "ndcg": "nDCG",
        "mrr": "RR",
        "map": "AP",
        "recall": "R",
        "hit_rate": "Success",
        "precision": "P",
        "r_precision": "Rprec",
    }[kind]
    if fam == "Rprec":
        return fam
    return f"{fam}@{k}" if k is not None else ("P@1000" if fam == "P" else fam)


def tm_class(kind, k, adaptive, action, ignore_index):
    common = {"empty_target_action": action, "ignore_index": ignore_index}
    if kind == "r_precision":
        return RetrievalRPrecision(**common)
    if kind == "precision":
        return RetrievalPrecision(top_k=k, adaptive_k=adaptive, **common)
    cls = {
        "ndcg": RetrievalNormalizedDCG,
        "mrr": RetrievalMRR,
        "map": RetrievalMAP,
        "recall": RetrievalRecall,
        "hit_rate": RetrievalHitRate,
    }[kind]
    return cls(top_k=k, **common)


def tm_functional(kind, k, adaptive, preds, target):
    if kind == "r_precision":
        return F.retrieval_r_precision(preds, target)
    if kind == "precision":
        return F.retrieval_precision(preds, target, top_k=k, adaptive_k=adaptive)
    fn = {
        "ndcg": F.retrieval_normalized_dcg,
        "mrr": F.retrieval_reciprocal_rank,
        "map": F.retrieval_average_precision,
        "recall": F.retrieval_recall,
        "hit_rate": F.retrieval_hit_rate,
    }[kind]
    return fn(preds, target, top_k=k)


def documented(kind, k, adaptive, variant, per_query, lengths, n_plus):
    """Per query, torchmetrics' value by the documented definition from tierank's numbers
    (``per_query[name]``: tierank on the targets as given, ``per_query["filtered", name]``: on the
    targets of positive scores only), and the reason, or None where the definitions agree."""
    name = tierank_name(kind, k)
    filtered = variant == "logits" and kind in ("mrr", "map", "recall", "precision")
    src = (lambda n: per_query["filtered", n]) if filtered else (lambda n: per_query[n])
    reason = "nonpositive_scores" if filtered else None
    if kind == "map" and k is not None:
        ap, rk = src(f"AP@{k}"), src(f"R@{k}")
        if filtered:  # AP@k / R@k with the filtered targets' own N+
            rk = per_query["filtered_nplus_R", k]
        value = np.where(rk > 0, ap / np.where(rk > 0, rk, 1), 0.0)
        return value, reason or "ap_normaliser"
    if kind == "precision" and (k is None or (adaptive and np.any(lengths < k))):
        if k is None:
            hits = src("P@1000") * 1000
            return np.where(n_plus > 0, hits / lengths, 0.0), reason or "precision_length"
        short = lengths < k
        v = src(f"P@{k}")
        return np.where(short, v * k / lengths, v), reason or "precision_length"
    return src(name), reason


def compare(variant, idx, preds, target, tally: Counter):
    ignore_index = -100 if variant == "ignore_index" else None
    flat_i, flat_p, flat_t = idx.reshape(-1), preds.reshape(-1), target.reshape(-1)
    keep = flat_t != -100
    fi, fp, ft = flat_i[keep], flat_p[keep], flat_t[keep]
    names = sorted(
        {tierank_name(kind, k) for kind, k, _ in kinds(variant)}
        | {f"R@{k}" for k in TOP_KS if k}
        | {f"AP@{k}" for k in TOP_KS if k}
    )
    if variant in GRADED:
        names = [n for n in names if n.startswith("nDCG")]
    res = tensor.evaluate(fp.double(), ft, names, indexes=fi)
    assert float(res.tied_share.max()) == 0.0  # tie-free, as torchmetrics' tests are
    per_query = {n: res[n].expected.numpy() for n in names}
    for n in names:  # without ties the statistics are one number
        assert np.array_equal(res[n].min.numpy(), res[n].max.numpy())
        assert float(res[n].std.max()) == 0.0
    queries = res.queries.numpy()
    lengths = np.array([int((fi == q).sum()) for q in queries])
    n_plus = np.array([float(ft[fi == q].sum()) for q in queries])
    if variant == "logits":
        ft_f = torch.where(fp > 0, ft, torch.zeros_like(ft))
        recalls = [n for n in names if n == "R" or n.startswith("R@")]
        by_n = tensor.evaluate(
            fp.double(), ft_f, recalls, indexes=fi, n_relevant=torch.tensor(n_plus)
        )
        filt = tensor.evaluate(fp.double(), ft_f, names, indexes=fi)
        for n in names:
            per_query["filtered", n] = (by_n if n in recalls else filt)[n].expected.numpy()
        for k in TOP_KS:
            if k:
                per_query["filtered_nplus_R", k] = filt[f"R@{k}"].expected.numpy()

    ours = {
        a: TieAwareRetrieval(
            names, empty_target_action=a, ignore_index=ignore_index, ap_normaliser="relevant"
        )
        for a in ACTIONS
    }
    ap_cut = [n for n in names if n.startswith("AP@")]
    tm_ap = {  # torchmetrics' AP@k definition
        a: TieAwareRetrieval(
            ap_cut, empty_target_action=a, ignore_index=ignore_index, ap_normaliser="retrieved"
        )
        for a in (ACTIONS if ap_cut else ())
    }
    for b in range(idx.shape[0]):  # batch by batch, as the class tests feed them
        for m in [*ours.values(), *tm_ap.values()]:
            m.update(preds[b], target[b], idx[b])
    got = {a: m.compute() for a, m in ours.items()}
    got_tm_ap = {a: m.compute() for a, m in tm_ap.items()}

    for kind, k, adaptive in kinds(variant):
        name = tierank_name(kind, k)
        want, reason = documented(kind, k, adaptive, variant, per_query, lengths, n_plus)
        # functional, query by query
        for row, q in enumerate(queries):
            sel = fi == q
            theirs = float(tm_functional(kind, k, adaptive, fp[sel], ft[sel]))
            assert theirs == pytest.approx(float(want[row]), abs=1e-6), (
                variant,
                kind,
                k,
                q,
                reason,
            )
            if reason:
                differs = abs(theirs - float(per_query[name][row])) > 1e-6
                tally[f"functional {reason}: {'differs' if differs else 'same value'}"] += 1
            else:
                tally["functional: equal"] += 1
        # class, with each empty_target_action
        for action in ACTIONS:
            metric = tm_class(kind, k, adaptive, action, ignore_index)
            for b in range(idx.shape[0]):
                metric.update(preds[b], target[b], idx[b])
            theirs = float(metric.compute())
            empty = n_plus == 0
            fill = {"neg": 0.0, "pos": 1.0, "skip": None}[action]
            vals = want[~empty] if fill is None else np.where(empty, fill, want)
            expect = float(vals.mean()) if vals.size else 0.0
            assert theirs == pytest.approx(expect, abs=1e-5), (variant, kind, k, action, reason)
            mine = float(got[action][name])
            if kind == "map" and k is not None and variant != "logits":
                # ap_normaliser="retrieved": torchmetrics' own definition, its value
                assert float(got_tm_ap[action][name]) == pytest.approx(theirs, abs=1e-5)
                tally["class AP@k with ap_normaliser='retrieved': equal"] += 1
            if reason is None:
                assert mine == pytest.approx(theirs, abs=1e-5), (variant, kind, k, action)
                tally["class: equal"] += 1
            else:
                differs = abs(mine - theirs) > 1e-5
                tally[f"class {reason}: {'differs' if differs else 'same value'}"] += 1


def tally_for(seeds, variants=None) -> Counter:
    tally: Counter = Counter()
    for seed in seeds:
        for variant, (idx, preds, target) in inputs(seed).items():
            if variants is not None and variant not in variants:
                continue
            if variant == "extra_dim":  # one batch is [BATCH_SIZE, EXTRA_DIM]
                idx, preds, target = (x.reshape(NUM_BATCHES, -1) for x in (idx, preds, target))
            compare(variant, idx, preds, target, tally)
    return tally


def test_torchmetrics_reference_values():
    """Default tier: one seed, the binary, all-zero-target and logit inputs."""
    tally = tally_for([0], ("binary", "no_target", "logits"))
    print(dict(sorted(tally.items())))
    assert tally["class: equal"] >= 150 and tally["functional: equal"] >= 500
    assert tally["class ap_normaliser: differs"] > 0  # the difference is real, and accounted for
    assert tally["class precision_length: differs"] > 0
    assert tally["class nonpositive_scores: differs"] > 0
    assert tally["class AP@k with ap_normaliser='retrieved': equal"] >= 18


@pytest.mark.full
def test_torchmetrics_reference_values_every_input():
    """Every input of torchmetrics' retrieval tests, 8 seeds; prints the tally by outcome."""
    tally = tally_for(range(8))
    print(dict(sorted(tally.items())))
    assert tally["class: equal"] >= 8 * 400 and tally["functional: equal"] >= 8 * 2000
    assert all(tally[f"class {r}: differs"] > 0 for r in ("ap_normaliser", "precision_length"))
