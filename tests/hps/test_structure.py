"""The shape of tierank.hps: the config path of rerank(), the one timed loop of ScorerBase, no import circles."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tierank.errors import TierankInputError
from tierank.hps.base import ModelOutputs, Scorer, ScorerBase
from tierank.hps.command import RerankOptions, show_result
from tierank.hps.protocol import RERANK_MEASURES, RerankConfig, rerank
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


@pytest.mark.parametrize(
    "kw, message",
    [
        ({}, "give -o/--output DIR (runs, table and cache are written there)"),
        ({"workers": 2}, "--workers needs --ray"),
        ({"batch_sizes": "1,x"}, "--batch-sizes: '1,x' is not a comma-separated list of integers"),
        ({"batch_sizes": "0"}, "--batch-sizes: give positive integers, e.g. 1,8,32 (got '0')"),
        ({"orders": "-1"}, "--orders: give integers, e.g. 1,2 (got '-1')"),
        ({"padding_sides": " , "}, "--padding-sides: give left and/or right"),
    ],
)
def test_rerank_options_are_checked_when_made(tmp_path, kw, message):
    if kw:
        kw = {"output": tmp_path / "o", **kw}
    with pytest.raises(TierankInputError, match=re.escape(message)):
        RerankOptions(tmp_path, "yesno:fake", **kw)
    assert not (tmp_path / "o").exists()


def test_rerank_options_make_the_protocol_config_and_its_table(tmp_path, capsys):
    data = write_set(tmp_path / "data")
    options = RerankOptions(
        data,
        "yesno:fake",
        regimes="fp32,bf16",
        measures=("RR@10",),
        output=tmp_path / "a",
        device="cpu",
        batch_sizes="1, 4",
        orders="0,2",
    )
    config = options.config()
    assert (config.batch_sizes, config.orders, config.padding_sides) == ([1, 4], [0, 2], None)
    assert (config.out_dir, config.ray, config.measures) == (tmp_path / "a", None, ["RR@10"])
    assert RerankOptions(data, "yesno:fake", cache=tmp_path / "c").config().measures == list(
        RERANK_MEASURES
    )
    by_options = rerank(replace(config, scorer_factory=factory()))
    by_args = rerank(
        data,
        "yesno:fake",
        regimes="fp32,bf16",
        measures=["RR@10"],
        out_dir=tmp_path / "b",
        device="cpu",
        batch_sizes=[1, 4],
        orders=[0, 2],
        scorer_factory=factory(),
    )
    assert by_options.rows == by_args.rows
    assert (tmp_path / "a" / "table.tsv").read_bytes() == (
        tmp_path / "b" / "table.tsv"
    ).read_bytes()
    capsys.readouterr()
    show_result(by_options, "json")
    assert json.loads(capsys.readouterr().out)["rows"] == json.loads(json.dumps(by_options.rows))
    show_result(by_options, "table")
    lines = capsys.readouterr().out.splitlines()
    variance = by_options.settings["variance"]["variants"]
    assert lines[-2:] == [
        f"batch sizes 16,1,4 and candidate orders 0,2: {v}: "
        f"{variance[v]['changed_share']:.1%} of scores changed; "
        f"RR@10 E spread {variance[v]['measures']['RR@10']['spread']:.4g}"
        for v in ("fp32", "bf16")
    ]


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


def test_the_stages_in_a_row_each_do_their_own_part(tmp_path):
    """plan_rerank checks and makes OUT/'s folders (an immutable plan), score fills the cache alone,
    record writes nothing, write_outputs writes exactly the files the plan named."""
    from dataclasses import FrozenInstanceError

    from tierank.hps.output import write_outputs
    from tierank.hps.plan import plan_rerank
    from tierank.hps.record import record
    from tierank.hps.score import score

    data = write_set(tmp_path / "data")
    out = tmp_path / "out"
    config = RerankConfig(
        data,
        "yesno:fake",
        regimes="fp32,bf16,bf16->fp32",
        measures=["RR@10", "nDCG@10"],
        out_dir=out,
        device="cpu",
        batch_sizes=[2],
        orders=[1],
        repeat=2,
        scorer_factory=factory(),
    )

    def files() -> set[str]:
        return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}

    plan = plan_rerank(config)
    with pytest.raises(FrozenInstanceError):
        plan.batch_size = 1  # type: ignore[misc]
    assert files() == set() and (out / "runs").is_dir() and (out / "cache").is_dir()
    assert [v.name for v in plan.variants] == ["fp32", "bf16", "bf16->fp32"]
    assert (plan.extra_sizes, plan.extra_orders, plan.repeat) == ((2,), (1,), 2)

    scored = score(plan)
    cached = files()
    assert cached and all(f.startswith("cache/") for f in cached)
    assert list(scored.extra) == [2, "order=1", "repeat=2"]
    for key, by_variant in scored.extra.items():  # each setting's rows: its scores, in run order
        for name, run in scored.extra_runs[key].items():
            qid = np.asarray(run.qid.to_pylist())
            for q in scored.qids:
                assert (
                    sorted(run.score[qid == q].tolist(), reverse=True)
                    == run.score[qid == q].tolist()
                )
                assert sorted(run.score[qid == q].tolist()) == sorted(by_variant[name][q].tolist())

    result = record(plan, scored)
    assert files() == cached  # record writes nothing
    assert result.settings["variance"]["settings"] == ["bs=16", "bs=2", "order=1", "repeat=2"]
    assert set(result.reasoning) == set(result.runs) == {v.name for v in plan.variants}

    write_outputs(plan, scored, result)
    planned = {p.relative_to(out).as_posix() for pair in plan.output.files.values() for p in pair}
    assert files() - cached == planned | {"table.tsv", "table.json"}
    assert json.loads((out / "table.json").read_text())["rows"] == json.loads(
        json.dumps(result.rows)
    )
