"""Evaluation at any size, and many runs at once.

* `tierank.stream.evaluate`: a run read in query-aligned batches and evaluated batch by batch
  ([`evaluate_stream`][tierank.stream.evaluate_stream], [`iter_evaluate`][tierank.stream.iter_evaluate]); memory is bounded by the batch size, and the
  result equals [`tierank.evaluate`][tierank.evaluate] on the whole run bit for bit.
* `tierank.stream.combine`: the batches' per-query statistics put together exactly.
* `tierank.stream.partitioning`: a run not grouped by query written grouped by query with
  DuckDB, out of core ([`partition`][tierank.stream.partition]), never a home-made external sort.
* `tierank.stream.many`: many runs against one qrels read once ([`evaluate_many`][tierank.stream.evaluate_many]).
* `tierank.stream.workers`: worker processes that never outlive the evaluation
  ([`worker_pool`][tierank.stream.worker_pool]): they die with their parent, even one killed with SIGKILL, and are
  terminated at once when the evaluation stops on an error or an interrupt.

The blocks themselves are read by `tierank.io.blocks` ([`iter_ranges`][tierank.stream.iter_ranges], [`iter_blocks`][tierank.stream.iter_blocks],
[`iter_batches`][tierank.stream.iter_batches], re-exported here).
"""

from __future__ import annotations

from ..io.blocks import BLOCK_BYTES, iter_batches, iter_blocks, iter_ranges
from .combine import combine_parts
from .evaluate import CONDENSED_EMPTY, evaluate_stream, iter_evaluate
from .many import evaluate_many
from .partitioning import partition
from .workers import WATCH_SECONDS, worker_pool

__all__ = [
    "BLOCK_BYTES",
    "CONDENSED_EMPTY",
    "WATCH_SECONDS",
    "combine_parts",
    "evaluate_many",
    "evaluate_stream",
    "iter_batches",
    "iter_blocks",
    "iter_evaluate",
    "iter_ranges",
    "partition",
    "worker_pool",
]
