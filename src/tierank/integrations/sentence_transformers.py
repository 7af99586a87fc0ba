"""Tie-aware drop-ins for sentence-transformers' retrieval and reranking evaluators.

sentence-transformers (Reimers & Gurevych, 2019; version 6.2 read here) evaluates during training
with ``InformationRetrievalEvaluator`` (bi-encoders) and ``CrossEncoderRerankingEvaluator``
(rerankers).  Each reports one value per metric for one arbitrary order of tied scores:

* the bi-encoder evaluator ranks by ``(-score, corpus_id)`` and keeps ``max(k)`` candidates per
  query (``torch.topk``, ties at the cutoff reselected by corpus id);
* the reranking evaluator's MRR ranks by ``np.argsort(scores)[::-1]`` (ties by reversed input
  position: 1 relevant first among 5 tied documents gets MRR 0.2, last gets 1.0), its nDCG is
  sklearn's tie-averaged ``ndcg_score`` (already the expectation) and its MAP sklearn's
  ``average_precision_score`` (a tie group is one threshold: 0.2 in that example).

Low-precision scores (BF16, int8) tie often.  The classes here take the same constructor and call,
so they fit ``SentenceTransformerTrainer(evaluator=...)`` / ``CrossEncoderTrainer(evaluator=...)``,
and return the usual keys holding the **expected** value over all orderings of tied scores
(exact: Yang et al. 2026), plus ``<key>_min`` and ``<key>_max`` (pessimal and optimal orderings; the
mean of per-query minima is the minimum of the mean since queries break ties independently) and
``..._tied_share`` / ``tied_share`` (share of the evaluated candidates whose score another
candidate of the same query shares).  They compute on the score tensors themselves with
`tierank.tensor.evaluate` (the numbers of [`tierank.evaluate`][tierank.evaluate] on the same data, in
float64): the bi-encoder's score matrix stays on the model's device (CPU or GPU) from the similarity
to the means, with no run written and no Python loop over documents.  The CSV files keep the stock
columns, filled with the expected values.  ``last_results`` / ``last_result`` hold the
`tierank.tensor.TensorResult` of the last call (per-query ``expected``, ``min``, ``max``,
``std`` and ``oblivious``).

* [`TieAwareInformationRetrievalEvaluator`][tierank.integrations.sentence_transformers.TieAwareInformationRetrievalEvaluator]: a query's candidates are every document scoring
  at least its ``max(k)``-th best score: a tie straddling the cutoff is kept whole, so every value
  at ``k <= max(k)`` is exact over the whole corpus.  ``accuracy@k`` is tierank's ``Success@k``,
  ``precision@k`` ``P@k``, ``recall@k`` ``R@k``, ``mrr@k`` ``RR@k``, ``ndcg@k`` ``nDCG@k``
  (binary gains) and ``map@k`` sentence-transformers' AP@k normalised by ``min(k, R)`` (tierank's
  ``AP@k`` times ``R / min(k, R)`` per query, a constant, so E, min and max stay exact).
* [`TieAwareCrossEncoderRerankingEvaluator`][tierank.integrations.sentence_transformers.TieAwareCrossEncoderRerankingEvaluator]: ``mrr@k`` is ``RR@k``, ``ndcg@k`` ``nDCG@k`` and
  ``map`` ``AP`` over each sample's candidates (relevant: the sample's positives among them, as
  stock); samples without a positive among the candidates count 0; the ``base_`` keys (the given
  ``documents`` order, which has no ties) are computed by tierank too.

Examples
--------
>>> import numpy as np, types
>>> class Tied:  # a model giving 5 documents one score: E[RR] = (1 + 1/2 + ... + 1/5) / 5
...     model_card_data = types.SimpleNamespace(set_evaluation_metrics=lambda *args: None)
...     def predict(self, pairs, **kw):
...         return np.full(len(pairs), 0.5, dtype=np.float32)
>>> ev = TieAwareCrossEncoderRerankingEvaluator(
...     [{"query": "q", "positive": ["p"], "negative": ["a", "b", "c", "d"]}], at_k=10)
>>> m = ev(Tied())
>>> round(m["mrr@10"], 4), m["mrr@10_min"], m["mrr@10_max"], m["tied_share"]
(0.4567, 0.2, 1.0, 1.0)
"""

from __future__ import annotations

import itertools
import json
import logging
import os
from typing import Any

import numpy as np

from ..errors import TierankInputError
from ..measures.names import family_names
from ..tensor import TensorResult, group_flat
from ..tensor import evaluate as tensor_evaluate
from . import require

require("sentence_transformers")
import torch  # noqa: E402
from sentence_transformers.cross_encoder.evaluation import CrossEncoderRerankingEvaluator  # noqa: E402
from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator  # noqa: E402

__all__ = ["TieAwareInformationRetrievalEvaluator", "TieAwareCrossEncoderRerankingEvaluator"]

logger = logging.getLogger(__name__)

#: sentence-transformers' metric family (``ndcg`` in ``ndcg@10``) -> tierank family, from the families'
#: declared names (``Measure.names.sentence_transformers``)
FAMILIES = family_names("sentence_transformers")
STATS = (("", "expected"), ("_min", "min"), ("_max", "max"))


def _pooled_tied_share(res: TensorResult, sizes) -> Any:
    """The share of tied candidates over all rows' candidates (``sizes``: valid candidates per row),
    from the per-row shares (tied counts are whole numbers: rounded back exactly)."""
    tied = (res.tied_share * sizes).round().sum()
    total = sizes.sum()
    return tied / total if float(total) > 0 else tied * 0.0


class TieAwareInformationRetrievalEvaluator(InformationRetrievalEvaluator):
    """``InformationRetrievalEvaluator`` giving expected values over tie orderings (see the module).

    Same arguments and keys (``{name}_{score_function}_ndcg@10``, ...); extra keys
    ``{name}_{score_function}_{metric}@{k}_min`` / ``_max`` and ``{name}_{score_function}_tied_share``.
    `last_results` maps each score function to the `tierank.tensor.TensorResult` of the
    last call (one row per query, in ``queries_ids`` order; candidates: every document scoring at
    least the query's ``max(k)``-th best score).  With ``write_predictions`` the JSONL lists the kept
    candidates, ties at the cutoff included, by ``(-score, corpus_id)``.
    """

    last_results: dict

    def _measures(self) -> dict[tuple[str, int], str]:
        out = {}
        f = FAMILIES
        for k in self.accuracy_at_k:
            out[("accuracy@k", k)] = f"{f['accuracy']}@{k}"
        for k in self.precision_recall_at_k:
            out[("precision@k", k)] = f"{f['precision']}@{k}"
            out[("recall@k", k)] = f"{f['recall']}@{k}"
        for k in self.mrr_at_k:
            out[("mrr@k", k)] = f"{f['mrr']}@{k}"
        for k in self.ndcg_at_k:
            out[("ndcg@k", k)] = f"{f['ndcg']}@{k}"
        for k in self.map_at_k:
            out[("map@k", k)] = f"{f['map']}@{k}"
        return out

    def relevance(self) -> tuple[np.ndarray, np.ndarray]:
        """``(keys, n_relevant)``: ``query position * corpus size + corpus position`` of every
        (query, relevant document in the corpus) pair, sorted, and each query's number of relevant
        documents (those missing from the corpus too, as stock's recall and nDCG count them)."""
        nc = len(self.corpus_ids)
        sets = [self.relevant_docs[q] for q in self.queries_ids]
        nrel = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
        docs = np.array(list(itertools.chain.from_iterable(sets)), dtype=object).astype(str)
        qpos = np.repeat(np.arange(len(sets), dtype=np.int64), nrel)
        ids = np.array(self.corpus_ids, dtype=object).astype(str)
        order = np.argsort(ids, kind="stable")
        at = np.minimum(np.searchsorted(ids[order], docs), max(nc - 1, 0))
        found = ids[order][at] == docs if nc else np.zeros(len(docs), dtype=bool)
        return np.unique(qpos[found] * nc + order[at[found]]), nrel

    def _chunk(self, corpus_model, corpus_embeddings, start: int, end: int):
        if corpus_embeddings is None:
            return self.embed_inputs(
                corpus_model,
                self.corpus[start:end],
                encode_fn_name="document",
                prompt_name=self.corpus_prompt_name,
                prompt=self.corpus_prompt,
            )
        if isinstance(corpus_embeddings, torch.Tensor) and corpus_embeddings.is_sparse:
            return corpus_embeddings.index_select(
                0, torch.arange(start, end, device=corpus_embeddings.device)
            )
        return corpus_embeddings[start:end]

    def candidates(self, query_embeddings, corpus_model, corpus_embeddings, max_k: int) -> dict:
        """Per score function, ``(query position, corpus position, score)`` tensors, on the scores'
        device and in their dtype, of every document scoring at least its query's ``max_k``-th best
        score over the whole corpus, ties at that score kept; by query, then corpus position.

        Scores are compared in the score function's own dtype (no tie is created or broken).
        """
        if not self.corpus:
            raise TierankInputError("InformationRetrievalEvaluator: the corpus is empty")
        score_functions = self.score_functions or {}
        kept: dict[str, list[tuple[Any, Any, Any]]] = {name: [] for name in score_functions}
        for start in range(0, len(self.corpus), self.corpus_chunk_size):
            end = min(start + self.corpus_chunk_size, len(self.corpus))
            sub = self._chunk(corpus_model, corpus_embeddings, start, end)
            for name, fn in score_functions.items():
                dense = fn(query_embeddings, sub)
                scores = dense.to_dense() if dense.is_sparse else dense
                k = min(max_k, scores.shape[1])
                # the chunk's k-th best score per query; every score at or above it is kept, so the
                # global top max_k and all its ties survive (a chunk holding a tie of the global
                # max_k-th score cannot have max_k scores above it)
                thr = (
                    torch.topk(scores, k, dim=1, largest=True, sorted=False)
                    .values.min(dim=1, keepdim=True)
                    .values
                )
                qi, ci = torch.nonzero(scores >= thr, as_tuple=True)
                kept[name].append((qi, ci + start, scores[qi, ci]))
        out = {}
        for name, parts in kept.items():
            qi, ci, sc = (torch.cat([p[j] for p in parts]) for j in range(3))
            if not bool(torch.isfinite(sc).all()):
                bad = int(qi[~torch.isfinite(sc)][0])
                raise TierankInputError(
                    f"{name} scores: NaN or infinite score for query {self.queries_ids[bad]!r}"
                )
            # each query's max_k-th best score over all chunks: sort by (query, -score)
            o1 = torch.argsort(sc, descending=True, stable=True)
            o2 = torch.argsort(qi[o1], stable=True)
            qs, ss = qi[o1[o2]], sc[o1[o2]]
            nq = len(self.queries)
            counts = torch.bincount(qs, minlength=nq)
            starts = torch.cumsum(counts, 0) - counts
            kth = ss[starts + torch.clamp(counts, max=max_k) - 1]  # the corpus is not empty
            keep = sc >= kth[qi]
            qi, ci, sc = qi[keep], ci[keep], sc[keep]
            o = torch.argsort(qi, stable=True)  # by query, then corpus position (chunks in order)
            out[name] = (qi[o], ci[o], sc[o])
        return out

    def compute_all_metrics(
        self, model, corpus_model=None, corpus_embeddings=None, output_path=None
    ):
        corpus_model = model if corpus_model is None else corpus_model
        measures = self._measures()
        max_k = max(k for _, k in measures)
        query_embeddings = self.embed_inputs(
            model,
            self.queries,
            encode_fn_name="query",
            prompt_name=self.query_prompt_name,
            prompt=self.query_prompt,
        )
        keys_np, nrel_np = self.relevance()
        nq, nc = len(self.queries), len(self.corpus_ids)
        names = list(dict.fromkeys(measures.values()))
        self.last_results, scores = {}, {}
        cands = self.candidates(query_embeddings, corpus_model, corpus_embeddings, max_k)
        for name, (qi, ci, sc) in cands.items():
            dev = sc.device
            keys = torch.as_tensor(keys_np, device=dev)
            label = torch.isin(qi * nc + ci, keys).to(torch.int64)
            s2, l2, mask, rows = group_flat(sc, label, qi)
            nrel = torch.as_tensor(nrel_np, dtype=torch.float64, device=dev)[rows]
            # float64: bf16, fp16 and fp32 scores convert exactly, keeping their ties
            res = tensor_evaluate(
                s2, l2, names, mask=mask, n_relevant=nrel, dtype="float64", tie_break="input"
            )
            self.last_results[name] = res
            entries, values = [], []
            for (metric, k), m in measures.items():
                scale = nrel / torch.clamp(nrel, max=float(k)) if metric == "map@k" else 1.0
                for suffix, stat in STATS:
                    entries.append((metric + suffix, k))
                    # every query of the evaluator counts, as in the stock mean
                    values.append((getattr(res[m], stat) * scale).sum() / nq)
            values.append(_pooled_tied_share(res, mask.sum(dim=1).to(torch.float64)))
            host = torch.stack(values).tolist()  # one copy to the host
            out: dict = {}
            for (key, k), v in zip(entries, host):
                out.setdefault(key, {})[k] = v
            out["tied_share"] = {0: host[-1]}  # one entry: the key gets no @k
            scores[name] = out
            if self.write_predictions and output_path is not None:
                self._write_predictions(
                    output_path,
                    name,
                    qi.cpu().numpy(),
                    ci.cpu().numpy(),
                    sc.to(torch.float64).cpu().numpy(),
                )
        for name in self.score_function_names:
            logger.info(f"Score-Function: {name} (expected over tie orderings)")
            self.output_scores(scores[name])
        return scores

    compute_metrices = compute_all_metrics

    def _write_predictions(self, output_path: str, name: str, qi, ci, sc) -> None:
        os.makedirs(output_path, exist_ok=True)
        path = os.path.join(output_path, self.predictions_file.replace(".jsonl", f"_{name}.jsonl"))
        cids = np.array([str(c) for c in self.corpus_ids], dtype=object)[ci]
        order = np.lexsort((cids, -sc, qi))
        bounds = np.searchsorted(qi[order], np.arange(len(self.queries) + 1))
        with open(path, "w", encoding="utf-8") as f:
            for q in range(len(self.queries)):  # one line per query
                sel = order[bounds[q] : bounds[q + 1]]
                res = [
                    {"corpus_id": self.corpus_ids[c], "score": s}
                    for c, s in zip(ci[sel].tolist(), sc[sel].tolist())
                ]
                f.write(
                    json.dumps(
                        {"query_id": self.queries_ids[q], "query": self.queries[q], "results": res}
                    )
                    + "\n"
                )


class TieAwareCrossEncoderRerankingEvaluator(CrossEncoderRerankingEvaluator):
    """``CrossEncoderRerankingEvaluator`` giving expected values over tie orderings (see the module).

    Same arguments and keys (``{name}_map``, ``{name}_mrr@{at_k}``, ``{name}_ndcg@{at_k}`` and, for
    ``documents`` samples, the ``base_`` ones); extra keys ``map_min``, ``map_max``,
    ``mrr@{at_k}_min``, ... and ``tied_share``.  `last_result` is the
    `tierank.tensor.TensorResult` of the last call's reranked candidates (one row per sample
    with a positive among its candidates; ``queries``: the sample positions; candidates in the
    evaluator's pair order, positives first).
    """

    def _prepare(self):
        """The stock preprocessing: the (query, document) pairs, each sample's relevance list (None
        without a positive), each ``documents`` sample's base list (None without a positive in it)."""
        pairs: list[list[Any]] = []
        rel: list[list[int] | None] = []
        base: list[list[int] | None] = []
        npos: list[int] = []
        nneg: list[int] = []
        for i, inst in enumerate(self.samples):
            for key in ("query", "positive"):
                if key not in inst:
                    raise TierankInputError(
                        f"sample {i}: CrossEncoderRerankingEvaluator requires a {key!r} key"
                    )
            if ("negative" in inst) == ("documents" in inst):
                raise TierankInputError(
                    f"sample {i}: CrossEncoderRerankingEvaluator requires exactly one of "
                    "'negative' and 'documents'"
                )
            positive = (
                [inst["positive"]] if isinstance(inst["positive"], str) else list(inst["positive"])
            )
            documents = inst.get("documents")
            if documents is not None:
                b = [int(d in positive) for d in documents]
                base.append(
                    b + [1] * (len(positive) - sum(b)) if sum(b) else None
                )  # missing positives last
                if self.always_rerank_positives:
                    docs = positive + [d for d in documents if d not in positive]
                    r = [1] * len(positive) + [0] * (len(docs) - len(positive))
                else:
                    docs, r = list(documents), b
            else:
                docs = positive + list(inst["negative"])
                r = [1] * len(positive) + [0] * len(inst["negative"])
            npos.append(len(positive))
            nneg.append(len(r) - sum(r))
            if sum(r) == 0:
                rel.append(None)
                continue
            rel.append(r)
            pairs.extend([inst["query"], d] for d in docs)
        return pairs, rel, base, npos, nneg

    def _means(self, lists, scores=None):
        """{key: mean over ``lists``} of E/min/max, the pooled tied share and the TensorResult
        (None without candidates) of per-sample relevance lists: one row per sample with a
        positive, its candidates in list order, scored by ``scores`` (or len..1 for a ranked list:
        no ties)."""
        k, n = self.at_k, len(lists)
        f = FAMILIES
        keys = {"map": f["map"], f"mrr@{k}": f"{f['mrr']}@{k}", f"ndcg@{k}": f"{f['ndcg']}@{k}"}
        idx = np.array([i for i, x in enumerate(lists) if x is not None], dtype=np.int64)
        if not len(idx):
            return {key + s: 0.0 for key in keys for s, _ in STATS}, 0.0, None
        lens = np.array([len(lists[i]) for i in idx], dtype=np.int64)
        sample = np.repeat(idx, lens)
        if scores is None:
            pos = np.arange(len(sample)) - np.repeat(np.cumsum(lens) - lens, lens)
            scores = (np.repeat(lens, lens) - pos).astype(np.float64)
        scores = np.asarray(scores)
        bad = ~np.isfinite(scores)
        if bad.any():
            raise TierankInputError(
                f"cross-encoder scores: NaN or infinite score for sample {int(sample[bad][0])}"
            )
        is_rel = np.concatenate([np.asarray(lists[i], dtype=np.int64) for i in idx])
        res = tensor_evaluate(
            scores, is_rel, list(keys.values()), indexes=sample, dtype="float64", tie_break="input"
        )
        means = {
            key + s: float(np.sum(np.asarray(getattr(res[m], stat))) / n)
            for key, m in keys.items()
            for s, stat in STATS
        }
        return means, float(_pooled_tied_share(res, lens.astype(np.float64))), res

    def _metrics(self, model) -> dict[str, float]:
        """Unprefixed metrics (expected, ``_min``, ``_max``, ``tied_share``, ``base_*``)."""
        pairs, rel, base, npos, nneg = self._prepare()
        scores = None
        if pairs:
            scores = model.predict(
                pairs,
                prompt_name=self.prompt_name,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                show_progress_bar=self.show_progress_bar,
            )
            scores = np.asarray(scores, dtype=np.float64)
            if scores.shape != (len(pairs),):
                raise TierankInputError(
                    f"the model returned scores of shape {scores.shape} for {len(pairs)} "
                    "pairs: one score per pair is needed (num_labels=1)"
                )
        self._counts = (npos, nneg)
        means, tied_share, res = self._means(rel, scores)
        self.last_result = res
        metrics = {key: v for key, v in means.items() if not key.endswith(("_min", "_max"))}
        metrics.update({key: v for key, v in means.items() if key.endswith(("_min", "_max"))})
        metrics["tied_share"] = tied_share
        if base:  # stock: the mean over the samples with documents
            base_means, _, _ = self._means(base)
            metrics.update(
                {
                    "base_" + key: v
                    for key, v in base_means.items()
                    if not key.endswith(("_min", "_max"))
                }
            )
        return metrics

    def __call__(
        self, model, output_path=None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        when = (
            ""
            if epoch == -1
            else f" after epoch {epoch}" + ("" if steps == -1 else f" after {steps} steps")
        )
        logger.info(
            f"{type(self).__name__}: Evaluating the model on the {self.name} dataset{when}:"
        )
        raw = self._metrics(model)
        k = self.at_k
        npos, nneg = self._counts
        if npos:
            logger.info(
                f"Queries: {len(self.samples)}\tPositives: Min {np.min(npos):.1f}, Mean {np.mean(npos):.1f}, "
                f"Max {np.max(npos):.1f}\tNegatives: Min {np.min(nneg):.1f}, Mean {np.mean(nneg):.1f}, "
                f"Max {np.max(nneg):.1f}"
            )
        for key in ("map", f"mrr@{k}", f"ndcg@{k}"):
            logger.info(
                f"{key.upper()}: E {raw[key] * 100:.2f} [min {raw[key + '_min'] * 100:.2f}, "
                f"max {raw[key + '_max'] * 100:.2f}]"
            )
        metrics = self.prefix_name_to_metrics(raw, self.name)
        if "base_map" in raw:
            card = {
                key: f"{raw[key]:.4f} ({raw[key] - raw['base_' + key]:+.4f})"
                for key in ("map", f"mrr@{k}", f"ndcg@{k}")
            }
            # strings on the card (the ignore is unused without sentence-transformers)
            named: Any = self.prefix_name_to_metrics(card, self.name)  # type: ignore[arg-type,unused-ignore]
            self.store_metrics_in_model_card_data(model, named, epoch, steps)
        else:
            self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        if output_path is not None and self.write_csv:
            os.makedirs(output_path, exist_ok=True)
            path = os.path.join(output_path, self.csv_file)
            new = not os.path.isfile(path)
            with open(path, mode="w" if new else "a", encoding="utf-8", newline="") as f:
                if new:
                    f.write(",".join(self.csv_headers) + "\n")
                f.write(
                    ",".join(
                        map(str, [epoch, steps, raw["map"], raw[f"mrr@{k}"], raw[f"ndcg@{k}"]])
                    )
                    + "\n"
                )
        return metrics
