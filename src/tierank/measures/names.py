"""trec_eval's measure names, side by side with the ir_measures names.

``tierank eval -m`` (and [`tierank.evaluate`][tierank.evaluate]) accept every measure the way trec_eval 10
accepts it, next to the ir_measures strings of [`tierank.measures.parse_measure`][tierank.measures.parse_measure]:

* ``NAME`` or ``NAME.PARAMS``: ``map``, ``P`` (trec_eval's default cutoffs 5, 10, 15, 20, 30, 100,
  200, 500, 1000), ``P.5,10,20``, ``recall.100``, ``ndcg``, ``ndcg.1=3.5,2=9`` (gain map),
  ``ndcg_cut.10``, ``map_cut.100``, ``recip_rank``, ``Rprec``, ``success.1,5`` (default 1, 5, 10),
  ``bpref``, ``iprec_at_recall`` (default the 11 levels 0.0, 0.1, ..., 1.0), ``11pt_avg``,
  ``gm_map``, ``set_P``, ``set_recall``, ``set_F`` / ``set_F.0.5``, ``set_map``, ``num_q``,
  ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``, ``rbp`` / ``rbp.p=0.8``,
  ``infAP``, ``gm_bpref``, ``Rprec_mult`` (default 0.2, 0.4, ..., 2.0), ``utility`` / ``utility.1,-1,0,0``,
  ``relative_P``, ``set_relative_P``;
* the nicknames ``official`` (trec_eval's default set), ``set`` and ``all_trec``.

The source is trec_eval 10.0 (usnistgov/trec_eval): ``measures.c`` (the measure table, whose order
is the print order, and the nicknames), ``trec_eval.c`` (``mark_measure``: the name is what precedes
the first ``.``, the parameters what follows), ``meas_init.c`` (parameter parsing: cutoff lists are
comma separated, sorted ascending, duplicates and cutoffs <= 0 refused; printed names ``P_5``
(``%s_%ld``), ``iprec_at_recall_0.10`` (``%s_%3.2f``), and for measures with free parameters the
parameter text appended verbatim, ``rbp_p=0.8``, ``set_F_0.5``) and the ``m_*.c`` files (defaults).
trec_eval quirks kept on purpose so that the output is the same: parameters of a measure given
twice (``-m P.5 -m P.10``) are taken from the first and the others ignored (trec_eval does so
silently; tierank adds a note); the nicknames mark measures with their default (or given) parameters.

Semantics (checked against the real trec_eval 10 by ``tests/crosscheck/test_trec_eval_binary.py``):

* ``rbp``: trec_eval's default persistence is p = 0.9 (``m_rbp.c``), so ``rbp`` is
  ``RBP(p=0.9,gain='trec_eval')``, not tierank's default 0.8.  trec_eval's rbp takes the qrels grades
  as gains and, when the query's top grade G exceeds 1, rescales them to [0, 1], so a document counts
  grade / G (``min``/``max`` are read before being set in C; the released binary reads them as 0,
  which is the definition's own min); it ignores ``-l``.  ``gain='trec_eval'`` is that; tierank's
  plain RBP is binary (grade >= rel) and is not printed under trec_eval's name.  Gain parameters
  (``rbp.2=5``) are refused.
* ``set_F.x``: trec_eval computes (x+1) P R / (R + x P); it maps to ``SetF(beta=x)``.
* ``ndcg.L=G,...``: trec_eval's gain map (levels not named keep gain = level) maps to
  ``nDCG(gains={L:G,...})``.
* ``G``, ``binG``, ``ndcg_rel``, ``Rndcg`` (trec_eval's experimental gain measures) map to ``G``,
  ``BinG``, ``nDCG_rel``, ``RnDCG`` (`tierank.measures.trec_gain`), a gain map ``G.1=2,2=5`` to
  ``G(gains={1:2,2:5})``; ``unj.5,10`` to ``Unj@5``, ``Unj@10`` (default cutoffs 5, 10,
  20) and ``rbp_resid`` / ``rbp_resid.p=0.8`` to ``RBP_resid(p=0.9)`` / ``RBP_resid(p=0.8)``
  (`tierank.measures.unjudged`); ``relstring`` / ``relstring.20`` to ``RelString@10`` /
  ``RelString@20``, a string per query (the tie-oblivious ordering's;
  `tierank.measures.relstring`) that only ``--format trec_eval`` prints.
* ``11pt_avg.0.25,0.5,0.75`` maps to ``IPrecAvg(levels='0.25,0.5,0.75')``, printed
  ``11pt_avg_0.25,0.5,0.75`` (the text as given), averaged as trec_eval averages the levels, in the
  order given.
* Rank cutoffs are read as trec_eval's ``atol`` reads them: ``ndcg_cut.10,20,23.4`` is
  ``ndcg_cut_10``, ``ndcg_cut_20`` and ``ndcg_cut_23``.
* ``all_prefs`` and ``qrels_jg`` (measures of trec_eval's ``-R prefs`` / ``-R qrels_jg`` files)
  are refused.
* Every measure of ``all_trec`` is implemented, so the nickname leaves nothing out.
* ``utility.p1,p2,p3,p4`` maps to ``Utility(p1=..,p2=..,p3=..,p4=..)``; ``-N`` (documents in the
  collection, read by trec_eval's ``utility`` only) sets its ``ndocs`` ([`Plan.with_docs_in_collection`][tierank.measures.plans.Plan.with_docs_in_collection]).
* ``Rprec_mult.x,...`` maps to ``RprecMult@x`` (precision at rank ``(long) (x N+ + 0.9)``), printed
  ``Rprec_mult_0.20`` as trec_eval prints it; ``relative_P.k`` to ``RelP@k``.

The reverse, [`trec_name`][tierank.measures.trec_naming.trec_name], gives the name trec_eval prints for a measure (``P@10`` ->
``P_10``) or None; [`trec_order`][tierank.measures.trec_naming.trec_order] its position in trec_eval's print order.  Unknown names get
"did you mean" suggestions ([`suggest`][tierank.measures.aliases.suggest]).

This module gathers the names of the rooms that do each job: `tierank.measures.trec_naming`
(trec_eval's measure table, its one print order and nicknames; the reverse names),
`tierank.measures.trec_forms` (how a name reads its parameters: the forms the families declare),
`tierank.measures.plans` (the evaluation plan: what ``-m`` asks for, what is computed and printed)
and `tierank.measures.aliases` (names across tools, suggestions).

Examples
--------
>>> [str(m) for m in resolve(["P.10,5", "map", "nDCG@10"])]
['P@5', 'P@10', 'AP', 'nDCG@10']
>>> [e.name for e in plan(["P.10,5", "map", "nDCG@10"]).printed]
['map', 'P_5', 'P_10', 'ndcg_cut_10']
>>> trec_name(parse_measure("nDCG@10")), trec_name(parse_measure("RR")), trec_name(parse_measure("F1@5"))
('ndcg_cut_10', 'recip_rank', None)
>>> suggest("MRR@10")
['RR@10']
"""

from __future__ import annotations

from .aliases import Tool, family_names, suggest
from .base import parse_measure
from .plans import Entry, Plan, plan, resolve
from .trec_naming import NICKNAMES, RUNID, TREC_ORDER, is_trec, trec_name, trec_order

__all__ = [
    "TREC_ORDER",
    "NICKNAMES",
    "RUNID",
    "Entry",
    "Plan",
    "plan",
    "resolve",
    "trec_name",
    "trec_order",
    "suggest",
    "is_trec",
    "Tool",
    "family_names",
    "parse_measure",
]
