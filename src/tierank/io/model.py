"""Column-oriented containers for runs and qrels.

Identifiers are kept as Arrow string arrays (compact, and sortable bytewise as
trec_eval's ``strcmp`` sorts them); scores and grades as float64 numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa


@dataclass(frozen=True)
class Run:
    """A retrieval run: one row per (query, document) with a score.

    ``qid`` may be dictionary-encoded (as the file reader returns it).
    ``rank`` holds the file's rank column (NaN where absent or unparsable); it is
    informative only and never used for ordering.
    """

    qid: pa.Array
    docid: pa.Array
    score: np.ndarray
    rank: np.ndarray | None = None
    source: str = "run"

    def __len__(self) -> int:
        return len(self.score)


@dataclass(frozen=True)
class Qrels:
    """Relevance judgments: one row per judged (query, document) with a grade.

    A document absent from the qrels is *unjudged*, which tierank keeps distinct
    from *judged non-relevant* (grade <= 0).
    """

    qid: pa.Array
    docid: pa.Array
    grade: np.ndarray
    source: str = "qrels"

    def __len__(self) -> int:
        return len(self.grade)
