"""tierank.compare: the comparison a library user gets (tierank.analysis.compare) and its renderings
(tierank.report.comparison), against what `tierank compare --format` writes for the same runs, and its
settings objects."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tierank
from helpers import invoke
from tierank.analysis.compare import CompareSettings
from tierank.analysis.compare import compare as compare_systems
from tierank.report.comparison import FORMATS, LEADERBOARD_FIELDS, SYSTEM_FIELDS, ComparisonReport
from tierank.report.formats import names


def _runs(tmp_path, systems=3, queries=12, seed=3):
    """TREC files of ``systems`` runs with coarse (tied) scores and their qrels."""
    rng = np.random.default_rng(seed)
    qrels = tmp_path / "q.qrels"
    qrels.write_text(
        "".join(
            f"q{q} 0 d{d} {int(rng.integers(0, 3))}\n" for q in range(queries) for d in range(6)
        )
    )
    paths = []
    for s in range(systems):
        p = tmp_path / f"sys{s}.run"
        p.write_text(
            "".join(
                f"q{q} Q0 d{d} {d + 1} {int(rng.integers(0, 2 + s))} sys{s}\n"
                for q in range(queries)
                for d in range(8)
            )
        )
        paths.append(p)
    return qrels, paths


@pytest.mark.parametrize("leaderboard", [False, pytest.param(True, marks=pytest.mark.full)])
def test_to_dict_markdown_and_latex_are_what_the_command_writes(tmp_path, leaderboard):
    qrels, paths = _runs(tmp_path)
    flags = ["--leaderboard", "--resamples", "200", "--permutations", "200"] if leaderboard else []
    cmp = tierank.compare(
        {p.name: p for p in paths},
        qrels,
        "nDCG@5",
        correction="holm",
        leaderboard=leaderboard,
        **(dict(resamples=200, permutations=200) if leaderboard else {}),
    )
    assert tierank.compare is compare_systems
    report = ComparisonReport(cmp)
    assert report.leaderboard is leaderboard

    def cli(fmt):
        return invoke("compare", qrels, *paths, "-m", "nDCG@5", "-f", fmt, *flags).stdout

    doc = json.loads(cli("json"))
    assert cmp.to_dict() == doc
    assert [s["name"] for s in doc["systems"]] == [s.name for s in cmp.systems]
    assert len(doc["pairs"]) == 3 and doc["pairs"][0]["p_adjusted"] is not None
    assert report.to_markdown() == cli("markdown")
    assert report.to_latex() == cli("latex")
    header = report.to_markdown().splitlines()[0]
    fields = LEADERBOARD_FIELDS if leaderboard else SYSTEM_FIELDS
    assert header == "| " + " | ".join(fields) + " |"
    assert report.to_latex().startswith("\\begin{tabular}{l" + "r" * 8)
    for fmt in ("tsv", "csv", "jsonl"):  # every records format of the catalogue: the systems
        assert report.render(fmt) == cli(fmt)
    assert [json.loads(line)["name"] for line in cli("jsonl").splitlines()] == [
        s.name for s in cmp.systems
    ]


def test_compare_formats_are_the_catalogue_records_formats():
    from tierank.cli.analysis import CompareFmt

    assert FORMATS == names("records") and "jsonl" in FORMATS
    assert tuple(c.value for c in CompareFmt) == FORMATS


def test_settings_objects_and_keywords_give_the_same_comparison(tmp_path):
    qrels, paths = _runs(tmp_path, systems=2, seed=8)
    runs = {p.name: p for p in paths}
    by_objects = compare_systems(
        runs,
        qrels,
        "RR",
        tierank.EvalSettings(tie_break="docno", rel=2),
        CompareSettings(test="randomization", ci="percentile", resamples=300, permutations=300),
    )
    by_keywords = compare_systems(
        runs,
        qrels,
        "RR",
        tie_break="docno",
        rel=2,
        test="randomization",
        ci="percentile",
        resamples=300,
        permutations=300,
    )
    assert by_objects.to_dict() == by_keywords.to_dict()
    assert by_objects.settings["tie_break"] == "docno" and by_objects.settings["rel"] == 2
    assert by_objects.pairs[0].test == "randomization"
    # a keyword overrides the settings object it belongs to, leaving the other fields
    over = compare_systems(
        runs, qrels, "RR", options=CompareSettings(test="wilcoxon", seed=4), test="t"
    )
    assert over.settings["test"] == "t" and over.settings["seed"] == 4
    # the evaluation settings reach every system's evaluation: rel=2 changes the measure's numbers
    plain = compare_systems(runs, qrels, "RR", tie_break="docno")
    for name in runs:
        ev = tierank.evaluate(qrels, runs[name], ["RR"], tie_break="docno", rel=2)
        assert by_objects.system(name).expected == pytest.approx(
            ev.summary(ev.measures[0]).expected
        )
    assert [s.expected for s in plain.systems] != [s.expected for s in by_objects.systems]


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(samples_=3), TypeError, "unexpected keyword argument 'samples_'"),
        (dict(level=1.5), tierank.TierankInputError, r"level must be in \(0, 1\)"),
        (dict(permutations=0), tierank.TierankInputError, "permutations must be a positive"),
        (dict(jobs=0), tierank.TierankInputError, "jobs must be a positive integer"),
        (dict(test="z"), tierank.TierankInputError, "unknown test 'z'; accepted: t, "),
    ],
)
def test_bad_settings_are_refused_before_any_run_is_read(tmp_path, kwargs, error, message):
    runs = {"a": tmp_path / "missing-a.run", "b": tmp_path / "missing-b.run"}
    with pytest.raises(error, match=message):
        tierank.compare(runs, tmp_path / "missing.qrels", "RR", **kwargs)


def test_a_measure_string_of_several_measures_is_refused():
    qrels = {"q": {"a": 1}}
    runs = {"x": {"q": {"a": 1.0, "b": 0.5}}, "y": {"q": {"a": 0.5, "b": 1.0}}}
    with pytest.raises(
        tierank.TierankInputError, match=r"exactly one measure.*2 measures: P@5, P@10"
    ):
        tierank.compare(runs, qrels, "P.5,10")
    assert tierank.compare(runs, qrels, tierank.parse_measure("P@1")).measure == "P@1"
