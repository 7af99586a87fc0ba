"""tierank.tensor against tierank.evaluate on the same data written as a run and qrels, and against
brute-force enumeration of every ordering of the tied candidates.

Agreement: 1e-12 in float64, 1e-5 in float32, every family with a tensor kernel, heavy ties (scores
drawn from three values), graded labels, padding, queries with no valid candidate or no relevant one,
N+ given for lists cut from a larger pool; NumPy and PyTorch (CPU), and the array API's strict
reference implementation (array-api-strict) for conformance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from reference import brute_stats, ordered, value
from tierank import tensor
from tierank.errors import TierankInputError

#: the skip message of the tests on torch tensors: the extra the training-loop guide names
NO_TORCH = 'torch is not installed: pip install -e ".[torchmetrics]"'

MEASURES = [
    "nDCG@3",
    "nDCG",
    "nDCG@20",
    "nDCG(dcg='exp-log2')@5",
    "nDCG(gains={0:0,1:1,2:5})@4",
    "RR@3",
    "RR",
    "RR@1",
    "AP",
    "AP@3",
    "AP(rel=2)",
    "P@3",
    "P@20",
    "P(rel=2)@2",
    "R@2",
    "R",
    "R_cap@3",
    "F1@3",
    "Hits@2",
    "Rprec",
    "Rprec(rel=2)",
    "RBP(p=0.8)",
    "RBP(p=0.5)@3",
    "Success@1",
    "Success@4",
    "Success",
]
STATS = ("oblivious", "expected", "min", "max", "std")


@st.composite
def batches(draw, max_q=12, max_c=9, graded=True):
    """(scores, labels, mask, extra) with heavy ties: scores from three values, labels 0..2 (or 0/1),
    random padding (a row may be all padding), ``extra`` relevant documents missing from each list."""
    q = draw(st.integers(1, max_q))
    c = draw(st.integers(1, max_c))
    cells = st.lists(st.integers(0, 2), min_size=q * c, max_size=q * c)
    scores = np.array(draw(cells), dtype=np.float64).reshape(q, c) * 0.25
    labels = np.array(
        draw(st.lists(st.integers(0, 2 if graded else 1), min_size=q * c, max_size=q * c))
    ).reshape(q, c)
    mask = np.array(draw(st.lists(st.booleans(), min_size=q * c, max_size=q * c))).reshape(q, c)
    if draw(st.booleans()):
        mask[:] = True
    extra = np.array(draw(st.lists(st.integers(0, 3), min_size=q, max_size=q)))
    return scores, labels, mask, extra


def as_run(scores, labels, mask, extra=None, rel=1):
    """The run and qrels of the tensors: docids d0000.. in input order; ``extra`` missing relevant
    documents per query in the qrels at grade ``rel``."""
    run, qrels = {}, {}
    for i in range(scores.shape[0]):
        js = np.flatnonzero(mask[i])
        if not len(js):
            continue
        run[f"q{i:04d}"] = {f"d{j:04d}": float(scores[i, j]) for j in js}
        qrels[f"q{i:04d}"] = {f"d{j:04d}": int(labels[i, j]) for j in js}
        if extra is not None:
            qrels[f"q{i:04d}"].update({f"x{e}": rel for e in range(int(extra[i]))})
    return run, qrels


def to_numpy(x):
    return np.asarray(x.cpu() if hasattr(x, "cpu") else x, dtype=np.float64)


def check(res, scores, labels, mask, measures, tol, *, extra=None, rel=1, tie_break="input"):
    measures = list(res)  # the canonical names, in the order asked
    run, qrels = as_run(scores, labels, mask, extra, rel)
    ref_tb = {"input": "input", "reverse": "trec_eval"}[tie_break]
    valid_rows = mask.any(axis=1)
    for name in measures:
        got = {s: to_numpy(getattr(res[name], s)) for s in STATS}
        for s in STATS:
            assert got[s].shape == (scores.shape[0],)
            # a query with no valid candidate scores 0 everywhere
            assert (got[s][~valid_rows] == 0).all(), (name, s)
    if not run:
        return 0
    pq = tierank.evaluate(qrels, run, measures, tie_break=ref_tb, rel=rel).per_query()
    rows = np.flatnonzero(valid_rows)
    n = 0
    for name, ev in pq.groupby("measure", sort=False):
        ev = ev.set_index("query").loc[[f"q{i:04d}" for i in rows]]
        for s in STATS:
            got = to_numpy(getattr(res[name], s))[rows]
            ref = ev[s].to_numpy()
            bad = np.flatnonzero(~(np.abs(got - ref) <= tol))
            assert not len(bad), (
                name,
                s,
                rows[bad[0]],
                got[bad[0]],
                ref[bad[0]],
                scores[rows[bad[0]]],
                labels[rows[bad[0]]],
                mask[rows[bad[0]]],
            )
            n += len(rows)
    assert set(pq["measure"]) == set(measures)
    return n


def big_batch(seed=0, q=300, c=9):
    """One batch of every case at once: heavy ties, graded labels, padding, rows of padding only, rows
    with no relevant candidate, and N+ from a larger pool."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 3, (q, c)) * 0.25
    labels = rng.integers(0, 3, (q, c))
    mask = rng.random((q, c)) < 0.8
    mask[::7] = True
    mask[3::17] = False
    labels[5::11] = 0
    extra = rng.integers(0, 3, q)
    return scores, labels, mask, extra


@pytest.mark.parametrize("tie_break", ["input", "reverse"])
@pytest.mark.parametrize("rel", [1, 2])
def test_numpy_float64_every_measure_agrees(rel, tie_break):
    scores, labels, mask, _ = big_batch(rel)
    res = tensor.evaluate(scores, labels, MEASURES, mask=mask, rel=rel, tie_break=tie_break)
    assert (
        check(res, scores, labels, mask, MEASURES, 1e-12, rel=rel, tie_break=tie_break)
        > 5 * 24 * 200
    )


def test_numpy_n_relevant_every_measure_agrees():
    scores, labels, mask, extra = big_batch(3)
    present = ((labels >= 1) & mask).sum(axis=1)
    ms = [m for m in MEASURES if m not in ("AP(rel=2)", "Rprec(rel=2)")]
    res = tensor.evaluate(scores, labels, ms, mask=mask, n_relevant=present + extra)
    check(res, scores, labels, mask, ms, 1e-12, extra=extra)


def test_numpy_float32_every_measure_agrees():
    scores, labels, mask, _ = big_batch(4)
    res = tensor.evaluate(scores.astype(np.float32), labels, MEASURES, mask=mask)
    assert res["AP"].expected.dtype == np.float32
    check(res, scores, labels, mask, MEASURES, 1e-5)


@pytest.mark.parametrize("dtype, tol", [("float64", 1e-12), ("float32", 1e-5)])
def test_torch_cpu_every_measure_agrees(dtype, tol):
    torch = pytest.importorskip("torch", reason=NO_TORCH)
    scores, labels, mask, extra = big_batch(5)
    dt = getattr(torch, dtype)
    present = ((labels >= 1) & mask).sum(axis=1)
    ms = [m for m in MEASURES if "rel=2" not in m]
    res = tensor.evaluate(
        torch.tensor(scores, dtype=dt),
        torch.tensor(labels),
        ms,
        mask=torch.tensor(mask),
        n_relevant=torch.tensor(present + extra),
    )
    st_ = res["nDCG@3"]
    assert isinstance(st_.expected, torch.Tensor) and st_.expected.dtype == dt
    assert st_.expected.device == torch.device("cpu")
    check(res, scores, labels, mask, ms, tol, extra=extra)


def test_array_api_strict_every_measure():
    """The same code on the standard's strict reference implementation gives NumPy's numbers."""
    xps = pytest.importorskip("array_api_strict")
    scores, labels, mask, extra = big_batch(6, q=60)
    present = ((labels >= 1) & mask).sum(axis=1)
    ms = [m for m in MEASURES if "rel=2" not in m]
    ref = tensor.evaluate(scores, labels, ms, mask=mask, n_relevant=present + extra)
    res = tensor.evaluate(
        xps.asarray(scores),
        xps.asarray(labels),
        ms,
        mask=xps.asarray(mask),
        n_relevant=xps.asarray(present + extra),
    )
    for name in ref:
        for s in STATS:
            got = getattr(res[name], s)
            assert type(got).__module__.startswith("array_api_strict")
            np.testing.assert_allclose(np.asarray(got), getattr(ref[name], s), rtol=0, atol=1e-13)


# property tests: each example a batch of queries and a sample of the measures
SOME = st.lists(st.sampled_from(MEASURES), min_size=1, max_size=5, unique=True)
SETTINGS = settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(batches(), SOME, st.sampled_from([1, 2]), st.sampled_from(["input", "reverse"]))
def test_numpy_agrees_with_evaluate(b, ms, rel, tie_break):
    scores, labels, mask, extra = b
    if rel == 1 and not any("rel=2" in m for m in ms):  # N+ from a larger pool
        present = ((labels >= 1) & mask).sum(axis=1)
        res = tensor.evaluate(
            scores, labels, ms, mask=mask, n_relevant=present + extra, tie_break=tie_break
        )
        check(res, scores, labels, mask, ms, 1e-12, extra=extra, tie_break=tie_break)
    res = tensor.evaluate(scores, labels, ms, mask=mask, rel=rel, tie_break=tie_break)
    check(res, scores, labels, mask, ms, 1e-12, rel=rel, tie_break=tie_break)
    res = tensor.evaluate(
        scores.astype(np.float32), labels, ms, mask=mask, rel=rel, tie_break=tie_break
    )
    check(res, scores, labels, mask, ms, 1e-5, rel=rel, tie_break=tie_break)


@SETTINGS
@given(batches(), SOME)
def test_torch_cpu_agrees_with_evaluate(b, ms):
    torch = pytest.importorskip("torch", reason=NO_TORCH)
    scores, labels, mask, _ = b
    for dt, tol in ((torch.float64, 1e-12), (torch.float32, 1e-5)):
        res = tensor.evaluate(
            torch.tensor(scores, dtype=dt), torch.tensor(labels), ms, mask=torch.tensor(mask)
        )
        check(res, scores, labels, mask, ms, tol)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=7),
    st.integers(0, 2),
)
def test_brute_force_every_ordering(docs, missing):
    """One query: expected, min, max and std against every ordering consistent with the scores, from
    the textbook definitions (tests/reference.py); the oblivious value against the input order."""
    scores = np.array([[s * 0.5 for s, _ in docs]])
    labels = np.array([[g for _, g in docs]])
    present = int((labels >= 1).sum())
    ms = [
        "nDCG@3",
        "nDCG",
        "RR@2",
        "RR",
        "AP",
        "AP@3",
        "P@2",
        "R@3",
        "F1@2",
        "Hits@2",
        "Rprec",
        "RBP(p=0.5)",
        "Success@1",
        "Success@3",
    ]
    res = tensor.evaluate(scores, labels, ms, n_relevant=np.array([present + missing]))
    ref_docs = [(f"d{i}", float(scores[0, i]), int(labels[0, i])) for i in range(len(docs))]
    ideal = [g for _, _, g in ref_docs] + [1] * missing
    for m in ms:
        ref = brute_stats(m, ref_docs, present + missing, ideal)
        for s in ("expected", "min", "max", "std"):
            assert math.isclose(float(getattr(res[m], s)[0]), ref[s], abs_tol=1e-12), (
                m,
                s,
                docs,
                ref,
            )
        obl = value(m, [g for _, _, g in ordered(ref_docs, "input")], present + missing, ideal)
        assert math.isclose(float(res[m].oblivious[0]), obl, abs_tol=1e-12)


def test_a_value_no_ordering_changes_has_std_exactly_zero():
    scores = np.array([[0.5, 0.5, 0.5, 0.1], [0.3, 0.3, 0.2, 0.2]])
    labels = np.array([[1, 1, 1, 0], [0, 0, 2, 2]])
    res = tensor.evaluate(scores, labels, ["nDCG@10", "AP", "RR", "P@2", "R@3", "Success@1"])
    for st_ in res.values():
        assert (
            (st_.std == 0.0).all()
            and (st_.min == st_.max).all()
            and (st_.expected == st_.min).all()
        )


def test_flat_form_as_torchmetrics_takes_it():
    """preds, target, indexes: the rows of the padded form, by index ascending, candidates in input order."""
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 6, 60) * 7
    preds = rng.integers(0, 3, 60) / 2.0
    target = rng.integers(0, 3, 60)
    res = tensor.evaluate(preds, target, ["nDCG@5", "AP", "RR@3"], indexes=idx)
    qs = np.unique(idx)
    assert res.queries.tolist() == qs.tolist()
    width = max((idx == q).sum() for q in qs)
    scores, labels, mask = (
        np.zeros((len(qs), width)),
        np.zeros((len(qs), width), int),
        np.zeros((len(qs), width), bool),
    )
    for i, q in enumerate(qs):
        sel = np.flatnonzero(idx == q)
        scores[i, : len(sel)], labels[i, : len(sel)], mask[i, : len(sel)] = (
            preds[sel],
            target[sel],
            True,
        )
    padded = tensor.evaluate(scores, labels, ["nDCG@5", "AP", "RR@3"], mask=mask)
    for name in padded:
        for s in STATS:
            np.testing.assert_array_equal(getattr(res[name], s), getattr(padded[name], s))
    assert check(res, scores, labels, mask, ["nDCG@5", "AP", "RR@3"], 1e-12) == 3 * 5 * len(qs)


def test_chunks_give_the_same_numbers_as_one_batch():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 4, (37, 11)) / 4.0
    labels = rng.integers(0, 3, (37, 11))
    whole = tensor.evaluate(scores, labels, ["nDCG@5", "AP", "RR@3", "Success@2"])
    for cells in (1, 11, 50, 200):
        part = tensor.evaluate(
            scores, labels, ["nDCG@5", "AP", "RR@3", "Success@2"], chunk_cells=cells
        )
        for name in whole:
            for s in STATS:
                np.testing.assert_array_equal(getattr(part[name], s), getattr(whole[name], s))


@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (0, 0)])
def test_empty_batches(shape):
    res = tensor.evaluate(
        np.zeros(shape), np.zeros(shape, int), ["nDCG@10", "RR", "AP", "Success@3", "P@2"]
    )
    for st_ in res.values():
        for s in STATS:
            assert getattr(st_, s).shape == (shape[0],) and (getattr(st_, s) == 0).all()
    flat = tensor.evaluate(np.zeros(0), np.zeros(0, int), ["nDCG@10"], indexes=np.zeros(0, int))
    assert flat["nDCG@10"].expected.shape == (0,) and math.isnan(flat.scalars()["nDCG@10"])


def test_oblivious_tie_breaks():
    scores = np.array([[0.5, 0.5, 0.5]])
    labels = np.array([[0, 0, 1]])
    got = {
        tb: float(tensor.evaluate(scores, labels, "RR", tie_break=tb)["RR"].oblivious[0])
        for tb in tensor.TIE_BREAKS
    }
    assert got == {"input": 1 / 3, "reverse": 1.0, "worst": 1 / 3, "best": 1.0}


def test_minus_infinity_scores_do_not_tie_with_padding():
    scores = np.array([[-np.inf, -np.inf, 0.0, -np.inf]])
    labels = np.array([[0, 1, 0, 1]])
    mask = np.array([[True, True, True, False]])
    res = tensor.evaluate(scores, labels, ["RR", "AP"], mask=mask)
    assert float(res["RR"].expected[0]) == pytest.approx(
        (1 / 2 + 1 / 3) / 2
    )  # the relevant one at rank 2 or 3
    assert float(res["AP"].max[0]) == pytest.approx(0.5)


def test_tie_report_scalars():
    scores = np.array([[0.5, 0.5, 0.1, 0.0], [0.9, 0.8, 0.7, 0.6]])
    labels = np.array([[1, 0, 0, 0], [0, 1, 0, 0]])
    res = tensor.evaluate(scores, labels, ["nDCG@10"])
    sc = res.scalars("val/")
    assert sc["val/tied_share"] == pytest.approx((2 / 4 + 0) / 2)
    e = (0.5 * (1 + 1 / math.log2(3)) + 1 / math.log2(3)) / 2
    assert sc["val/nDCG@10"] == pytest.approx(e)
    assert sc["val/nDCG@10/min"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(3)) / 2)
    assert sc["val/nDCG@10/max"] == pytest.approx((1 + 1 / math.log2(3)) / 2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"measures": ["infAP"]}, "no tensor kernel for infAP"),
        (
            {"measures": ["RBP(gain='trec_eval')"], "n_relevant": np.array([5, 5])},
            "it reads every judgment of a query",
        ),
        (
            {"measures": ["Bpref"], "n_relevant": np.array([5, 5])},
            "it reads every judgment of a query",
        ),
        ({"measures": ["nDCG(judged_only=True)@10"]}, "judged_only"),
        ({"tie_break": "random"}, "unknown tie_break"),
        ({"mask": np.ones((2, 2), bool)}, "mask must be a boolean array of shape (2, 3)"),
        ({"labels": np.zeros((3, 2))}, "labels must have the shape"),
        ({"n_relevant": np.array([0, 0])}, "n_relevant must be a whole number of at least"),
        (
            {"measures": ["AP(rel=2)"], "n_relevant": np.array([5, 5])},
            "n_relevant counts relevant documents at rel=1",
        ),
        ({"scores": np.array([[np.nan, 0, 0], [0, 0, 0]])}, "NaN"),
    ],
)
def test_bad_input_is_one_line(kwargs, message):
    args = {"scores": np.zeros((2, 3)), "labels": np.ones((2, 3), int), "measures": ["nDCG@10"]}
    args.update(kwargs)
    with pytest.raises(TierankInputError) as e:
        tensor.evaluate(args.pop("scores"), args.pop("labels"), args.pop("measures"), **args)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_tensors_keep_their_exact_ties(dtype):
    """bf16 / fp16 score tensors are evaluated as they are: the ties are those of the half-precision
    values (none created or broken), the numbers those of tierank.evaluate on the same values
    written to float64 (exact), computed in float32 (1e-5) or float64 (1e-12)."""
    torch = pytest.importorskip("torch", reason=NO_TORCH)
    rng = np.random.default_rng(11)
    q, c = 200, 12
    width = 0.1 if dtype == "bfloat16" else 0.01  # about 25 steps of the half grid (2^-8, 2^-11)
    fine = 1 - width + rng.random((q, c)) * width  # distinct in float64
    labels = rng.integers(0, 3, (q, c))
    mask = rng.random((q, c)) < 0.9
    half = torch.tensor(fine).to(getattr(torch, dtype))
    exact = half.to(torch.float64).numpy()  # the half values, exactly
    ms = ["nDCG@5", "RR@10", "AP", "P@3", "R@5", "Success@1"]
    res32 = tensor.evaluate(half, torch.tensor(labels), ms, mask=torch.tensor(mask))
    res64 = tensor.evaluate(
        half, torch.tensor(labels), ms, mask=torch.tensor(mask), dtype="float64"
    )
    assert res32["AP"].expected.dtype == torch.float32
    assert float(res32.tied_share.mean()) > 0.3  # the half grid ties what float64 keeps apart
    assert float(tensor.evaluate(fine, labels, ms, mask=mask).tied_share.max()) == 0.0
    assert check(res32, exact, labels, mask, ms, 1e-5) > 0
    assert check(res64, exact, labels, mask, ms, 1e-12) > 0
    # the same tie structure as the float64 copy: tied shares equal, every statistic equal
    ref = tensor.evaluate(exact, labels, ms, mask=mask)
    np.testing.assert_array_equal(res64.tied_share.numpy(), ref.tied_share)
    for name in ms:
        for s in STATS:
            np.testing.assert_allclose(
                getattr(res64[name], s).numpy(), getattr(ref[name], s), rtol=0, atol=1e-12
            )


def test_numpy_float16_scores_keep_their_exact_ties():
    rng = np.random.default_rng(12)
    scores = (0.99 + rng.random((100, 10)) * 0.01).astype(np.float16)
    labels = rng.integers(0, 2, (100, 10))
    mask = np.ones((100, 10), bool)
    res = tensor.evaluate(scores, labels, ["nDCG@5", "RR", "AP"], mask=mask, dtype="float64")
    assert float(res.tied_share.mean()) > 0.3
    assert check(res, scores.astype(np.float64), labels, mask, ["nDCG@5", "RR", "AP"], 1e-12) > 0


def test_memory_stays_bounded_by_the_chunk():
    """The temporaries scale with ``chunk_cells``, not with the batch: evaluating 50,000 cells in
    chunks of 4,096 peaks well under what one chunk of the whole batch takes (NumPy's allocations,
    traced), and under a bound of a few bytes per batch cell (the inputs' boolean checks and the
    per-query outputs) plus a constant per chunk cell.  (``benchmarks/bench_tensor.py`` states the
    bytes per cell of a full chunk.)"""
    import tracemalloc

    rng = np.random.default_rng(13)
    q, c = 1000, 50
    scores = rng.integers(0, 8, (q, c)) / 8.0
    labels = rng.integers(0, 3, (q, c))
    ms = ["nDCG@10", "RR@10", "AP", "R@20"]

    def peak(**kw):
        tracemalloc.start()
        try:
            tensor.evaluate(scores, labels, ms, **kw)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    chunk = 4096
    tensor.evaluate(scores[:2], labels[:2], ms)  # imports and caches first, outside the trace
    chunked, whole = peak(chunk_cells=chunk), peak(chunk_cells=q * c)
    assert chunked < 16 * q * c + 1000 * chunk, chunked
    assert chunked < whole / 4, (chunked, whole)


def test_cuda_tensors_stay_on_the_gpu_and_agree_with_the_cpu():
    """Where CUDA is present: results on the GPU, equal to the CPU's (float64: 1e-12), and the peak
    GPU memory beyond the inputs bounded by the chunk, not by the batch."""
    torch = pytest.importorskip("torch", reason=NO_TORCH)
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(14)
    q, c = 20_000, 100
    scores = torch.tensor(rng.integers(0, 16, (q, c)) / 16.0)
    labels = torch.tensor(rng.integers(0, 3, (q, c)))
    ms = ["nDCG@10", "RR@10", "AP", "R@100", "P@5", "Success@3"]
    cpu = tensor.evaluate(scores, labels, ms)
    s_gpu, l_gpu = scores.cuda(), labels.cuda()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    chunk = 1 << 16
    gpu = tensor.evaluate(s_gpu, l_gpu, ms, chunk_cells=chunk)
    torch.cuda.synchronize()
    over = torch.cuda.max_memory_allocated() - base
    assert over < 32 * q * c + 2000 * chunk, over
    for name in ms:
        for s in STATS:
            v = getattr(gpu[name], s)
            assert v.device.type == "cuda"
            np.testing.assert_allclose(
                v.cpu().numpy(), getattr(cpu[name], s).numpy(), rtol=0, atol=1e-12
            )


@pytest.mark.full
@pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64:UserWarning")
@pytest.mark.parametrize("dtype, tol", [("float64", 1e-12), ("float32", 1e-5), ("bfloat16", 1e-5)])
def test_jax_every_measure_agrees(dtype, tol):
    """The same code on JAX arrays (where JAX is installed): every family against tierank.evaluate,
    N+ given; float64 inside ``jax.enable_x64``; bf16 scores on the grid of the test's values.
    (Without x64, JAX makes the int64 positions int32, with a warning: exact for chunks of fewer
    than 2^31 cells.)  Full tier: JAX compiles each operation at its first shape (seconds)."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    scores, labels, mask, extra = big_batch(6, q=120)
    present = ((labels >= 1) & mask).sum(axis=1)
    ms = [m for m in MEASURES if m not in ("AP(rel=2)", "Rprec(rel=2)")]
    with jax.enable_x64(dtype == "float64"):
        res = tensor.evaluate(
            jnp.asarray(scores, dtype=getattr(jnp, dtype)),
            jnp.asarray(labels),
            ms,
            mask=jnp.asarray(mask),
            n_relevant=jnp.asarray(present + extra),
        )
        assert isinstance(res["AP"].expected, jax.Array)
        assert res["AP"].expected.dtype == (jnp.float64 if dtype == "float64" else jnp.float32)
        assert check(res, scores, labels, mask, ms, tol, extra=extra) > 0
