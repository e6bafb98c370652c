"""Notebook 05's checkers: the premises they rest on, re-measured; right answers written independently
of the library functions the exercises forbid pass (benchmarks/bench_checkers.py times them); shortcuts
through those functions and functions fitted to the notebook's examples fail; a half-right answer gets the
points of its right part."""

import numpy as np
import pytest

from kmt_ref import binary_transformer, code_shift, lloyd, toy_data
from kmt_ref.algorithms.binary import binary_codes, binary_layer, binary_weights, code_length
from kmt_ref.core.attention import layer_forward
from kmt_ref.exercises import EXERCISES, check, nb05
from kmt_ref.exercises.nb05 import C0_TIE, X_TIE, leak_ratio, scalar_code_centers
from kmt_ref.viz.binary_figures import plain_onehot_transformer

X, C0 = toy_data(19)


# ----------------------------------------------------------------------------- right answers, written here
def _codes(k):  # 05.1: B_k bit by bit with Python integers
    m = max(1, (k - 1).bit_length())
    return np.array([[(j >> r) & 1 for j in range(k)] for r in range(m)], dtype=float)  # (m, k)


def _scalar_layer(X, C0):  # 05.3: blocks 1 and 3 of the scalar-code circuit at gamma = inf, in NumPy
    k = C0.shape[1]
    D = ((X[:, :, None] - C0[:, None, :]) ** 2).sum(axis=0)  # (n, k)
    tied = D == D.min(axis=1, keepdims=True)
    y = (tied * np.arange(k)).sum(axis=1) / tied.sum(axis=1)  # (n,) the mean of the tied codes
    S = -(np.arange(k)[:, None] - y[None, :]) ** 2  # (k, n)
    W = S == S.max(axis=1, keepdims=True)
    return (X @ W.T) / W.sum(axis=1)


def _leak(X, C0, gamma):  # 05.4, with the circuits the exercise names
    ref = lloyd(X, C0, 1).centers[1]
    eb = np.abs(binary_transformer(X, C0, 1, gamma_update=gamma, empty="nearest_code").centers[1] - ref).max()
    eo = np.abs(plain_onehot_transformer(X, C0, 1, gamma_update=gamma).centers[1] - ref).max()
    return eb / eo


def _other_center_score():  # 05.5, by hand: the bound at h = 1 (a 0 of b_j turned into a 1), m = 3, delta = 1/4
    m, delta = 3, 0.25
    return -((1 - delta) ** 2 + (m - 1) * delta ** 2)


RIGHT = {"05.1": _codes, "05.2": (15, 45), "05.3": _scalar_layer, "05.4": _leak, "05.5": ("C", _other_center_score()),
         "05.6": 6, "05.7": -3, "05.8": "b"}


def test_every_checked_exercise_has_an_independent_right_answer_here():
    assert set(RIGHT) == {i for i, ex in EXERCISES.items() if i.startswith("05.") and ex.checked}


@pytest.mark.parametrize("id", sorted(RIGHT))
def test_right_answers_pass(id):
    """(How long each check takes is measured by benchmarks/bench_checkers.py, which reads RIGHT from here.)"""
    assert check(id, RIGHT[id], quiet=True)


# ----------------------------------------------------------------------------- the measured premises
def test_05_1_code_length_at_one_and_around_powers_of_two():
    assert binary_codes(1).shape == (1, 1) and code_length(1) == 1
    for p in range(1, 11):
        assert code_length(2 ** p) == p and code_length(2 ** p + 1) == p + 1 and code_length(2 ** p - 1) == max(1, p)
    assert 1 in nb05.CODE_KS and {2 ** p for p in range(1, 11)} <= set(nb05.CODE_KS)
    assert {2 ** p + 1 for p in range(1, 11)} <= set(nb05.CODE_KS) and 6 not in nb05.CODE_KS and 10 not in nb05.CODE_KS
    for k in nb05.CODE_KS:
        np.testing.assert_array_equal(_codes(k), binary_codes(k))


def test_05_2_margins_are_one_bit_and_two():
    for k in (3, 6, 10, 100):
        B = binary_codes(k)
        D = ((B[:, :, None] - B[:, None, :]) ** 2).sum(0)  # (k, k) squared code distances
        assert D[~np.eye(k, dtype=bool)].min() == 1
    assert check("05.2", (15, 45), quiet=True) and check("05.2", np.array([15.0, 45.0]), quiet=True)
    assert not check("05.2", (-1, -2), quiet=True)  # the margins, which the notebook states, are not the answer


def test_05_3_scalar_codes_send_the_tied_point_to_the_far_cluster():
    np.testing.assert_array_equal(scalar_code_centers(X_TIE, C0_TIE), [[-2.0, 7.0, 2.0]])
    np.testing.assert_array_equal(scalar_code_centers(X_TIE, C0_TIE, tie="lowest"), lloyd(X_TIE, C0_TIE, 1).centers[1])
    avg = binary_transformer(X_TIE, C0_TIE, 1, tie="average", empty="nearest_code").centers[1]
    np.testing.assert_array_equal(avg, [[-2.0, 10.5, 2.0]])


def test_05_3_the_checkers_cases_are_what_their_names_say():
    cases = nb05._tie_cases()
    assert len(cases) == 6
    for name, XX, CC in cases:
        np.testing.assert_allclose(_scalar_layer(XX, CC), scalar_code_centers(XX, CC), rtol=0, atol=1e-14)
    # between adjacent codes 0 and 1 the tied point writes 1/2, no code: it only joins the empty cluster 1
    _, XX, CC = cases[1]
    np.testing.assert_array_equal(scalar_code_centers(XX, CC), [[-1.5, 2.0, 5.5]])
    # between codes 1 and 3 it writes 2 and joins the far center 2
    _, XX, CC = cases[2]
    assert scalar_code_centers(XX, CC)[0, 2] == pytest.approx((5.0 + 99.0 + 101.0) / 3, abs=1e-13)
    # the empty cluster of the 2-d case (center 2, far away) takes the points of codes 1 and 3
    _, XX, CC = cases[4]
    labels = lloyd(XX, CC, 1).labels[0]
    assert not np.any(labels == 2)
    np.testing.assert_allclose(scalar_code_centers(XX, CC)[:, 2], XX[:, (labels == 1) | (labels == 3)].mean(axis=1),
                               rtol=0, atol=1e-14)
    # each wrong answer the checker names differs from the right one on some case, and untied data is Lloyd
    for wrong in (lambda a, b: lloyd(a, b, 1).centers[1], lambda a, b: scalar_code_centers(a, b, tie="lowest"),
                  lambda a, b: binary_transformer(a, b, 1, tie="average", empty="nearest_code").centers[1]):
        assert any(not np.allclose(wrong(a, b), scalar_code_centers(a, b), atol=1e-12) for _, a, b in cases)
    _, XX, CC = cases[5]
    np.testing.assert_allclose(scalar_code_centers(XX, CC), lloyd(XX, CC, 1).centers[1], rtol=0, atol=1e-14)


def test_05_4_leak_ratio_is_of_the_order_of_exp_gamma():
    r = leak_ratio(X, C0, 10.0)
    assert r == pytest.approx(1.007e4, rel=1e-3) and 5e3 < r < np.exp(10.0)
    assert _leak(X, C0, 10.0) == pytest.approx(r, rel=1e-12)  # plain_onehot_transformer is the checker's circuit


def test_05_4_the_checkers_errors_are_far_above_rounding():
    """A relative tolerance of 1e-6 on the ratio needs both errors many orders above float64 rounding."""
    ratios = []
    for name, XX, CC, gamma in nb05._leak_cases():
        ref = lloyd(XX, CC, 1).centers[1]
        assert np.all(np.bincount(lloyd(XX, CC, 1).labels[0], minlength=CC.shape[1]) > 0), name  # no empty cluster
        eo = np.abs(plain_onehot_transformer(XX, CC, 1, gamma_update=gamma).centers[1] - ref).max()
        assert eo > 1e-8, name
        ratios.append(leak_ratio(XX, CC, gamma))
        for value, _ in nb05._leak_variants(XX, CC, gamma):  # every named slip is far from the right ratio
            assert abs(value / ratios[-1] - 1) > 0.01, name
    np.testing.assert_allclose(ratios, [1.007e4, 268.7, 1390, 8066], rtol=1e-3)  # as nb05's docstring states
    errors = []
    XX, CC = toy_data(19)
    ref = lloyd(XX, CC, 1).centers[1]
    for C in (binary_transformer(XX, CC, 1, gamma_update=10.0, empty="nearest_code").centers[1],
              plain_onehot_transformer(XX, CC, 1, gamma_update=10.0).centers[1]):
        errors.append(np.abs(C - ref).max())
    np.testing.assert_allclose(errors, [1.24e-4, 1.24e-8], rtol=5e-3)


def test_05_5_another_center_scores_between_the_points_and_the_own_token():
    m, delta = code_length(8), code_shift(code_length(8))
    assert (m, delta) == (3, 0.25)
    assert nb05.other_center_score() == _other_center_score() == -11 / 16
    assert -1.0 < nb05.other_center_score() < -m * delta ** 2


# ----------------------------------------------------------------------------- shortcuts and fitted functions fail
def _says(capsys, *words):
    out = capsys.readouterr().out
    assert "✗" in out and "Traceback" not in out
    for w in words:
        assert w in out, out
    return out


def test_05_1_shortcuts_through_the_library_fail_with_a_hint_naming_them(capsys):
    from kmt_ref.learning.model import embed_batch

    def caught(k):
        try:
            return binary_codes(k)
        except Exception:  # noqa: BLE001
            return _codes(k)

    assert not check("05.1", binary_codes)
    _says(capsys, "binary_codes")
    assert not check("05.1", caught)
    _says(capsys, "binary_codes")
    assert not check("05.1", lambda k: binary_weights(1, k)[1].embed_centers(np.zeros((1, k)))[1:])
    _says(capsys, "embed_centers")
    assert not check("05.1", lambda k: embed_batch(np.zeros((1, 1, 1)), np.zeros((1, 1, k)), "binary")[1][0, 1:])
    _says(capsys, "binary_codes")
    assert not check("05.1", lambda k: ((np.arange(k)[None] >> np.arange(code_length(k))[:, None]) & 1).astype(float))
    _says(capsys, "code_length")


def test_05_1_functions_fitted_to_the_notebook_fail(capsys):
    B6, B10 = _codes(6), _codes(10)
    assert not check("05.1", lambda k: B6)
    assert not check("05.1", lambda k: {6: B6, 10: B10}[k])
    out = capsys.readouterr().out
    assert "KeyError" in out
    # the hints name what is wrong where it goes wrong: k = 1, a power of two, the order of the rows
    assert not check("05.1", lambda k: _codes(k)[:, :k] if k > 1 else np.zeros((0, 1)))
    _says(capsys, "B_1", "kmt_ref keeps one")
    assert not check("05.1", lambda k: _codes(2 * k)[:, :k] if k & (k - 1) == 0 and k > 1 else _codes(k))
    _says(capsys, "B_2", "power of two")
    assert not check("05.1", lambda k: _codes(k)[::-1])
    _says(capsys, "least significant")
    assert not check("05.1", lambda k: _codes(k).T)
    _says(capsys, "the codes are its columns")


def test_05_3_shortcuts_through_the_circuit_fail_with_a_hint_naming_them(capsys):
    def circuit(XX, CC):  # the circuit run by layer_forward, as the notebook's solution checks it
        p, _ = binary_weights(XX.shape[0], 2, "nearest_code")
        Xb = np.vstack([XX, np.zeros((1, XX.shape[1]))])
        Cb = np.vstack([CC, np.arange(float(CC.shape[1]))[None, :]])
        return layer_forward(p, Xb, Cb, binary_layer(empty="nearest_code", tie="average"))[1][:-1]

    def caught(XX, CC):
        try:
            return circuit(XX, CC)
        except Exception:  # noqa: BLE001
            return _scalar_layer(XX, CC)

    np.testing.assert_array_equal(circuit(X_TIE, C0_TIE), [[-2.0, 7.0, 2.0]])  # outside check, it is right
    assert not check("05.3", circuit)
    _says(capsys, "layer_forward")
    assert not check("05.3", caught)
    _says(capsys, "layer_forward")
    assert not check("05.3", scalar_code_centers)
    _says(capsys, "scalar_code_centers")
    assert not check("05.3", lambda XX, CC: binary_transformer(XX, CC, 1).centers[1])
    _says(capsys, "binary_transformer")


def test_05_3_functions_fitted_to_the_notebook_fail(capsys):
    assert not check("05.3", lambda XX, CC: np.array([[-2.0, 7.0, 2.0]]))
    _says(capsys, "on a tie between centers 0 and 1")
    assert not check("05.3", [[-2.0, 7.0, 2.0]])  # the notebook's numbers, not a function
    _says(capsys, "expected a function")
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location("wrong_nb05", Path(__file__).parent / "wrong_nb05.py")
    wrong = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wrong)
    assert check("05.3", wrong._scalar_members_only) is False  # right on the notebook's tie only
    _says(capsys, "on a tie between centers 0 and 1")
    np.testing.assert_array_equal(wrong._scalar_members_only(X_TIE, C0_TIE), [[-2.0, 7.0, 2.0]])
    assert not check("05.3", wrong._scalar_lowest)
    _says(capsys, "lowest tied code")


def test_05_4_shortcuts_and_fitted_functions_fail(capsys):
    def caught(XX, CC, gamma):
        try:
            return leak_ratio(XX, CC, gamma)
        except Exception:  # noqa: BLE001
            return _leak(XX, CC, gamma)

    assert not check("05.4", leak_ratio)
    _says(capsys, "leak_ratio")
    assert not check("05.4", caught)
    _says(capsys, "leak_ratio")
    r = leak_ratio(X, C0, 10.0)
    assert not check("05.4", lambda XX, CC, gamma: r)  # the notebook's number for every input
    _says(capsys, "gaussian blobs")
    assert not check("05.4", r)
    _says(capsys, "expected a function")
    assert not check("05.4", lambda XX, CC, gamma: _leak(XX, CC, gamma) * (1 + 1e-5))
    _says(capsys, "right method")


# ----------------------------------------------------------------------------- parts graded apart
def test_05_2_a_half_right_answer_gets_its_right_part():
    for answer, right in [((15, 90), (True, False)), ((30, 45), (False, True)), ((9, 45), (False, True))]:
        assert [check("05.2", answer, part=i, quiet=True) for i in (1, 2)] == list(right)
        assert not check("05.2", answer, quiet=True)


def test_05_5_a_half_right_answer_gets_its_right_part():
    for answer, right in [(("c", -0.1875), (True, False)), (("b", -0.6875), (False, True)),
                          (("c", -0.6875), (True, True))]:
        assert [check("05.5", answer, part=i, quiet=True) for i in (1, 2)] == list(right)
        assert check("05.5", answer, quiet=True) == all(right)
    assert check("05.5", ("c", -0.6875), quiet=True) and check("05.5", ["c ", np.float64(-11 / 16)], quiet=True)


def test_hints_do_not_state_the_answer(capsys):
    for id, answer in [("05.2", (9, 90)), ("05.2", (30, 10)), ("05.5", ("a", -0.5)), ("05.5", ("d", -0.1875)),
                       ("05.5", ("b", 0.6875)), ("05.4", lambda XX, CC, g: 1.0)]:
        assert not check(id, answer)
    out = capsys.readouterr().out
    for secret in ("15", "45", "0.6875", "11/16", "1.007e", "10071"):
        assert secret not in out, secret


def test_05_3_a_float32_answer_gets_a_hint_about_the_dtype(capsys):
    assert not check("05.3", lambda X, C0: _scalar_layer(X, C0).astype(np.float32))
    out = capsys.readouterr().out
    assert "float32" in out and "right method" in out, out
