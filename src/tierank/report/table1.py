"""The columns of the rerank protocol's Table 1 (the rows of ``table.json``), declared once: for the
protocol that writes the rows ([`tierank.hps.table`][tierank.hps.table]) and for the reports that read
them ([`tierank.report.html.rerank_report`][tierank.report.html.rerank_report],
[`tierank.report.terminal.rerank_table`][tierank.report.terminal.rerank_table]).

>>> STATS
('oblivious', 'expected', 'range', 'bias', 'min', 'max', 'std')
>>> OPTIONAL[:4]
('fp32', 'range', 'bias', 'std')
"""

from __future__ import annotations

__all__ = ["STATS", "TIES", "TIMES", "FIELDS", "TEXT", "NUMBERS", "OPTIONAL"]

#: the statistic columns (`tierank.results.COLUMNS`) in Table 1's order: the values and what the
#: ties change (range, bias) first, then min, max and std (a test checks they are COLUMNS)
STATS = ("oblivious", "expected", "range", "bias", "min", "max", "std")
#: the tie statistics of a variant's scores (named as `tierank.ties.summary.TieSummary.table1_fields` names them)
TIES = ("tied_share", "tie_groups", "mean_group", "max_group")
#: the forward pass, the scoring step and HPS's overhead
TIMES = ("model_s", "scoring_ms", "hps_overhead")
#: a row's columns, in order (the protocol adds ``query`` before them and its similarity columns after)
FIELDS = ("variant", "measure", "fp32", *STATS, *TIES, *TIMES, "queries")
#: what every row needs: text, and numbers
TEXT = ("variant", "measure")
NUMBERS = ("oblivious", "expected", "min", "max")
#: the columns a row may have, numbers or null (NaN) where present
OPTIONAL = tuple(f for f in FIELDS if f not in (*TEXT, *NUMBERS))
