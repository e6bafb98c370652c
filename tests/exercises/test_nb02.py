"""Notebook 02's checkers: the premises they rest on, measured, and right answers computed
independently of the checkers' own code."""
import numpy as np
import pytest

from kmt_ref import soft_kmeans, soft_kmeans_transformer, spherical_kmeans
from kmt_ref.algorithms.dot_product import dot_product_layer, dot_product_weights
from kmt_ref.core.attention import layer_forward
from kmt_ref.core.tokens import projector
from kmt_ref.data import toy_data
from kmt_ref.exercises import check, nb02

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("wrong_nb02", Path(__file__).with_name("wrong_nb02.py"))
wrong_nb02 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wrong_nb02)

X, C0 = toy_data()


def test_ids_kinds_and_checked_count():
    from kmt_ref.exercises import EXERCISES
    mine = {i: ex for i, ex in EXERCISES.items() if i.startswith("02.")}
    assert list(mine) == [f"02.{m}" for m in range(1, 12)]
    assert sum(ex.checked for ex in mine.values()) >= 5
    assert all(ex.checked for ex in mine.values() if ex.kind == "code")
    assert {ex.kind for ex in mine.values()} >= {"code", "proof"}


def test_02_1_through_the_circuit():
    """The broken key (K1 = P_X) run through layer_forward changes exactly the checker's points."""
    from kmt_ref import lloyd
    C = lloyd(X, C0, 5).centers[-1]
    params, emb = dot_product_weights(2, 3)
    params = dict(params, K1=projector(emb, "x"))
    Xo, _ = layer_forward(params, emb.embed_points(X), emb.embed_centers(C), dot_product_layer())
    good, _ = layer_forward(dot_product_weights(2, 3)[0], emb.embed_points(X), emb.embed_centers(C),
                            dot_product_layer())
    changed = np.flatnonzero(np.argmax(Xo[emb.rows("y")], 0) != np.argmax(good[emb.rows("y")], 0))
    assert changed.tolist() == [4, 8, 10, 11, 16, 21, 22, 23]
    assert check("02.1", changed, quiet=True)


def test_02_3_the_d_unit_ffn_runs_lloyd_on_non_negative_data():
    """The model answer, put into the whole circuit, equals Lloyd on the toy data (which lies in [0, 1]^2)."""
    from kmt_ref import lloyd
    from kmt_ref.core.tokens import run_layers
    assert X.min() >= 0
    C0e = np.column_stack([C0, [3.0, 3.0]])
    params, emb = dot_product_weights(2, 4)
    W1, W2 = np.zeros((2, emb.d_emb)), np.zeros((emb.d_emb, 2))
    W1[:, emb.rows("x")] = np.eye(2)
    W2[emb.rows("norm"), :] = 1.0
    tr = run_layers(X, dict(params, W1=W1, W2=W2), dot_product_layer(), emb, C0e, 5)
    ref = lloyd(X, C0e, 5)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_allclose(tr.centers, ref.centers, atol=1e-12)
    _, emb3 = dot_product_weights(2, 3)
    W1, W2 = np.zeros((2, emb3.d_emb)), np.zeros((emb3.d_emb, 2))
    W1[:, emb3.rows("x")] = np.eye(2)
    W2[emb3.rows("norm"), :] = 1.0
    assert check("02.3", (W1, W2), quiet=True)


@pytest.mark.parametrize("a, equals_lloyd", [(0.0, False), (0.25, True), (0.5, True), (0.75, True),
                                              (0.999, True), (1.0, False), (1.5, False)])
def test_02_4_offsets_for_which_the_circuit_is_lloyd(a, equals_lloyd):
    """Measured (the model answer's range): offsets 0 < a < 1 give Lloyd with "keep" on the empty-cluster
    example; a = 0 adds the own token to every member mean, a = 1 averages points and own token, a = 1.5
    moves the empty center to the mean of the data."""
    from kmt_ref import lloyd
    from kmt_ref.core.tokens import run_layers
    C0e = np.column_stack([C0, nb02.EMPTY_CENTER])
    params, emb = dot_product_weights(2, 4)
    params = {name: W.copy() for name, W in params.items()}
    params["K3"][emb.rows("y"), emb.rows("flag")] = -a
    tr, ref = run_layers(X, params, dot_product_layer(), emb, C0e, 5), lloyd(X, C0e, 5)
    same = np.array_equal(tr.labels, ref.labels) and np.allclose(tr.centers, ref.centers, rtol=0, atol=1e-12)
    assert same == equals_lloyd
    if a == 1.5:
        np.testing.assert_allclose(nb02._empty_center_after_one_layer(a), X.mean(axis=1), atol=1e-15)
        assert check("02.4", X.mean(axis=1), quiet=True)


def test_02_5_premise_and_a_bisection_on_the_transformer():
    """The old premise was false (beta = 10 keeps the clusters 0.55 apart; 5 merges them); the crossing is
    unique, and a coarse bisection on the *transformer* to a bracket of 0.01 passes."""
    assert nb02.min_separation(10.0) > 0.54 and nb02.min_separation(5.0) < 0.01
    betas = np.geomspace(0.01, 1000, 120)
    above = np.array([nb02.min_separation(b) >= nb02.SEPARATION_THRESHOLD for b in betas])
    first = int(np.argmax(above))
    assert above[first:].all() and not above[:first].any()

    def sep(beta):
        C = soft_kmeans_transformer(X, C0, 10, beta).centers[-1]
        return min(np.linalg.norm(C[:, a] - C[:, b]) for a in range(3) for b in range(a + 1, 3))

    lo, hi = 1.0, 20.0
    while hi - lo > 0.01:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if sep(mid) >= 0.3 else (mid, hi)
    assert check("02.5", (lo + hi) / 2, quiet=True)
    assert abs(nb02.separation_beta() - 7.5042) < 1e-4


def test_02_6_the_prediction_holds_on_the_data():
    """Soft k-means merges every center below beta_c and splits them above (1000 steps)."""
    beta_c = nb02.critical_beta()
    spread = {f: np.ptp(soft_kmeans(X, C0, 1000, f * beta_c).centers[-1], axis=1).max() for f in (0.95, 1.05)}
    assert spread[0.95] < 1e-12 and spread[1.05] > 0.1
    assert check("02.6", beta_c, quiet=True)


def test_02_7_an_independent_step_passes():
    assert check("02.7", wrong_nb02._step, quiet=True)
    assert check("02.7", lambda X, C: spherical_kmeans(X, C, 1).centers[1], quiet=True)


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
    off = [abs((center_angle(phi) - np.degrees(phi) - base + 180) % 360 - 180) for phi in (0.1, 0.3, 1.0)]
    assert max(off) > 5, off


def test_02_1_accepts_a_boolean_mask(capsys):
    mask = np.zeros(24, bool)
    mask[[4, 8, 10, 11, 16, 21, 22, 23]] = True
    assert check("02.1", mask, quiet=True)
    assert check("02.1", [4, 8, 10, 11, 16, 21, 22, 23], quiet=True)
    assert not check("02.1", mask[:-1])
    assert "mask" in capsys.readouterr().out


@pytest.mark.parametrize("id, exact, printed", [
    ("02.4", nb02._empty_center_after_one_layer(1.5), [0.4187, 0.4519]),
    ("02.6", nb02.critical_beta(), 3.46),
    ("02.6", nb02.critical_beta(), 3.460),
    ("02.6", nb02.critical_beta(), 3.4600),
])
def test_printed_precision_passes(id, exact, printed):
    assert check(id, exact, quiet=True)
    assert check(id, printed, quiet=True)


@pytest.mark.parametrize("id, close", [("02.4", [0.419, 0.452]), ("02.6", 3.47)])
def test_too_few_digits_say_right_method(id, close, capsys):
    assert not check(id, close)
    out = capsys.readouterr().out
    assert "right method, give more digits" in out and "tie" not in out
