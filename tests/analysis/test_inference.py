"""tierank.analysis.inference against independent references: scipy.stats (t, bootstrap, wilcoxon,
ttest_rel), brute-force enumeration of sign flips, a straightforward randomized Tukey HSD, and
simulations (bootstrap coverage, the law of total variance of the combined view)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.stats as st

import tierank
from tierank.analysis import inference as inf
from tierank.examples import path
from tierank.io.readers import read_run

Z = st.norm.ppf(0.975)


# --- real per-query values: AskUbuntu BM25 and a bf16-rounded copy of it --------------------------


@pytest.fixture(scope="module")
def askubuntu():
    """Per-query expected nDCG@10 and tie variances (200 queries) of the shipped BM25 run and of its
    scores rounded to bfloat16 (with ml_dtypes), aligned on the queries."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    run = read_run(path("askubuntu-run"))
    qids, docids = run.qid.to_pylist(), run.docid.to_pylist()
    bf16 = np.asarray(run.score, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)
    as_dict = {}
    for q, d, s in zip(qids, docids, bf16):
        as_dict.setdefault(q, {})[d] = float(s)
    qrels = path("askubuntu-qrels")
    out = {}
    for name, r in (("fp32", run), ("bf16", as_dict)):
        res = tierank.evaluate(qrels, r, ["nDCG@10"])
        s = res.stats[res.measures[0]]
        order = np.argsort(np.asarray(res.qids))
        out[name] = (np.asarray(s.expected, float)[order], np.asarray(s.var, float)[order])
    assert out["bf16"][1].sum() > out["fp32"][1].sum()  # rounding made ties
    return out


def _scipy_bootstrap(x: np.ndarray, method: str, B: int, seed: int):
    """``scipy.stats.bootstrap`` of the mean of ``x`` (its ``rng`` argument is ``random_state`` before 1.15)."""
    try:
        return st.bootstrap(
            (x,), np.mean, method=method, n_resamples=B, rng=np.random.default_rng(seed)
        )
    except TypeError:
        return st.bootstrap(
            (x,), np.mean, method=method, n_resamples=B, random_state=np.random.default_rng(seed)
        )


def _quantile_se(boot_sd: float, prob: float, B: int) -> float:
    """Monte Carlo standard error of the ``prob`` quantile of ``B`` resampled means (normal density)."""
    z = st.norm.ppf(prob)
    return math.sqrt(prob * (1 - prob) / B) / (st.norm.pdf(z) / boot_sd)


# --- per system -----------------------------------------------------------------------------------


def test_t_ci_equals_scipy(askubuntu):
    X = np.column_stack([askubuntu["fp32"][0], askubuntu["bf16"][0]])
    for level in (0.9, 0.95):
        cis = inf.mean_cis(X, ["fp32", "bf16"], method="t", level=level)
        for k, c in enumerate(cis):
            ref = st.ttest_1samp(X[:, k], 0.0).confidence_interval(level)
            assert (c.ci_low, c.ci_high) == pytest.approx((ref.low, ref.high), rel=1e-12, abs=1e-15)
            assert c.se == pytest.approx(st.sem(X[:, k]), rel=1e-12)
            assert c.ci_method == "t" and c.samples is None


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_ci_matches_scipy_on_askubuntu(askubuntu, method):
    B = 4000
    for name in ("fp32", "bf16"):
        x = askubuntu[name][0]
        (c,) = inf.mean_cis(x, [name], method=method, resamples=B, seed=11)
        ref = _scipy_bootstrap(x, method, B, 5)
        sd = ref.standard_error
        for mine, theirs, prob in (
            (c.ci_low, ref.confidence_interval.low, 0.025),
            (c.ci_high, ref.confidence_interval.high, 0.975),
        ):
            tol = (
                4 * math.sqrt(2) * _quantile_se(sd, prob, B)
            )  # two independent Monte Carlo estimates
            assert abs(mine - theirs) <= tol, (name, method, mine, theirs, tol)
        assert c.se == pytest.approx(sd, rel=0.1)
        assert (c.method, c.samples, c.seed, c.ci_method) == ("bootstrap", B, 11, method)


def test_bca_matches_scipy_where_it_differs_from_percentile():
    # a small skewed sample: BCa moves the interval far more than the Monte Carlo error
    x = np.random.default_rng(0).lognormal(0.0, 1.2, size=25)
    B = 40000
    (c,) = inf.mean_cis(x, method="bca", resamples=B, seed=1)
    ref = _scipy_bootstrap(x, "bca", B, 2)
    pct = _scipy_bootstrap(x, "percentile", B, 2)
    sd = ref.standard_error
    for mine, theirs, other, prob in (
        (c.ci_low, ref.confidence_interval.low, pct.confidence_interval.low, 0.025),
        (c.ci_high, ref.confidence_interval.high, pct.confidence_interval.high, 0.975),
    ):
        tol = (
            4 * math.sqrt(2) * _quantile_se(sd, prob, B) * 1.5
        )  # BCa's shifted levels sit in a thinner tail
        assert abs(mine - theirs) <= tol
        # the check can tell BCa from percentile (more so at the long upper tail)
        assert abs(theirs - other) > (2 * tol if prob > 0.5 else tol)


def test_ci_of_a_system_does_not_change_when_systems_are_added(askubuntu):
    fp, bf = askubuntu["fp32"][0], askubuntu["bf16"][0]
    other = np.random.default_rng(4).random(len(fp))
    for method in ("percentile", "bca"):
        alone = inf.mean_cis(fp, ["fp32"], method=method, resamples=500, seed=3)[0]
        many = inf.mean_cis(
            np.column_stack([other, fp, bf]),
            ["x", "fp32", "bf16"],
            method=method,
            resamples=500,
            seed=3,
        )[1]
        assert (alone.ci_low, alone.ci_high, alone.se) == pytest.approx(
            (many.ci_low, many.ci_high, many.se), rel=1e-12
        )
        moved = inf.mean_cis(fp, ["fp32"], method=method, resamples=500, seed=4)[0]
        assert (moved.ci_low, moved.ci_high) != (alone.ci_low, alone.ci_high)  # the seed matters


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_coverage_by_simulation(method):
    # 2,000 samples of 60 from Beta(2, 5) (mean 2/7), each one column; one call resamples them all.
    # Coverage of a 95% interval: binomial SE sqrt(.95 * .05 / 2000) = 0.0049 (the columns share
    # resample indices but not data, so the coverage events are very nearly independent).
    reps, n = 2000, 60
    X = np.random.default_rng(8).beta(2.0, 5.0, size=(n, reps))
    cis = inf.mean_cis(X, method=method, resamples=1000, seed=9)
    covered = np.mean([c.ci_low <= 2 / 7 <= c.ci_high for c in cis])
    se = math.sqrt(0.95 * 0.05 / reps)
    # the percentile/BCa intervals undercover slightly at n = 60 (order 1/n), hence the 0.01 allowance
    assert 0.95 - 4 * se - 0.01 <= covered <= 0.95 + 4 * se, covered


def test_combined_variance_by_simulation():
    # a population of queries whose reported value is one random tie ordering: value a_q with
    # probability p_q, else b_q (so e_q = p a + (1 - p) b, v_q = p (1 - p) (a - b)^2)
    rng = np.random.default_rng(12)
    N, n, R = 400, 30, 20000
    a, b = rng.random(N), rng.random(N) * 0.3
    p = rng.uniform(0.1, 0.9, N)
    e, v = p * a + (1 - p) * b, p * (1 - p) * (a - b) ** 2
    theory = (e.var() + v.mean()) / n  # law of total variance, population moments
    q = rng.integers(0, N, size=(n, R))  # queries drawn with replacement
    reported = np.where(rng.random((n, R)) < p[q], a[q], b[q]).mean(axis=0)
    assert reported.var(ddof=1) == pytest.approx(theory, rel=0.05)  # sd of a variance estimate: ~1%
    assert e.var() / n < 0.8 * theory  # ignoring the ties would be detectably wrong
    # the plug-in estimate is unbiased for it: average over the replicates (one column each)
    est = inf.combined_se(e[q], v[q])
    mean_est = np.mean([c.se_combined**2 for c in est])
    assert mean_est == pytest.approx(theory, rel=0.03)
    # and the normal interval around the population mean of e covers the reported means ~95%
    cover = np.mean([abs(m - e.mean()) <= Z * math.sqrt(theory) for m in reported])
    assert cover == pytest.approx(0.95, abs=0.01)
    c = est[0]
    assert c.se_tie == pytest.approx(math.sqrt(v[q[:, 0]].sum()) / n)
    assert c.se_sampling == pytest.approx(st.sem(e[q[:, 0]]))


# --- per pair -------------------------------------------------------------------------------------


def test_paired_t_and_wilcoxon_equal_scipy(askubuntu):
    fp, bf = askubuntu["fp32"][0], askubuntu["bf16"][0]
    rng = np.random.default_rng(1)
    noisy = np.clip(fp + rng.normal(0, 0.1, len(fp)), 0, 1)
    X = np.column_stack([fp, bf, noisy])
    names = ["fp32", "bf16", "noisy"]
    t = inf.paired_tests(X, names, test="t")
    w = inf.paired_tests(X, names, test="wilcoxon")
    for pt, pw, (i, j) in zip(t, w, itertools.combinations(range(3), 2)):
        ref = st.ttest_rel(X[:, i], X[:, j])
        assert (pt.statistic, pt.p) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-12)
        ci = ref.confidence_interval()
        assert (pt.diff_ci_low, pt.diff_ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
        refw = st.wilcoxon(X[:, i] - X[:, j])
        assert (pw.statistic, pw.p) == pytest.approx((refw.statistic, refw.pvalue), rel=1e-12)
        d = X[:, i] - X[:, j]
        assert pt.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
        assert pt.mean_diff == pytest.approx(d.mean())
    assert np.count_nonzero(fp - bf) < len(
        fp
    )  # the bf16 pair has zero differences that wilcoxon drops


def test_effect_size_ci_inverts_the_noncentral_t():
    d = np.random.default_rng(2).normal(0.3, 1.0, size=40)
    X = np.column_stack([d, np.zeros_like(d)])
    (pt,) = inf.paired_tests(X, ["a", "b"])
    n = len(d)
    t_obs = pt.effect_size * math.sqrt(n)
    assert st.nct.cdf(t_obs, n - 1, pt.effect_ci_low * math.sqrt(n)) == pytest.approx(
        0.975, abs=1e-6
    )
    assert st.nct.cdf(t_obs, n - 1, pt.effect_ci_high * math.sqrt(n)) == pytest.approx(
        0.025, abs=1e-6
    )
    assert pt.effect_ci_low < pt.effect_size < pt.effect_ci_high


def _brute_force_flip_p(d: np.ndarray) -> float:
    """Two-sided sign-flip p-value by enumerating every sign vector over all n differences
    (zero differences included: flipping them changes nothing)."""
    obs = abs(sum(d))
    hits = total = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        total += 1
        hits += abs(sum(s * x for s, x in zip(signs, d))) >= obs - 1e-9
    return hits / total


def test_exact_randomization_equals_brute_force():
    rng = np.random.default_rng(5)
    for trial in range(4):
        # multiples of 1/8 with repeated magnitudes and zeros: sums tie exactly
        d = rng.integers(-4, 5, size=13) / 8.0
        y = rng.random(13)
        (pt,) = inf.paired_tests(np.column_stack([y + d, y]), ["a", "b"], test="randomization")
        assert pt.method == "exact" and pt.samples == 2 ** int(np.count_nonzero(d))
        assert pt.p == pytest.approx(_brute_force_flip_p(d), abs=1e-12), trial
        assert pt.statistic == pytest.approx(d.mean())


def test_monte_carlo_randomization_within_4_se_of_exact(monkeypatch):
    d = np.random.default_rng(6).normal(0.15, 0.5, size=14)
    y = np.zeros_like(d)
    exact = _brute_force_flip_p(d)
    from tierank.analysis.paired import randomization

    monkeypatch.setattr(
        randomization, "EXACT_MAX", 5
    )  # force Monte Carlo on these 14 nonzero differences
    (pt,) = inf.paired_tests(
        np.column_stack([y + d, y]), ["a", "b"], test="randomization", samples=20000, seed=3
    )
    assert (pt.method, pt.samples, pt.seed) == ("monte-carlo", 20000, 3)
    assert abs(pt.p - exact) <= 4 * pt.se + 1 / 20000, (pt.p, exact, pt.se)
    assert 0.01 < exact < 0.5  # a p-value where the Monte Carlo error is visible


def test_paired_bootstrap_test_against_scipy_bootstrap_distribution(askubuntu):
    fp = askubuntu["fp32"][0]
    rng = np.random.default_rng(1)
    other = np.clip(fp - 0.015 + rng.normal(0, 0.1, len(fp)), 0, 1)
    B = 4000
    (pt,) = inf.paired_tests(
        np.column_stack([fp, other]),
        ["fp32", "other"],
        test="bootstrap",
        resamples=B,
        seed=2,
        ci="percentile",
    )
    d = fp - other
    ref = _scipy_bootstrap(d, "percentile", B, 9)
    p_ref = (1 + np.sum(np.abs(ref.bootstrap_distribution - d.mean()) >= abs(d.mean()))) / (1 + B)
    assert abs(pt.p - p_ref) <= 4 * math.sqrt(2 * p_ref * (1 - p_ref) / B) + 2 / B, (pt.p, p_ref)
    assert 0.0005 < p_ref < 0.5
    sd = ref.standard_error
    assert abs(pt.diff_ci_low - ref.confidence_interval.low) <= 4 * math.sqrt(2) * _quantile_se(
        sd, 0.025, B
    )
    assert (pt.method, pt.samples, pt.seed) == ("monte-carlo", B, 2)


def test_all_zero_differences_give_p_one():
    x = np.linspace(0, 1, 10)
    for test in inf.TESTS:
        (pt,) = inf.paired_tests(np.column_stack([x, x]), ["a", "b"], test=test, resamples=200)
        assert pt.p == 1.0 and pt.mean_diff == 0.0


# --- many systems ---------------------------------------------------------------------------------


def _straightforward_tukey(X: np.ndarray, T: int, rng) -> np.ndarray:
    """Randomized Tukey HSD as written in Carterette (2012): for each trial, permute every query's
    row by sorting random keys, take the max - min of the column means; p_ij = (1 + #{range >=
    |diff_ij|}) / (1 + T)."""
    n, S = X.shape
    ranges = []
    for _ in range(T):
        perm = np.argsort(rng.random((n, S)), axis=1)
        m = np.take_along_axis(X, perm, axis=1).mean(axis=0)
        ranges.append(m.max() - m.min())
    ranges = np.array(ranges)
    means = X.mean(axis=0)
    p = np.ones((S, S))
    for i in range(S):
        for j in range(S):
            if i != j:
                p[i, j] = (1 + np.sum(ranges >= abs(means[i] - means[j]) - 1e-12)) / (1 + T)
    return p


def test_tukey_hsd_agrees_with_straightforward_implementation(askubuntu):
    fp, bf = askubuntu["fp32"][0][:60], askubuntu["bf16"][0][:60]
    rng = np.random.default_rng(3)
    X = np.column_stack(
        [
            fp,
            bf,
            np.clip(fp - 0.1 + rng.normal(0, 0.1, 60), 0, 1),
            np.clip(fp - 0.05 + rng.normal(0, 0.1, 60), 0, 1),
            rng.random(60) * 0.5,
        ]
    )
    X = np.vstack(
        [X, np.zeros((15, 5)), np.full((5, 5), 0.5)]
    )  # queries where every system scores the same
    T = 3000
    h = inf.tukey_hsd(X, list("ABCDE"), permutations=T, seed=4)
    ref = _straightforward_tukey(X, T, np.random.default_rng(10))
    se = np.sqrt(2 * ref * (1 - ref) / T)
    assert np.all(np.abs(h.p - ref) <= 4 * se + 2 / T), (h.p, ref)
    assert np.any((ref > 0.01) & (ref < 0.9))  # some p-values carry Monte Carlo error
    assert np.allclose(h.p, h.p.T) and h.samples == T and h.seed == 4


def test_tukey_groups_and_best():
    rng = np.random.default_rng(0)
    base = rng.random(40)
    X = np.column_stack(
        [base + 0.30, base + 0.29, base + 0.15, base]
    )  # A ~ B >> C >> D, same noise
    X += rng.normal(0, 0.02, X.shape)
    h = inf.tukey_hsd(X, ["A", "B", "C", "D"], permutations=2000, seed=1)
    assert h.groups == ("a", "a", "b", "c")
    assert h.best == ("A", "B")


def test_letter_groups_overlapping_runs():
    sep = np.zeros((4, 4), dtype=bool)
    for i, j in ((0, 2), (0, 3), (1, 3)):
        sep[i, j] = sep[j, i] = True
    # given out of order: the display follows the means
    assert inf.letter_groups(
        np.array([0.6, 0.8, 0.9, 0.7]), sep[[3, 1, 0, 2]][:, [3, 1, 0, 2]]
    ) == ("c", "ab", "a", "bc")


def test_rank_intervals_against_rankdata_on_the_same_resamples():
    rng = np.random.default_rng(7)
    X = rng.random((50, 5)) + np.array([0.0, 0.02, 0.1, 0.3, 0.3])
    B = 800
    r = inf.rank_intervals(X, list("ABCDE"), resamples=B, seed=5)
    W = np.vstack(list(inf.resample_counts(50, B, 5)))
    ranks = np.array([st.rankdata(-(w @ X) / 50, method="min") for w in W])
    lo = np.sort(ranks, axis=0)[int(np.floor(0.025 * (B - 1)))]
    hi = np.sort(ranks, axis=0)[int(np.ceil(0.975 * (B - 1)))]
    assert r.low.tolist() == lo.tolist() and r.high.tolist() == hi.tolist()
    assert r.rank.tolist() == st.rankdata(-X.mean(axis=0), method="min").astype(int).tolist()
    assert r.low[0] == 4 and r.high[3] >= 2  # close systems share ranks; D and E are level-ish
    assert (r.samples, r.seed, r.method) == (B, 5, "bootstrap")


def test_reproducible_from_the_seed(askubuntu):
    X = np.column_stack([askubuntu["fp32"][0], askubuntu["bf16"][0]])

    def run(seed):
        return inf.paired_tests(
            X,
            ["x", "y"],
            test="bootstrap",
            ci="percentile",  # noqa: E731
            resamples=300,
            seed=seed,
        )[0]

    a, b, c = run(1), run(1), run(2)
    assert a == b
    assert a.diff_ci_low != c.diff_ci_low


def test_invalid_arguments_raise():
    from tierank.errors import TierankInputError

    with pytest.raises(TierankInputError, match="unknown test"):
        inf.paired_tests([[1.0, 2.0]], ["a", "b"], test="z")
    with pytest.raises(TierankInputError, match="CI method"):
        inf.mean_cis([[1.0]], method="basic")
    with pytest.raises(TierankInputError, match="finite"):
        inf.mean_cis([[np.nan]])
    with pytest.raises(TierankInputError, match="seed"):
        inf.mean_cis([[1.0]], seed=-1)


# --- wired into compare ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def askubuntu_runs():
    """The shipped BM25 run, its bf16-rounded copy and a noisy copy, as dict runs, with the qrels."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    run = read_run(path("askubuntu-run"))
    qids, docids = run.qid.to_pylist(), run.docid.to_pylist()
    score = np.asarray(run.score, dtype=np.float64)
    variants = {
        "fp32": score,
        "bf16": np.asarray(run.score, dtype=np.float32)
        .astype(ml_dtypes.bfloat16)
        .astype(np.float64),
        "noisy": score + np.random.default_rng(0).normal(0, 3.0, len(score)),
    }
    runs = {}
    for name, s in variants.items():
        d = {}
        for q, doc, x in zip(qids, docids, s):
            d.setdefault(q, {})[doc] = float(x)
        runs[name] = d
    return runs, path("askubuntu-qrels")


def _per_query_expected(qrels, run):
    res = tierank.evaluate(qrels, run, ["nDCG@10"])
    order = np.argsort(np.asarray(res.qids))
    return np.asarray(res.stats[res.measures[0]].expected, float)[order]


def test_compare_default_is_the_t_test_and_adds_the_keys(askubuntu_runs):
    from tierank.analysis.compare import compare, records

    runs, qrels = askubuntu_runs
    two = {k: runs[k] for k in ("fp32", "bf16")}
    cmp = compare(two, qrels, "nDCG@10")
    x, y = (_per_query_expected(qrels, runs[n]) for n in (cmp.pairs[0].a, cmp.pairs[0].b))
    (pair,) = cmp.pairs
    ref = st.ttest_rel(x, y)
    assert (pair.t, pair.p) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-12)
    ci = ref.confidence_interval()
    assert (pair.diff_ci_low, pair.diff_ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert (pair.test, pair.method, pair.samples, pair.seed) == ("t", "analytic", None, None)
    top = cmp.systems[0]
    tci = st.ttest_1samp(x, 0).confidence_interval()
    assert (top.ci_low, top.ci_high, top.ci_method) == (
        pytest.approx(tci.low),
        pytest.approx(tci.high),
        "t",
    )
    rec = records(cmp)
    assert set(rec["systems"][0]) >= {
        "ci_low",
        "ci_high",
        "ci_method",
        "rank",
        "rank_oblivious",
        "rank_low",
        "rank_high",
        "group",
    }
    assert set(rec["pairs"][0]) >= {
        "test",
        "p",
        "p_adjusted",
        "effect_size",
        "diff_ci_low",
        "diff_ci_high",
        "method",
        "samples",
        "seed",
    }
    assert {"seed", "resamples", "permutations", "test", "ci"} <= set(rec["settings"])
    assert [s["rank"] for s in rec["systems"]] == [1, 2] and rec["systems"][0]["rank_low"] is None


def test_compare_wilcoxon_and_holm_on_three_systems(askubuntu_runs):
    from tierank.analysis.compare import compare
    from tierank.analysis.significance import adjust_pvalues

    runs, qrels = askubuntu_runs
    cmp = compare(runs, qrels, "nDCG@10", test="wilcoxon", correction="holm")
    ps = []
    for pc in cmp.pairs:
        d = _per_query_expected(qrels, runs[pc.a]) - _per_query_expected(qrels, runs[pc.b])
        assert pc.p == pytest.approx(st.wilcoxon(d).pvalue, rel=1e-12) and pc.test == "wilcoxon"
        ps.append(st.wilcoxon(d).pvalue)
    assert [pc.p_adjusted for pc in cmp.pairs] == pytest.approx(adjust_pvalues(ps, "holm").tolist())
    assert [pc.significant for pc in cmp.pairs] == [pc.p_adjusted < 0.05 for pc in cmp.pairs]


def test_compare_ci_does_not_change_when_a_system_is_added(askubuntu_runs):
    from tierank.analysis.compare import compare

    runs, qrels = askubuntu_runs
    kw = dict(ci="bca", resamples=400, seed=5)
    two = compare({k: runs[k] for k in ("fp32", "bf16")}, qrels, "nDCG@10", **kw)
    three = compare(runs, qrels, "nDCG@10", **kw)
    for name in ("fp32", "bf16"):
        a, b = two.system(name), three.system(name)
        assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    pa, pb = two.pair("fp32", "bf16"), three.pair("fp32", "bf16")
    assert (pa.diff_ci_low, pa.diff_ci_high) == (pb.diff_ci_low, pb.diff_ci_high)


def test_compare_leaderboard(askubuntu_runs):
    from tierank.analysis.compare import compare

    runs, qrels = askubuntu_runs
    cmp = compare(runs, qrels, "nDCG@10", leaderboard=True, resamples=500, permutations=500, seed=2)
    E = np.column_stack([_per_query_expected(qrels, runs[s.name]) for s in cmp.systems])
    hsd = inf.tukey_hsd(E, [s.name for s in cmp.systems], permutations=500, seed=2)
    ri = inf.rank_intervals(E, [s.name for s in cmp.systems], resamples=500, seed=2)
    assert [s.group for s in cmp.systems] == list(hsd.groups)
    assert [(s.rank_low, s.rank_high) for s in cmp.systems] == list(
        zip(ri.low.tolist(), ri.high.tolist())
    )
    assert cmp.best == hsd.best and cmp.systems[0].name in cmp.best
    assert [s.rank for s in cmp.systems] == [1, 2, 3]
    assert all(s.rank_low <= s.rank <= s.rank_high for s in cmp.systems)
    # the noisy copy is clearly worse: separated from the two others
    assert cmp.systems[-1].name == "noisy" and "noisy" not in cmp.best


def test_cli_compare_test_and_leaderboard(askubuntu_runs, tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    from tierank.cli import app

    runs, qrels = askubuntu_runs
    monkeypatch.chdir(tmp_path)
    files = []
    for name in ("fp32", "bf16", "noisy"):
        p = tmp_path / f"{name}.run"
        p.write_text(
            "".join(
                f"{q} Q0 {d} 0 {s!r} {name}\n"
                for q, docs in runs[name].items()
                for d, s in docs.items()
            )
        )
        files.append(p.name)
    res = CliRunner().invoke(
        app,
        [
            "compare",
            *files[:2],
            "--qrels",
            str(qrels),
            "--test",
            "randomization",
            "--permutations",
            "300",
            "--seed",
            "4",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    (pair,) = doc["pairs"]
    assert (pair["test"], pair["method"], pair["samples"], pair["seed"]) == (
        "randomization",
        "monte-carlo",
        300,
        4,
    )
    assert doc["settings"]["seed"] == 4 and doc["settings"]["permutations"] == 300
    res = CliRunner().invoke(
        app,
        [
            "compare",
            *files,
            "--qrels",
            str(qrels),
            "--leaderboard",
            "--resamples",
            "200",
            "--permutations",
            "200",
        ],
    )
    assert res.exit_code == 0, res.output  # three systems: Holm-adjusted p in the flips table
    assert (
        "leaderboard: nDCG@10" in res.stdout
        and "rank interval" in res.stdout
        and "p adj (t)" in res.stdout
    )
    res = CliRunner().invoke(
        app,
        [
            "compare",
            *files,
            "--qrels",
            str(qrels),
            "--leaderboard",
            "--resamples",
            "200",
            "--permutations",
            "200",
            "--tie-samples",
            "2",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    st_ = json.loads(res.stdout)["settings"]
    assert (st_["tie_samples"], st_["rank_method"]) == (2, "bootstrap+ties")


def test_tukey_permutations_do_not_depend_on_the_number_of_threads():
    X = np.random.default_rng(2).random((30, 4))
    X[:5] = 0.25  # constant rows are left out of the permuting
    one = inf.permutation_ranges(X, 1200, seed=7, jobs=1)
    two = inf.permutation_ranges(X, 1200, seed=7, jobs=2)
    assert np.array_equal(one, two) and len(one) == 1200
    assert np.array_equal(one, inf.permutation_ranges(X, 1200, seed=7, jobs=3))
    assert np.array_equal(
        one, inf.permutation_ranges(X, 1200, seed=7)
    )  # the default: up to 2 threads
    assert 1 <= inf.default_jobs() <= 2
    assert not np.array_equal(one, inf.permutation_ranges(X, 1200, seed=8))
    for bad in (0, -1, True, 1.5):
        with pytest.raises(tierank.TierankInputError, match="jobs must be a positive integer"):
            inf.permutation_ranges(X, 10, jobs=bad)


@pytest.mark.parametrize("test, header", [("t", "t"), ("wilcoxon", "W"), ("randomization", None)])
def test_compare_table_shows_the_chosen_tests_statistic(askubuntu_runs, test, header):
    import io

    from rich.console import Console

    from tierank.analysis.compare import compare
    from tierank.report.terminal import compare_tables

    runs, qrels = askubuntu_runs
    cmp = compare(
        {k: runs[k] for k in ("fp32", "bf16")}, qrels, "nDCG@10", test=test, permutations=200
    )
    (pair,) = cmp.pairs
    d = _per_query_expected(qrels, runs[pair.a]) - _per_query_expected(qrels, runs[pair.b])
    ref = {
        "t": st.ttest_1samp(d, 0).statistic,
        "wilcoxon": st.wilcoxon(d).statistic,
        "randomization": d.mean(),
    }
    assert pair.statistic == pytest.approx(ref[test], rel=1e-9)
    pairs_table = compare_tables(cmp)[1]
    headers = [str(col.header) for col in pairs_table.columns]
    assert (
        headers[4] == (header or "p")
        and ("t" in headers) == (test == "t")
        and ("W" in headers) == (header == "W")
    )
    console = Console(width=220, record=True, file=io.StringIO())
    console.print(pairs_table)
    if header:
        assert f"{pair.statistic:.3f}"[:5] in console.export_text()


def test_tukey_hsd_agrees_with_ranx_on_tie_free_runs():
    """ranx 0.3.21's ``compare(..., stat_test="tukey")`` is scipy's classical Tukey HSD (studentized
    range of unpaired means, pooled variance), not a randomized one: it ignores the pairing by query
    and its null does not include the systems' own mean differences. The two agree where those
    differences vanish: queries of the same shape (no query effect) and systems close to each other.
    There the randomized p-values lie within Monte Carlo error (plus a small allowance for the
    asymptotics) of ranx's."""
    ranx = pytest.importorskip("ranx", reason="ranx not installed: pip install 'tierank[ranx]'")
    rng = np.random.default_rng(0)
    nq, nd = 300, 30
    qrels = {f"q{i}": {f"d{j}": 1 for j in range(5)} for i in range(nq)}
    runs = {
        f"s{s}": {
            q: {f"d{j}": float(rng.normal(shift * (j < 5), 1.0)) for j in range(nd)} for q in qrels
        }
        for s, shift in enumerate((0.0, 0.05, 0.1, 0.15))
    }
    report = ranx.compare(
        ranx.Qrels(qrels),
        [ranx.Run(r, name=n) for n, r in runs.items()],
        ["ndcg@10"],
        stat_test="tukey",
    )
    E = []
    for r in runs.values():
        res = tierank.evaluate(qrels, r, ["nDCG@10"])
        s = res.stats[res.measures[0]]
        assert np.all(np.asarray(s.var) == 0)  # tie-free: expected = oblivious = ranx's values
        E.append(np.asarray(s.expected, float)[np.argsort(np.asarray(res.qids))])
    T = 5000
    h = inf.tukey_hsd(np.column_stack(E), list(runs), permutations=T, seed=1)
    names = list(runs)
    for i, j in itertools.combinations(range(len(names)), 2):
        ref = report.comparisons[names[i], names[j]]["ndcg@10"]["p_value"]
        se = math.sqrt(ref * (1 - ref) / T)
        assert abs(h.p[i, j] - ref) <= 4 * se + 0.01, (names[i], names[j], h.p[i, j], ref)
    assert any(
        0.01 < report.comparisons[a, b]["ndcg@10"]["p_value"] < 0.9
        for a, b in itertools.combinations(names, 2)
    )


def test_bootstrap_tie_means_against_a_loop_over_resamples():
    rng = np.random.default_rng(11)
    n, S, N, B = 40, 3, 4, 300
    D = rng.random((N, n, S))
    got = inf.bootstrap_tie_means(D, B, seed=6)
    W = np.vstack(list(inf.resample_counts(n, B, 6)))
    K = np.random.default_rng([6, 1]).integers(0, N, size=(B, n))  # one chunk at this size
    ref = np.array(
        [
            [sum(W[b, q] * D[K[b, q], q, s] for q in range(n)) / n for s in range(S)]
            for b in range(B)
        ]
    )
    assert np.allclose(got, ref, rtol=1e-12, atol=0)
    # the same ordering every time: the plain query bootstrap, and the same rank intervals
    X = D[0]
    same = np.stack([X] * N)
    assert np.allclose(
        inf.bootstrap_tie_means(same, B, seed=6), inf.bootstrap_means(X, B, seed=6), rtol=1e-12
    )
    a = inf.rank_intervals(X, list("ABC"), resamples=B, seed=6)
    b = inf.rank_intervals(X, list("ABC"), resamples=B, seed=6, tie_draws=same)
    assert (a.low.tolist(), a.high.tolist()) == (b.low.tolist(), b.high.tolist())
    assert (a.method, a.tie_samples, b.method, b.tie_samples) == (
        "bootstrap",
        None,
        "bootstrap+ties",
        N,
    )
    with pytest.raises(tierank.errors.TierankInputError):
        inf.rank_intervals(X, resamples=B, tie_draws=D[:, :5])


def test_compare_leaderboard_tie_samples(askubuntu_runs):
    from tierank.analysis.compare import compare, records

    runs, qrels = askubuntu_runs
    kw = dict(leaderboard=True, resamples=300, permutations=200, seed=3)
    plain = compare(runs, qrels, "nDCG@10", **kw)
    tied = compare(runs, qrels, "nDCG@10", tie_samples=3, **kw)
    st_ = records(tied)["settings"]
    assert (st_["tie_samples"], st_["rank_method"]) == (3, "bootstrap+ties")
    assert records(plain)["settings"]["rank_method"] == "bootstrap"
    assert [s.rank for s in tied.systems] == [s.rank for s in plain.systems]
    for s in tied.systems:
        assert 1 <= s.rank_low <= s.rank_high <= 3
    # the groups and CIs do not depend on the tie draws
    assert [(s.group, s.ci_low) for s in tied.systems] == [
        (s.group, s.ci_low) for s in plain.systems
    ]


# --- small samples: no test reports what its method cannot support -------------------------------


def _exact_flips(d: np.ndarray) -> float:
    """The two-sided sign-flip p of the mean of ``d``, by listing every sign vector."""
    import itertools

    sums = [abs(float(np.dot(s, d))) for s in itertools.product((1.0, -1.0), repeat=len(d))]
    return float(np.mean([v >= abs(float(d.sum())) - 1e-12 for v in sums]))


_D12 = np.array([0.12, 0.05, -0.03, 0.20, 0.08, 0.15, -0.06, 0.10, 0.02, 0.18, 0.07, -0.01])


@pytest.mark.parametrize(
    "d, before, after",
    [
        (np.array([0.2]), 1 / 10001, 1.0),
        (np.array([0.2, 0.1]), 1 / 10001, 0.5),
        (np.array([0.2, 0.1, 0.3]), 1 / 10001, 0.25),
        (_D12, 12 / 10001, 0.0146484375),
    ],
    ids=["1 query", "2 queries", "3 queries", "12 queries"],
)
def test_bootstrap_with_few_queries_gives_the_exact_randomization_p(d, before, after):
    """The centred bootstrap never reaches |mean d| with 1-3 differences of one sign (p = 1/(B+1),
    'significant'); at 12 queries it is still 12x too small. The exact test answers, labelled."""
    n = len(d)
    X = np.column_stack([0.5 + d, np.full(n, 0.5)])
    boot = inf.bootstrap_means(X, 10_000, 0)
    bd = boot[:, 0] - boot[:, 1]
    raw = (1 + np.sum(np.abs(bd - d.mean()) >= abs(d.mean()) - 1e-12)) / 10_001
    assert raw == pytest.approx(before)  # what the bootstrap alone says
    (pt,) = inf.paired_tests(X, ["A", "B"], test="bootstrap", resamples=10_000, seed=0)
    assert pt.p == pytest.approx(_exact_flips(d), abs=1e-15) == pytest.approx(after)
    assert (pt.test, pt.test_used, pt.method, pt.samples) == (
        "bootstrap",
        "randomization",
        "exact",
        2**n,
    )
    assert f"{n} nonzero differences" in pt.fallback


def test_bootstrap_with_many_queries_stays_the_bootstrap():
    rng = np.random.default_rng(5)
    d = rng.normal(0.05, 0.15, inf.EXACT_MAX + 1)
    (pt,) = inf.paired_tests(
        np.column_stack([0.5 + d, np.full(len(d), 0.5)]),
        ["A", "B"],
        test="bootstrap",
        resamples=500,
    )
    assert (pt.test_used, pt.method, pt.fallback) == ("bootstrap", "monte-carlo", None)


@pytest.mark.parametrize(
    "X, p",
    [
        ([[0.7, 0.5], [0.9, 0.7]], 0.5),  # two equal differences: no variance
        ([[0.7, 0.5]], 1.0),  # one query
        ([[0.7, 0.5], [0.9, 0.7], [0.4, 0.2]], 0.25),
    ],
)
def test_t_test_where_t_is_undefined_falls_back_to_the_exact_test(X, p):
    (pt,) = inf.paired_tests(X, ["A", "B"], test="t")
    assert math.isnan(pt.t) and pt.p == pytest.approx(p) and pt.test_used == "randomization"
    assert pt.fallback.startswith("t is undefined")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = st.ttest_rel(np.asarray(X)[:, 0], np.asarray(X)[:, 1])
    assert not ref.pvalue > 1e-10  # scipy: nan, or "significant" on rounding noise (t ~ 1e15)


@pytest.mark.parametrize(
    "d, label",
    [
        ([0.1, -0.3, 0.2, 0.45, 0.5], "exact"),
        ([0.1, 0.1, 0.2, -0.3, 0.5], "permutation"),  # tied |d|, n <= 13
        ([0.0, 0.1, 0.25, -0.3, 0.5], "permutation"),  # a zero difference
        ([0.1, 0.1, -0.1] + [0.01 * i * (-1) ** i for i in range(1, 18)], "approx"),  # ties, n > 13
    ],
)
def test_wilcoxon_method_labels_what_scipy_computed(d, label):
    d = np.asarray(d)
    X = np.column_stack([0.5 + d, np.full(len(d), 0.5)])
    (pt,) = inf.paired_tests(X, ["A", "B"], test="wilcoxon")
    assert pt.method == label
    assert pt.p == pytest.approx(st.wilcoxon(d).pvalue, rel=1e-12)  # scipy's own choice
    how = {"exact": "exact", "approx": "asymptotic", "permutation": st.PermutationMethod()}[label]
    assert pt.p == pytest.approx(st.wilcoxon(d, method=how).pvalue, rel=1e-12)
    if (
        label != "exact"
    ):  # and the other methods give another number here: the label is not decoration
        assert st.wilcoxon(
            d, method="asymptotic" if label == "permutation" else st.PermutationMethod()
        ).pvalue != pytest.approx(pt.p, rel=1e-6)
