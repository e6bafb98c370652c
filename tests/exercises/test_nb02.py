"""Notebook 02's checkers: the premises they rest on, measured; right answers written independently of
the checkers' code (wrong_nb02.RIGHT, in NumPy) pass; shortcuts through the functions an exercise forbids,
and functions fitted to the notebook's example, fail."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from kmt_ref import lloyd, soft_kmeans, soft_kmeans_transformer, spherical_kmeans, spherical_kmeans_transformer
from kmt_ref.algorithms.dot_product import dot_product_layer, dot_product_weights
from kmt_ref.core.attention import layer_forward
from kmt_ref.core.tokens import projector, run_layers
from kmt_ref.data import toy_data
from kmt_ref.exercises import EXERCISES, check, nb02

_spec = importlib.util.spec_from_file_location("wrong_nb02", Path(__file__).with_name("wrong_nb02.py"))
wrong_nb02 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wrong_nb02)
RIGHT = wrong_nb02.RIGHT
#: the right answers of the value exercises (a choice, with a number in 02.2)
RIGHT_VALUES = {"02.2": ("c", 11.78), "02.8": "d"}

X, C0 = toy_data()
C0_EMPTY = np.column_stack([C0, nb02.EMPTY_CENTER])  # (2, 4): the notebook's empty-cluster example


def _check(id, answer, capsys):
    """(passed, printed line) of check(id, answer)."""
    ok = check(id, answer)
    return ok, capsys.readouterr().out


def test_ids_kinds_and_checked_count():
    mine = {i: ex for i, ex in EXERCISES.items() if i.startswith("02.")}
    assert list(mine) == [f"02.{m}" for m in range(1, 12)]
    assert [i for i, ex in mine.items() if ex.checked] == [f"02.{m}" for m in range(1, 12)]
    assert [i for i, ex in mine.items() if ex.parts] == ["02.2"]
    assert all(ex.checked for ex in mine.values() if ex.kind == "code")
    assert {ex.kind for ex in mine.values()} >= {"code", "proof"}


def test_the_forbidden_functions():
    names = {i: {f.__name__ for f in EXERCISES[i].forbidden} for i in ("02.3", "02.4", "02.7")}
    assert names["02.3"] == {"dot_product_weights"}
    assert {"layer_forward", "run_layers", "attention", "dot_product_transformer"} <= names["02.4"]
    assert {"spherical_kmeans", "spherical_kmeans_transformer", "run_layers", "layer_forward"} <= names["02.7"]


@pytest.mark.parametrize("id", sorted(RIGHT))
def test_an_independent_right_answer_passes(id):
    """(How long each check takes is measured by benchmarks/bench_checkers.py, which reads RIGHT and RIGHT_VALUES
    from here.)"""
    assert check(id, RIGHT[id], quiet=True)


# ----------------------------------------------------------------------------- 02.1
def test_02_1_premises_the_notebook_example_and_no_rounding_ties():
    """The circuit moves the notebook's 8 points; on every input both keys' best two distinct scores differ by
    more than 8e-4, so the NumPy answer and the circuit agree; centers of equal norm move nothing."""
    cases = nb02._moved_cases()
    assert nb02._norm_row_dropped().tolist() == [4, 8, 10, 11, 16, 21, 22, 23]
    for name, XX, C in cases:
        S = 2 * C.T @ XX
        for M in (S, S - np.sum(C * C, axis=0)[:, None]):
            gaps = [np.diff(np.unique(col))[-1] for col in M.T]
            assert min(gaps) > 8e-4, name
        np.testing.assert_array_equal(nb02._norm_row_dropped(XX, C), RIGHT["02.1"](XX, C))
    assert nb02._norm_row_dropped(*cases[-1][1:]).size == 0
    assert [nb02._norm_row_dropped(*c[1:]).size for c in cases[:4]] == [8, 13, 12, 21]


def test_02_1_the_notebook_solution_through_the_circuit_and_a_mask_pass():
    def moved_points(X, C):
        params, emb = dot_product_weights(X.shape[0], C.shape[1])
        Xb, Cb = emb.embed_points(X), emb.embed_centers(C)
        labels = [np.argmax(layer_forward(p, Xb, Cb, dot_product_layer())[0][emb.rows("y")], axis=0)
                  for p in (params, dict(params, K1=projector(emb, "x")))]
        return labels[0] != labels[1]  # a boolean mask

    assert check("02.1", moved_points, quiet=True)
    assert check("02.1", lambda X, C: RIGHT["02.1"](X, C).tolist(), quiet=True)


def test_02_1_a_shortcut_and_a_fitted_function_fail(capsys):
    ok, out = _check("02.1", lambda X, C: nb02._norm_row_dropped(X, C), capsys)
    assert not ok and "nb02._norm_row_dropped" in out
    ok, out = _check("02.1", lambda X, C: [4, 8, 10, 11, 16, 21, 22, 23], capsys)
    assert not ok and "initial centers" in out


# ----------------------------------------------------------------------------- 02.3
def test_02_3_the_d_unit_ffn_runs_lloyd_on_non_negative_data():
    """The model answer, put into the whole circuit, equals Lloyd on the toy data (which lies in [0, 1]^2)."""
    assert X.min() >= 0
    params, emb = dot_product_weights(2, 4)
    W1, W2 = RIGHT["02.3"](emb)
    tr = run_layers(X, dict(params, W1=W1, W2=W2), dot_product_layer(), emb, C0_EMPTY, 5)
    ref = lloyd(X, C0_EMPTY, 5)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_allclose(tr.centers, ref.centers, atol=1e-12)


def test_02_3_shortcuts_and_a_fitted_function_fail(capsys):
    def sliced(emb):  # the first d units of Theorem 2.2's W1: the right matrices, taken from the library
        params, _ = dot_product_weights(emb.d, emb.k)
        return params["W1"][:emb.d], params["W2"][:, :emb.d]

    def sliced_or_built(emb):  # the same, falling back on the right answer when the call is refused
        try:
            return sliced(emb)
        except Exception:
            return RIGHT["02.3"](emb)

    for shortcut in (sliced, sliced_or_built):
        ok, out = _check("02.3", shortcut, capsys)
        assert not ok and "dot_product_weights" in out
    ok, out = _check("02.3", wrong_nb02._fitted_ffn, capsys)
    assert not ok and "d = 1, k = 1" in out


# ----------------------------------------------------------------------------- 02.4
@pytest.mark.parametrize("a, equals_lloyd", [(0.0, False), (0.25, True), (0.5, True), (0.75, True),
                                              (0.999, True), (1.0, False), (1.5, False)])
def test_02_4_offsets_for_which_the_circuit_is_lloyd(a, equals_lloyd):
    """Measured (the model answer's range): offsets 0 < a < 1 give Lloyd with "keep" on the empty-cluster
    example; a = 0 adds the own token to every member mean, a = 1 averages points and own token, a = 1.5
    moves the empty center to the mean of the data."""
    params, emb = dot_product_weights(2, 4)
    params = {name: W.copy() for name, W in params.items()}
    params["K3"][emb.rows("y"), emb.rows("flag")] = -a
    tr, ref = run_layers(X, params, dot_product_layer(), emb, C0_EMPTY, 5), lloyd(X, C0_EMPTY, 5)
    same = np.array_equal(tr.labels, ref.labels) and np.allclose(tr.centers, ref.centers, rtol=0, atol=1e-12)
    assert same == equals_lloyd
    if a == 1.5:
        np.testing.assert_allclose(nb02._empty_center_after_one_layer(a), X.mean(axis=1), atol=1e-15)


def test_02_4_premises_of_the_checker_inputs():
    """On the 3-d input centers 2 and 3 are empty; a < 0 keeps every center, a = 2 moves both empty ones to
    the data mean; the NumPy answer equals the circuit at every offset of the checker."""
    for name, XX, C, a in nb02._offset_cases():
        np.testing.assert_allclose(RIGHT["02.4"](XX, C, a), nb02._offset_centers(XX, C, a), rtol=0, atol=1e-13)
    _, Xb, Cb, _ = nb02._offset_cases()[-1]
    assert np.bincount(lloyd(Xb, Cb, 1).labels[0], minlength=4).tolist()[2:] == [0, 0]
    np.testing.assert_allclose(nb02._offset_centers(Xb, Cb, -0.5), Cb, atol=1e-15)
    np.testing.assert_allclose(nb02._offset_centers(Xb, Cb, 2.0)[:, 2:], np.tile(Xb.mean(axis=1)[:, None], 2),
                               atol=1e-15)


def test_02_4_shortcuts_and_a_fitted_function_fail(capsys):
    def through_the_circuit(X, C, a):
        params, emb = dot_product_weights(*C.shape)
        params = {name: W.copy() for name, W in params.items()}
        params["K3"][emb.rows("y"), emb.rows("flag")] = -a
        return run_layers(X, params, dot_product_layer(), emb, C, 1).centers[1]

    def circuit_or_numpy(X, C, a):
        try:
            return through_the_circuit(X, C, a)
        except Exception:
            return RIGHT["02.4"](X, C, a)

    for shortcut in (through_the_circuit, circuit_or_numpy):
        ok, out = _check("02.4", shortcut, capsys)
        assert not ok and "run_layers" in out
    fitted = nb02._offset_centers(X, C0_EMPTY, 1.5)
    ok, out = _check("02.4", lambda X, C, a: fitted.copy(), capsys)
    assert not ok and "a = 0.25" in out


# ----------------------------------------------------------------------------- 02.5
def test_02_5_each_case_crosses_its_threshold_once_in_its_bracket():
    """sep(lo) < threshold <= sep(hi), and on 400 betas of the bracket sep is below the threshold before one
    point and at or above it after; on the toy data the crossing is 7.5042."""
    for name, XX, CC, threshold, lo, hi in nb02._separation_cases():
        betas = np.linspace(lo, hi, 400)
        above = np.array([nb02.min_separation(b, XX, CC) >= threshold for b in betas])
        first = int(np.argmax(above))
        assert not above[0] and above[-1] and above[first:].all() and not above[:first].any(), name
    assert abs(nb02.separation_beta() - 7.5042) < 1e-4
    assert nb02.min_separation(10.0) > 0.54 and nb02.min_separation(5.0) < 0.01


def test_02_5_the_notebook_solution_on_the_transformer_passes():
    def beta_star(X, C0, threshold, lo, hi):
        def sep(beta):
            C = soft_kmeans_transformer(X, C0, 10, beta).centers[-1]
            k = C.shape[1]
            return min(np.linalg.norm(C[:, a] - C[:, b]) for a in range(k) for b in range(a + 1, k))

        while hi - lo > 0.01:
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if sep(mid) >= threshold else (mid, hi)
        return (lo + hi) / 2

    assert check("02.5", beta_star, quiet=True)


def test_02_5_a_shortcut_and_a_fitted_function_fail(capsys):
    ok, out = _check("02.5", lambda X, C0, t, lo, hi: nb02.separation_beta(t, lo, hi, X=X, C0=C0), capsys)
    assert not ok and "nb02.separation_beta" in out
    ok, out = _check("02.5", lambda X, C0, t, lo, hi: 7.5042, capsys)
    assert not ok and "another 2-d data set" in out


# ----------------------------------------------------------------------------- 02.6
def test_02_6_the_prediction_holds_on_the_data():
    """Soft k-means merges every center below beta_c and splits them above (1000 steps)."""
    beta_c = nb02.critical_beta()
    assert round(beta_c, 3) == 3.46
    spread = {f: np.ptp(soft_kmeans(X, C0, 1000, f * beta_c).centers[-1], axis=1).max() for f in (0.95, 1.05)}
    assert spread[0.95] < 1e-12 and spread[1.05] > 0.1


def test_02_6_the_wrong_variants_are_far_from_beta_c_on_every_input():
    """Each variant with its own hint differs from beta_c by more than 1 % on every input (the (n - 1) one by 1/n),
    far beyond the stated relative 1e-10, so its hint names it."""
    for name, XX in nb02._critical_cases():
        want = nb02.critical_beta(XX)
        assert RIGHT["02.6"](XX) == pytest.approx(want, rel=1e-12)
        for wrong in wrong_nb02.WRONG["02.6"][:5]:
            assert abs(wrong(XX) / want - 1) > 0.01, name


def test_02_6_a_shortcut_and_a_fitted_function_fail(capsys):
    ok, out = _check("02.6", lambda X: nb02.critical_beta(X), capsys)
    assert not ok and "nb02.critical_beta" in out
    toy = nb02.critical_beta()
    ok, out = _check("02.6", lambda X: toy, capsys)
    assert not ok and "another 2-d data set" in out
    ok, out = _check("02.6", lambda X: 3.46, capsys)  # the printed digits: the check needs float64
    assert not ok and "the toy data" in out


# ----------------------------------------------------------------------------- 02.7
def test_02_7_shortcuts_and_a_fitted_function_fail(capsys):
    def caught(X, C):  # calls the library, and falls back on a right step when refused
        try:
            return spherical_kmeans(X, C, 1).centers[1]
        except Exception:
            return RIGHT["02.7"](X, C)

    for shortcut, name in [(lambda X, C: spherical_kmeans(X, C, 1).centers[1], "spherical_kmeans"),
                           (caught, "spherical_kmeans"),
                           (lambda X, C: spherical_kmeans_transformer(X, C, 1).centers[1],
                            "spherical_kmeans_transformer")]:
        ok, out = _check("02.7", shortcut, capsys)
        assert not ok and f"calls {name}" in out
    rng = np.random.default_rng(2)  # the notebook's directional data and its step
    angles = np.concatenate([rng.normal(a, 0.25, 30) for a in (0.3, 2.2, 4.1)])
    Xdir = rng.uniform(0.3, 3.0, angles.size) * np.vstack([np.cos(angles), np.sin(angles)])
    fitted = spherical_kmeans(Xdir, Xdir[:, :3], 1).centers[1]
    ok, out = _check("02.7", lambda X, C: fitted.copy(), capsys)
    assert not ok and "shape" in out


# ----------------------------------------------------------------------------- 02.2
def test_02_2_premise_only_c_is_a_shift_of_the_euclidean_score():
    """On random data with negative coordinates: score (c) gives softmax weights equal to the Euclidean score's at
    every gamma; (a) and (d) change some argmax; (b) keeps every argmax but not the weights at gamma = 1."""
    from kmt_ref.core.attention import requ
    from kmt_ref.core.normalizers import softmax
    rng = np.random.default_rng(22)
    Xr, Cr = rng.normal(size=(3, 40)), rng.normal(size=(3, 5))  # (d, n), (d, k)
    euclid = -((Xr[:, None, :] - Cr[:, :, None]) ** 2).sum(axis=0)  # (k, n)
    dot, c_sq = 2 * Cr.T @ Xr, np.sum(Cr * Cr, axis=0)[:, None]
    scores = {"a": dot, "b": 2 * (dot - c_sq), "c": dot - c_sq - 3 * np.sum(Xr * Xr, axis=0),
              "d": dot - np.sum(requ(Cr), axis=0)[:, None]}
    same_argmax = {m: np.array_equal(np.argmax(S, axis=0), np.argmax(euclid, axis=0)) for m, S in scores.items()}
    same_weights = {m: all(np.allclose(softmax(g * S, axis=0), softmax(g * euclid, axis=0), rtol=0, atol=1e-12)
                           for g in (0.1, 1.0, 10.0)) for m, S in scores.items()}
    assert same_weights == {"a": False, "b": False, "c": True, "d": False}
    assert same_argmax == {"a": False, "b": True, "c": True, "d": False}


def test_02_2_premise_the_norm_row():
    """4 + ||c||^2 = 11.78 for c = (0.3, -1.2, 2.5); one ReQU unit per coordinate would leave 10.34."""
    assert np.isclose(nb02.requ_norm_row(), 11.78, rtol=0, atol=1e-12)
    assert np.isclose(nb02.requ_norm_row(np.array([0.3, 0.0, 2.5])), 10.34, rtol=0, atol=1e-12)
    assert np.isclose(nb02.requ_norm_row(stale=0.0), 7.78, rtol=0, atol=1e-12)


def test_02_2_right_and_half_right(capsys):
    assert check("02.2", RIGHT_VALUES["02.2"]) and check("02.2", ["C ", np.float64(11.78)])
    for answer, right_part in ((("c", 7.78), 1), (("a", 11.78), 2)):
        assert check("02.2", answer, part=right_part) and not check("02.2", answer, part=3 - right_part)
        assert not check("02.2", answer)
        assert "1 of 2 parts right" in capsys.readouterr().out


def test_02_2_and_02_8_hints_do_not_name_the_right_letter():
    for id, wrong in (("02.2", [("a", 11.78), ("b", 11.78), ("d", 11.78)]), ("02.8", ["a", "b", "c"])):
        assert check(id, RIGHT_VALUES[id], quiet=True)
        for answer in wrong:
            ok, hint = nb02_hint(id, answer)
            assert not ok and "(c)" not in hint and "(d)" not in hint and "'d'" not in hint


def nb02_hint(id, answer):
    ex = EXERCISES[id]
    try:
        ex.checker(answer, 1) if ex.parts else ex.checker(answer)
    except nb02.Wrong as wrong:
        return False, str(wrong)
    return True, ""


# ----------------------------------------------------------------------------- 02.8
def test_02_8_premise_the_direction_is_rounding_error():
    """Three unit vectors at 120 degrees: the member sum is rounding error, so the center is a unit vector whose
    direction does not turn with the data. Rotated by phi, a center that meant something would turn by phi; the
    rounding error's direction does not (measured, degrees off: numpy 2.4 29.1, 6.9, 6.1 for phi = 0.1, 0.3, 1.0;
    numpy 1.24 8.3, 1.5, 30.7). The order of the points changes it with numpy 2.4 (116.6 vs 122.0 degrees) but not
    with numpy 1.24 (123.7 in every order), so the test does not ask for that."""
    t = 2 * np.pi * np.arange(3) / 3

    def center_angle(phi):
        U = np.vstack([np.cos(t + phi), np.sin(t + phi)])
        c = spherical_kmeans(U, U[:, :1], 1).centers[1][:, 0]
        assert np.isclose(np.linalg.norm(c), 1.0) and np.abs(U.sum(axis=1)).max() < 1e-15
        return np.degrees(np.arctan2(c[1], c[0]))

    base = center_angle(0.0)
    assert abs(base) > 5  # not the old center (1, 0): statement (b) of 02.8 is false
    off = [abs((center_angle(phi) - np.degrees(phi) - base + 180) % 360 - 180) for phi in (0.1, 0.3, 1.0)]
    assert max(off) > 5, off


def test_02_1_a_wrong_mask_gets_a_hint(capsys):
    mask = np.zeros(24, bool)
    assert not check("02.1", lambda X, C: mask[:-1])
    assert "mask" in capsys.readouterr().out


def test_02_1_accepts_what_np_nonzero_returns():
    assert check("02.1", lambda X, C: np.nonzero(np.isin(np.arange(X.shape[1]), RIGHT["02.1"](X, C))), quiet=True)


def test_02_4_may_take_its_labels_from_lloyd():
    """lloyd is allowed: it does not run the circuit."""
    def with_lloyd(X, C, a):
        labels = lloyd(X, C, 1).labels[0]
        n, k = X.shape[1], C.shape[1]
        keys, out = np.hstack([X, C]), np.empty_like(C)
        for j in range(k):
            scores = np.concatenate([(labels == j).astype(float), np.full(k, -a)])
            scores[n + j] = 1 - a
            out[:, j] = keys[:, scores == scores.max()].mean(axis=1)
        return out

    assert check("02.4", with_lloyd, quiet=True)


# ----------------------------------------------------------------------------- the precision policy (02.3, 02.4, 02.7)
def _float32(out):
    return tuple(np.asarray(w, dtype=np.float32) for w in out) if isinstance(out, tuple) else \
        np.asarray(out, dtype=np.float32)


def _ffn_slightly_off(emb):  # the right block, its sum of squares too large by a relative 3e-13 (rtol 1e-13)
    W1, W2 = RIGHT["02.3"](emb)
    return W1, W2 * (1 + 3e-13)


NEAR_MISSES = {"02.3": _ffn_slightly_off,
               "02.4": lambda X, C, a: RIGHT["02.4"](X, C, a) + 5e-12,  # atol 1e-12
               "02.7": lambda X, C: RIGHT["02.7"](X, C) + 5e-12}  # atol 1e-12


@pytest.mark.parametrize("id", ["02.3", "02.4", "02.7"])
def test_a_right_function_in_float32_gets_the_dtype_hint(id, capsys):
    ok, out = _check(id, lambda *args: _float32(RIGHT[id](*args)), capsys)
    assert not ok and "right method" in out and "float32" in out, out


@pytest.mark.parametrize("id", ["02.3", "02.4", "02.7"])
def test_a_right_function_just_outside_the_tolerance_gets_give_more_digits(id, capsys):
    ok, out = _check(id, NEAR_MISSES[id], capsys)
    assert not ok and "right method, give more digits" in out, out


def test_the_wrong_functions_of_02_3_02_4_02_7_keep_their_hints(capsys):
    W = wrong_nb02.WRONG
    expected = [("02.3", W["02.3"][0], "use at most d = 2"), ("02.3", W["02.3"][1], "not ||c_j||^2"),
                ("02.3", W["02.3"][2], "changes rows other than `norm`"),
                ("02.4", W["02.4"][0], "Lloyd's step with 'keep'"), ("02.4", W["02.4"][1], "which keys tie"),
                ("02.7", lambda X, C: wrong_nb02._step(X, C, keep_unit=False), "an empty cluster keeps")]
    for id, fn, hint in expected:
        ok, out = _check(id, fn, capsys)
        assert not ok and hint in out and "right method" not in out, (id, out)


class _NoWrite(np.ndarray):
    """An array whose item assignment does nothing (what a function could hand the checker's `Z[norm] = 0`)."""

    def __setitem__(self, key, value):
        pass


def _zero_block(emb):
    return np.zeros((1, emb.d_emb)), np.zeros((emb.d_emb, 1))


def test_02_3_a_function_that_changes_its_layout_changes_nothing_in_the_check(capsys):
    """The function gets a copy of the layout: emptying its `rows` cannot crash the check (an IndexError), and
    making its `embed_centers` return tokens whose norm row cannot be cleared cannot pass a block that writes
    nothing."""
    def empties_rows(emb):
        object.__setattr__(emb, "rows", lambda name: slice(0, 0))
        return _zero_block(emb)

    def uncleared_tokens(emb):
        embed = emb.embed_centers
        object.__setattr__(emb, "embed_centers", lambda C: embed(C).view(_NoWrite))
        return _zero_block(emb)

    for attack in (empties_rows, uncleared_tokens):
        ok, out = _check("02.3", attack, capsys)
        assert not ok and "not ||c_j||^2" in out and "Traceback" not in out, out
    layouts = []

    def right_on_a_changed_layout(emb):
        W = RIGHT["02.3"](emb)
        object.__setattr__(emb, "rows", lambda name: slice(0, 0))
        layouts.append(emb)
        return W

    assert check("02.3", right_on_a_changed_layout, quiet=True)
    assert all(emb.rows("norm") == slice(0, 0) for emb in layouts)  # the copies changed, the check's did not
