"""The leaner transformer with binary codes (kmt_ref/algorithms/binary.py; the follow-up, Park et al., arXiv 2610.09760).

At gamma = inf, with kmt_ref's extension (``empty="keep"``, lowest-index ties), it equals Lloyd bit for
bit on the whole shared case table and its centers equal the one-hot construction's. The follow-up's
construction as stated (``empty="nearest_code"``) equals Lloyd wherever no cluster empties and
:func:`code_lloyd` layer by layer; its empty-cluster and tie behaviour are pinned on hand-computed toys.
"""
import numpy as np
import pytest
from cases import all_cases

from kmt_ref import kmeans_transformer, lloyd
from kmt_ref.algorithms.binary import (binary_codes, binary_layer, binary_transformer, binary_weights, code_length,
                                       code_lloyd, code_shift)
from kmt_ref.algorithms.lloyd import lloyd_layer, lloyd_weights
from kmt_ref.core.tokens import prepare, run_layers, with_block

CASES = all_cases()
N_LAYERS = 6


def atol_for(X):
    return 1e-12 * max(np.max(np.abs(X)), 1e-300)


# ---------------------------------------------------------------- the codes
def test_codes_are_the_follow_ups_example():
    B6 = binary_codes(6).astype(int)
    assert ["".join(map(str, row)) for row in B6] == ["010101", "001100", "000011"]


@pytest.mark.parametrize("k,m", [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (8, 3), (9, 4), (10, 4), (1000, 10),
                                 (1024, 10), (1025, 11)])
def test_code_length_is_ceil_log2_k(k, m):
    assert code_length(k) == m
    B = binary_codes(k)
    assert B.shape == (m, k) and set(np.unique(B)) <= {0.0, 1.0}
    assert np.unique(B, axis=1).shape[1] == k  # distinct codes: block 4 is identity attention
    np.testing.assert_array_equal((2 ** np.arange(m)) @ B, np.arange(k))  # column j is j in binary, LSB first


@pytest.mark.parametrize("m", range(1, 41))
def test_code_shift_separates_own_center_from_members_and_others(m):
    delta = code_shift(m)
    assert delta <= 0.25 and 0 < m * delta ** 2 <= 0.5
    assert np.log2(delta) == np.round(np.log2(delta))  # a power of two: exact scores


# ---------------------------------------------------------------- exactness
@pytest.mark.parametrize("name,X,C0", CASES, ids=[c[0] for c in CASES])
def test_binary_transformer_is_lloyd_bit_for_bit_and_equals_the_one_hot_centers(name, X, C0):
    ref = lloyd(X, C0, N_LAYERS)
    trf = binary_transformer(X, C0, N_LAYERS)
    np.testing.assert_array_equal(trf.labels, ref.labels)
    np.testing.assert_array_equal(trf.centers, ref.centers)
    np.testing.assert_array_equal(trf.objective, ref.objective)
    np.testing.assert_array_equal(trf.centers, kmeans_transformer(X, C0, N_LAYERS).centers)
    assert np.all(trf.one_hot == X.shape[1])  # every code slot holds exactly a code


@pytest.mark.parametrize("name,X,C0", CASES, ids=[c[0] for c in CASES])
def test_follow_up_construction_equals_its_reference_layer_by_layer(name, X, C0):
    """``nearest_code``: Lloyd bit for bit where no cluster empties; :func:`code_lloyd` (to rounding) where one does."""
    ref = code_lloyd(X, C0, N_LAYERS)
    if ref.info["n_empty"].sum() == 0:
        trf = binary_transformer(X, C0, N_LAYERS, empty="nearest_code")
        np.testing.assert_array_equal(trf.labels, lloyd(X, C0, N_LAYERS).labels)
        np.testing.assert_array_equal(trf.centers, lloyd(X, C0, N_LAYERS).centers)
        return
    # one layer at a time from the reference's state: a mean taken by a matrix product (the empty
    # cluster's points serve two queries) may differ from the reference's in the last bit, and two
    # centers that coincide in one and not the other would then split a later tie differently
    for t in range(N_LAYERS):
        one = code_lloyd(X, ref.centers[t], 1)
        trf = binary_transformer(X, ref.centers[t], 1, empty="nearest_code")
        np.testing.assert_array_equal(trf.labels[0], one.labels[0], err_msg=f"labels differ at layer {t + 1}")
        np.testing.assert_allclose(trf.centers[1], one.centers[1], rtol=0, atol=atol_for(X),
                                   err_msg=f"centers differ at layer {t + 1}")


def test_table_has_empty_clusters_for_the_follow_up_rule():
    n_empty = sum(code_lloyd(X, C0, N_LAYERS).info["n_empty"].sum() > 0 for _, X, C0 in CASES)
    assert n_empty >= 20


# ---------------------------------------------------------------- pinned policies
def test_empty_cluster_takes_the_points_with_the_nearest_code():
    """k = 4 (codes 00, 10, 01, 11): cluster 3 (11) empties; clusters 1 (10) and 2 (01) are 1 bit away, 0 is 2."""
    X = np.array([[0.0, 1.0, 10.0, 11.0, 20.0, 22.0]])
    C0 = np.array([[0.5, 10.5, 21.0, 500.0]])
    for tr in (code_lloyd(X, C0, 1), binary_transformer(X, C0, 1, empty="nearest_code")):
        np.testing.assert_array_equal(tr.labels[0], [0, 0, 1, 1, 2, 2])
        np.testing.assert_allclose(tr.centers[1], [[0.5, 10.5, 21.0, 63.0 / 4]], rtol=0, atol=1e-14)
    # the rule depends on the code order: swap centers 0 and 1, and the empty one takes clusters 0 and 2
    C1 = C0[:, [1, 0, 2, 3]]
    tr = binary_transformer(X, C1, 1, empty="nearest_code")
    np.testing.assert_allclose(tr.centers[1], [[10.5, 0.5, 21.0, 43.0 / 4]], rtol=0, atol=1e-14)
    # kmt_ref's extension keeps it, as Lloyd
    np.testing.assert_array_equal(binary_transformer(X, C0, 1).centers[1], [[0.5, 10.5, 21.0, 500.0]])


def test_keep_extension_orders_block_3_scores_members_own_center_others():
    """Against center j's query: members 0 > own token -m delta^2 > other centers > other points (<= -1)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2, 30))
    C0 = np.concatenate([X[:, :7], [[100.0], [100.0]]], axis=1)  # k = 8, m = 3; the last cluster empties
    tr = binary_transformer(X, C0, 1, record=True)
    S = tr.layers[0].scores["3"]  # (n + k, k): keys = updated points, then centers
    labels = tr.labels[0]
    m, delta = 3, code_shift(3)
    for j in range(8):
        members = labels == j
        np.testing.assert_array_equal(S[:30][members, j], 0.0)
        assert np.all(S[:30][~members, j] <= -1.0)
        assert S[30 + j, j] == -m * delta ** 2
        assert np.all(np.delete(S[30:, j], j) < -m * delta ** 2)
    np.testing.assert_array_equal(tr.centers[1][:, 7], [100.0, 100.0])


def test_tie_lowest_index_is_exact_and_average_gives_no_code():
    """x = 0 is equidistant from -1 and +1. Lowest index: Lloyd. Averaging (the softmax's limit): y = (b_0 + b_1)/2."""
    X = np.array([[0.0, -2.0, 2.0]])
    C0 = np.array([[-1.0, 1.0]])
    exact = binary_transformer(X, C0, 1)
    np.testing.assert_array_equal(exact.centers[1], lloyd(X, C0, 1).centers[1])  # [-1, 2]
    for empty in ("keep", "nearest_code"):
        avg = binary_transformer(X, C0, 1, tie="average", empty=empty)
        assert avg.one_hot[0] == 2  # the tied point holds no code
        np.testing.assert_array_equal(avg.assignments[:, 0], [0.5, 0.0])  # read as its nearest code, marked 1/2
        np.testing.assert_array_equal(avg.centers[1], [[-2.0, 2.0]])  # it drops out of both clusters
    # the one-hot construction under the same averaging limit loses the point the same way
    Xf, Cf, T, frame = prepare(X, C0, 1)
    params, emb = lloyd_weights(1, 2)
    layer = with_block(lloyd_layer(), "1", normalizer="hardmax_average")
    np.testing.assert_array_equal(run_layers(Xf, params, layer, emb, Cf, 1, frame=frame).centers[1], [[-2.0, 2.0]])


def test_weights_are_the_follow_ups_projectors():
    params, emb = binary_weights(3, 10, "nearest_code")
    assert emb.d_emb == 3 + 4 and set(params) == {m + b for m in "QKV" for b in "1234"}
    P_X = np.diag([1.0] * 3 + [0.0] * 4)
    P_B = np.diag([0.0] * 3 + [1.0] * 4)
    for name, W in [("Q1", P_X), ("K1", P_X), ("V1", P_B), ("V2", -P_B), ("Q3", P_B), ("K3", P_B), ("V3", P_X),
                    ("Q4", P_B), ("K4", P_B), ("V4", -P_X)]:
        np.testing.assert_array_equal(params[name], W, err_msg=name)
    keep, _ = binary_weights(3, 10)
    np.testing.assert_array_equal(keep["bV1"], [0, 0, 0] + [code_shift(4)] * 4)
    np.testing.assert_array_equal(keep["bQ3"], keep["bV1"])


def test_layer_description_names_its_changes():
    assert binary_layer()[1].blocks[1].keys == "X+C"
    assert binary_layer(empty="nearest_code")[1].blocks[1].keys == "X"
    assert binary_layer(tie="average")[0].blocks[1].normalizer == "hardmax_average"
    assert binary_layer(gamma=3.0, tie="average")[0].blocks[1].normalizer == "softmax"


# ---------------------------------------------------------------- finite gamma
def test_large_finite_gamma_matches_lloyd_on_separated_data():
    rng = np.random.default_rng(0)
    means = np.array([[0.0, 5.0, 10.0], [0.0, 5.0, 0.0]])
    X = means[:, rng.integers(0, 3, 90)] + 0.3 * rng.normal(size=(2, 90))
    C0 = X[:, :3]
    ref = lloyd(X, C0, 4)
    trf = binary_transformer(X, C0, 4, gamma=1e4, gamma_update=60.0, empty="nearest_code")
    np.testing.assert_array_equal(trf.labels, ref.labels)
    np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-9)
    # the "keep" extension's own-center token scores -m delta^2 (here -1/8), not <= -1: at finite gamma
    # it leaks c_j into the mean with weight about exp(-gamma m delta^2) per member, far more
    keep = binary_transformer(X, C0, 4, gamma=1e4, gamma_update=60.0)
    assert np.max(np.abs(keep.centers[1] - ref.centers[1])) > 1e3 * np.max(np.abs(trf.centers[1] - ref.centers[1]))


def test_binary_block_3_leaks_more_than_one_hot_at_the_same_gamma():
    """Non-members sit at code distance >= 1 (binary) against 2 (one-hot): at finite gamma the binary mean leaks more."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 60))
    C0 = X[:, :4]
    ref = lloyd(X, C0, 1).centers[1]
    gap = {}
    for name, run in (("binary", binary_transformer), ("onehot", kmeans_transformer)):
        gap[name] = np.max(np.abs(run(X, C0, 1, gamma=np.inf, gamma_update=4.0).centers[1] - ref))
    assert gap["binary"] > gap["onehot"] > 0


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw,exc,match", [
    (dict(empty="drop"), ValueError, r"empty='drop' should be one of"),
    (dict(tie="first"), ValueError, r"tie='first' should be one of"),
    (dict(gamma=-1.0), ValueError, "gamma"),
    (dict(gamma_update="x"), TypeError, "gamma_update"),
    (dict(chunk_size=0), ValueError, "chunk_size"),
])
def test_bad_parameters_get_a_clear_error(kw, exc, match):
    with pytest.raises(exc, match=match):
        binary_transformer(np.zeros((1, 3)), np.zeros((1, 2)), 1, **kw)


def test_bad_sizes_and_policies_name_the_argument():
    with pytest.raises(ValueError, match="k"):
        binary_codes(0)
    with pytest.raises(TypeError, match="k"):
        code_length(2.5)
    with pytest.raises(ValueError, match=r"empty='keep2' should be one of"):
        code_lloyd(np.zeros((1, 3)), np.zeros((1, 2)), 1, empty="keep2")
    with pytest.raises(ValueError, match="C0"):
        binary_transformer(np.zeros((1, 3)), np.zeros((2, 2)), 1)


def test_the_same_shift_keeps_empty_clusters_with_one_hot_codes_too():
    """The module's remark: no flag row is needed with one-hot codes either (shift by delta, keys X + C)."""
    from kmt_ref.core.tokens import projector
    for name, X, C0 in CASES[::5] + [c for c in CASES if c[0].startswith(("empty", "identical", "tie"))]:
        Xf, Cf, _, frame = prepare(X, C0, N_LAYERS)
        params, emb = lloyd_weights(Xf.shape[0], Cf.shape[1], "linear")  # layout (x, y): no flag row
        shift = code_shift(Cf.shape[1]) * np.diag(projector(emb, "y"))
        params = dict(params, bV1=shift, bQ3=shift.copy())
        tr = run_layers(Xf, params, lloyd_layer(frame.gamma(np.inf)), emb, Cf, N_LAYERS, frame=frame)
        ref = lloyd(X, C0, N_LAYERS)
        np.testing.assert_array_equal(tr.labels, ref.labels, err_msg=name)
        np.testing.assert_array_equal(tr.centers, ref.centers, err_msg=name)


def test_an_averaged_code_is_at_least_a_quarter_per_differing_bit_from_every_code():
    """(b_j + b_l)/2 is h/4 from b_j and b_l (h = Hamming(j, l)) and at least h/4 from every code, often more."""
    for k in range(2, 17):
        B = binary_codes(k)  # (m, k)
        for j in range(k):
            for l in range(j + 1, k):
                h = np.sum(B[:, j] != B[:, l])
                D = np.sum((0.5 * (B[:, [j]] + B[:, [l]]) - B) ** 2, axis=0)  # (k,) squared distances
                agree = B[:, j] == B[:, l]  # (m,) bits the two codes share
                np.testing.assert_array_equal(D, h / 4 + np.sum(agree[:, None] & (B != B[:, [j]]), axis=0))
                assert D[j] == D[l] == h / 4 and np.all(D >= h / 4)
    B8 = binary_codes(8)
    assert np.sum((0.5 * (B8[:, 0] + B8[:, 1]) - B8[:, 7]) ** 2) == 2.25  # 000 and 100 (LSB first) against 111


def test_a_tied_point_scores_its_distance_to_each_code_in_block_3():
    """k = 8, tie="average": the point x = 0 ties between centers 0 (code 000) and 1 (100); block 3 scores it
    -1/4 against both, -2.25 against center 7 (111), and never 0, so it joins no cluster."""
    C0 = np.array([[-1.0, 1.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]])
    X = np.concatenate([[0.0], C0[0] - 0.25, C0[0] + 0.25])[None, :]  # (1, 17): the tie, then two members each
    B = binary_codes(8)
    for empty in ("keep", "nearest_code"):
        tr = binary_transformer(X, C0, 1, tie="average", empty=empty, record=True)
        S = tr.layers[0].scores["3"][0]  # (8,): the tied point (key 0) against each center's query
        np.testing.assert_array_equal(S, -np.sum((0.5 * (B[:, [0]] + B[:, [1]]) - B) ** 2, axis=0))
        assert S[0] == S[1] == -0.25 and S[7] == -2.25
        np.testing.assert_array_equal(tr.centers[1], C0)  # each center keeps its two symmetric members only


def test_the_leak_is_exp_minus_gamma_per_bit_in_unscaled_scores():
    """Block 3 at finite gamma weighs a key at code distance h by exp(-gamma h) against a member (no 1/sqrt(d_emb)):
    1 bit for the nearest binary non-member, 2 for every one-hot one, hence about exp(gamma) more leak."""
    X = np.array([[0.0, 0.1, 5.0, 5.1, 10.0, 10.1, 15.0, 15.1]])
    C0 = np.array([[0.0, 5.0, 10.0, 15.0]])  # k = 4, codes 00, 10, 01, 11
    g = 3.0
    wb = binary_transformer(X, C0, 1, gamma_update=g, empty="nearest_code", record=True).layers[0].weights["3"]
    Xf, Cf, _, frame = prepare(X, C0, 1)
    params, emb = lloyd_weights(1, 4, "linear")  # one-hot codes, layout (x, y), K3 = P_Y: no flag
    layer = with_block(lloyd_layer(frame.gamma(np.inf), np.inf, "euclidean", g), "3", keys="X")
    wo = run_layers(Xf, params, layer, emb, Cf, 1, frame=frame, record=True).layers[0].weights["3"]
    # center 0's query: members are points 0, 1; points 2, 3 (code 10) and 4, 5 (01) are 1 bit away, 6, 7 two
    np.testing.assert_allclose(wb[2:, 0] / wb[0, 0], np.exp(-g * np.array([1, 1, 1, 1, 2, 2])), rtol=1e-12)
    np.testing.assert_allclose(wo[2:, 0] / wo[0, 0], np.exp(-2 * g), rtol=1e-12)


def test_binary_kept_center_keeps_its_sign():
    tr = binary_transformer([[1.0, 2.0]], [[1.5, -0.0]], 2)
    ref = lloyd([[1.0, 2.0]], [[1.5, -0.0]], 2)
    np.testing.assert_array_equal(np.signbit(tr.centers), np.signbit(ref.centers))
    np.testing.assert_array_equal(tr.centers, ref.centers)
