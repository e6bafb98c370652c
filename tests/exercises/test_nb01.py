"""Notebook 01's checkers: the premises they rest on, re-measured; right answers written
independently of the solutions notebook pass; every check is quick; no hint leaks the answer."""
import time

import numpy as np
import pytest

from kmt_ref import assign, kmeans_transformer, lloyd, lloyd_layer, lloyd_weights, run_layers
from kmt_ref.algorithms.lloyd import lloyd_step
from kmt_ref.data import toy_data, validation_data
from kmt_ref.exercises import EXERCISES, check, nb01
from kmt_ref.exercises.nb01 import C0_EMPTY, X_EMPTY, gamma_star

X, C0 = toy_data(19)


# ----------------------------------------------------------------------------- the measured premises
def test_without_the_flag_neither_example_matches_lloyd():
    """Without the flag neither example matches Lloyd's run: on the toy example the labels differ, on the
    empty-cluster example the labels agree but the centers do not."""
    for (XX, CC), labels_equal, dC in [((X, C0), False, 0.0753), ((X_EMPTY, C0_EMPTY), True, 0.025)]:
        params, emb = nb01._flagless_params(*CC.shape)
        tr = run_layers(XX, params, lloyd_layer(), emb, CC, 4)
        ref = lloyd(XX, CC, 4)
        assert np.array_equal(tr.labels, ref.labels) == labels_equal
        assert np.abs(tr.centers - ref.centers).max() == pytest.approx(dC, abs=1e-4)
    # the empty cluster itself is kept even without the flag: its own token (score 0) beats the points (-2)
    params, emb = nb01._flagless_params(2, 3)
    tr = run_layers(X_EMPTY, params, lloyd_layer(), emb, C0_EMPTY, 1)
    assert np.array_equal(tr.centers[1][:, 2], [5.0, 5.0])


def test_the_averaging_hardmax_in_block_1_drops_a_tied_point():
    from kmt_ref.core.tokens import with_block
    params, emb = lloyd_weights(1, 2)
    tr = run_layers(nb01.X_TIE, params, with_block(lloyd_layer(), "1", normalizer="hardmax_average"), emb,
                    nb01.C0_TIE, 1)
    assert np.array_equal(tr.assignments[:, 1], [0.5, 0.5])
    assert np.array_equal(tr.centers[1], [[0.0, 2.0]])
    assert np.array_equal(lloyd(nb01.X_TIE, nb01.C0_TIE, 1).centers[1], [[0.5, 2.0]])


def test_linear_update_is_exact_at_any_gamma_update_but_not_at_any_gamma():
    """The old 01.5 claimed 'Lloyd's means at any gamma'; it holds for gamma_update only."""
    ref = lloyd(X, C0, 4)
    dC = np.abs(kmeans_transformer(X, C0, 4, gamma=10.0, center_update="linear").centers - ref.centers).max()
    assert dC == pytest.approx(0.318, abs=1e-3)
    for gu in (0.1, 1.0, 10.0):
        tr = kmeans_transformer(X, C0, 4, gamma=np.inf, gamma_update=gu, center_update="linear")
        assert np.abs(tr.centers - ref.centers).max() <= 1e-15


def test_gamma_star_is_the_end_of_the_only_interval_where_labels_differ():
    ref = lloyd(X, C0, 4)
    star = gamma_star()
    assert star == pytest.approx(599.68, rel=1e-4)
    assert nb01._labels_differ(X, C0, ref, star * (1 - 1e-6))
    for g in np.geomspace(star * (1 + 1e-6), 1e6, 200):
        assert not nb01._labels_differ(X, C0, ref, g), g
    for g in np.geomspace(1e-2, star * (1 - 1e-6), 60):
        assert nb01._labels_differ(X, C0, ref, g), g
    # far below the sufficient bound 745 / (smallest gap over Lloyd's steps)
    gaps = [np.diff(np.sort(assign(X, C)[1], axis=0)[:2], axis=0).min() for C in ref.centers[:4]]
    assert 745.13 / min(gaps) > 5e6


def test_validation_data_has_3900_exactly_one_hot_columns_at_gamma_1e4():
    Xv, Cv = validation_data()
    assert kmeans_transformer(Xv, Cv, 1, gamma=1e4).one_hot[0] == 3900


# ----------------------------------------------------------------------------- right answers pass
def _tokens(X, C):
    C1, labels = lloyd_step(X, C)
    k, n = C.shape[1], X.shape[1]
    Xbar = np.zeros((X.shape[0] + k + 1, n))
    Xbar[: X.shape[0]] = X
    Xbar[X.shape[0] + labels, np.arange(n)] = 1.0
    return Xbar, np.vstack([C1, np.eye(k), np.ones((1, k))])


def _flagless(X, C):
    _, labels = lloyd_step(X, C)
    k = C.shape[1]
    out = C.copy()
    for j in range(k):
        members = X[:, labels == j]
        out[:, j] = (members.sum(axis=1) + C[:, j]) / (members.shape[1] + 1)
    return out


def _soft_means(X, C, gamma):
    D = ((X[:, None, :] - C[:, :, None]) ** 2).sum(axis=0)  # (k, n)
    Y = np.exp(-gamma * (D - D.min(axis=0)))
    Y /= Y.sum(axis=0)
    return (X @ Y.T) / Y.sum(axis=1)


def _reset(X, Y, gamma):
    D = ((X[:, :, None] - X[:, None, :]) ** 2).sum(axis=0)  # (n, n), symmetric
    W = np.exp(-gamma * (D - D.min(axis=0)))
    return -Y @ (W / W.sum(axis=0))


def _n_one_hot(X, C, gamma):
    _, D = assign(X, C)
    gap = np.sort(D, axis=0)[1] - D.min(axis=0)
    return int(np.sum(gamma * gap > 745.1332191019412))


RIGHT = {"01.1": _tokens, "01.2": ([0.5, 0.5], [-0.5, -0.5], [[0.0, 2.0]]), "01.4": _flagless, "01.5": _soft_means, "01.6": _reset,
         "01.7": 599.7, "01.8": _n_one_hot, "01.9": 10, "01.10": "b", "01.11": "C "}


def test_every_checked_exercise_has_an_independent_right_answer_here():
    assert set(RIGHT) == {i for i, ex in EXERCISES.items() if i.startswith("01.") and ex.checked}


@pytest.mark.parametrize("id", sorted(RIGHT))
def test_right_answers_pass_quickly(id):
    gamma_star()  # computed once per session (cached): not part of a check's time
    t0 = time.perf_counter()
    assert check(id, RIGHT[id], quiet=True)
    assert time.perf_counter() - t0 < 2.0


def test_gamma_star_tolerance():
    star = gamma_star()
    assert check("01.7", star * (1 + 4e-3), quiet=True) and check("01.7", star * (1 - 4e-3), quiet=True)
    assert not check("01.7", star * 1.01, quiet=True) and not check("01.7", star * 0.99, quiet=True)


def test_hints_do_not_state_the_answer(capsys):
    for id, answer in [("01.7", 100.0), ("01.7", 1000.0), ("01.7", 5.9e6), ("01.2", ([1.0, 0.0], [0.0, -2.0], [[0.5, 2.0]]))]:
        assert not check(id, answer)
    out = capsys.readouterr().out
    for secret in ("599", "600", "[[0", "0, 2"):
        assert secret not in out


def test_a_function_that_raises_gives_a_hint(capsys):
    assert not check("01.4", lambda X, C: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out
    assert not check("01.5", "not a function")


def test_01_2_nothing_happens_is_not_enough(capsys):
    """The centers stay C0, so the answer asks for the y and the block-3 scores that explain why."""
    assert not check("01.2", [[0.0, 2.0]])
    assert not check("01.2", ([1.0, 0.0], [0.0, -2.0], [[0.0, 2.0]]))
    assert check("01.2", ([0.5, 0.5], [-0.5, -0.5], np.array([[0.0, 2.0]], dtype=np.float32)), quiet=True)
    assert check("01.2", (np.array([0.5, 0.5]), (-0.5, -0.5), [[0, 2]]), quiet=True)


def test_01_1_float32_centres_get_a_hint_about_the_dtype(capsys):
    def float32_tokens(X, C):
        Xb, Cb = _tokens(X, C)
        return Xb, np.asarray(Cb, dtype=np.float32)
    assert not check("01.1", float32_tokens)
    out = capsys.readouterr().out
    assert "float32" in out and "right method" in out and "Lloyd step" not in out
