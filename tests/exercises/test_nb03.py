"""Notebook 03's checkers: the premises they rest on, re-measured on the transformers and loops; right answers
written independently (tests/exercises/right_nb03.py, and bisections on the transformers here) pass; shortcuts
through the forbidden functions, functions fitted to the notebook's data and half-right answers fail
(benchmarks/bench_checkers.py times the checks). The plausible wrong answers are in tests/exercises/wrong_nb03.py
(test_registry.py runs them)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from kmt_ref.algorithms.kmedoids import randomized_kmedoids
from kmt_ref.algorithms.robust import robust_kmeans_transformer
from kmt_ref.algorithms.trimmed import trimmed_kmeans, trimmed_kmeans_attention, trimmed_kmeans_quantile, \
    trimmed_kmeans_transformer
from kmt_ref.core.normalizers import gumbel, normmax, sparsemax
from kmt_ref.exercises import EXERCISES, check, nb03

_spec = importlib.util.spec_from_file_location("right_nb03", Path(__file__).with_name("right_nb03.py"))
right = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(right)

X, C0, IS_OUT = nb03._data()
N, K = X.shape[1], C0.shape[1]
LABELS0 = nb03._first_labels(X, C0)


def test_the_notebook_has_eleven_exercises_all_checked_every_kind_but_concept():
    mine = {i: ex for i, ex in EXERCISES.items() if i.startswith("03.")}
    assert list(mine) == [f"03.{m}" for m in range(1, 12)]
    assert all(ex.checked for ex in mine.values())
    assert {"code", "proof", "explore", "quiz"} == {ex.kind for ex in mine.values()}
    assert mine["03.6"].parts and not mine["03.3"].parts


# ----------------------------------------------------------------------------- 03.1
def test_0301_two_scores_never_disagree_so_lengths_start_at_three():
    grid = np.arange(-8, 9) / 4.0  # quarters: every partial sum exact
    for a in grid:
        for b in grid:
            z = np.array([a, b])
            assert np.array_equal(sparsemax(z) > 0, normmax(z, alpha=np.inf) > 0), z
    assert min(nb03.DISAGREE_LENGTHS) == 3


def test_0301_an_independent_construction_passes_and_a_fixed_vector_fails(capsys):
    for m in nb03.DISAGREE_LENGTHS:
        z = right.disagreeing_scores(m)
        assert z.shape == (m,) and not np.array_equal(sparsemax(z) > 0, normmax(z, alpha=np.inf) > 0)
    assert check("03.1", right.disagreeing_scores) is True
    capsys.readouterr()
    assert check("03.1", lambda m: np.array([1.0, 1.0, 0.5])) is False  # the notebook's vector, whatever m
    assert "shape" in capsys.readouterr().out
    assert check("03.1", lambda m: np.concatenate([[1.0, 1.0, 0.5], np.zeros(m - 3)])) is True  # below tau: kept by neither
    capsys.readouterr()
    assert check("03.1", lambda m: np.concatenate([[1.0, 0.0], np.full(m - 2, -1.0)])) is False
    assert "tau = max z - 1" in capsys.readouterr().out


def _search_with(normalizer_calls):
    def search(m):
        for top in range(1, m + 1):
            z = np.concatenate([np.ones(top), np.full(m - top, (top - 1) / top)])
            if normalizer_calls(z):
                return z
        return np.zeros(m)
    return search


def test_0301_a_search_through_sparsemax_fails_naming_it_even_inside_try(capsys):
    plain = _search_with(lambda z: not np.array_equal(sparsemax(z) > 0, normmax(z, alpha=np.inf) > 0))

    def guarded(m):
        try:
            return plain(m)
        except Exception:  # noqa: BLE001
            return np.array([1.0, 1.0, 0.5, *[-1.0] * (m - 3)])

    for answer in (plain, guarded):
        assert check("03.1", answer) is False
        out = capsys.readouterr().out
        assert "calls sparsemax" in out and "does without simplex_threshold, sparsemax, normmax" in out


# ----------------------------------------------------------------------------- 03.2
def _leaks(X, C0, T, gamma2, gamma1):
    """How many (point, center) pairs give a non-member a nonzero block-3 weight, over T layers."""
    n, k = X.shape[1], C0.shape[1]
    tr = trimmed_kmeans_transformer(X, C0, T, gamma2, gamma1=gamma1, record=True)
    return [int(np.sum((rec.weights["3"][:n] > 0) & (tr.labels[t][:, None] != np.arange(k))))
            for t, rec in enumerate(tr.layers)]


def bisect_gamma1(X, C0, gamma2, T):
    """A student's route: bisect on the transformer from a bracket that leaks below and not above."""
    lo, hi = 1e-4, 1.0
    for _ in range(20):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if sum(_leaks(X, C0, T, gamma2, mid)) else (lo, mid)
    return hi


def test_0302_on_the_notebooks_data_layer_3_sets_the_threshold():
    per_layer = nb03._leak_thresholds(X, C0, nb03.N_LAYERS, nb03.GAMMA2_LEAK)
    g = per_layer.max()
    assert 0.015 < g < 0.017 and per_layer.argmax() == 2
    assert per_layer.max() > 1.04 * per_layer[0] and per_layer.max() > 1.015 * per_layer[1]
    assert sum(_leaks(X, C0, 5, 0.5, 0.999 * g)) > 0 and sum(_leaks(X, C0, 5, 0.5, 1.001 * g)) == 0
    first = per_layer[0]
    assert _leaks(X, C0, 5, 0.5, 0.999 * first)[0] > 0 and _leaks(X, C0, 5, 0.5, 1.001 * first)[0] == 0
    assert sum(_leaks(X, C0, 5, 0.5, 1.001 * first)) > 0  # ... above which a later layer still leaks


def test_0302_on_every_checker_case_the_closed_form_is_where_the_transformer_starts_to_leak():
    later = 0
    for name, Xc, Cc, gamma2, T in nb03._leak_cases():
        per_layer = nb03._leak_thresholds(Xc, Cc, T, gamma2)
        g = per_layer.max()
        assert g > 0, name
        assert sum(_leaks(Xc, Cc, T, gamma2, 0.999 * g)) > 0 and sum(_leaks(Xc, Cc, T, gamma2, 1.001 * g)) == 0, name
        assert right.gamma1_star(Xc, Cc, gamma2, T) == pytest.approx(g, rel=1e-9), name
        if per_layer.argmax() > 0:
            later += 1
            assert not np.isclose(per_layer[0], g, rtol=0.02), name  # a first-layer answer fails there
    assert later == 2


def test_0302_right_answers_pass_and_shortcuts_and_fitted_answers_fail(capsys):
    assert check("03.2", right.gamma1_star) is True
    assert check("03.2", bisect_gamma1) is True
    capsys.readouterr()
    assert check("03.2", lambda X, C0, gamma2, T: float(nb03._leak_thresholds(X, C0, T, gamma2).max())) is False
    assert "calls nb03._leak_thresholds" in capsys.readouterr().out
    assert check("03.2", lambda X, C0, gamma2, T: 0.015935) is False  # the notebook's number
    capsys.readouterr()
    first_only = lambda X, C0, gamma2, T: right.gamma1_star(X, C0, gamma2, 1)  # noqa: E731
    assert check("03.2", first_only) is False
    assert "every layer" in capsys.readouterr().out.lower()


# ----------------------------------------------------------------------------- 03.3
def test_0303_the_largest_zero_weight_score_is_tau_of_the_others(capsys):
    w = 1.25
    assert sparsemax(np.append(nb03.THRESHOLD_Z, w))[-1] == 0
    assert sparsemax(np.append(nb03.THRESHOLD_Z, w + 1e-9))[-1] > 0
    assert check("03.3", w) is True and check("03.3", [1.25]) is True
    capsys.readouterr()
    assert check("03.3", 1.0) is False and "sufficient" in capsys.readouterr().out


# ----------------------------------------------------------------------------- 03.4
def test_0304_on_every_checker_case_the_windows_are_where_the_rules_agree():
    for name, Xc, Cc, q in nb03._window_cases():
        W = nb03._quantile_windows(Xc, Cc, q)
        labels = nb03._first_labels(Xc, Cc)
        assert np.bincount(labels).min() >= 25, name
        q_kept = trimmed_kmeans_quantile(Xc, Cc, 1, q=q).info["kept"][0]
        for j, (lo, hi) in enumerate(W):
            members = labels == j
            assert q_kept[members].sum() == np.ceil(q * (members.sum() - 1) - 1e-9), (name, j)
            for g, same in ((0.999 * lo, False), (1.001 * lo, True), (0.999 * hi, True), (1.001 * hi, False)):
                kept = trimmed_kmeans_attention(Xc, Cc, 1, g).info["kept"][0]
                assert np.array_equal(kept[members], q_kept[members]) == same, (name, j, g)
        np.testing.assert_allclose(right.quantile_windows(Xc, Cc, q), W, rtol=1e-12)


def test_0304_on_the_notebooks_data_no_single_gamma2_matches_every_cluster():
    W = nb03._quantile_windows(X, C0, nb03.Q)
    assert W[:, 0].max() > W[:, 1].min()


def test_0304_right_answers_pass_and_shortcuts_and_fitted_answers_fail(capsys):
    assert check("03.4", right.quantile_windows) is True
    assert check("03.4", lambda X, C0, q: right.quantile_windows(X, C0, q) * (1 + 1e-3)) is True
    capsys.readouterr()
    assert check("03.4", lambda X, C0, q: nb03._quantile_windows(X, C0, q)) is False
    assert "calls nb03._quantile_windows" in capsys.readouterr().out
    notebook = nb03._quantile_windows(X, C0, nb03.Q)
    assert check("03.4", lambda X, C0, q: notebook) is False  # the notebook's windows
    capsys.readouterr()
    assert check("03.4", lambda X, C0, q: right.quantile_windows(X, C0, 0.95)) is False  # the notebook's q always
    assert "row(s)" in capsys.readouterr().out


# ----------------------------------------------------------------------------- 03.5
def _outlier_weights(X, C0, is_out, gamma):
    n = X.shape[1]
    return robust_kmeans_transformer(X, C0, 1, gamma, record=True).layers[0].weights["3"][:n][is_out]


def bisect_outlier_gamma(X, C0, is_out):
    """A student's route: bisect on the robust transformer's block-3 weights."""
    lo, hi = 1e-4, 10.0
    for _ in range(25):
        mid = np.sqrt(lo * hi)
        lo, hi = (lo, mid) if _outlier_weights(X, C0, is_out, mid).max() == 0 else (mid, hi)
    return hi


def test_0305_every_outlier_weight_vanishes_exactly_from_the_threshold_on():
    for name, Xc, Cc, oc in [("the notebook's data", X, C0, IS_OUT)] + nb03._robust_cases():
        g = nb03._outlier_gammas(Xc, Cc, oc).max()
        assert _outlier_weights(Xc, Cc, oc, 0.01).max(axis=1).min() > 0, name   # the authors' default
        assert _outlier_weights(Xc, Cc, oc, 0.999 * g).max() > 0, name
        assert _outlier_weights(Xc, Cc, oc, g).max() == 0, name
        assert right.outlier_gamma(Xc, Cc, oc) == pytest.approx(g, rel=1e-12), name
    assert nb03._robust_cases()[2][1].shape[0] == 3


def test_0305_right_answers_pass_and_shortcuts_and_fitted_answers_fail(capsys):
    assert check("03.5", right.outlier_gamma) is True
    assert check("03.5", bisect_outlier_gamma) is True
    capsys.readouterr()
    assert check("03.5", lambda X, C0, o: float(nb03._outlier_gammas(X, C0, o).max())) is False
    assert "calls nb03._outlier_gammas" in capsys.readouterr().out
    assert check("03.5", lambda X, C0, o: 0.03864) is False  # the notebook's number
    capsys.readouterr()
    assert check("03.5", lambda X, C0, o: right.outlier_gamma(X, C0, o) * np.sqrt(2) / np.sqrt(X.shape[0])) is False
    assert "sqrt(d)" in capsys.readouterr().out  # sqrt(2) for every d: right in 2-d only


# ----------------------------------------------------------------------------- 03.6
def test_0306_parts_are_graded_apart(capsys):
    p = np.exp(-3.0)
    assert check("03.6", (p, "b")) is True and check("03.6", [0.04979, "B"]) is True
    half = (p, "c")
    assert check("03.6", half, part=1) is True and check("03.6", half, part=2) is False
    assert check("03.6", half) is False
    other = (np.exp(-1.5), "b")  # the CDF's sign wrong
    assert check("03.6", other, part=1) is False and check("03.6", other, part=2) is True
    assert check("03.6", other) is False
    assert "1 of 2 parts right" in capsys.readouterr().out
    g = -np.log(-np.log(np.random.default_rng(0).uniform(size=(2, 400_000))))
    hit = np.mean((nb03.GUMBEL_Z[:, None] + g).max(axis=0) <= 0)
    assert abs(hit - p) < 4 * np.sqrt(p * (1 - p) / 400_000)


# ----------------------------------------------------------------------------- 03.7
def _draws(X, C0, is_out, gamma, n_draws, seed):
    """The event 'some center lands on an outlier', estimated from seeded hard Gumbel draws."""
    labels = right._assign(X, C0)[0]
    rng = np.random.default_rng(seed)
    hit = np.zeros(n_draws, dtype=bool)
    for j in range(C0.shape[1]):
        members = np.flatnonzero(labels == j)
        if members.size == 0:
            continue
        mu = X[:, members].mean(axis=1)
        z = -gamma * np.sum((X[:, members] - mu[:, None]) ** 2, axis=0)
        hit |= gumbel(np.repeat(z[:, None], n_draws, axis=1), rng=rng, hard=True)[is_out[members]].sum(axis=0) > 0
    return hit.mean()


def test_0307_exact_probability_agrees_with_seeded_gumbel_draws():
    cases = [("the notebook's data", X, C0, IS_OUT, nb03.GAMMA_SAMPLE)] + nb03._medoid_cases()
    for name, Xc, Cc, oc, gamma in cases:
        p = nb03._medoid_probability(Xc, Cc, oc, gamma)
        assert right.p_outlier(Xc, Cc, oc, gamma) == pytest.approx(p, rel=1e-12), name
        sigma = np.sqrt(p * (1 - p) / 100_000)
        # a 4-sigma band rejects a correct p with probability ~6e-5 for a fresh seed; the seed is fixed
        assert abs(_draws(Xc, Cc, oc, gamma, 100_000, 12345) - p) < 4 * sigma, name
    # the empty cluster keeps its center: the k-medoids loop never moves it
    name, Xe, Ce, oe, ge = nb03._medoid_cases()[2]
    assert np.bincount(nb03._first_labels(Xe, Ce), minlength=4)[3] == 0
    assert np.array_equal(randomized_kmedoids(Xe, Ce, 1, ge, np.random.default_rng(0)).centers[1][:, 3], [5.0, 5.0])


def test_0307_an_estimates_precision_is_what_the_text_says():
    """The module docstring: P = 0.005340 on the notebook's data; relative standard error 3.1 % at 200,000
    draws, about 30 % at 2,000 (the solution prints both)."""
    p = nb03._medoid_probability(X, C0, IS_OUT, nb03.GAMMA_SAMPLE)
    assert f"{p:.4g}" == "0.00534"
    assert round(100 * np.sqrt((1 - p) / (p * 200_000)), 1) == 3.1
    assert 0.29 < np.sqrt((1 - p) / (p * 2000)) < 0.31


def test_0307_right_answer_passes_and_sampling_shortcuts_and_fitted_answers_fail(capsys):
    assert check("03.7", right.p_outlier) is True
    capsys.readouterr()

    def through_the_loop(X, C0, is_out, gamma):
        hits = [np.any(np.isin(randomized_kmedoids(X, C0, 1, gamma, np.random.default_rng(s)).info["medoids"][0],
                               np.flatnonzero(is_out))) for s in range(200)]
        return float(np.mean(hits))

    def guarded(X, C0, is_out, gamma):
        try:
            return through_the_loop(X, C0, is_out, gamma)
        except Exception:  # noqa: BLE001
            return right.p_outlier(X, C0, is_out, gamma)

    for answer in (through_the_loop, guarded):
        assert check("03.7", answer) is False
        out = capsys.readouterr().out
        assert "calls randomized_kmedoids" in out and "does without randomized_kmedoids" in out

    def own_gumbel(X, C0, is_out, gamma):
        return _draws(X, C0, is_out, gamma, 1000, 0)

    assert check("03.7", own_gumbel) is False and "calls gumbel" in capsys.readouterr().out
    assert check("03.7", lambda X, C0, is_out, gamma: 0.00534) is False  # the notebook's number
    capsys.readouterr()

    def estimate(X, C0, is_out, gamma):  # 3 % off: an estimate from draws, not drawn through kmt_ref
        return 1.03 * right.p_outlier(X, C0, is_out, gamma)

    assert check("03.7", estimate) is False
    out = capsys.readouterr().out
    assert "estimate from N draws" in out and "relative standard error" in out


# ----------------------------------------------------------------------------- 03.8
def test_0308_cuesta_albertos_trims_n_minus_h_points_only():
    for n_o, kept in ((10, 5), (20, 15), (40, 34)):
        assert nb03._ca_outliers_kept(n_o) == kept
        n = 90 + n_o
        assert kept >= n_o - (n - int(np.ceil(0.95 * n)))
    Xm, Cm, om = nb03._blobs(nb03.SEED, n_outliers=20)
    assert (trimmed_kmeans(Xm, Cm, 5, rho=0.05).labels[-1] < 0).sum() == 5
    assert check("03.8", 15, quiet=True) and check("03.8", 15.0, quiet=True)


# ----------------------------------------------------------------------------- every checker
RIGHT = {"03.1": right.disagreeing_scores, "03.2": bisect_gamma1, "03.3": 1.25, "03.4": right.quantile_windows,
         "03.5": bisect_outlier_gamma, "03.6": (np.exp(-3.0), "b"), "03.7": right.p_outlier, "03.8": 15,
         "03.9": [0.75, 0.25, 0.0], "03.10": list(sparsemax(-4 / np.sqrt(2) * np.array([0.0, 0.1, 0.5]))),
         "03.11": "a"}


@pytest.mark.parametrize("id", [i for i, ex in EXERCISES.items() if i.startswith("03.") and ex.checked])
def test_each_checker_passes_a_right_answer(id):
    """With a right answer (the slow routes: bisections on the transformers) each check passes; how long it takes is
    measured by benchmarks/bench_checkers.py, which reads RIGHT from here."""
    assert check(id, RIGHT[id], quiet=True)

