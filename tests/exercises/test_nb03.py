"""Notebook 03's checkers: the expected values they compute agree with independent measurements.

The solutions notebook passes every checker (tests/test_notebooks.py runs it) and
tests/exercises/wrong_nb03.py lists wrong answers they reject; here each
closed form used by a checker is confirmed by running kmt_ref's transformers
and loops at and around it, and each checker is shown to be cheap.
"""
import time

import numpy as np
import pytest

from kmt_ref.algorithms.robust import robust_kmeans_transformer
from kmt_ref.algorithms.trimmed import trimmed_kmeans_attention, trimmed_kmeans_quantile, trimmed_kmeans_transformer
from kmt_ref.core.normalizers import gumbel, normmax, softmax, sparsemax
from kmt_ref.exercises import EXERCISES, check, nb03

X, C0, IS_OUT = nb03._data()
N, K = X.shape[1], C0.shape[1]
LABELS0 = nb03._first_labels()


def test_the_notebook_has_eleven_exercises_five_checked_every_kind_but_concept():
    mine = {i: ex for i, ex in EXERCISES.items() if i.startswith("03.")}
    assert list(mine) == [f"03.{m}" for m in range(1, 12)]
    assert sum(ex.checked for ex in mine.values()) >= 5
    assert {"code", "proof", "explore"} <= {ex.kind for ex in mine.values()}


@pytest.mark.parametrize("z", [[1.0, 1.0, 0.5], [1.5, 1.5, 1.0], [1.0, 1.0, 0.5, -2.0]])
def test_0301_accepts_any_vector_with_a_score_at_tau(z, capsys):
    z = np.array(z)
    assert not np.array_equal(sparsemax(z) > 0, normmax(z, alpha=np.inf) > 0)
    assert check("03.1", z) is True


def _leaks(gamma1, gamma2=nb03.GAMMA2_LEAK):
    """Per layer, how many (point, center) pairs give a non-member a nonzero block-3 weight."""
    tr = trimmed_kmeans_transformer(X, C0, nb03.N_LAYERS, gamma2, gamma1=gamma1, record=True)
    return [int(np.sum((rec.weights["3"][:N] > 0) & (tr.labels[t][:, None] != np.arange(K))))
            for t, rec in enumerate(tr.layers)]


def test_0302_threshold_is_where_the_transformer_starts_to_leak(capsys):
    g = nb03.leak_threshold()
    assert 0.015 < g < 0.017                              # the measured fact the exercise rests on: ~0.0159
    assert sum(_leaks(0.999 * g)) > 0 and sum(_leaks(1.001 * g)) == 0
    assert sum(_leaks(0.2)) == 0                          # well above: nothing leaks
    lo, hi = 1e-4, 1.0                                    # a student's bisection on the transformer
    for _ in range(20):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if sum(_leaks(mid)) else (lo, mid)
    assert check("03.2", hi) is True


def test_0302_a_later_layer_sets_the_threshold_so_a_first_layer_answer_fails(capsys):
    per_layer = nb03.leak_thresholds()
    assert per_layer.argmax() == 2                        # layer 3 sets it, 5 % above layer 1, 2 % above layer 2
    assert per_layer.max() > 1.04 * per_layer[0] and per_layer.max() > 1.015 * per_layer[1]
    first = per_layer[0]
    assert _leaks(0.999 * first)[0] > 0 and _leaks(1.001 * first)[0] == 0   # layer 1's own threshold, on the transformer
    assert sum(_leaks(1.001 * first)) > 0                 # ... above which a later layer still leaks
    assert check("03.2", first) is False                  # the first-layer-only answer
    assert "every layer" in capsys.readouterr().out.lower()


def test_0304_windows_match_the_quantile_rule_inside_and_not_outside(capsys):
    W = nb03.quantile_windows()
    q_kept = trimmed_kmeans_quantile(X, C0, 1).info["kept"][0]
    for j, (lo, hi) in enumerate(W):
        members = LABELS0 == j
        for g, same in ((0.999 * lo, False), (1.001 * lo, True), (0.999 * hi, True), (1.001 * hi, False)):
            kept = trimmed_kmeans_attention(X, C0, 1, g).info["kept"][0]
            assert np.array_equal(kept[members], q_kept[members]) == same, (j, g)
    assert W[:, 0].max() > W[:, 1].min()                  # no single gamma2 matches every cluster
    assert check("03.4", W * (1 + 1e-3)) is True


def test_0305_every_outlier_weight_vanishes_exactly_from_the_threshold_on(capsys):
    g = nb03.robust_outlier_gamma()

    def outlier_weights(gamma):
        return robust_kmeans_transformer(X, C0, 1, gamma, record=True).layers[0].weights["3"][:N][IS_OUT]

    assert outlier_weights(0.01).max(axis=1).min() > 0    # the authors' default: every outlier keeps a weight
    assert outlier_weights(0.999 * g).max() > 0 and outlier_weights(g).max() == 0
    assert check("03.5", g * 1.002) is True


def test_0307_exact_probability_agrees_with_seeded_gumbel_draws(capsys):
    p = nb03.medoid_outlier_probability()
    n_draws = 100_000
    rng = np.random.default_rng(12345)
    hit = np.zeros(n_draws, dtype=bool)
    for j in range(K):
        members = np.flatnonzero(LABELS0 == j)
        mu = X[:, members].mean(axis=1)
        z = -nb03.GAMMA_SAMPLE * np.sum((X[:, members] - mu[:, None]) ** 2, axis=0)
        one_hot = gumbel(np.repeat(z[:, None], n_draws, axis=1), rng=rng, hard=True)
        hit |= one_hot[IS_OUT[members]].sum(axis=0) > 0
    sigma = np.sqrt(p * (1 - p) / n_draws)
    # a 4-sigma band rejects a correct p with probability ~6e-5 for a fresh seed; the seed is fixed, so deterministic
    assert abs(hit.mean() - p) < 4 * sigma
    # the independent per-center softmax computed here gives the same number
    q = [softmax(-nb03.GAMMA_SAMPLE * np.sum((X[:, LABELS0 == j] - X[:, LABELS0 == j].mean(axis=1, keepdims=True)) ** 2,
                                             axis=0))[IS_OUT[LABELS0 == j]].sum() for j in range(K)]
    assert np.isclose(1 - np.prod(1 - np.array(q)), p, rtol=1e-12)
    assert check("03.7", p) is True


@pytest.mark.parametrize("id", [i for i, ex in EXERCISES.items() if i.startswith("03.") and ex.checked])
def test_each_checker_is_fast(id, capsys):
    nb03.leak_thresholds.cache_clear()
    nb03.quantile_windows.cache_clear()
    nb03.robust_outlier_gamma.cache_clear()
    nb03.medoid_outlier_probability.cache_clear()
    nb03._data.cache_clear()
    t0 = time.perf_counter()
    check(id, 0.5)                                        # a wrong answer: the checker computes its target
    assert time.perf_counter() - t0 < 2.0


def test_03_5_and_03_7_accept_the_printed_values(capsys):
    from kmt_ref.exercises import nb03 as _nb03
    assert check("03.5", _nb03.robust_outlier_gamma(), quiet=True)
    assert check("03.5", 0.03864, quiet=True) and check("03.5", 0.0386, quiet=True)
    assert check("03.7", _nb03.medoid_outlier_probability(), quiet=True)
    assert check("03.7", 0.00534, quiet=True) and check("03.7", 0.005340, quiet=True)
    assert not check("03.7", 0.0053)
    assert "right method, give more digits" in capsys.readouterr().out
    assert not check("03.7", 0.0055)  # an estimate from draws, 3 % off
    assert "estimate from draws" in capsys.readouterr().out
