"""trec_eval's `rbp` on graded qrels (issue 22, item 4): `tierank eval -f trec_eval -m rbp` printed
tierank's binary RBP under trec_eval's name (0.7253 on the shipped RAG 2024 files, trec_eval 0.5018).

trec_eval 10 (``m_rbp.c``) takes the grades as gains and, when the query's top grade G exceeds 1,
rescales them to [0, 1]: a document counts grade / G.  ``rbp`` is now ``RBP(p=0.9,gain='trec_eval')``;
tierank's binary RBP keeps its own name.  The reference values below are trec_eval 10.0's output
(``../shared/vendor/trec_eval-10.0``, built with its Makefile), on the shipped files
``tierank.examples.path("rag24-qrels")`` and ``path("rag24-run")`` decompressed, so that this test needs
neither the binary nor ../shared:

    trec_eval -q -m rbp rag24.qrels rag24.run          # TE_Q_RBP
    trec_eval -m rbp.p=0.5 rag24.qrels rag24.run       # all 0.5862
    trec_eval -m rbp -l 2 rag24.qrels rag24.run        # all 0.5018 (-l is not read by rbp)
    trec_eval -m rbp -J rag24.qrels rag24.run          # all 0.5478
    trec_eval -m rbp -M 10 rag24.qrels rag24.run       # all 0.3581
    trec_eval -q -m rbp g.qrels g.run                  # TE_SMALL (the files written below)
"""

from __future__ import annotations

import gzip
import subprocess

import pytest

import tierank
from tierank.examples import path
from tierank.measures import parse_measure
from tierank.measures.names import plan, trec_name

TE_Q_RBP = (
    "2024-127266 0.6038;2024-12875 0.9755;2024-137182 0.5773;2024-152259 0.3819;2024-158677 0.7200;"
    "2024-213469 0.6802;2024-214126 0.2012;2024-216957 0.7142;2024-217812 0.3204;2024-219563 0.5387;"
    "2024-219631 0.4956;2024-22410 0.5851;2024-224226 0.4696;2024-224279 0.7122;2024-224926 0.2814;"
    "2024-27366 0.3350;2024-35269 0.6440;2024-36155 0.6683;2024-36302 0.0000;2024-38986 0.6633;"
    "2024-41198 0.5770;2024-41849 0.1994;2024-42014 0.9618;2024-42497 0.7402;2024-43905 0.2542;"
    "2024-43983 0.1719;2024-44060 0.7385;2024-69711 0.1836;2024-79081 0.7017;2024-94706 0.2949;"
    "2024-96359 0.1658;all 0.5018"
)

# grades 3, 1, 0, 2 (q1: G = 3), binary (q2: no rescaling), 2 and 1 (q3: G = 2)
SMALL_QRELS = "q1 0 a 3\nq1 0 b 1\nq1 0 c 0\nq1 0 d 2\nq2 0 x 1\nq2 0 y 0\nq3 0 z 2\nq3 0 w 1\n"
SMALL_RUN = (
    "q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.8 t\nq1 Q0 c 3 0.7 t\nq1 Q0 d 4 0.6 t\nq2 Q0 y 1 0.9 t\n"
    "q2 Q0 x 2 0.8 t\nq3 Q0 w 1 0.9 t\nq3 Q0 z 2 0.5 t\n"
)
TE_SMALL = {
    "rbp": "q1 0.1786;q2 0.0900;q3 0.1400;all 0.1362",
    "rbp.p=0.5": "q1 0.6250;q2 0.2500;q3 0.5000;all 0.4583",
}


def in_process(*args) -> subprocess.CompletedProcess:
    from typer.testing import CliRunner

    from tierank.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


@pytest.fixture(scope="module")
def rag24(tmp_path_factory):
    d = tmp_path_factory.mktemp("rag24")
    for name in ("qrels", "run"):
        (d / f"rag24.{name}").write_bytes(gzip.decompress(open(path(f"rag24-{name}"), "rb").read()))
    return d / "rag24.qrels", d / "rag24.run"


def printed(*args) -> str:
    p = in_process("eval", "-f", "trec_eval", *args)
    assert p.returncode == 0, p.stderr
    return ";".join(" ".join(line.split()[1:]) for line in p.stdout.splitlines())


def test_rbp_is_trec_evals_on_graded_qrels(rag24):
    qrels, run = rag24
    assert printed("-q", "-m", "rbp", qrels, run) == TE_Q_RBP


@pytest.mark.parametrize(
    "args, want",
    [
        (("-m", "rbp.p=0.5"), "all 0.5862"),
        (("-m", "rbp", "-l", "2"), "all 0.5018"),
        (("-m", "rbp", "-J"), "all 0.5478"),
        (("-m", "rbp", "-M", "10"), "all 0.3581"),
    ],
)
def test_rbp_options_are_trec_evals(rag24, args, want):
    assert printed(*args, *rag24) == want


@pytest.mark.parametrize("measure", ["rbp", "rbp.p=0.5"])
def test_rbp_rescales_per_query(tmp_path, measure):
    """q1's top grade is 3 (gains 1, 1/3, 0, 2/3), q2 is binary, q3's top grade is 2 (gains 1/2, 1)."""
    (tmp_path / "g.qrels").write_text(SMALL_QRELS)
    (tmp_path / "g.run").write_text(SMALL_RUN)
    assert (
        printed("-q", "-m", measure, tmp_path / "g.qrels", tmp_path / "g.run") == TE_SMALL[measure]
    )


def test_trec_evals_rbp_by_hand():
    """The closed form on q1 above: (1 - p) (1 + p/3 + 2 p^3 / 3), and ties averaged over orderings."""
    qrels = {"q1": {"a": 3, "b": 1, "c": 0, "d": 2}}
    m = parse_measure("RBP(p=0.5,gain='trec_eval')")
    agg = tierank.evaluate(qrels, {"q1": {"a": 4, "b": 3, "c": 2, "d": 1}}, [m]).aggregate().iloc[0]
    assert agg["oblivious"] == pytest.approx(0.5 * (1 + 0.5 / 3 + 0.125 * 2 / 3), abs=1e-15)
    tied = (
        tierank.evaluate(qrels, {"q1": {"a": 1, "b": 1}}, [m]).aggregate().iloc[0]
    )  # a, b share ranks 1-2
    assert tied["expected"] == pytest.approx(0.5 * (1 + 1 / 3) / 2 * (1 + 0.5), abs=1e-15)
    assert (tied["min"], tied["max"]) == pytest.approx(
        (0.5 * (1 / 3 + 0.5), 0.5 * (1 + 0.5 / 3)), abs=1e-15
    )


def test_binary_rbp_is_not_printed_as_trec_evals():
    assert str(plan(["rbp"]).measures[0]) == "RBP(p=0.9,gain='trec_eval')"
    assert trec_name(parse_measure("RBP(p=0.9)")) is None
    assert trec_name(parse_measure("RBP(p=0.8,gain='trec_eval')")) == "rbp_p=0.8"


def test_rbp_gain_parameters_are_refused():
    """trec_eval reads `rbp.2=5` as a gain for grade 2; tierank ignored it silently."""
    with pytest.raises(
        tierank.TierankInputError, match=r"gain parameters \(2=\.\.\.\) are not supported"
    ):
        plan(["rbp.p=0.8,2=5"])


def test_no_bounds_for_trec_evals_rbp():
    with pytest.raises(tierank.TierankInputError, match="no valid bound"):
        tierank.evaluate(
            {"q": {"a": 2}},
            {"q": {"a": 1.0, "b": 0.5}},
            ["RBP(p=0.9,gain='trec_eval')"],
            unjudged="bounds",
        )
