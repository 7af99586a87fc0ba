"""tierank.integrations.mteb: MTEB's saved predictions and an in-run hook, against the installed mteb.

The MTEB tests run a real (small, local) retrieval task through ``mteb.evaluate``: queries, corpus,
top-20 candidates and graded qrels of the 31 judged TREC RAG 2024 topics in the tests' real data (``tests/realdata.py``),
embedded by a deterministic bag-of-words encoder whose dot products are small integers, so scores
tie as they do with binary or low-precision embeddings.  No dataset or model is downloaded.
"""

from __future__ import annotations

import itertools
import json
import os
import zlib

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"  # mteb, datasets and huggingface_hub must not touch the network

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tierank.errors import TierankInputError  # noqa: E402
from tierank.integrations.mteb import (  # noqa: E402
    evaluate_predictions,
    load_predictions,
    load_qrels,
    tie_aware,
    tierank_measure,
)

K_VALUES = (1, 3, 5, 10, 20)
FAMILIES = ("ndcg", "map", "recall", "precision", "mrr", "hit_rate")


def _mteb():
    return pytest.importorskip("mteb", reason="mteb not installed: pip install 'tierank[mteb]'")


# metric names (no mteb needed)


def test_metric_names_map_to_the_measures_mteb_computes():
    got = [
        str(tierank_measure(m))
        for m in (
            "ndcg_at_10",
            "map_at_100",
            "recall_at_5",
            "precision_at_3",
            "mrr_at_10",
            "hit_rate_at_20",
            "accuracy",
            "nDCG@5",
        )
    ]
    assert got == ["nDCG@10", "AP@100", "R@5", "P@3", "RR@10", "Success@20", "R@1", "nDCG@5"]
    with pytest.raises(TierankInputError, match="unknown metric 'nauc_ndcg_at_10_max'.*ndcg_at_K"):
        tierank_measure("nauc_ndcg_at_10_max")


def test_python_function_on_a_hand_computed_tie():
    # d1 (relevant) and d2 tie at the top: RR is 1 or 1/2, each with probability 1/2
    preds = {
        "mteb_model_meta": {"model_name": "m", "revision": "r"},
        "default": {"test": {"q1": {"d1": 0.5, "d2": 0.5, "d3": 0.1}}},
    }
    ((key, res),) = evaluate_predictions(
        preds, {"q1": {"d1": 1}}, ["mrr_at_10", "precision_at_1"]
    ).items()
    assert key == ("default", "test")
    rows = {r["measure"]: r for r in res.records(per_query=False)}
    assert (
        rows["RR@10"]["oblivious"],
        rows["RR@10"]["expected"],
        rows["RR@10"]["min"],
        rows["RR@10"]["max"],
    ) == (0.5, 0.75, 0.5, 1.0)  # oblivious: docid descending puts d2 first, as MTEB does
    assert (rows["P@1"]["expected"], rows["P@1"]["std"]) == (0.5, 0.5)


def test_bad_predictions_and_unknown_subsets_are_refused_with_the_place():
    with pytest.raises(
        TierankInputError, match="subset 'en', split 'test': expected a mapping qid"
    ):
        load_predictions({"en": {"test": [[0, 1]]}})  # a classification task's predictions
    with pytest.raises(TierankInputError, match="no subset in the predictions"):
        load_predictions({"mteb_model_meta": {}})
    preds = {
        "en": {"test": {"q": {"d": 1.0}}},
        "fr": {"test": {"q": {"d": 1.0}}, "dev": {"q": {"d": 2.0}}},
    }
    with pytest.raises(TierankInputError, match="no subset 'de'; available: en, fr"):
        evaluate_predictions(preds, {"q": {"d": 1}}, ["P@1"], subset="de")
    with pytest.raises(
        TierankInputError, match="no split 'val' in subset 'fr'; available: test, dev"
    ):
        evaluate_predictions(preds, {"q": {"d": 1}}, ["P@1"], subset="fr", split="val")
    nested = {"en": {"test": {"q": {"d": 1}}}}
    with pytest.raises(
        TierankInputError, match="no qrels for subset 'fr', split 'dev'; available: en/test"
    ):
        evaluate_predictions(preds, nested, ["P@1"])
    res = evaluate_predictions(preds, {"q": {"d": 1}}, ["P@1"], split="dev")
    assert list(res) == [("fr", "dev")]


def test_nested_and_flat_qrels_agree():
    preds = {
        "en": {"test": {"q": {"a": 1.0, "b": 1.0, "c": 0.0}}},
        "fr": {"test": {"q": {"a": 0.0, "b": 1.0}}},
    }
    flat = {"q": {"a": 2, "c": 1}}
    by_task = load_qrels({"en": {"test": flat}, "fr": {"test": flat}})
    assert set(by_task) == {("en", "test"), ("fr", "test")}
    one = evaluate_predictions(preds, flat, ["ndcg_at_3", "mrr_at_3"])
    two = evaluate_predictions(
        preds, {"en": {"test": flat}, "fr": {"test": flat}}, ["ndcg_at_3", "mrr_at_3"]
    )
    for key in one:
        assert one[key].records() == two[key].records()
    # en: a (grade 2) ties with b at the top: E[RR@3] = (1 + 1/2) / 2; fr: a is last: RR@3 = 1/2
    rr = {k: r.records(per_query=False)[1] for k, r in one.items()}
    assert rr["en", "test"]["expected"] == 0.75 and rr["fr", "test"]["expected"] == 0.5


# MTEB's own scorer, as a reference (tie-oblivious values and, by enumeration, E/min/max)


def _tied_case(seed: int, nq: int = 6, nd: int = 12):
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{i}": {
            f"d{j}": int(rng.integers(0, 4)) for j in rng.choice(nd + 4, nd // 2, replace=False)
        }
        for i in range(nq)
    }
    for q in qrels:
        qrels[q]["d0"] = 1  # every query has a relevant document
    run = {q: {f"d{j}": float(rng.integers(0, 4)) / 4 for j in range(nd)} for q in qrels}
    return qrels, run


def _mteb_scores(run, qrels, k_values=K_VALUES) -> dict:
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores, make_score_dict

    r = calculate_retrieval_scores(run, qrels, list(k_values))
    return make_score_dict(
        ndcg=r.ndcg,
        _map=r.map,
        recall=r.recall,
        precision=r.precision,
        mrr=r.mrr,
        naucs=r.naucs,
        naucs_mrr=r.naucs_mrr,
        hit_rate=r.hit_rate,
        task_scores={},
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_oblivious_is_mteb_own_value_and_lies_in_the_interval(seed):
    _mteb()
    qrels, run = _tied_case(seed)
    metrics = [f"{f}_at_{k}" for f in FAMILIES for k in K_VALUES]
    ours = evaluate_predictions({"default": {"test": run}}, qrels, metrics)["default", "test"]
    rows = {r["measure"]: r for r in ours.records(per_query=False)}
    theirs = _mteb_scores(run, qrels)
    assert ours.ties["groups"] > 10
    for key in metrics:
        row = rows[str(tierank_measure(key))]
        tol = (
            1e-12 if key.startswith("mrr") else 5e-6 + 1e-12
        )  # MTEB rounds all but MRR to 5 decimals
        assert abs(theirs[key] - row["oblivious"]) <= tol, key
        assert row["min"] - tol <= theirs[key] <= row["max"] + tol, key


def test_expected_min_max_equal_mteb_over_every_tie_ordering():
    """For one query, MTEB's own scorer on every ordering of its ties: the mean, min and max of its
    values are tierank's expected, min and max (MRR unrounded; the others to MTEB's 5 decimals)."""
    _mteb()
    qrels = {"q": {"a": 3, "b": 0, "c": 1, "e": 2, "g": 1}}
    run = {"q": {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.9, "e": 0.2, "f": 0.2, "g": 0.2, "h": 0.1}}
    groups = [["a", "b", "c"], ["e", "f", "g"]]
    k_values = (1, 2, 3, 5)
    metrics = [f"{f}_at_{k}" for f in FAMILIES for k in k_values]
    seen = {m: [] for m in metrics}
    for p1, p2 in itertools.product(
        itertools.permutations(groups[0]), itertools.permutations(groups[1])
    ):
        # the same two tie groups, broken into one strict order
        broken = {
            "d": 10.0,
            "h": 0.0,
            **{d: 5.0 - i for i, d in enumerate(p1)},
            **{d: 1.0 - 0.1 * i for i, d in enumerate(p2)},
        }
        s = _mteb_scores({"q": broken}, qrels, k_values)
        for m in metrics:
            seen[m].append(s[m])
    assert len(seen[metrics[0]]) == 6 * 6
    res = evaluate_predictions({"default": {"test": run}}, qrels, metrics)["default", "test"]
    rows = {r["measure"]: r for r in res.records(per_query=False)}
    for m in metrics:
        row = rows[str(tierank_measure(m))]
        tol = 1e-12 if m.startswith("mrr") else 5e-6 + 1e-12
        assert abs(np.mean(seen[m]) - row["expected"]) <= tol, m
        assert abs(min(seen[m]) - row["min"]) <= tol and abs(max(seen[m]) - row["max"]) <= tol, m


# a real MTEB run on a local retrieval task


def _rag24(root):
    qrels: dict = {}
    with open(root / "qrels.txt") as fh:
        for line in fh:
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    cands: dict = {}
    with open(root / "candidates.run") as fh:
        for line in fh:
            q, _, d, *_ = line.split()
            if q in qrels:
                cands.setdefault(q, []).append(d)
    need = {d for ds in cands.values() for d in ds}
    with open(root / "corpus.jsonl") as fh:
        corpus = [
            {"id": c["_id"], "title": c["title"], "text": c["text"]}
            for c in map(json.loads, fh)
            if c["_id"] in need
        ]
    with open(root / "queries.jsonl") as fh:
        queries = [
            {"id": j["_id"], "text": j["text"]} for j in map(json.loads, fh) if j["_id"] in cands
        ]
    return queries, corpus, qrels, cands


def _local_task(root):
    """An mteb AbsTaskRetrieval over rag24's judged topics, reranking their top-20 candidates."""
    from datasets import Dataset
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.task_metadata import TaskMetadata

    queries, corpus, qrels, cands = _rag24(root)

    class Rag24Local(AbsTaskRetrieval):
        metadata = TaskMetadata(
            type="Retrieval",
            name="Rag24Local",
            main_score="ndcg_at_10",
            description="TREC RAG 2024 judged topics, top-20 candidates (local, for tierank's tests).",
            reference="https://trec-rag.github.io",
            dataset={"path": "local/rag24", "revision": "0"},
            category="t2t",
            eval_splits=["test"],
            eval_langs=["eng-Latn"],
            date=("2024-01-01", "2024-12-31"),
            dialect=["Written"],
            domains=[],
            task_subtypes=[],
            license="cc-by-4.0",
            annotations_creators="expert-annotated",
            modalities=["text"],
            sample_creation="found",
            bibtex_citation="",
        )
        k_values = K_VALUES

        def load_data(self, num_proc=None, **kwargs):
            self.dataset = {
                "default": {
                    "test": {
                        "queries": Dataset.from_list(queries),
                        "corpus": Dataset.from_list(corpus),
                        "relevant_docs": qrels,
                        "top_ranked": cands,
                    }
                }
            }
            self.data_loaded = True

    return Rag24Local()


def _bag_of_words_encoder():
    """A deterministic mteb encoder: which of 64 hashed word buckets a text uses (0/1), scored by
    dot product: shared buckets, a small integer, so many candidates of a query tie."""
    import torch
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ModelMeta

    class BagOfWords(AbsEncoder):
        mteb_model_meta = ModelMeta.create_empty()

        def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
            rows = []
            for batch in inputs:
                for text in batch["text"]:
                    v = np.zeros(64, dtype=np.float32)
                    v[[zlib.crc32(w.encode()) % 64 for w in text.lower().split()]] = 1.0
                    rows.append(v)
            return np.stack(rows)

        def similarity(self, e1, e2):
            return torch.as_tensor(np.asarray(e1)) @ torch.as_tensor(np.asarray(e2)).T

    return BagOfWords()


METRICS = [
    "ndcg_at_10",
    "mrr_at_10",
    "map_at_10",
    "precision_at_5",
    "recall_at_20",
    "hit_rate_at_1",
]


@pytest.fixture(scope="module")
def mteb_run(real_data, tmp_path_factory):
    mteb = _mteb()
    root = real_data / "rag24"
    task = _local_task(root)
    task.load_data()
    hooked = tie_aware(task, METRICS)
    folder = tmp_path_factory.mktemp("mteb_predictions")
    result = mteb.evaluate(
        _bag_of_words_encoder(),
        hooked,
        prediction_folder=folder,
        cache=None,
        show_progress_bar=False,
        co2_tracker=False,
    )
    (task_result,) = result.task_results
    (scores,) = task_result.scores["test"]
    return dict(
        task=task,
        hooked=hooked,
        scores=scores,
        predictions=folder / "Rag24Local_predictions.json",
        qrels=root / "qrels.txt",
        mteb=mteb,
    )


def test_in_run_hook_brackets_mteb_own_value(mteb_run):
    s = mteb_run["scores"]
    assert s["tied_share"] > 0.3
    print()
    for key in METRICS:
        lo, e, hi = s[f"{key}_min"], s[f"{key}_expected"], s[f"{key}_max"]
        print(
            f"{key:15} MTEB {s[key]:.5f}  tierank [min {lo:.5f}, E {e:.5f}, max {hi:.5f}]  std {s[key + '_std']:.5f}"
        )
        tol = 0.0 if key.startswith("mrr") else 5e-6  # MTEB rounds all but MRR to 5 decimals
        assert lo - tol <= s[key] <= hi + tol, key
        assert lo <= e <= hi
    assert s["main_score"] == s["ndcg_at_10"]  # replace=False: MTEB's own numbers stay
    assert any(s[f"{k}_max"] - s[f"{k}_min"] > 0.01 for k in METRICS)  # the ties matter here
    res = mteb_run["hooked"].tierank_results["default", "test"]
    assert len(res.qids) == 31
    # the caller's task is not changed
    assert type(mteb_run["task"]).__name__ == "Rag24Local" and not hasattr(
        mteb_run["task"], "tierank_results"
    )


def test_saved_predictions_give_the_in_run_numbers(mteb_run):
    s = mteb_run["scores"]
    raw = json.loads(mteb_run["predictions"].read_text())
    assert set(raw) == {"mteb_model_meta", "default"} and list(raw["default"]) == ["test"]
    for qrels in (mteb_run["qrels"], mteb_run["task"]):  # TREC qrels file, or the loaded task
        res = evaluate_predictions(mteb_run["predictions"], qrels, METRICS)
        assert list(res) == [("default", "test")]
        rows = {r["measure"]: r for r in res["default", "test"].records(per_query=False)}
        for key in METRICS:
            row = rows[str(tierank_measure(key))]
            assert [row[x] for x in ("expected", "min", "max", "std")] == [
                s[f"{key}_{x}"] for x in ("expected", "min", "max", "std")
            ], key
            assert round(row["oblivious"], 5) == pytest.approx(round(s[key], 5), abs=1e-12), key


def test_replace_puts_the_expected_value_in_main_score(mteb_run):
    mteb = mteb_run["mteb"]
    hooked = tie_aware(mteb_run["task"], ["ndcg_at_10"], replace=True)
    result = mteb.evaluate(
        _bag_of_words_encoder(), hooked, cache=None, show_progress_bar=False, co2_tracker=False
    )
    (scores,) = result.task_results[0].scores["test"]
    assert (
        scores["main_score"]
        == scores["ndcg_at_10"]
        == scores["ndcg_at_10_expected"]
        == mteb_run["scores"]["ndcg_at_10_expected"]
    )
    assert scores["mrr_at_10"] == mteb_run["scores"]["mrr_at_10"]  # keys not asked for stay MTEB's


def test_tie_aware_refuses_what_it_cannot_hook(mteb_run):
    with pytest.raises(TierankInputError, match="mteb retrieval task"):
        tie_aware(object())
    with pytest.raises(TierankInputError, match="unknown metric 'nauc'"):
        tie_aware(mteb_run["task"], ["nauc"])
