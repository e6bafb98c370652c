"""Notebook 01's checkers: the premises they rest on, re-measured; right answers written independently of
the library and of the solutions notebook pass (benchmarks/bench_checkers.py times them); shortcuts through
the library, functions fitted to the notebook's examples and float32 answers get the hints they should; no
hint leaks the answer."""

import numpy as np
import pytest

from kmt_ref import assign, kmeans_transformer, lloyd, lloyd_layer, lloyd_weights, projector, run_layers, softmax
from kmt_ref.algorithms.lloyd import lloyd_step
from kmt_ref.core.attention import attention, layer_forward
from kmt_ref.data import toy_data, validation_data
from kmt_ref.exercises import EXERCISES, check, nb01
from kmt_ref.exercises.nb01 import C0_EMPTY, X_EMPTY

X, C0 = toy_data(19)
THRESHOLD = 1075 * np.log(2)  # exp(-t) == 0 in float64 for t above it


def _labels_differ(XX, CC, T, g, ref=None):
    ref = lloyd(XX, CC, T).labels if ref is None else ref
    return not np.array_equal(kmeans_transformer(XX, CC, T, gamma=g).labels, ref)


# ----------------------------------------------------------------------------- the measured premises
def test_the_fresh_inputs_hold_a_tie_a_duplicate_and_an_empty_cluster():
    (_, X3, C3), (_, X1, C1), (_, X4, C4) = nb01._fresh_cases()
    assert X3.shape == (3, 30) and C3.shape == (3, 4)
    D1 = assign(X1, C1)[1]
    assert D1[0, 2] == D1[1, 2] == D1.min(axis=0)[2] == 1.0 and np.array_equal(X1[:, 2], X1[:, 3])  # tie, copy
    assert np.array_equal(X4[:, 2], X4[:, 5])                                                    # a duplicate
    assert np.bincount(lloyd_step(X4, C4)[1], minlength=5)[4] == 0                                # empty cluster
    for _, XX, CC in nb01._fresh_cases():
        tr, ref = kmeans_transformer(XX, CC, 3), lloyd(XX, CC, 3)
        assert np.array_equal(tr.labels, ref.labels) and np.allclose(tr.centers, ref.centers, rtol=0, atol=1e-12)
    assert kmeans_transformer(X1, C1, 1).labels[0, 2] == 0                                      # lowest index
    assert np.array_equal(kmeans_transformer(X4, C4, 1).centers[1][:, 4], C4[:, 4])             # kept


def test_block_2_writes_minus_y_into_duplicate_points():
    """01.3 (b): the lowest-index hardmax puts point 5's weight on its copy, point 2, whose y is the same."""
    _, _, (_, X4, C4) = nb01._fresh_cases()
    layer2 = kmeans_transformer(X4, C4, 2, record=True).layers[1]
    y = lloyd_weights(4, 5)[1].rows("y")
    assert layer2.weights["2"][:, 5].nonzero()[0].tolist() == [2]
    assert np.array_equal(layer2.Xbar_in[y][:, 2], layer2.Xbar_in[y][:, 5]) and layer2.Xbar_in[y].any()
    assert np.array_equal(layer2.outputs["2"][y], -layer2.Xbar_in[y])


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
    ref = lloyd(X, C0, 4)
    dC = np.abs(kmeans_transformer(X, C0, 4, gamma=10.0, center_update="linear").centers - ref.centers).max()
    assert dC == pytest.approx(0.318, abs=1e-3)
    for gu in (0.1, 1.0, 10.0):
        tr = kmeans_transformer(X, C0, 4, gamma=np.inf, gamma_update=gu, center_update="linear")
        assert np.abs(tr.centers - ref.centers).max() <= 1e-15


@pytest.mark.parametrize("case", [("the toy example", X, C0, 4, 1.0, 1e4, 599.68)]
                         + [(*c, s) for c, s in zip(nb01.BISECT_CASES, (279.02, 859.96))], ids=lambda c: c[0])
def test_gamma_star_is_the_end_of_the_only_interval_where_labels_differ(case):
    name, XX, CC, T, lo, hi, measured = case
    star = nb01.bisect_gamma(XX, CC, T, lo, hi)
    assert star == pytest.approx(measured, rel=1e-4)
    ref = lloyd(XX, CC, T).labels
    assert _labels_differ(XX, CC, T, star * (1 - 1e-6), ref)
    for g in np.geomspace(star * (1 + 1e-6), 1e6, 60):
        assert not _labels_differ(XX, CC, T, g, ref), g
    for g in np.geomspace(lo, star * (1 - 1e-6), 30):
        assert _labels_differ(XX, CC, T, g, ref), g


def test_on_the_toy_example_gamma_star_is_far_below_the_one_hot_bound():
    ref = lloyd(X, C0, 4)
    gaps = [np.diff(np.sort(assign(X, C)[1], axis=0)[:2], axis=0).min() for C in ref.centers[:4]]
    assert THRESHOLD / min(gaps) == pytest.approx(5.9e6, rel=0.01)


def _count(XX, CC, g, threshold=THRESHOLD):
    D = assign(XX, CC)[1]
    return int(np.sum(g * (np.sort(D, axis=0)[1] - D.min(axis=0)) > threshold))


def test_the_one_hot_threshold_is_1075_ln_2_and_745_is_not_enough():
    """The exact threshold counts validation_data()'s columns at gamma = 1e4 (3,900); 745 counts one more."""
    assert np.exp(-THRESHOLD * (1 - 1e-15)) > 0 and np.exp(-THRESHOLD * (1 + 1e-15)) == 0
    Xv, Cv = validation_data()
    assert kmeans_transformer(Xv, Cv, 1, gamma=1e4).one_hot[0] == _count(Xv, Cv, 1e4) == 3900
    assert _count(Xv, Cv, 1e4, 745.0) == 3901
    # 01.8's 1-d example: columns at gamma * gap = 745.07 (not one-hot) and 745.37 (one-hot)
    D = assign(nb01.X_ONE_HOT, nb01.C_ONE_HOT)[1]
    t = nb01.GAMMA_ONE_HOT * (np.sort(D, axis=0)[1] - D.min(axis=0))
    assert np.round(t[:4], 2).tolist() == [745.07, 745.37, 0.0, 745.07]
    assert kmeans_transformer(nb01.X_ONE_HOT, nb01.C_ONE_HOT, 1, gamma=nb01.GAMMA_ONE_HOT).one_hot[0] == 5
    assert _count(nb01.X_ONE_HOT, nb01.C_ONE_HOT, nb01.GAMMA_ONE_HOT, 745.0) == 7
    for name, XX, CC, g in nb01._one_hot_cases():  # every case counts some columns but not all
        assert 0 < kmeans_transformer(XX, CC, 1, gamma=g).one_hot[0] < XX.shape[1], name


# ----------------------------------------------------------------------------- right answers, written here
def _tokens(X, C):  # 01.1
    C1, labels = lloyd_step(X, C)
    k, n = C.shape[1], X.shape[1]
    Xbar = np.zeros((X.shape[0] + k + 1, n))
    Xbar[: X.shape[0]] = X
    Xbar[X.shape[0] + labels, np.arange(n)] = 1.0
    return Xbar, np.vstack([C1, np.eye(k), np.ones((1, k))])


def _flagless(X, C):  # 01.4
    _, labels = lloyd_step(X, C)
    k = C.shape[1]
    out = C.copy()
    for j in range(k):
        members = X[:, labels == j]
        out[:, j] = (members.sum(axis=1) + C[:, j]) / (members.shape[1] + 1)
    return out


def _soft_means(X, C, gamma):  # 01.5
    D = ((X[:, None, :] - C[:, :, None]) ** 2).sum(axis=0)  # (k, n)
    Y = np.exp(-gamma * (D - D.min(axis=0)))
    Y /= Y.sum(axis=0)
    return (X @ Y.T) / Y.sum(axis=1)


def _reset(X, Y, gamma):  # 01.6
    D = ((X[:, :, None] - X[:, None, :]) ** 2).sum(axis=0)  # (n, n), symmetric
    W = np.exp(-gamma * (D - D.min(axis=0)))
    return -Y @ (W / W.sum(axis=0))


def _bisect(X, C0, T, lo, hi):  # 01.7: to a relative width of 1e-4
    ref = lloyd(X, C0, T).labels
    while hi / lo > 1 + 1e-4:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if not np.array_equal(kmeans_transformer(X, C0, T, gamma=mid).labels, ref) else (lo, mid)
    return lo


def _n_one_hot(X, C, gamma):  # 01.8
    return _count(X, C, gamma)


RIGHT = {"01.1": _tokens, "01.2": ([0.5, 0.5], [-0.5, -0.5], [[0.0, 2.0]]), "01.3": ((0.1, 0.2), "b"),
         "01.4": _flagless, "01.5": _soft_means, "01.6": _reset, "01.7": _bisect, "01.8": _n_one_hot,
         "01.9": 10, "01.10": "b", "01.11": "C "}


def test_every_checked_exercise_has_an_independent_right_answer_here():
    assert set(RIGHT) == {i for i, ex in EXERCISES.items() if i.startswith("01.") and ex.checked}


@pytest.mark.parametrize("id", sorted(RIGHT))
def test_right_answers_pass(id):
    """(How long each check takes is measured by benchmarks/bench_checkers.py, which reads RIGHT from here.)"""
    assert check(id, RIGHT[id], quiet=True)


# ----------------------------------------------------------------------------- shortcuts through the library
def _layer_tokens(X, C):
    params, emb = lloyd_weights(X.shape[0], C.shape[1])
    return layer_forward(params, emb.embed_points(X), emb.embed_centers(C), lloyd_layer())


def _layer_tokens_or_mine(X, C):  # catches the error and falls back on a right answer
    try:
        return _layer_tokens(X, C)
    except Exception:
        return _tokens(X, C)


def _flagless_layer(X, C):
    params, emb = lloyd_weights(*C.shape)
    params = {**params, "K3": projector(emb, "y")}
    return run_layers(X, params, lloyd_layer(), emb, C, 1).centers[1]


def _linear_layer(X, C, g):
    return kmeans_transformer(X, C, 1, gamma=g, center_update="linear").centers[1]


def _attention_reset(X, Y, g):
    params, emb = lloyd_weights(X.shape[0], Y.shape[0])
    Xbar = emb.embed_points(X)
    Xbar[emb.rows("y")] = Y
    return attention(Xbar, Xbar, params["Q2"], params["K2"], params["V2"], normalizer="softmax", gamma=g,
                     self_attention=True)[emb.rows("y")]


def _one_hot_of_the_layer(X, C, g):
    return int(kmeans_transformer(X, C, 1, gamma=g).one_hot[0])


def _one_hot_of_the_layer_or_mine(X, C, g):
    try:
        return _one_hot_of_the_layer(X, C, g)
    except Exception:
        return _n_one_hot(X, C, g)


def _one_hot_by_softmax(X, C, g):
    W = softmax(-assign(X, C)[1], g)
    return int(np.sum(np.sum(W == 0, axis=0) == C.shape[1] - 1))


def _soft_kmeans_centers(X, C, g):  # soft k-means from kmt_ref: one layer with a soft block 1
    from kmt_ref.algorithms.soft import soft_kmeans
    return soft_kmeans(X, C, 1, g).centers[1]


def _kernel_reset(X, Y, g):  # the exact path's softmax kernel of block 2
    from kmt_ref.core.exact.layer import _euclidean_softmax
    W, _ = _euclidean_softmax(X, X, 1.0, g)
    return -Y @ W


SHORTCUTS = [("01.5", _soft_kmeans_centers, "soft_kmeans"), ("01.6", _kernel_reset, "_euclidean_softmax"),
             ("01.1", _layer_tokens, "layer_forward"), ("01.1", _layer_tokens_or_mine, "layer_forward"),
             ("01.4", _flagless_layer, "run_layers"), ("01.5", _linear_layer, "kmeans_transformer"),
             ("01.6", _attention_reset, "attention"), ("01.7", nb01.bisect_gamma, "nb01.bisect_gamma"),
             ("01.8", _one_hot_of_the_layer, "kmeans_transformer"),
             ("01.8", _one_hot_of_the_layer_or_mine, "kmeans_transformer"), ("01.8", _one_hot_by_softmax, "softmax")]


@pytest.mark.parametrize("id,answer,name", SHORTCUTS, ids=[f"{s[0]}-{s[1].__name__}" for s in SHORTCUTS])
def test_a_shortcut_through_the_library_fails_with_a_hint_naming_it(id, answer, name, capsys):
    assert not check(id, answer)
    out = capsys.readouterr().out
    called = out.split("your function calls ", 1)[-1].split(", directly")[0].split(", ")
    assert name in called, out


# ----------------------------------------------------------------------------- answers fitted to the notebook
def _fitted():
    """For each code exercise, a function that returns what the notebook's example gives, whatever its input."""
    toy_tokens = _tokens(X, C0)
    Xv, Cv = validation_data()
    return {
        "01.1": lambda XX, CC: toy_tokens,
        "01.4": lambda XX, CC: _flagless(X_EMPTY, C0_EMPTY) if CC.shape == C0_EMPTY.shape else _flagless(X, C0),
        "01.5": lambda XX, CC, g: _soft_means(X, C0, g) if CC.shape == C0.shape else _soft_means(XX, CC, 10.0),
        "01.6": lambda XX, Y, g: _reset(X, np.eye(3)[:, lloyd(X, C0, 1).labels[0]], g),
        "01.7": lambda *args: 599.68,
        "01.8": lambda XX, CC, g: _n_one_hot(Xv, Cv, 1e4),
    }


@pytest.mark.parametrize("id", sorted(_fitted()))
def test_a_function_fitted_to_the_notebooks_example_fails(id):
    assert not check(id, _fitted()[id], quiet=True)


def test_the_one_hot_rule_with_745_fails_and_with_1075_ln_2_passes(capsys):
    assert not check("01.8", lambda XX, CC, g: _count(XX, CC, g, 745.0))
    assert "more columns" in capsys.readouterr().out
    assert check("01.8", lambda XX, CC, g: _count(XX, CC, g, 745.1332), quiet=True)  # as the notebook teaches it


# ----------------------------------------------------------------------------- float32, parts, hints
def _float32_hint(capsys):
    out = capsys.readouterr().out
    return "float32" in out and "right method" in out


def test_01_1_a_float32_answer_gets_a_hint_about_the_dtype(capsys):
    def float32_centers(X, C):
        Xb, Cb = _tokens(X, C)
        return Xb, Cb.astype(np.float32)

    def float32_points(X, C):  # the x rows hold X only to float32 precision
        Xb, Cb = _tokens(X, C)
        return Xb.astype(np.float32), Cb

    def in_float32(X, C):  # computed in float32 from the start
        return tuple(a.astype(np.float32) for a in _tokens(X.astype(np.float32), C.astype(np.float32)))

    def float32_in_float64(X, C):  # computed in float32, returned as float64
        return _tokens(X.astype(np.float32).astype(float), C.astype(np.float32).astype(float))

    for answer in (float32_centers, float32_points, in_float32, float32_in_float64):
        assert not check("01.1", answer)
        out = capsys.readouterr().out
        assert "float32" in out and "right method" in out and "must still hold" not in out \
            and "Lloyd step" not in out, out
    # a wrong float32 answer still gets the hint about its method
    def wrong_centers(X, C):
        Xb, Cb = _tokens(X, C)
        Cb[: X.shape[0]] += 0.01
        return Xb.astype(np.float32), Cb.astype(np.float32)

    assert not check("01.1", wrong_centers)
    out = capsys.readouterr().out
    assert "float32" not in out and "centers after one layer are wrong" in out


def test_01_5_a_float32_answer_gets_a_hint_about_the_dtype(capsys):
    for answer in (lambda X, C, g: _soft_means(X, C, g).astype(np.float32),
                   lambda X, C, g: _soft_means(X.astype(np.float32), C.astype(np.float32), np.float32(g))):
        assert not check("01.5", answer)
        assert _float32_hint(capsys)


@pytest.mark.parametrize("id,answer,right_parts", [
    ("01.2", ([0.5, 0.5], [-0.5, -0.5], [[0.5, 2.0]]), (1, 2)),      # Lloyd's centers
    ("01.2", ([1.0, 0.0], [-0.5, -0.5], [[0.0, 2.0]]), (2, 3)),      # Lloyd's tie rule in y
    ("01.3", ((0.5, 0.25), "b"), (2,)),                              # an exact sum
    ("01.3", ((0.1, 0.2), "a"), (1,)),                               # duplicates with different codes
])
def test_a_half_right_answer_earns_its_right_parts(id, answer, right_parts):
    n = len(EXERCISES[id].parts)
    assert [check(id, answer, part=i, quiet=True) for i in range(1, n + 1)] == [i in right_parts for i in range(1, n + 1)]
    assert not check(id, answer, quiet=True)


def test_hints_do_not_state_the_answer(capsys):
    wrong = [("01.7", lambda *a: 100.0), ("01.7", lambda *a: 1000.0), ("01.7", lambda *a: 5.9e6),
             ("01.2", ([1.0, 0.0], [0.0, -2.0], [[0.5, 2.0]])), ("01.8", lambda XX, CC, g: 0)]
    for id, answer in wrong:
        assert not check(id, answer)
    out = capsys.readouterr().out
    for secret in ("279", "859", "860", "[[0", "0, 2", "745.13", "1075"):
        assert secret not in out


def test_a_function_that_raises_gives_a_hint(capsys):
    assert not check("01.4", lambda X, C: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out
    assert not check("01.5", "not a function")
    assert not check("01.7", lambda X, C0, T, lo, hi: (lo, hi))
    assert "a number" in capsys.readouterr().out


def test_01_2_nothing_happens_is_not_enough(capsys):
    """The centers stay C0, so the answer asks for the y and the block-3 scores that explain why."""
    assert not check("01.2", [[0.0, 2.0]])
    assert not check("01.2", ([1.0, 0.0], [0.0, -2.0], [[0.0, 2.0]]))
    assert check("01.2", ([0.5, 0.5], [-0.5, -0.5], np.array([[0.0, 2.0]], dtype=np.float32)), quiet=True)
    assert check("01.2", (np.array([0.5, 0.5]), (-0.5, -0.5), [[0, 2]]), quiet=True)
