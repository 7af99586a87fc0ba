"""The rerank protocol (tierank.hps.protocol) with deterministic fake scorers: no torch needed.

Covers variant parsing, the BEIR reader's located errors, the on-disk cache
(resume after an interruption gives the same runs as an uninterrupted run,
a half-written line is dropped), exact scores in the written runs and Table 1
rows that agree with `tierank.evaluate` on those runs.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from tierank.errors import TierankError, TierankInputError
from tierank.hps import registry
from tierank.hps.base import Scorer
from tierank.hps.cache import CacheWarning
from tierank.hps.protocol import rerank
from tierank.hps.registry import ModelKind, parse_model
from tierank.hps.table import tie_stats
from tierank.hps.variants import parse_variant, parse_variants
from tierank.io.beir import load_beir

from .fakes import FakeScorer
from .fakes import factory as _factory
from .fakes import rerank_fake as _rerank
from .fakes import write_set as _write_set

# ------------------------------------------------------------------ variants


@pytest.mark.parametrize(
    "text, model, scoring, level",
    [
        ("fp32", "fp32", "fp32", "none"),
        ("bf16", "bf16", "bf16", "none"),
        ("fp16->fp32", "fp16", "fp32", "softmax"),
        ("bf16 -> fp32", "bf16", "fp32", "softmax"),
        ("bf16->fp32:head", "bf16", "fp32", "head"),
        ("FP16->FP32:HEAD", "fp16", "fp32", "head"),
        ("emb-int8", "fp32", "int8", "none"),
        ("emb-binary+rescore@10", "fp32", "binary", "none"),
        ("onnx-int8", "int8", "fp32", "none"),
    ],
)
def test_parse_variant(text, model, scoring, level):
    v = parse_variant(text)
    assert (v.model_dtype, v.scoring_dtype, v.level) == (model, scoring, level)
    assert parse_variant(str(v)) == v


@pytest.mark.parametrize(
    "bad", ["int4", "fp32:head", "bf16:head", "emb-int4", "emb-binary+rescore@0", "fp32->bf16", ""]
)
def test_parse_variant_rejects(bad):
    with pytest.raises(TierankInputError, match="regime|rescore"):
        parse_variant(bad)


def test_variants_apply_to_families():
    head = parse_variant("bf16->fp32:head")
    supports = registry.supports
    assert supports("yesno", head) and supports("rank1", head) and not supports("cross", head)
    for v in ("emb-int8", "onnx-int8"):
        assert supports("biencoder", parse_variant(v)) and not supports("yesno", parse_variant(v))
    with pytest.raises(TierankInputError, match="does not apply"):
        registry.check_variant("cross", parse_variant("emb-binary"))
    with pytest.raises(TierankInputError, match="needs a bf16 model"):
        registry.check_variant("cross", parse_variant("bf16->fp32"), "fp16")
    assert [str(v) for v in parse_variants(["fp32,bf16", "bf16", "bf16->fp32"])] == [
        "fp32",
        "bf16",
        "bf16->fp32",
    ]


def test_parse_model():
    assert parse_model("minilm").family == "biencoder"
    assert parse_model("smollm2-yesno").source == "smollm2"
    assert parse_model("rank1:/x/y").slug == "rank1_y"
    with pytest.raises(TierankInputError, match="unknown model"):
        parse_model("bert-base-uncased")


def test_registry_is_the_one_source_of_model_kinds(tmp_path, monkeypatch):
    help_text = registry.model_help()
    for k in registry.kinds():
        assert f"{k.family}:{k.arg}" in help_text
    with pytest.raises(ValueError, match="already registered"):
        registry.register(ModelKind("cross", "x:Y", frozenset({"precision"})))
    # a new model kind: one scorer class and one registration; parsing, checks, cache key and loading follow
    monkeypatch.setitem(
        registry._KINDS,
        "fake",
        ModelKind(
            "fake",
            "tests.hps.fakes:FakeScorer",
            frozenset({"precision", "head"}),
            options=("budget",),
        ),
    )
    assert "fake:PATH" in registry.model_help()
    with pytest.raises(TierankInputError, match="does not apply to a fake scorer"):
        registry.check_variant("fake", parse_variant("emb-int8"))
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    data = _write_set(tmp_path / "set")
    res = rerank(
        data,
        f"fake:{model_dir}",
        "fp32,bf16->fp32:head",
        ["RR@10"],
        out_dir=tmp_path / "out",
        device="cpu",
        budget=7,
    )
    assert res.settings["family"] == "fake" and res.settings["budget"] == 7
    assert res.settings["scorers"] == {
        "fp32": {"scorer": "fake", "group": "fp32"},
        "bf16": {"scorer": "fake", "group": "bf16"},
    }
    key = json.loads(
        (next((tmp_path / "out" / "cache").glob("*.jsonl"))).read_text().splitlines()[0]
    )["key"]
    assert key["budget"] == 7 and key["family"] == "fake" and "max_doc_tokens" not in key
    with pytest.raises(TierankInputError, match="not a local path"):
        rerank(data, "fake:org/hub-model", "fp32", out_dir=tmp_path / "o2", device="cpu")


def test_scorer_protocol_declares_what_the_registry_calls():
    """The registry calls check_spec and from_spec: the protocol declares them (before the fix it did not,
    so a class without them passed as a Scorer)."""
    for k in registry.kinds():
        assert isinstance(registry.scorer_class(k.family), Scorer), k.family

    class NoSpec:  # family, model_dtype, score_query, metadata: the protocol before the fix
        family, model_dtype = "yesno", "fp32"

        def score_query(self, query, docs, variants): ...

        def metadata(self): ...

    assert not isinstance(NoSpec, Scorer)
    assert isinstance(FakeScorer, Scorer)  # check_spec from ScorerBase


def test_family_checks_ask_the_scorer_what_it_supports(tmp_path, monkeypatch):
    """ScorerBase.supports decides check_spec and check_variants (before the fix nothing called it)."""
    from .fakes import Fp32OnlyScorer

    with pytest.raises(TierankInputError, match="regime 'bf16' does not apply to a yesno scorer"):
        Fp32OnlyScorer.check_spec("x", parse_variants("fp32,bf16"))
    with pytest.raises(TierankInputError, match="regime 'bf16' does not apply to a yesno scorer"):
        Fp32OnlyScorer("bf16").check_variants(parse_variants("bf16"))
    Fp32OnlyScorer("fp32").check_variants(parse_variants("fp32"))
    with pytest.raises(
        TierankInputError, match="regime bf16 needs a bf16 model; this scorer runs in fp32"
    ):
        FakeScorer("fp32").check_variants(parse_variants("bf16"))
    # through the registry: refused before OUT/ is made or a model loads
    monkeypatch.setitem(
        registry._KINDS,
        "fake32",
        ModelKind("fake32", "tests.hps.fakes:Fp32OnlyScorer", frozenset({"precision", "head"})),
    )
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    data = _write_set(tmp_path / "set")
    with pytest.raises(TierankInputError, match="regime 'bf16' does not apply to a yesno scorer"):
        rerank(data, f"fake32:{model_dir}", "fp32,bf16", out_dir=tmp_path / "out", device="cpu")
    assert not (tmp_path / "out").exists()
    res = rerank(data, f"fake32:{model_dir}", "fp32", out_dir=tmp_path / "out", device="cpu")
    assert list(res.runs) == ["fp32"]


@given(
    st.lists(
        st.lists(st.sampled_from([0.0, 0.5, 1.0, -2.0, 1e-300]), max_size=8), min_size=1, max_size=4
    )
)
@settings(max_examples=examples(60), deadline=None)
def test_run_rows_are_in_score_order_with_ties_in_candidate_order(lists):
    """The protocol's run rows (ordered by tierank.ties.layout) against sorting by hand."""
    from tierank.hps.score import ordered_run as _ordered

    qids = [f"q{i}" for i in range(len(lists))]
    assume(any(lists))
    cands = {q: [f"d{j}" for j in range(len(x))] for q, x in zip(qids, lists)}
    scores = {q: x for q, x in zip(qids, lists)}
    run, lay = _ordered(qids, cands, scores)
    want = [
        (q, f"d{j}", x[j], r + 1)
        for q, x in zip(qids, lists)
        for r, j in enumerate(sorted(range(len(x)), key=lambda j: (-x[j], j)))
    ]
    assert (
        list(zip(run.qid.to_pylist(), run.docid.to_pylist(), run.score.tolist(), run.rank.tolist()))
        == want
    )
    assert tie_stats(lay) == tie_stats(run)


def test_tie_stats_counts_groups():
    run = tierank.to_run(
        {
            "a": {"x": 3.0, "y": 3.0, "z": 3.0, "w": 1.0},
            "b": {"x": 2.0, "y": 1.0, "z": 1.0 + 2**-52},
        }
    )
    st = tie_stats(run)  # a tie is exact float64 equality, inside one query
    assert st == {
        "candidates": 7,
        "tied": 3,
        "tied_share": 3 / 7,
        "tie_groups": 1,
        "mean_group": 3.0,
        "max_group": 3,
    }
    none = tie_stats(tierank.to_run({"a": {"x": 1.0, "y": 2.0}}))
    assert none == {
        "candidates": 2,
        "tied": 0,
        "tied_share": 0.0,
        "tie_groups": 0,
        "mean_group": 0.0,
        "max_group": 0,
    }


# ---------------------------------------------------------------- the tests


def test_rows_agree_with_evaluate_on_written_runs(tmp_path):
    data = _write_set(tmp_path / "set")
    res = _rerank(tmp_path / "out", data)
    assert res.settings["queries"] == 3  # judged only
    assert set(res.runs) == {"fp32", "bf16", "bf16->fp32", "bf16->fp32:head"}
    qrels = data / "qrels.txt"
    for row in res.rows:
        ev = tierank.evaluate(
            str(qrels), str(res.runs[row["variant"]]), [row["measure"]]
        ).to_dict()["all"][row["measure"]]
        for c in ("oblivious", "expected", "min", "max", "range", "bias"):
            assert row[c] == pytest.approx(ev[c], abs=1e-12)
        fp32 = tierank.evaluate(str(qrels), str(res.runs["fp32"]), [row["measure"]]).to_dict()[
            "all"
        ][row["measure"]]
        assert row["fp32"] == pytest.approx(fp32["oblivious"])
    by = {(r["variant"], r["measure"]): r for r in res.rows}
    assert (
        by[("bf16", "nDCG@10")]["tied_share"] > 0
    )  # rounding to 2 decimals ties some of 18 candidates
    assert by[("bf16->fp32", "nDCG@10")]["tied_share"] == 0
    # HPS overhead: (0.002 - 0.001) per query over 0.5 s of forward pass
    assert by[("bf16->fp32", "RR@10")]["hps_overhead"] == pytest.approx(0.002)
    assert by[("fp32", "RR@10")]["hps_overhead"] is None
    assert by[("fp32", "RR@10")]["model_s"] == pytest.approx(1.5)


def test_table_says_how_far_each_variant_ranks_from_fp32(tmp_path):
    from tierank.analysis.similarity import similarity
    from tierank.hps.table import RBO_P, TABLE_FIELDS

    data = _write_set(tmp_path / "set")
    out = tmp_path / "out"
    res = _rerank(out, data)
    cols = ("rbo_fp32", "rbo_fp32_min", "rbo_fp32_max")
    assert TABLE_FIELDS[-3:] == cols  # added after the existing columns, none renamed
    assert (
        res.settings["similarity"]["reference"] == "fp32"
        and res.settings["similarity"]["p"] == RBO_P == 0.9
    )
    by = {(r["variant"], r["measure"]): r for r in res.rows}
    for variant, path in res.runs.items():
        mean = similarity(
            str(res.runs["fp32"]), str(path), p=0.9
        ).mean  # from the written run files
        for m in ("nDCG@10", "RR@10", "P@3"):
            row = by[(variant, m)]
            assert row["rbo_fp32"] == pytest.approx(mean["rbo_expected"], abs=1e-12)
            assert row["rbo_fp32_min"] == pytest.approx(mean["rbo_lo"], abs=1e-12)
            assert row["rbo_fp32_max"] == pytest.approx(mean["rbo_hi"], abs=1e-12)
            assert row["rbo_fp32_min"] <= row["rbo_fp32"] <= row["rbo_fp32_max"] <= 1 + 1e-12
    # bf16 rounds the scores: ties (and a different order) lower the expected RBO below the fp32 row's
    assert by[("bf16", "nDCG@10")]["rbo_fp32"] < by[("fp32", "nDCG@10")]["rbo_fp32"]
    assert by[("fp32", "nDCG@10")]["rbo_fp32"] == pytest.approx(
        1.0
    )  # fp32's fake scores have no ties
    header = (out / "table.tsv").read_text().splitlines()[0].split("\t")
    assert header[-3:] == list(cols)
    doc = json.loads((out / "table.json").read_text())
    assert doc["rows"][0]["rbo_fp32"] == pytest.approx(res.rows[0]["rbo_fp32"])
    assert doc["settings"]["similarity"]["p"] == 0.9


def test_table_without_fp32_leaves_the_similarity_empty(tmp_path):
    data = _write_set(tmp_path / "set")
    res = _rerank(tmp_path / "out", data, regimes="bf16,bf16->fp32")
    assert res.settings["similarity"]["reference"] is None
    assert all(r["rbo_fp32"] is None and r["rbo_fp32_max"] is None for r in res.rows)


def test_runs_hold_exact_scores_and_reasoning(tmp_path):
    data = _write_set(tmp_path / "set")
    res = _rerank(tmp_path / "out", data, regimes="fp32")
    cache_files = list((tmp_path / "out" / "cache").glob("*.jsonl"))
    assert len(cache_files) == 1
    lines = [json.loads(line) for line in cache_files[0].read_text().splitlines()[1:]]
    assert lines[0] == {
        "metadata": {"scorer": "fake", "group": "fp32"}
    }  # the scorer's description, then the records
    recs = lines[1:]
    expected = {(r["query"], d): s for r in recs for d, s in zip(r["docids"], r["scores"])}
    got = {}
    for line in res.runs["fp32"].read_text().splitlines():
        q, _, d, rank, score, tag = line.split()
        got[(q, d)] = float(score)
    assert got == expected  # bit-exact round trip through the text file
    lines = [json.loads(x) for x in res.reasoning["fp32"].read_text().splitlines()]
    assert len(lines) == 18
    for rec in lines:  # the reasoning of each document sits next to its docid (title + text)
        qi, di = rec["docid"][1:].split("_")
        assert rec["reasoning"] == f"because t{di} doc {qi} {di}"
        assert rec["score"] == expected[(rec["query"], rec["docid"])]


def test_interrupted_run_resumes_and_matches(tmp_path):
    data = _write_set(tmp_path / "set", n_queries=6)
    clean = _rerank(tmp_path / "clean", data)
    closed = []

    class Closing(FakeScorer):  # a scorer holding processes (a vLLM engine): closed even on Ctrl-C
        def close(self):
            closed.append(self.group)

    with pytest.raises(KeyboardInterrupt):
        _rerank(
            tmp_path / "resumed", data, factory=lambda spec, group: Closing(group, fail_after=2)
        )
    assert closed == ["fp32"]
    log: list = []
    calls = []

    def counting(spec, group):
        log.append(group)
        s = FakeScorer(group)
        orig = s.score_query

        def score_query(q, docs, variants):
            calls.append((group, q, tuple(str(v) for v in variants)))
            return orig(q, docs, variants)

        s.score_query = score_query
        return s

    resumed = _rerank(tmp_path / "resumed", data, factory=counting)
    # fp32 group: 2 queries were done before the interruption, 3 remain; bf16 group: all 5
    assert [c[0] for c in calls].count("fp32") == 3
    assert [c[0] for c in calls].count("bf16") == 5
    for v in clean.runs:
        assert clean.runs[v].read_text() == resumed.runs[v].read_text()
    # a third run scores nothing and loads no model
    log.clear()
    again = _rerank(tmp_path / "resumed", data, factory=_factory(log))
    assert log == []
    assert [r["expected"] for r in again.rows] == [r["expected"] for r in clean.rows]


def test_half_written_cache_line_is_dropped(tmp_path):
    data = _write_set(tmp_path / "set")
    _rerank(tmp_path / "out", data, regimes="fp32")
    path = next((tmp_path / "out" / "cache").glob("*.jsonl"))
    full = path.read_text()
    lines = full.splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # cut the last record
    log: list = []
    with pytest.warns(
        CacheWarning, match=rf"{path.name}:{len(lines)}: record cut short \(an interrupted write\)"
    ):
        _rerank(tmp_path / "out", data, regimes="fp32", factory=_factory(log))
    assert log == ["fp32"]
    assert path.read_text() == full  # the query was scored again, the file is whole


def test_cache_key_separates_batch_sizes(tmp_path):
    data = _write_set(tmp_path / "set")
    _rerank(tmp_path / "out", data, regimes="fp32", batch_size=8)
    log: list = []
    _rerank(tmp_path / "out", data, regimes="fp32", batch_size=4, factory=_factory(log))
    assert log == ["fp32"]
    names = sorted(p.name for p in (tmp_path / "out" / "cache").glob("*.jsonl"))
    assert (
        len(names) == 2
        and any("__bs8__" in n for n in names)
        and any("__bs4__" in n for n in names)
    )


def test_depth_max_queries_and_all_queries(tmp_path):
    data = _write_set(tmp_path / "set")
    res = _rerank(tmp_path / "a", data, regimes="fp32", depth=3, max_queries=2)
    assert res.settings["queries"] == 2 and res.settings["candidates"] == 6
    res = _rerank(tmp_path / "b", data, regimes="fp32", queries="all")
    assert res.settings["queries"] == 4


def test_variant_family_mismatch_is_refused(tmp_path):
    data = _write_set(tmp_path / "set")
    with pytest.raises(TierankInputError, match="does not apply"):
        _rerank(tmp_path / "out", data, regimes="emb-int8")


def test_scorer_returning_bad_scores_is_an_error(tmp_path):
    data = _write_set(tmp_path / "set")

    class Bad(FakeScorer):
        def score_query(self, query, docs, variants):
            out = super().score_query(query, docs, variants)
            for k in out.scores:
                out.scores[k] = out.scores[k][:-1]
            return out

    with pytest.raises(TierankError, match="scores"):
        _rerank(tmp_path / "out", data, regimes="fp32", factory=lambda s, g: Bad(g))


# ----------------------------------------------------------- BEIR input errors


def test_beir_errors_are_located(tmp_path):
    data = _write_set(tmp_path / "set")
    with (data / "corpus.jsonl").open("a") as fh:
        fh.write('{"_id": "x", "text": \n')
    with pytest.raises(TierankInputError, match=r"corpus.jsonl:\d+: not valid JSON"):
        load_beir(data)
    data = _write_set(tmp_path / "set2")
    lines = (data / "corpus.jsonl").read_text().splitlines()
    (data / "corpus.jsonl").write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(TierankInputError, match="'d0_0' is a candidate but not in the corpus"):
        load_beir(data)
    with pytest.raises(TierankInputError, match="no candidate run"):
        (data / "candidates.run").unlink()
        load_beir(data)
    with pytest.raises(TierankInputError, match="not a directory"):
        load_beir(tmp_path / "nope")


def test_beir_reads_rag24(real_data):
    RAG24 = real_data / "rag24"
    s = load_beir(RAG24)
    assert len(s.candidates) == 31
    assert all(len(c) == 20 for c in s.candidates.values())
    q = next(iter(s.candidates))
    # first-stage order: candidates.run scores 21 - rank
    run_lines = [
        ln.split()
        for ln in (RAG24 / "candidates.run").read_text().splitlines()
        if ln.startswith(q + " ")
    ]
    assert s.candidates[q] == [ln[2] for ln in sorted(run_lines, key=lambda x: -float(x[4]))]
    assert all(s.docs[d] for d in s.candidates[q])


def test_rerank_report_html(tmp_path):
    pytest.importorskip("matplotlib")
    from helpers import invoke
    from tierank.report.formats import jsonable
    from tierank.report.html import rerank_report

    data = _write_set(tmp_path / "set")
    res = _rerank(tmp_path / "out", data)
    page = rerank_report(res)
    for v in ("fp32", "bf16-&gt;fp32", "bf16-&gt;fp32:head"):
        assert f"<td>{v}</td>" in page
    assert page.count("<h2") >= 4 and "data:image/png;base64" in page and "<script" not in page
    table = tmp_path / "table.json"
    table.write_text(json.dumps(jsonable({"settings": res.settings, "rows": res.rows})))
    assert rerank_report(json.loads(table.read_text())) == page
    out = tmp_path / "r.html"
    r = invoke("report", "rerank", table, "-o", out)
    assert out.read_text() == page and r.stdout.strip() == str(out)
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    r = invoke("report", "rerank", bad, "-o", tmp_path / "x.html", check=False)
    assert (
        r.returncode == 2 and "not a table.json" in r.stderr and not (tmp_path / "x.html").exists()
    )
