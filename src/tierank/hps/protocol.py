"""The low-precision reranking protocol, end to end (the paper's Table 1 on any model and set).

[`rerank`][tierank.hps.protocol.rerank] takes a [`RerankConfig`][tierank.hps.plan.RerankConfig] and runs
four stages, each in its own module, one after the other:

1. **plan** ([`tierank.hps.plan.plan_rerank`][tierank.hps.plan.plan_rerank]): every check, once, before
   any work (the model and the variants it supports, every option, the inputs, OUT/ and every file it
   will hold, then the device), OUT/ created; an immutable [`RerankPlan`][tierank.hps.plan.RerankPlan];
2. with OUT/ locked, **score** ([`tierank.hps.score.score`][tierank.hps.score.score]): the set read, every
   candidate scored under every variant through the score cache (`tierank.hps.cache`; a re-run
   scores nothing), and under each run-to-run setting;
3. **record** ([`tierank.hps.record.record`][tierank.hps.record.record]): each variant evaluated from the
   rows its run file holds, Table 1 (`tierank.hps.table`), the run-to-run variance and the settings:
   a [`ProtocolResult`][tierank.hps.record.ProtocolResult];
4. **write** ([`tierank.hps.output.write_outputs`][tierank.hps.output.write_outputs]): one TREC run per
   variant with exact scores, the reasoning of Rank1-style scorers, ``table.tsv`` and ``table.json``.

Timing: ``model_s`` is the forward pass (encoding; for Rank1-style scorers
generation plus the final pass), ``scoring_s`` the scoring step of the
variant alone.  HPS's overhead is ``(scoring_s(X->fp32) - scoring_s(X)) /
model_s``: the extra time the FP32 scoring step costs relative to the
forward pass.
"""

from __future__ import annotations

import os
from typing import Any

from tierank.hps.output import locked, write_outputs
from tierank.hps.plan import RERANK_MEASURES, RERANK_REGIMES, RerankConfig, plan_rerank
from tierank.hps.record import ProtocolResult, record
from tierank.hps.registry import model_help
from tierank.hps.score import score
from tierank.hps.table import TABLE_FIELDS

__all__ = [
    "rerank",
    "RerankConfig",
    "ProtocolResult",
    "TABLE_FIELDS",
    "MODEL_HELP",
    "RERANK_REGIMES",
    "RERANK_MEASURES",
]

#: The accepted ``--model`` spellings (from `tierank.hps.registry`).
MODEL_HELP = model_help()


def rerank(config: RerankConfig | str | os.PathLike, *args: Any, **options: Any) -> ProtocolResult:
    """Run the protocol: plan, then with OUT/ locked score, record and write; returns the
    [`ProtocolResult`][tierank.hps.record.ProtocolResult].

    ``config`` is a [`RerankConfig`][tierank.hps.plan.RerankConfig]; ``rerank(data_dir, model, regimes, measures, **options)``
    builds one from the same arguments (its fields, in its order).

    ``ray`` (True, or a Ray address such as ``"auto"`` or ``"HOST:6379"``) shards the queries over
    ``workers`` Ray workers, one model load each (one GPU each where the cluster has GPUs), writing into
    the same per-query cache: a killed run resumes with no query lost or scored twice
    ([`tierank.cluster`][tierank.cluster]).  ``batch_sizes`` also scores every variant under each of these batch sizes
    (the runs and Table 1 stay those of ``batch_size``) and reports the run-to-run variance in
    ``table.json`` (``variance``: the share of candidates whose score changed, E[M] per batch size and its
    spread; `tierank.hps.variance`); ``orders`` (seeds) also scores every variant with each query's
    candidates in a seeded random order (other batches, other padding); ``padding_sides`` (``"left"``,
    ``"right"``) also scores every variant with the batches padded on each side other than the scorer's
    default (the generative scorers: left; refused for the other kinds and the vLLM backend, which have no
    padding side to vary); ``repeat`` scores every variant that many times in all.
    ``settings["platform"]`` records the CPU, GPU, library versions and threads
    (`tierank.hps.machine.platform`).  ``backend`` ``"vllm"`` runs the model kinds that have a vLLM
    scorer through vLLM (`tierank.hps.vllm`; the variants keep their meaning, the cache key records
    the backend).
    """
    if isinstance(config, RerankConfig):
        if args or options:
            raise TypeError(
                "rerank(config) takes a RerankConfig alone (or the arguments of one, without it)"
            )
    else:
        config = RerankConfig(config, *args, **options)
    plan = plan_rerank(config)
    with locked(plan.output.dirs):
        scored = score(plan)
        result = record(plan, scored)
        write_outputs(plan, scored, result)
    return result
