"""The shape of tierank.hps: the config path of rerank(), the one timed loop of ScorerBase, no import circles."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from tierank.hps.base import ModelOutputs, Scorer, ScorerBase
from tierank.hps.protocol import RerankConfig, rerank
from tierank.hps.variants import parse_variants

from .fakes import factory, write_set

HPS = Path(__file__).resolve().parents[2] / "src" / "tierank" / "hps"


def test_rerank_takes_a_config_or_its_arguments(tmp_path):
    data = write_set(tmp_path / "data")
    kw = dict(regimes="fp32,bf16", measures=["RR@10"], device="cpu")
    by_args = rerank(data, "yesno:fake", out_dir=tmp_path / "a", scorer_factory=factory(), **kw)
    config = RerankConfig(
        data, "yesno:fake", out_dir=tmp_path / "b", scorer_factory=factory(), **kw
    )
    by_config = rerank(config)
    assert by_args.rows == by_config.rows
    assert (tmp_path / "a" / "table.tsv").read_bytes() == (
        tmp_path / "b" / "table.tsv"
    ).read_bytes()
    with pytest.raises(TypeError):
        rerank(config, "yesno:fake")
    with pytest.raises(TypeError):
        rerank(data, "yesno:fake", no_such_option=1)


class Twice(ScorerBase):
    """The smallest scorer: a forward pass (the documents' lengths) and a scoring step per variant."""

    family = "yesno"
    model_dtype = "bf16"

    def __init__(self):
        self.forwards = 0

    @classmethod
    def from_spec(cls, source, group, *, batch_size, device, **options):
        return cls()

    def model_outputs(self, query, docs, variants):
        self.forwards += 1
        return ModelOutputs(
            np.array([len(d) for d in docs], dtype=float) if docs else None, ["r"] * len(docs)
        )

    def variant_scores(self, values, variant):
        return values * (2 if variant.hps else 1)


def test_scorer_base_runs_one_forward_pass_and_times_each_variant():
    s = Twice()
    assert isinstance(s, Scorer) and s.padding_sides == () and s.device == "cpu"
    res = s.score_query("q", ["a", "bbb"], parse_variants("bf16,bf16->fp32"))
    assert s.forwards == 1 and res.model_s >= 0 and set(res.scoring_s) == {"bf16", "bf16->fp32"}
    assert res.scores["bf16"].tolist() == [1.0, 3.0] and res.scores["bf16->fp32"].tolist() == [
        2.0,
        6.0,
    ]
    assert res.reasoning == ["r", "r"]
    empty = s.score_query("q", [], parse_variants("bf16"))
    assert empty.scores["bf16"].shape == (0,)
    s.close()  # nothing to free: a no-op


def _imports() -> dict[str, set[tuple[str, str | None]]]:
    """Module -> the tierank modules (and names) it imports, at any depth of its code."""
    mods = {}
    for p in HPS.rglob("*.py"):
        parts = p.relative_to(HPS.parent.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    out: dict[str, set[tuple[str, str | None]]] = {}
    for m, p in mods.items():
        found: set[tuple[str, str | None]] = set()
        for node in ast.walk(ast.parse(p.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("tierank")
            ):
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    found.add((full, None) if full in mods else (node.module, a.name))
            elif isinstance(node, ast.Import):
                found |= {(a.name, None) for a in node.names if a.name.startswith("tierank")}
        out[m] = found
    return out


def test_hps_has_no_import_circles_and_no_private_imports_across_modules():
    imports = _imports()
    graph = {
        m: {t for t, _ in targets if t in imports and t != m} for m, targets in imports.items()
    }
    private = [
        (m, t, n)
        for m, targets in imports.items()
        for t, n in targets
        if n and n.startswith("_") and t != m
    ]
    assert private == []

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                if nxt == goal:
                    return True
                seen.add(nxt)
                todo.append(nxt)
        return False

    assert [m for m in graph if reaches(m, m)] == []
