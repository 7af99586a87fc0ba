"""A measure family's metadata: its names in other tools ([`FamilyNames`][tierank.measures.family.FamilyNames]) and its description
as data ([`FamilyInfo`][tierank.measures.family.FamilyInfo])."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FamilyNames", "FamilyInfo"]


@dataclass(frozen=True)
class FamilyNames:
    """The names of a measure family in the tools tierank reads and writes (`Measure.names`);
    the name tables of [`tierank.measures.names`][tierank.measures.names] and of the adapters in `tierank.integrations`
    are derived from these ([`tierank.measures.names.family_names`][tierank.measures.names.family_names]).  None: the tool has no such measure.

    Attributes
    ----------
    trec_eval : str or None
        trec_eval's name of the family without a cutoff (``map``), printed as is.
    trec_eval_cut : str or None
        trec_eval's name of the family at rank cutoffs (``map_cut``: ``map_cut.10`` asks, ``map_cut_10`` prints).
    trec_eval_cutoffs : tuple of int
        trec_eval's default cutoffs of `trec_eval_cut` (empty: its long list 5, 10, ..., 1000).
    trec_eval_form : TrecForm or None
        how the `trec_eval` name reads its parameters and prints its lines where trec_eval does not
        ignore them (`tierank.measures.trec_forms`: ``Levels``, ``GainMap``, ``Persistence`` ...).
    ir_measures : str or None
        ir_measures' family name; "" (the default): the tierank family name, which follows ir_measures.
    ranx : str or None
        ranx's metric name (``ndcg``, written ``ndcg@10``, ``ndcg@10-l2``).
    mteb : str or None
        the family in MTEB's retrieval keys (``ndcg`` in ``ndcg_at_10``).
    sentence_transformers : str or None
        the family in sentence-transformers' evaluator keys (``ndcg`` in ``ndcg@10``).
    """

    trec_eval: str | None = None
    trec_eval_cut: str | None = None
    trec_eval_cutoffs: tuple[int, ...] = ()
    trec_eval_form: Any = (
        None  # a tierank.measures.trec_forms.TrecForm (not imported: it reads Measure)
    )
    ir_measures: str | None = ""
    ranx: str | None = None
    mteb: str | None = None
    sentence_transformers: str | None = None


@dataclass(frozen=True)
class FamilyInfo:
    """A family's metadata ([`Measure.about`][tierank.measures.protocol.Measure.about]): its name in prose, a one-line definition, the work
    that defines it ("" when none is given) and its names in other tools ([`FamilyNames`][tierank.measures.family.FamilyNames])."""

    family: str
    pretty: str
    definition: str
    citation: str
    names: FamilyNames

    @property
    def ir_measures(self) -> str | None:
        """ir_measures' name of the family (None: ir_measures has none)."""
        return self.family if self.names.ir_measures == "" else self.names.ir_measures

    @property
    def trec_eval(self) -> list[str]:
        """trec_eval's names of the family as declared (``map``, ``map_cut``)."""
        return [n for n in (self.names.trec_eval, self.names.trec_eval_cut) if n]
