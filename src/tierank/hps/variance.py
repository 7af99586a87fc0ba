"""Run-to-run variance: a second source of uncertainty beside ties.

A low-precision model's scores depend on the batch size and padding (the paper's footnote 5) and on
the hardware.  [`batch_variance`][tierank.hps.variance.batch_variance] compares the scores of each variant under several settings
(batch sizes, and candidate orders: [`shuffle_candidates`][tierank.hps.variance.shuffle_candidates] puts each query's candidates in a
seeded random order, which changes which documents share a batch and how much each is padded),
each scored through its own cache key, so a re-run scores nothing: per variant the share of
candidates whose score changed against the first setting, and per measure E[M] under each setting
and its spread (max - min).  [`padding_sides`][tierank.hps.variance.padding_sides] checks the padding sides asked for (the
generative scorers pad left or right: [`tierank.hps.hf.generative`][tierank.hps.hf.generative]).  Where the scores were computed
is recorded by `tierank.hps.machine.platform`.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tierank.errors import Problem, TierankInputError

#: The padding sides a scorer may offer (``padding_sides`` on its class, its default first).
SIDES = ("left", "right")


def padding_sides(
    sides,
    family: str,
    backend: str,
    scorer_cls: type | None,
    offered_by: Sequence[str] = (),
    no_padding: str | None = None,
) -> tuple[str, list[str]]:
    """The default padding side of ``scorer_cls`` and the other ``sides`` to score, checked before any work.

    A scorer class offers sides through its ``padding_sides`` attribute (default first).  A backend that
    pads nothing (``no_padding``: its reason, `tierank.hps.registry.Backend.no_padding`) and the
    encoders have none, and are refused with the reason; ``offered_by`` names the model kinds that have
    (for the message).

    >>> class S:
    ...     padding_sides = ("left", "right")
    >>> padding_sides(["Right", "left"], "yesno", "hf", S)
    ('left', ['right'])
    >>> padding_sides(["right"], "cross", "hf", object, ["yesno", "rank1"])
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: padding sides: model kind 'cross' has no padding side to vary: its scorer pads on its tokenizer's side only, and BERT-style encoders (MiniLM, ms-marco cross-encoders) add absolute position embeddings, so for them the other side would change the input itself (every real token's position), not only the arithmetic; offered by: yesno, rank1
    """
    bad = [x for x in sides if str(x).strip().lower() not in SIDES]
    if bad or not sides:
        raise TierankInputError(
            [
                Problem(
                    "", None, f"padding sides: give {' and/or '.join(SIDES)}, got {list(sides)!r}"
                )
            ]
        )
    wanted = list(dict.fromkeys(str(x).strip().lower() for x in sides))
    if no_padding:  # the backend's reason (`tierank.hps.registry.Backend.no_padding`)
        raise TierankInputError(
            [
                Problem(
                    "",
                    None,
                    f"padding sides: the {backend} backend has no padding side to "
                    f"vary: {no_padding}",
                )
            ]
        )
    offered = getattr(scorer_cls, "padding_sides", None)
    if not offered:
        raise TierankInputError(
            [
                Problem(
                    "",
                    None,
                    (
                        f"padding sides: model kind {family!r} has no padding side to vary: its scorer pads on its "
                        "tokenizer's side only, and BERT-style encoders (MiniLM, ms-marco cross-encoders) add absolute position "
                        "embeddings, so for them the other side would change the input itself (every real token's position), "
                        "not only the arithmetic"
                        + (f"; offered by: {', '.join(offered_by)}" if offered_by else "")
                    ),
                )
            ]
        )
    unknown = [x for x in wanted if x not in offered]
    if unknown:
        raise TierankInputError(
            [
                Problem(
                    "",
                    None,
                    f"padding sides: model kind {family!r} offers "
                    f"{', '.join(offered)}, not {', '.join(unknown)}",
                )
            ]
        )
    return offered[0], [x for x in wanted if x != offered[0]]


def batch_variance(
    batch_sizes: Sequence[int],
    scores: Mapping[int, Mapping[str, Mapping[str, np.ndarray]]],
    evals: Mapping[Any, Mapping[str, Any]],
    measures: Sequence,
) -> dict:
    """Per variant: ``changed_share`` (candidates whose score differs from the first batch size's, under
    any other), and per measure ``expected`` by batch size and their ``spread``, beside the ties'
    ``tie_range`` (max - min of the measure over tie orderings, by batch size) and ``larger``:
    ``ties`` where the widest tie range is at least the spread across the settings, else
    ``settings`` (which of the two moves the number more); ``spreads``: the spread per source of
    change (`source_spreads`: batch sizes, order, padding, repeat) and ``largest``: which of the ties
    and those sources moves the number most.

    ``scores[bs][variant][qid]`` are the candidates' scores; ``evals[bs][variant]`` the EvalResult.

    >>> s = {1: {"v": {"q": np.array([0.5, 0.25])}}, 8: {"v": {"q": np.array([0.5, 0.26])}}}
    >>> batch_variance([1, 8], s, {}, [])["v"]["changed_share"]
    0.5
    """
    first = batch_sizes[0]
    out: dict = {}
    for v, per_q in scores[first].items():
        total = sum(len(x) for x in per_q.values())
        changed = np.zeros(total, dtype=bool)
        for bs in batch_sizes[1:]:
            other = scores[bs][v]
            changed |= np.concatenate([per_q[q] != other[q] for q in per_q]) if per_q else changed
        row: dict = {"changed_share": float(changed.mean()) if total else 0.0, "measures": {}}
        aggregates = (
            {bs: evals[bs][v].aggregate().set_index("measure") for bs in batch_sizes}
            if measures
            else {}
        )
        for m in measures:
            e = {str(bs): float(aggregates[bs].loc[str(m), "expected"]) for bs in batch_sizes}
            ties = {str(bs): float(aggregates[bs].loc[str(m), "range"]) for bs in batch_sizes}
            vals = list(e.values())
            spread = max(vals) - min(vals)
            spreads = source_spreads(batch_sizes, e)
            moved = {"ties": max(ties.values()), **spreads}
            row["measures"][str(m)] = {
                "expected": e,
                "spread": spread,
                "tie_range": ties,
                "spreads": spreads,
                "larger": "ties" if max(ties.values()) >= spread else "settings",
                "largest": max(moved, key=lambda k: moved[k]),  # ties first on equal
            }
        out[v] = row
    return out


def source(key: Any) -> str:
    """The kind of a run-to-run setting's key: ``batch sizes`` (an int), else its name before ``=``
    (``order``, ``padding``, ``repeat``).

    >>> source(8), source("order=3"), source("repeat=2")
    ('batch sizes', 'order', 'repeat')
    """
    return "batch sizes" if isinstance(key, int) else str(key).partition("=")[0]


def source_spreads(keys: Sequence[Any], expected: Mapping[str, float]) -> dict[str, float]:
    """The spread (max - min) of E[M] per source of run-to-run change: over the first setting (the
    table's) and the settings of that source only.

    >>> s = source_spreads([16, 8, "repeat=2"], {"16": 0.5, "8": 0.52, "repeat=2": 0.49})
    >>> {k: round(v, 6) for k, v in s.items()}
    {'batch sizes': 0.02, 'repeat': 0.01}
    """
    first = expected[str(keys[0])]
    out: dict[str, list[float]] = {}
    for k in keys[1:]:
        out.setdefault(source(k), [first]).append(expected[str(k)])
    return {name: max(v) - min(v) for name, v in out.items()}


def shuffle_candidates(data, seed: int):
    """``data`` (a `tierank.io.beir.BeirSet`) with each query's candidates in a random order drawn
    from (``seed``, the query id): the same documents, scored in another order and so in other batches.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class D:
    ...     candidates: dict
    >>> a, b = (shuffle_candidates(D({"q": list("abcdefgh")}), 1).candidates["q"] for _ in range(2))
    >>> a == b, sorted(a) == list("abcdefgh"), a != list("abcdefgh")
    (True, True, True)
    """
    out = {}
    for q, docs in data.candidates.items():
        rng = np.random.default_rng([int(seed), zlib.crc32(q.encode())])
        out[q] = [docs[i] for i in rng.permutation(len(docs))]
    return replace(data, candidates=out)


def realign(record: Mapping, docids: Sequence[str]) -> np.ndarray:
    """The scores of a cache record, in the order of ``docids`` (the same documents, in another order).

    >>> realign({"docids": ["b", "a"], "scores": [2.0, 1.0]}, ["a", "b"]).tolist()
    [1.0, 2.0]
    """
    by_doc = dict(zip(record["docids"], record["scores"]))
    return np.asarray([by_doc[d] for d in docids], dtype=np.float64)
