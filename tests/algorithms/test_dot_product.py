"""Theorem 2.2 (kmt_ref/algorithms/dot_product.py): dot-product attention and a ReQU FFN equal Lloyd on the shared case table at every layer.
"""
from fractions import Fraction

import numpy as np
import pytest
from cases import all_cases

from kmt_ref import kmeans_transformer, lloyd
from kmt_ref.algorithms import (
    dot_product_layer,
    dot_product_transformer,
    dot_product_weights,
)
from kmt_ref.core.attention import FeedForward, layer_forward
from kmt_ref.core.tokens import with_block

CASES = all_cases()



N_LAYERS = 6



def atol_for(X):
    return 1e-12 * max(np.max(np.abs(X)), 1e-300)



def exact_distances(x, C):
    """Squared distances from x to the columns of C, in exact rational arithmetic on the floats."""
    return [sum((Fraction(float(a)) - Fraction(float(b))) ** 2 for a, b in zip(x, c)) for c in C.T]



def exact_nearest(x, C):
    """Lowest index of the nearest column of C to x, in exact rational arithmetic on the floats."""
    D = exact_distances(x, C)
    return D.index(min(D))



def assert_rounding_decided(x, C, a, b, where):
    """Labels a and b of point x differ only if, in exact arithmetic, both are nearest to within rounding.

    Both sides compute ||x - c||^2 with an expansion (Lloyd's ||x||^2 + ||c||^2 - 2 x.c, the dot score
    2 x.c - ||c||^2) whose rounding, about 8 eps (||x||^2 + ||c||^2), depends on the BLAS kernel: which
    of two centers that close wins is the machine's choice, and a test must not pin it.
    """
    D = exact_distances(x, C)
    bound = Fraction(8 * np.finfo(float).eps) * (sum(Fraction(float(v)) ** 2 for v in x)
                                                 + max(sum(Fraction(float(v)) ** 2 for v in c) for c in C.T))
    assert abs(D[a] - D[b]) <= bound and min(D[a], D[b]) - min(D) <= bound, where



# ======================================================================
# Theorem 2.2
# ======================================================================
@pytest.mark.parametrize("name,X,C0", CASES, ids=[c[0] for c in CASES])
def test_dot_product_transformer_equals_lloyd_at_every_layer(name, X, C0):
    ref = lloyd(X, C0, N_LAYERS)
    trf = dot_product_transformer(X, C0, N_LAYERS)
    for t in range(N_LAYERS):
        differ = np.flatnonzero(trf.labels[t] != ref.labels[t])
        # Lloyd's ||x||^2 + ||c||^2 - 2 x.c and the dot score 2 x.c - ||c||^2 round differently. They
        # can only disagree where the comparison is decided by rounding (which way depends on the BLAS
        # kernel: with OpenBLAS's Nehalem kernel one more case of the table differs than with Haswell's).
        for i in differ:
            assert_rounding_decided(X[:, i], trf.centers[t], trf.labels[t, i], ref.labels[t, i],
                                    f"layer {t + 1}, point {i}")
        np.testing.assert_allclose(trf.centers[t + 1], ref.centers[t + 1], rtol=0, atol=atol_for(X),
                                   err_msg=f"centers differ at layer {t + 1}")
    assert np.all(trf.one_hot == X.shape[1])



def test_dot_product_labels_equal_lloyd_exactly_on_almost_every_case():
    """The rounding-decided disagreements above are rare.

    Measured: one case of 214 here (OpenBLAS Haswell kernel), two with the Nehalem kernel; each is a
    tie that rounding decides (the test above). The bound has room for other kernels and still fails
    if the circuit were wrong (a wrong circuit disagrees on most of the table).
    """
    n_differ = sum(
        not np.array_equal(dot_product_transformer(X, C0, N_LAYERS).labels, lloyd(X, C0, N_LAYERS).labels)
        for _, X, C0 in CASES
    )
    assert len(CASES) >= 200 and n_differ <= 10



def test_dot_product_rounding_decided_tie_is_resolved_exactly():
    """The one disagreement in the table: coincident centers, one of them a mean that is 1 ulp off.

    In ``random30_dups`` three initial centers are the same data point x; after step 1 center 0 is
    the mean of six copies of x, which rounds to x minus one ulp in two coordinates, while the
    empty centers 1 and 4 keep x exactly. Lloyd's ``||x||^2 + ||c||^2 - 2 x.c`` cancels to 0.0 for
    all three and picks index 0; the dot scores tell them apart and pick center 1, whose exact
    distance is 0: the answer of Lloyd's rule in exact arithmetic.
    """
    name, X, C0 = next(c for c in CASES if c[0].startswith("random30_dups"))
    ref, trf = lloyd(X, C0, 3), dot_product_transformer(X, C0, 3)
    np.testing.assert_array_equal(trf.labels[0], ref.labels[0])
    i = int(np.flatnonzero(trf.labels[1] != ref.labels[1])[0])
    C1 = trf.centers[1]
    assert np.array_equal(C1[:, 1], X[:, i]) and not np.array_equal(C1[:, 0], X[:, i])
    assert ref.labels[1, i] == 0 and trf.labels[1, i] == exact_nearest(X[:, i], C1) == 1
    np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-15)



def test_dot_product_near_duplicates_in_one_cluster_are_exact():
    """Block 2 may select a near-copy of x_i (rounding); it carries the same y, so the reset is exact."""
    X = np.array([[0.1, 0.1 + 1e-12, 0.1 - 1e-13, 0.9, 0.9 + 1e-15, 0.5 - 1e-6]])
    C0 = np.array([[0.0, 1.0]])
    ref, trf = lloyd(X, C0, 4), dot_product_transformer(X, C0, 4)
    np.testing.assert_array_equal(trf.labels, ref.labels)
    np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-15)
    assert np.all(trf.one_hot == X.shape[1])



@pytest.mark.xfail(strict=True, reason=(
    "known limit of the dense dot-score block 2: two points 2e-9 apart on either side of a boundary. "
    "The norm-trick score 2 x_i.x_l - ||x_l||^2 exceeds the diagonal by rounding, block 2 removes "
    "the neighbour's y and y_i stops being one-hot. Passes once core/blocks.py computes the exact "
    "gamma = inf limit of this block by duplicate grouping (as for Euclidean Q = K)."))
def test_dot_product_near_duplicates_across_a_boundary():
    X = np.array([[0.5 - 1e-9, 0.5 + 1e-9, 0.0, 1.0]])
    C0 = np.array([[0.0, 1.0]])
    ref, trf = lloyd(X, C0, 3), dot_product_transformer(X, C0, 3)
    np.testing.assert_array_equal(trf.labels, ref.labels)
    assert np.all(trf.one_hot == X.shape[1])



def test_dot_product_hand_computed_toy_with_tie_and_empty_cluster():
    # x = 0 is equidistant from -1 and 1 (joins 0); the center at 50 has no member and stays
    X = np.array([[0.0, -2.0, 2.0]])
    C0 = np.array([[-1.0, 1.0, 50.0]])
    tr = dot_product_transformer(X, C0, 2, record=True)
    np.testing.assert_array_equal(tr.labels[0], [0, 0, 1])
    np.testing.assert_array_equal(tr.centers[1], [[-1.0, 2.0, 50.0]])
    np.testing.assert_array_equal(tr.labels[1], [0, 0, 1])
    # block 3 scores (keys: 3 points then 3 center tokens; queries: 3 centers): 1 / 0 for points,
    # 1/2 for the center's own token, -1/2 for the other centers
    S3 = tr.layers[0].scores["3"]  # (n + k, k)
    np.testing.assert_array_equal(S3, [[1, 0, 0], [1, 0, 0], [0, 1, 0],
                                       [0.5, -0.5, -0.5], [-0.5, 0.5, -0.5], [-0.5, -0.5, 0.5]])



def test_dot_product_k1_and_k_equals_n():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3, 9))
    tr = dot_product_transformer(X, X[:, :1], 3)
    np.testing.assert_allclose(tr.centers[1:, :, 0], np.tile(X.mean(axis=1), (3, 1)), atol=1e-15)
    tr = dot_product_transformer(X, X, 3)
    np.testing.assert_array_equal(tr.labels, np.tile(np.arange(9), (3, 1)))
    np.testing.assert_array_equal(tr.centers[-1], X)



def test_ffn_computes_the_squared_norm_exactly():
    d, k = 3, 4
    params, emb = dot_product_weights(d, k)
    C = np.array([[1.0, -2.0, 0.0, 3.0], [-1.0, 5.0, 0.0, -7.0], [2.0, 0.5, -0.25, 1.0]])
    Cbar = emb.embed_centers(C)
    Cbar[emb.rows("norm")] = 0.0  # the slot block 4 clears
    ffn = (FeedForward("C", activation="requ"),)
    _, Cout = layer_forward(params, emb.embed_points(C), Cbar, ffn)
    np.testing.assert_array_equal(Cout[emb.rows("norm")][0], [6.0, 29.25, 0.0625, 59.0])  # exact
    # nothing else changes
    keep = np.ones(emb.d_emb, bool)
    keep[emb.rows("norm")] = False
    np.testing.assert_array_equal(Cout[keep], Cbar[keep])



def test_norm_slot_is_refreshed_after_every_layer():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2, 30))
    params, emb = dot_product_weights(2, 4)
    tr = dot_product_transformer(X, X[:, :4], 4, record=True)
    for t, rec in enumerate(tr.layers):
        C = tr.centers[t + 1]
        np.testing.assert_allclose(rec.Cbar_out[emb.rows("norm")][0], np.sum(C * C, axis=0), rtol=1e-15)
        np.testing.assert_allclose(rec.Xbar_out[emb.rows("norm")][0], np.sum(X * X, axis=0), rtol=0, atol=0)



def test_norm_trick_constant_drops_out_of_the_softmax():
    """At finite gamma, block 1's dot-score attention equals Theorem 2.1's Euclidean attention."""
    rng = np.random.default_rng(4)
    X = 3.0 + rng.normal(size=(2, 25))  # ||x||^2 ~ 18: a large constant to drop
    C0 = X[:, :3]
    for gamma in (0.1, 1.0, 10.0):
        dot = dot_product_transformer(X, C0, 1, gamma, record=True).layers[0]
        euc = kmeans_transformer(X, C0, 1, gamma, record=True).layers[0]
        np.testing.assert_allclose(dot.weights["1"], euc.weights["1"], rtol=1e-12, atol=1e-15)
        # the raw scores differ by exactly ||x_i||^2 per query (column)
        np.testing.assert_allclose(dot.scores["1"] - euc.scores["1"],
                                   np.tile(np.sum(X * X, axis=0), (3, 1)), rtol=1e-13)



def test_dot_product_layer_is_the_lloyd_layer_with_dot_scores_and_an_ffn():
    layer = dot_product_layer()
    blocks = [b for sub in layer[:2] for b in sub.blocks]
    assert sorted(b.name for b in blocks) == ["1", "2", "3", "4"]
    assert all(b.score == "dot" for b in blocks)
    assert isinstance(layer[-1], FeedForward) and layer[-1].activation == "requ"
    with pytest.raises(KeyError, match="no attention block"):
        with_block(layer, "7", score="dot")



@pytest.mark.parametrize("bad,exc,match", [
    (dict(gamma=float("nan")), ValueError, "gamma"),
    (dict(gamma=-1.0), ValueError, "gamma"),
    (dict(n_layers=-1), ValueError, "n_layers"),
    (dict(n_layers=1.5), TypeError, "n_layers"),
    (dict(C0=np.zeros((3, 2))), ValueError, "C0"),
    (dict(X=np.array([[0.0, np.nan]])), ValueError, "NaN"),
])
def test_dot_product_bad_input(bad, exc, match):
    args = dict(X=np.array([[0.0, 1.0, 2.0]]), C0=np.array([[0.0, 2.0]]), n_layers=2)
    args.update(bad)
    with pytest.raises(exc, match=match):
        dot_product_transformer(**args)
