"""The exact layer of kmt_ref/core/exact/ (fast_layer_forward, its helpers and its Memo) against the plain path.

Every instance of the shared case table (tests/cases.py) is run through the
layer three times: ``exact=True`` (the default: row selections, chunked argmin,
one-hot key lookup, residual sums in place) on copies, the same in place with
one Memo carried across the layers (as run_layers does), and ``exact=False``
(the plain path of kmt_ref/core/attention.py); the tokens must be the same
numbers at every layer, and every fact in the memo must hold.
"""
import dataclasses

import numpy as np
import pytest
from cases import all_cases

from kmt_ref.algorithms.lloyd import lloyd_layer, lloyd_weights
from kmt_ref.core.attention import layer_forward
from kmt_ref.core.exact import Memo, duplicate_groups, fast_layer_forward, one_hot_columns, selection
from kmt_ref.trace import CHUNK, nearest_center, nearest_labels

CASES = all_cases()


#: (gamma, center_update, gamma_reset): Theorem 2.1 at gamma = inf, the authors' finite-gamma circuit
#: (gamma = 1e4, identity resets, linear block 3), softmax blocks at moderate gamma, finite resets
LAYERS = [(np.inf, "euclidean", np.inf), (np.inf, "linear", np.inf), (1e4, "linear", np.inf),
          (3.0, "linear", np.inf), (3.0, "euclidean", np.inf), (np.inf, "euclidean", 5.0)]


@pytest.mark.parametrize("gamma,center_update,gamma_reset", LAYERS, ids=[f"{g}-{c}-{r}" for g, c, r in LAYERS])
@pytest.mark.parametrize("name,X,C0", CASES, ids=[c[0] for c in CASES])
def test_exact_layer_equals_the_plain_path(name, X, C0, gamma, center_update, gamma_reset):
    params, emb = lloyd_weights(X.shape[0], C0.shape[1], center_update)
    layer = lloyd_layer(gamma, gamma_reset, center_update=center_update)
    Xa, Ca = emb.embed_points(X), emb.embed_centers(C0)
    Xb, Cb = Xa.copy(), Ca.copy()
    Xm, Cm, memo = Xa.copy(), Ca.copy(), Memo()
    for t in range(4):
        fast = fast_layer_forward(params, Xa, Ca, layer, chunk_size=7)  # several query chunks where r > 7 too
        assert fast is not None, "a hand-set layer with selection weights must take the plain-NumPy path"
        kept = fast_layer_forward(params, Xm, Cm, layer, overwrite=True, chunk_size=7, memo=memo)
        assert kept[0] is Xm and kept[1] is Cm
        plain = layer_forward(params, Xb, Cb, layer, exact=False, chunk_size=7)
        for a, b, what in zip(fast, plain, ("Xbar", "Cbar")):
            np.testing.assert_array_equal(a, b, err_msg=f"{what} differs at layer {t + 1}")
        for a, b, what in zip(kept, plain, ("Xbar", "Cbar")):
            np.testing.assert_array_equal(a, b, err_msg=f"{what} differs at layer {t + 1} (in place, with the memo)")
        assert_facts_hold(memo, t)
        Xa, Ca, Xb, Cb = fast[0], fast[1], plain[0], plain[1]
    if gamma == np.inf and gamma_reset == np.inf and np.unique(X, axis=1).shape[1] == X.shape[1]:
        # what makes the gamma = inf layer fast on distinct points: the reset is the identity, so y is
        # reset to +0 and receives exactly e_l (with duplicates, block 2 averages and neither fact is known)
        assert {kind for kind, *_ in memo} == {"hot", "distinct", "nearest", "sqnorms"}
    if gamma < np.inf and C0.shape[1] <= 7:  # finite-gamma block 1 (in one query chunk) finds the nearest centers
        assert "nearest" in {kind for kind, *_ in memo}
    if gamma < np.inf and center_update == "linear":  # the softmax of block 1 keeps its queries' norms too
        assert "sqnorms" in {kind for kind, *_ in memo}


def assert_facts_hold(memo, t):
    for kind, Z, rows, value in memo:
        if kind == "hot":
            np.testing.assert_array_equal(one_hot_columns(Z[list(rows)]), value, err_msg=f"layer {t + 1}")
        elif kind == "nearest":
            labels, keys = value
            np.testing.assert_array_equal(labels, nearest_labels(Z[list(rows)], keys), err_msg=f"layer {t + 1}")
        elif kind == "sqnorms":  # bit for bit, the signs of zero included
            Q = Z[list(rows)]
            assert value.tobytes() == np.sum(Q * Q, axis=0).tobytes(), f"layer {t + 1}"
        else:
            assert kind == "distinct"
            first, _ = duplicate_groups(Z[list(rows)])
            np.testing.assert_array_equal(first, np.arange(Z.shape[1]), err_msg=f"layer {t + 1}")


def test_memo_forgets_what_a_write_may_change_and_keeps_the_rest():
    Z, other = np.zeros((5, 3)), np.zeros((5, 3))
    memo = Memo()
    memo.put("hot", Z, slice(2, 4), np.array([0, 1, -1]))
    memo.put("distinct", Z, slice(0, 2), True)
    assert memo.get("hot", Z, slice(2, 4)) is not None and memo.get("hot", Z, [2, 3]) is not None
    assert memo.get("hot", other, slice(2, 4)) is None  # a fact names its array
    assert memo.get("hot", Z, slice(2, 5)) is None  # and exactly its rows
    memo.forget(other, slice(None))
    memo.forget(Z, [4])
    assert memo.get("hot", Z, slice(2, 4)) is not None and memo.get("distinct", Z, slice(0, 2))
    memo.forget(Z, slice(3, 5))  # overlaps the one-hot rows only
    assert memo.get("hot", Z, slice(2, 4)) is None and memo.get("distinct", Z, slice(0, 2))
    memo.clear()
    assert list(memo) == []


def test_the_plain_path_clears_the_memo():
    _, X, C0 = CASES[8]
    params, emb = lloyd_weights(X.shape[0], C0.shape[1])
    Xbar, Cbar, memo = emb.embed_points(X), emb.embed_centers(C0), Memo()
    layer_forward(params, Xbar, Cbar, lloyd_layer(), overwrite=True, memo=memo)
    assert list(memo)
    layer_forward(params, Xbar, Cbar, lloyd_layer(), overwrite=True, memo=memo, record=True)
    assert list(memo) == []  # the record path wrote new tokens: nothing the memo knew holds for them


@pytest.mark.parametrize("gamma", [3.0, np.inf])
def test_block_1_with_one_hot_values_that_are_not_the_identity(gamma):
    """V1 selects only some of the centers' one-hot rows: each output row is a row of the weights, or 0
    (at gamma = inf: a center whose value column is 0 gives its points a zero y, label -1 in the memo)."""
    _, X, C0 = CASES[8]
    params, emb = lloyd_weights(X.shape[0], C0.shape[1], "linear")
    V1 = params["V1"].copy()
    rows = np.flatnonzero(V1.any(axis=1))
    V1[rows[1]] = 0.0  # the selection loses one row
    params = dict(params, V1=V1)
    layer = lloyd_layer(gamma, center_update="linear")
    Xa, Ca = emb.embed_points(X), emb.embed_centers(C0)
    memo = Memo()
    fast = fast_layer_forward(params, Xa.copy(), Ca.copy(), layer)
    kept = fast_layer_forward(params, Xa.copy(), Ca.copy(), layer, overwrite=True, memo=memo)
    assert fast is not None
    plain = layer_forward(params, Xa.copy(), Ca.copy(), layer, exact=False)
    for a, b, c in zip(fast, plain, kept):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(c, b)
    assert_facts_hold(memo, 0)


def test_gamma_inf_block_1_with_a_zero_value_column():
    """A center token whose y is 0 (not e_j): its points get y = 0, written as a fill and a scatter that skips
    them, and known to the memo as label -1; the tokens equal the plain path's."""
    _, X, C0 = CASES[8]
    params, emb = lloyd_weights(X.shape[0], C0.shape[1])
    Xa, Ca = emb.embed_points(X), emb.embed_centers(C0)
    Ca[emb.rows("y"), 1] = 0.0
    memo = Memo()
    kept = fast_layer_forward(params, Xa.copy(), Ca.copy(), lloyd_layer(), overwrite=True, memo=memo)
    plain = layer_forward(params, Xa.copy(), Ca.copy(), lloyd_layer(), exact=False)
    for a, b in zip(kept, plain):
        np.testing.assert_array_equal(a, b)
    assert_facts_hold(memo, 0)
    hot = [value for kind, _, _, value in memo if kind == "hot"]
    assert len(hot) == 1 and (hot[0] == -1).any() and (hot[0] >= 0).any()


def test_exact_layer_does_not_touch_its_input_unless_allowed():
    X = np.array([[0.0, 1.0, 4.0, 5.0]])
    params, emb = lloyd_weights(1, 2)
    Xbar, Cbar = emb.embed_points(X), emb.embed_centers(np.array([[0.0, 5.0]]))
    keep = Xbar.copy(), Cbar.copy()
    out = layer_forward(params, Xbar, Cbar, lloyd_layer())
    np.testing.assert_array_equal(Xbar, keep[0])
    np.testing.assert_array_equal(Cbar, keep[1])
    out2 = layer_forward(params, Xbar, Cbar, lloyd_layer(), overwrite=True)
    assert out2[0] is Xbar and out2[1] is Cbar  # residual sums in place
    np.testing.assert_array_equal(out2[0], out[0])


def test_exact_layer_declines_what_it_cannot_do_exactly():
    params, emb = lloyd_weights(2, 3)
    Xbar, Cbar = emb.embed_points(np.eye(2, 5)), emb.embed_centers(np.eye(2, 3))
    stochastic = tuple(type(sub)(sub.stream, tuple(dataclasses.replace(b, normalizer="gumbel", gamma=1.0)
                                                   for b in sub.blocks)) for sub in lloyd_layer())
    assert fast_layer_forward(params, Xbar, Cbar, stochastic) is None  # a normalizer that draws random numbers
    assert fast_layer_forward(params, Xbar[None], Cbar[None], lloyd_layer()) is None  # a batch
    biased = dict(params, bQ1=np.ones(emb.d_emb))
    assert fast_layer_forward(biased, Xbar, Cbar, lloyd_layer()) is None


def test_selection_recognises_signed_projectors_only():
    P = np.diag([0.0, 1.0, 1.0, 0.0])
    rows, cols, sign = selection(-P)
    assert sign == -1.0 and list(np.arange(4)[rows]) == [1, 2] and list(np.arange(4)[cols]) == [1, 2]
    assert selection(2 * P) is None
    assert selection(np.ones((3, 3))) is None
    shifted = np.zeros((3, 3))
    shifted[0, 1] = shifted[1, 2] = 1.0  # a selection of rows 1, 2 written into rows 0, 1
    rows, cols, sign = selection(shifted)
    assert list(np.arange(3)[rows]) == [0, 1] and list(np.arange(3)[cols]) == [1, 2]


def test_one_hot_columns_is_exact():
    A = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(one_hot_columns(A), [0, -1, 1])
    assert one_hot_columns(np.array([[1.0], [1.0]])) is None  # two ones
    assert one_hot_columns(np.array([[1.0], [1e-300]])) is None  # a tiny second entry
    assert one_hot_columns(np.array([[0.5], [0.5]])) is None
    assert one_hot_columns(np.array([[-1.0], [0.0]])) is None
    big = np.eye(3)[:, np.arange(3 * CHUNK + 5) % 3]  # several chunks
    np.testing.assert_array_equal(one_hot_columns(big), np.arange(3 * CHUNK + 5) % 3)
    big[2, -1] = 1.0
    assert one_hot_columns(big) is None


@pytest.mark.parametrize("n", [1, 2, CHUNK, CHUNK + 1, 2 * CHUNK + 3])
def test_nearest_labels_equal_the_dense_argmin(n):
    rng = np.random.default_rng(n)
    X = rng.integers(-2, 3, (3, n)).astype(float)  # many exact ties
    C = rng.integers(-2, 3, (3, 4)).astype(float)
    np.testing.assert_array_equal(nearest_labels(X, C), nearest_center(X, C)[0])
    Xr = rng.normal(size=(5, n))
    np.testing.assert_array_equal(nearest_labels(Xr, Xr[:, :1].repeat(3, 1)), np.zeros(n, dtype=int))


def test_nearest_labels_of_no_points_is_empty():
    """n = 0: no labels and an objective of 0 (no block of points, hence no product to size a buffer by)."""
    labels, J = nearest_labels(np.empty((3, 0)), np.ones((3, 4)), objective=True)
    assert labels.shape == (0,) and J == 0.0


def test_argmin_columns_is_numpys_argmin():
    """The lowest index of each column's minimum, ties and NaN columns included (columns._argmin_columns)."""
    from kmt_ref.columns import _argmin_columns

    rng = np.random.default_rng(0)
    for k in (1, 2, 5, 40, 127, 128, 300):  # the ranks in int8 up to k = 127, then int16
        D = rng.integers(0, 3, (k, 300)).astype(float)  # many ties
        D[:, 7] = 0.0  # all tied
        D[-1, 8] = -0.0  # -0.0 ties with 0.0
        D[-1, 9], D[:-1, 9] = 0.0, 1.0  # the last row alone attains the minimum
        for nan_col in (None, 11):
            if nan_col is not None:
                D[k // 2, nan_col] = np.nan
            got = _argmin_columns(D)
            np.testing.assert_array_equal(got, np.argmin(D, axis=0))


@pytest.mark.parametrize("k", [1, 3, 16, 200])
def test_distance_blocks_do_not_depend_on_their_width(k, monkeypatch):
    """The width of distance_blocks' blocks (trace.distance_width, set by BLOCK_BYTES) bounds the elementwise
    work only: the squared distances, nearest_labels (ties included) and the objective are the same numbers
    at the narrowest width (CHUNK), the widest (8 CHUNK) and between, over several product blocks."""
    from kmt_ref import trace

    rng = np.random.default_rng(k)
    n = 3 * 8 * CHUNK + 1  # a last block of one point, joined to the one before
    X = rng.integers(0, 4, (2, n)).astype(float)  # a small grid: many exact ties
    C = X[:, rng.choice(n, k)] if k <= 16 else rng.integers(0, 4, (2, k)).astype(float)
    monkeypatch.setattr(trace, "PRODUCT_ENTRIES", 5 * CHUNK * k)  # product blocks of 5 CHUNK points
    results = []
    for block_bytes in (1, 8 * CHUNK * k * 3 // 2, 2**40):
        monkeypatch.setattr(trace, "BLOCK_BYTES", block_bytes)
        width = trace.distance_width(k)
        assert CHUNK <= width <= 8 * CHUNK
        D = np.concatenate([Db.copy() for _, _, Db in trace.distance_blocks(X, C)], axis=1)
        labels, J = trace.nearest_labels(X, C, objective=True)
        results.append((width, D, labels, J))
    assert len({r[0] for r in results}) == 3
    for _, D, labels, J in results[1:]:
        np.testing.assert_array_equal(D, results[0][1])
        np.testing.assert_array_equal(labels, results[0][2])
        assert J == results[0][3]
    np.testing.assert_array_equal(results[0][2], np.argmin(results[0][1], axis=0))


@pytest.mark.parametrize("d,n", [(1, 1), (20, 1), (20, 2), (3, CHUNK + 1), (33, 2 * CHUNK + 5), (9, 3 * CHUNK)])
def test_squared_norms_are_distance_blocks_own(d, n):
    """trace.squared_norms (CHUNK columns at a time) gives the numbers of np.sum(X * X, axis=0) on the whole
    array and of distance_blocks' own block-by-block sums (the distances with and without x_sq agree), also
    on a row view of a token array and for d >= 8, where a sum along a contiguous axis would be pairwise."""
    from kmt_ref.trace import distance_blocks, squared_norms

    rng = np.random.default_rng(d * n)
    Z = rng.standard_normal((d + 4, n)) * np.exp2(rng.integers(-30, 30, (d + 4, n)))
    X = Z[2 : d + 2]  # a view of rows, as block 1's queries
    x_sq = squared_norms(X)
    np.testing.assert_array_equal(x_sq, np.sum(X * X, axis=0))
    C = X[:, : min(n, 3)] * 0.5
    for (_, _, D1), (_, _, D2) in zip(distance_blocks(X, C), distance_blocks(X, C, x_sq)):
        np.testing.assert_array_equal(D1, D2)


@pytest.mark.parametrize("fast_add_at", [True, False])
def test_segment_sums_are_bincounts(fast_add_at, monkeypatch):
    """columns.segment_sums (np.add.at on NumPy >= 1.25, else bincount) gives np.bincount's sums bit for bit:
    signed zeros, values of very different sizes (where the order of the additions shows), empty segments."""
    from kmt_ref import columns

    if fast_add_at and not columns._FAST_ADD_AT:
        pytest.skip("np.add.at is slow before NumPy 1.25: segment_sums takes bincount there")
    monkeypatch.setattr(columns, "_FAST_ADD_AT", fast_add_at)
    rng = np.random.default_rng(5)
    V = rng.standard_normal((4, 3000)) * np.exp2(rng.integers(-60, 60, (4, 3000)))
    V[:, ::7] = -0.0
    V[1] = -0.0  # a row of negative zeros only: each sum +0.0
    labels = rng.integers(0, 9, 3000)
    labels[labels == 4] = 5  # segment 4 empty
    got = columns.segment_sums(V, labels, 10)
    want = np.stack([np.bincount(labels, weights=row, minlength=10) for row in V])
    assert got.tobytes() == want.tobytes()


def test_argmax_columns_is_numpys_argmax():
    from kmt_ref.trace import argmax_columns

    rng = np.random.default_rng(1)
    A = rng.integers(0, 3, (6, 2 * CHUNK + 3)).astype(float)  # ties, several chunks
    A[:, 5] = 1.0
    np.testing.assert_array_equal(argmax_columns(A), np.argmax(A, axis=0))
    A[2, CHUNK + 7] = np.nan  # numpy's argmax returns the first NaN
    np.testing.assert_array_equal(argmax_columns(A), np.argmax(A, axis=0))


def test_argmax_columns_counts_the_exact_basis_vectors():
    from kmt_ref.trace import argmax_columns

    n = 2 * CHUNK + 3
    Y = np.eye(4)[:, np.arange(n) % 4]
    odd = {5: [0.5, 0.5, 0, 0], 6: [1, 1e-300, 0, 0], 7: [1, -1e-300, 0, 0], 8: [0, 0, 0, 0], 9: [2, 0, 0, 0],
           10: [-1, 0, 0, 0], 11: [np.nan, 0, 0, 0], 12: [1, np.nan, 0, 0], 13: [-0.0, 1, -0.0, 0],
           CHUNK + 1: [0, 1 + 2e-16, 0, 0]}
    for col, value in odd.items():
        Y[:, col] = value
    exact = np.all((Y == 0) | (Y == 1), axis=0) & (np.sum(Y == 1, axis=0) == 1)  # the definition
    labels, count = argmax_columns(Y, count_one_hot=True)
    assert count == int(exact.sum()) == n - len(odd) + 1  # column 13 (-0 beside the 1) is e_1
    np.testing.assert_array_equal(labels, argmax_columns(Y))


def in_place_and_plain(params, emb, layer, X, C0, n_layers=3, chunk_size=1024):
    """``n_layers`` of the exact layer in place with one Memo, beside the plain path: the tokens must be equal
    after every layer and every fact of the memo must hold. Returns the in-place tokens and the memo."""
    Xm, Cm, memo = emb.embed_points(X), emb.embed_centers(C0), Memo()
    Xb, Cb = Xm.copy(), Cm.copy()
    for t in range(n_layers):
        kept = fast_layer_forward(params, Xm, Cm, layer, overwrite=True, chunk_size=chunk_size, memo=memo)
        assert kept[0] is Xm and kept[1] is Cm
        Xb, Cb = layer_forward(params, Xb, Cb, layer, exact=False, chunk_size=chunk_size)
        for a, b, what in zip(kept, (Xb, Cb), ("Xbar", "Cbar")):
            np.testing.assert_array_equal(a, b, err_msg=f"{what} differs at layer {t + 1}")
        assert_facts_hold(memo, t)
    return Xm, Cm, memo


@pytest.mark.parametrize("gamma", [np.inf, 1e4])
def test_exact_layer_over_several_chunks_with_duplicates_and_an_empty_cluster(gamma):
    """n above CHUNK, integer data (exact ties, every point repeated) and a center far from every point:
    the reset is not the identity (no "distinct" fact, y not reset to +0), the far cluster stays empty, and
    the tokens still equal the plain path's; at gamma = inf the trace is Lloyd's bit for bit."""
    from kmt_ref import kmeans_transformer, lloyd

    rng = np.random.default_rng(7)
    n = 2 * CHUNK + 1
    X = rng.integers(0, 6, (3, n)).astype(float)  # 216 distinct points: many duplicates and ties
    C0 = np.concatenate([X[:, :4], [[50.0], [50.0], [50.0]]], axis=1)  # the last center attracts no point
    params, emb = lloyd_weights(3, 5)
    Xm, Cm, memo = in_place_and_plain(params, emb, lloyd_layer(gamma), X, C0)
    assert not any(kind == "distinct" and Z is Xm for kind, Z, *_ in memo)  # the points repeat
    np.testing.assert_array_equal(Cm[:3, 4], [50.0, 50.0, 50.0])  # the empty cluster kept its center
    if gamma == np.inf:
        trf, ref = kmeans_transformer(X, C0, 3), lloyd(X, C0, 3)
        np.testing.assert_array_equal(trf.labels, ref.labels)
        np.testing.assert_array_equal(trf.centers, ref.centers)
        np.testing.assert_array_equal(trf.objective, ref.objective)


@pytest.mark.parametrize("n", [2 * CHUNK + 1, 5000])
@pytest.mark.parametrize("gamma,center_update", [(1e4, "linear"), (3.0, "euclidean"), (np.inf, "euclidean")])
def test_exact_layer_over_several_chunks_equals_the_plain_path(n, gamma, center_update):
    """n above CHUNK: the exact layer and the plain path take their products in the same CHUNK-column blocks
    (trace.distance_blocks); before the plain path did, one weight of the n = 4,097 layer at gamma = 1e4 differed
    in its 11th digit (a BLAS kernel rounds a column differently with the columns around it). The tokens must be
    the same numbers, and the objective from the memo's nearest centers the searched one."""
    from kmt_ref import kmeans_transformer
    from kmt_ref.trace import frame_objective

    rng = np.random.default_rng(n)
    X = rng.uniform(0, 1, (16, n))
    C0 = X[:, rng.choice(n, 16, replace=False)]
    params, emb = lloyd_weights(16, 16, center_update)
    in_place_and_plain(params, emb, lloyd_layer(gamma, center_update=center_update), X, C0)
    trace = kmeans_transformer(X, C0, 3, gamma=gamma, center_update=center_update)  # data in [0, 1]: no frame shift
    searched = [frame_objective(X, C) for C in trace.centers]
    np.testing.assert_array_equal(trace.objective, searched)


def test_product_blocks_are_few_and_large():
    """trace.product_blocks: consecutive blocks covering range(n), multiples of CHUNK columns (the last may
    carry one more: no one-column product), at most PRODUCT_ENTRIES entries (k x width); at k = 16 a search
    over 100,000 points is one product, which a threaded BLAS splits over its threads (49 products of
    2,048 points took 9 ms on two threads of a loaded machine against 1.6 ms on one)."""
    from kmt_ref.trace import PRODUCT_ENTRIES, product_blocks

    assert list(product_blocks(100_000, 16)) == [(0, 100_000)]
    for n in (1, 2, CHUNK, CHUNK + 1, 10**6 + 1, 3 * 10**6):
        for k in (1, 16, 1000, 5000):
            blocks = list(product_blocks(n, k))
            assert blocks[0][0] == 0 and blocks[-1][1] == n
            assert all(b0 == a1 for (_, b0), (a1, _) in zip(blocks, blocks[1:]))
            width = blocks[0][1] - blocks[0][0]
            assert all(b - a == width for a, b in blocks[:-1])
            assert 2 <= blocks[-1][1] - blocks[-1][0] <= width + 1 or n < 2
            assert width % CHUNK == 0 or len(blocks) == 1
            assert k * width <= max(PRODUCT_ENTRIES, k * CHUNK) or len(blocks) == 1


@pytest.mark.parametrize("gamma,center_update", [(1e4, "linear"), (3.0, "euclidean"), (np.inf, "euclidean")])
def test_exact_layer_over_several_products_equals_the_plain_path(gamma, center_update, monkeypatch):
    """Products of 2 CHUNK columns (PRODUCT_ENTRIES lowered), n = 4 CHUNK + 1 (a last product of 2 CHUNK + 1
    columns): distance_blocks takes one product per block of product_blocks, the plain path's scores the same
    products (trace.block_products), the tokens are the same numbers, and at gamma = inf the trace is Lloyd's."""
    from kmt_ref import kmeans_transformer, lloyd
    from kmt_ref.trace import block_products, distance_blocks, distance_width, frame_objective, product_blocks

    monkeypatch.setattr("kmt_ref.trace.PRODUCT_ENTRIES", 2 * CHUNK * 16)
    n = 4 * CHUNK + 1
    assert list(product_blocks(n, 16)) == [(0, 2 * CHUNK), (2 * CHUNK, n)]
    rng = np.random.default_rng(11)
    X = rng.uniform(0, 1, (16, n))
    C0 = X[:, rng.choice(n, 16, replace=False)]
    x_sq, c_sq = np.sum(X * X, axis=0), np.sum(C0 * C0, axis=0)[:, None]
    cross = np.concatenate([C0.T @ X[:, a:b] for a, b in product_blocks(n, 16)], axis=1)
    np.testing.assert_array_equal(block_products(C0, X), cross)
    for a, b, D in distance_blocks(X, C0):
        assert b - a <= distance_width(16) + 1
        np.testing.assert_array_equal(D, (x_sq[a:b] + c_sq) - 2.0 * cross[:, a:b])
    params, emb = lloyd_weights(16, 16, center_update)
    in_place_and_plain(params, emb, lloyd_layer(gamma, center_update=center_update), X, C0)
    trace = kmeans_transformer(X, C0, 3, gamma=gamma, center_update=center_update)
    np.testing.assert_array_equal(trace.objective, [frame_objective(X, C) for C in trace.centers])
    if gamma == np.inf:
        ref = lloyd(X, C0, 3)
        for field in ("labels", "centers", "objective"):
            np.testing.assert_array_equal(getattr(trace, field), getattr(ref, field))


def test_objective_does_not_depend_on_the_blas_thread_count():
    """The objective sums its squares with NumPy's reduction: a threaded BLAS dot product splits a long sum
    over its threads and rounds it differently with their number."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from kmt_ref.trace import frame_objective

    rng = np.random.default_rng(3)
    X = rng.normal(size=(16, 10 * CHUNK))
    for C in rng.normal(size=(5, 16, 8)):  # a BLAS dot product differed here for 3 of the 5 (OpenBLAS, 2 threads)
        found = []
        for threads in (1, 2):
            with threadpoolctl.threadpool_limits(threads):
                found.append(frame_objective(X, C))
                found.append(nearest_labels(X, C, objective=True)[1])
        assert len(set(found)) == 1, found


@pytest.mark.parametrize("case", all_cases()[::5], ids=lambda c: c[0])
def test_nearest_labels_and_objective_on_the_case_table(case):
    """Labels of the chunked pass = the dense argmin; its objective = the direct distances to them."""
    from kmt_ref.trace import frame_objective

    _, X, C0 = case
    labels, J = nearest_labels(X, C0, objective=True)
    dense = nearest_center(X, C0)[0]
    np.testing.assert_array_equal(labels, dense)
    assert J == frame_objective(X, C0, dense)


def test_duplicate_groups_all_distinct_takes_the_short_cut():
    KZ = np.arange(12.0).reshape(2, 6)
    first, inverse = duplicate_groups(KZ)
    np.testing.assert_array_equal(first, np.arange(6))
    np.testing.assert_array_equal(inverse, np.arange(6))


@pytest.mark.parametrize("name,X,C0", CASES[::3], ids=[c[0] for c in CASES[::3]])
def test_exact_layer_with_zero_keys_equals_the_plain_path(name, X, C0):
    """Block 3 of the binary-code circuit (kmt_ref.algorithms.binary, the follow-up's weights): the code of
    cluster 0 is all zeros, so one_hot_columns labels its members -1 and the lookup must score the zero key."""
    from kmt_ref.algorithms.binary import binary_layer, binary_weights

    params, emb = binary_weights(X.shape[0], C0.shape[1], empty="nearest_code")
    layer = binary_layer(empty="nearest_code")
    Xa, Ca = emb.embed_points(X), emb.embed_centers(C0)
    Xb, Cb = Xa.copy(), Ca.copy()
    for t in range(3):
        fast = fast_layer_forward(params, Xa, Ca, layer)
        assert fast is not None
        plain = layer_forward(params, Xb, Cb, layer, exact=False)
        for a, b, what in zip(fast, plain, ("Xbar", "Cbar")):
            np.testing.assert_array_equal(a, b, err_msg=f"{what} differs at layer {t + 1}")
        Xa, Ca, Xb, Cb = fast[0], fast[1], plain[0], plain[1]


def test_one_hot_write_sets_exactly_its_matrix():
    """_OneHot.write on contiguous rows (one flat scatter), on a strided view, and with zero columns (label -1)."""
    from kmt_ref.core.exact.layer import _OneHot

    values = np.concatenate([np.eye(4), np.zeros((4, 1))], axis=1)  # e_0 .. e_3 and a zero column
    for idx in (np.array([2, 0, 3, 3, 1, 0]), np.array([2, 4, 0, 4, 1, 3])):
        want = values[:, idx]
        for Z in (np.full((7, 6), 9.0), np.full((6, 7), 9.0).T):  # C order (contiguous rows), F order (strided)
            out = _OneHot(values, idx, one_hot_columns(values))
            out.write(Z[1:5])
            assert Z[1:5].tobytes() == np.ascontiguousarray(want).tobytes() and (Z[[0, 5, 6]] == 9.0).all()
