"""Lloyd's algorithm and Theorem 2.1 (kmt_ref/algorithms/lloyd.py): the transformer equals Lloyd, layer by layer, bit for bit.

Every instance of the shared case table (tests/cases.py), hand-computed toys, the
degenerate policies (ties, empty clusters, duplicates, k = 1, k = n), finite gamma,
the record and bad input.
"""
import numpy as np
import pytest
from cases import all_cases, degenerate_cases

import kmt_ref
from kmt_ref import kmeans_transformer, lloyd
from kmt_ref.algorithms.lloyd import lloyd_weights
from kmt_ref.core.tokens import EmptyClusterError

CASES = all_cases()



N_LAYERS = 6



def atol_for(X):
    return 1e-12 * max(np.max(np.abs(X)), 1e-300)



def assert_same_trace(ref, trf, X):
    assert trf.labels.shape == ref.labels.shape
    for t in range(ref.labels.shape[0]):  # layer by layer, so a failure names the layer
        np.testing.assert_array_equal(trf.labels[t], ref.labels[t], err_msg=f"labels differ at layer {t + 1}")
        np.testing.assert_allclose(trf.centers[t + 1], ref.centers[t + 1], rtol=0, atol=atol_for(X),
                                   err_msg=f"centers differ at layer {t + 1}")
    np.testing.assert_allclose(trf.objective, ref.objective, rtol=1e-12, atol=atol_for(X) ** 2)



def test_case_table_is_large_and_varied():
    assert len(CASES) >= 200
    ks = {C0.shape[1] for _, _, C0 in CASES}
    assert 1 in ks
    assert any(C0.shape[1] == X.shape[1] for _, X, C0 in CASES)  # k = n



@pytest.mark.parametrize("name,X,C0", CASES, ids=[c[0] for c in CASES])
def test_transformer_equals_lloyd_at_every_layer(name, X, C0):
    ref = lloyd(X, C0, N_LAYERS)
    trf = kmeans_transformer(X, C0, N_LAYERS)
    assert_same_trace(ref, trf, X)
    # at gamma = inf every assignment is exactly one-hot
    assert np.all(trf.one_hot == X.shape[1])



def test_table_exercises_empty_clusters_ties_and_duplicates():
    """The table must actually contain the degenerate situations it claims."""
    n_empty = n_dups = n_ties = 0
    for _, X, C0 in CASES:
        ref = lloyd(X, C0, N_LAYERS)
        k = C0.shape[1]
        n_empty += any(np.bincount(l, minlength=k).min() == 0 for l in ref.labels)
        n_dups += np.unique(X, axis=1).shape[1] < X.shape[1]
        D = ((X[:, None, :] - ref.centers[0][:, :, None]) ** 2).sum(0)  # (k, n), direct formula
        n_ties += np.any(np.sum(D == D.min(0), axis=0) > 1)
    assert n_empty >= 20 and n_dups >= 20 and n_ties >= 20, (n_empty, n_dups, n_ties)



@pytest.mark.parametrize("name,X,C0", degenerate_cases(), ids=[c[0] for c in degenerate_cases()])
def test_degenerate_cases_with_linear_center_update(name, X, C0):
    """The authors' linear block 3 equals Lloyd whenever no cluster empties, and says so when one does."""
    ref = lloyd(X, C0, N_LAYERS)
    k = C0.shape[1]
    if any(np.bincount(l, minlength=k).min() == 0 for l in ref.labels):
        with pytest.raises(EmptyClusterError, match="empty"):
            kmeans_transformer(X, C0, N_LAYERS, center_update="linear")
    else:
        assert_same_trace(ref, kmeans_transformer(X, C0, N_LAYERS, center_update="linear"), X)



# ---------------------------------------------------------------- hand-computed
def test_lloyd_hand_computed_toy():
    X = np.array([[1.0, 1.0, 1.0, 10.0, 10.0, 10.0], [2.0, 4.0, 0.0, 2.0, 4.0, 0.0]])
    tr = lloyd(X, X[:, [0, 3]], 2)
    np.testing.assert_array_equal(tr.labels[0], [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(tr.centers[1], [[1.0, 10.0], [2.0, 2.0]])
    # objective at C0: points (1,4),(1,0) are 2 away from (1,2); likewise for the other group
    assert tr.objective[0] == 16.0 and tr.objective[1] == 16.0



def test_ties_go_to_the_lowest_index():
    X = np.array([[0.0, 3.0]])  # x = 0 is equidistant from -1 and +1
    for trf in (lloyd(X, [[-1.0, 1.0]], 1), kmeans_transformer(X, [[-1.0, 1.0]], 1)):
        np.testing.assert_array_equal(trf.labels[0], [0, 1])
        np.testing.assert_array_equal(trf.centers[1], [[0.0, 3.0]])



def test_empty_cluster_keeps_its_center():
    X = np.array([[0.0, 1.0, 2.0]])
    C0 = np.array([[1.0, 50.0]])
    for tr in (lloyd(X, C0, 3), kmeans_transformer(X, C0, 3)):
        np.testing.assert_array_equal(tr.centers[-1], [[1.0, 50.0]])
        assert not np.any(np.isnan(tr.centers))



def test_k_equals_n_is_a_fixed_point():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3, 7))
    tr = kmeans_transformer(X, X, 4)
    np.testing.assert_array_equal(tr.labels, np.tile(np.arange(7), (4, 1)))
    np.testing.assert_allclose(tr.centers[-1], X, atol=1e-15)
    assert np.all(tr.objective == 0)



@pytest.mark.parametrize("seed", range(5))
def test_lloyd_objective_never_increases(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2, 200))
    tr = lloyd(X, X[:, :6], 15)
    assert np.all(np.diff(tr.objective) <= 1e-12 * tr.objective[0])



def test_zero_layers_returns_the_initial_state():
    X = np.arange(6.0).reshape(2, 3)
    tr = kmeans_transformer(X, X[:, :2], 0)
    assert tr.labels.shape == (0, 3) and tr.centers.shape == (1, 2, 2)
    np.testing.assert_array_equal(tr.centers[0], X[:, :2])



# ---------------------------------------------------------------- finite gamma
@pytest.mark.parametrize("seed", range(4))
def test_large_finite_gamma_matches_lloyd_on_separated_data(seed):
    rng = np.random.default_rng(seed)
    means = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    z = np.r_[0, 1, 2, rng.integers(0, 3, 87)]  # component of each point
    X = means[:, z] + 0.03 * rng.normal(size=(2, 90))
    C0 = X[:, :3]  # one initial center per component: every point far from a tie
    ref = lloyd(X, C0, 5)
    trf = kmeans_transformer(X, C0, 5, gamma=1e4)
    np.testing.assert_array_equal(trf.labels, ref.labels)
    np.testing.assert_allclose(trf.centers, ref.centers, atol=1e-9)



def test_soft_assignment_approaches_hard_as_gamma_grows():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (2, 60))
    C0 = X[:, :4]
    ref = lloyd(X, C0, 3)
    errs = [np.abs(kmeans_transformer(X, C0, 3, gamma=g).centers - ref.centers).max() for g in (1e1, 1e2, 1e3, 1e5)]
    assert errs[-1] < 1e-6 and all(a >= b for a, b in zip(errs, errs[1:]))



def test_finite_gamma_reset_is_chunked_and_chunking_does_not_change_results():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, (2, 70))
    a = kmeans_transformer(X, X[:, :3], 2, gamma=50.0, gamma_reset=1e3, chunk_size=16)
    b = kmeans_transformer(X, X[:, :3], 2, gamma=50.0, gamma_reset=1e3, chunk_size=10_000)
    np.testing.assert_allclose(a.centers, b.centers, rtol=0, atol=1e-13)
    # finite reset gamma mixes the y of nearby points: assignments are no longer exactly one-hot
    assert a.one_hot[-1] < 70



# ---------------------------------------------------------------- inspection
def test_record_exposes_tokens_and_attention():
    X = np.array([[0.0, 0.2, 3.0, 3.2, 9.0]])
    C0 = np.array([[0.0, 3.0, 100.0]])  # third cluster stays empty
    tr = kmeans_transformer(X, C0, 2, record=True)
    rec = tr.layers[0]
    params, emb = lloyd_weights(1, 3)
    assert rec.Xbar_in.shape == (emb.d_emb, 5) and rec.Cbar_in.shape == (emb.d_emb, 3)
    assert rec.weights["1"].shape == (3, 5)  # keys = centers, queries = points
    assert rec.weights["2"].shape == (5, 5)
    assert rec.weights["3"].shape == (5 + 3, 3)  # keys = [points, centers], queries = centers
    for W in rec.weights.values():
        np.testing.assert_allclose(W.sum(axis=0), 1.0)
    np.testing.assert_array_equal(rec.weights["1"].argmax(0), [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(rec.weights["2"], np.eye(5))
    # block 3: cluster 0 averages points 0,1; the empty cluster 2 attends to its own token
    np.testing.assert_array_equal(rec.weights["3"][:, 0], [0.5, 0.5, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(rec.weights["3"][:, 2], [0, 0, 0, 0, 0, 0, 0, 1])
    # the residual stream carries exactly Lloyd's state
    np.testing.assert_array_equal(emb.assignments(rec.Xbar_out), np.eye(3)[:, [0, 0, 1, 1, 1]])
    np.testing.assert_allclose(emb.centers(rec.Cbar_out), lloyd(X, C0, 1).centers[1], atol=1e-15)



def test_weights_are_the_papers_projectors():
    params, emb = lloyd_weights(2, 3, "linear")
    assert emb.d_emb == 5
    P_X = np.diag([1, 1, 0, 0, 0.0])
    P_Y = np.diag([0, 0, 1, 1, 1.0])
    expect = {"Q1": P_X, "K1": P_X, "V1": P_Y, "Q2": P_X, "K2": P_X, "V2": -P_Y,
              "Q3": P_Y, "K3": P_Y, "V3": P_X, "Q4": P_Y, "K4": P_Y, "V4": -P_X}
    assert set(params) == set(expect)
    for key, M in expect.items():
        np.testing.assert_array_equal(params[key], M, err_msg=key)



# ---------------------------------------------------------------- input handling
def test_integer_and_float32_input():
    Xi = np.array([[0, 1, 5, 6]])
    ref = lloyd(Xi.astype(float), [[0.0, 5.0]], 2)
    for X in (Xi, Xi.astype(np.float32)):
        tr = kmeans_transformer(X, np.array([[0, 5]], dtype=X.dtype), 2)
        assert tr.centers.dtype == np.float64
        np.testing.assert_array_equal(tr.centers, ref.centers)



@pytest.mark.parametrize("func", [lloyd, kmeans_transformer])
@pytest.mark.parametrize(
    "X,C0,T,kw,exc,match",
    [
        (np.zeros((2, 5)), np.zeros((3, 2)), 1, {}, ValueError, r"C0 has 3 rows but X has d=2"),
        (np.zeros((2, 3)), np.zeros((2, 4)), 1, {}, ValueError, r"n=3 points should be >= k=4"),
        (np.zeros((2, 3)), np.zeros((2, 0)), 1, {}, ValueError, r"C0 must not be empty"),
        (np.zeros((2, 3)), np.zeros((2, 1)), -1, {}, ValueError, r"n_\w+=-1 should be >= 0"),
        (np.zeros((2, 3)), np.zeros((2, 1)), 1.5, {}, TypeError, r"must be an integer, got 1.5"),
        (np.array([[0.0, np.nan, 1.0]]), np.zeros((1, 1)), 1, {}, ValueError, r"X contains NaN or infinite values, e.g. X\[0, 1\]=nan"),
        (np.array([[0.0, np.inf]]), np.zeros((1, 1)), 1, {}, ValueError, r"X contains NaN or infinite"),
        (np.zeros((1, 2)), np.array([[np.inf]]), 1, {}, ValueError, r"C0 contains NaN or infinite"),
        (np.array([["a", "b"]]), np.zeros((1, 1)), 1, {}, TypeError, r"X must be a real numeric array"),
        ("abc", np.zeros((1, 1)), 1, {}, TypeError, r"X must be a numeric array"),
        (np.zeros(5), np.zeros((1, 1)), 1, {}, ValueError, r"X must be 2-D .* got ndim=1"),
        (np.zeros((2, 5)), np.zeros(2), 1, {}, ValueError, r"C0 must be 2-D"),
        (np.zeros((2, 5), dtype=complex), np.zeros((2, 1)), 1, {}, TypeError, r"dtype=complex128"),
    ],
)
def test_bad_input_gets_a_clear_error(func, X, C0, T, kw, exc, match):
    with pytest.raises(exc, match=match):
        func(X, C0, T, **kw)



@pytest.mark.parametrize(
    "kw,exc,match",
    [
        ({"gamma": -1.0}, ValueError, r"gamma=-1.0 should be >= 0"),
        ({"gamma": float("nan")}, ValueError, r"gamma=nan must not be NaN"),
        ({"gamma": "big"}, TypeError, r"gamma must be a real number, got 'big'"),
        ({"gamma_reset": -2}, ValueError, r"gamma_reset=-2.0 should be >= 0"),
        ({"center_update": "mean"}, ValueError, r"center_update='mean' should be one of"),
        ({"chunk_size": 0}, ValueError, r"chunk_size=0 should be >= 1"),
    ],
)
def test_bad_parameters_get_a_clear_error(kw, exc, match):
    with pytest.raises(exc, match=match):
        kmeans_transformer(np.zeros((1, 3)), np.zeros((1, 1)), 1, **kw)



def test_lloyd_rejects_unknown_empty_policy():
    with pytest.raises(ValueError, match=r"empty='drop' should be one of"):
        lloyd(np.zeros((1, 3)), np.zeros((1, 1)), 1, empty="drop")



def test_rows_to_columns_is_the_one_transpose():
    rows = np.arange(6.0).reshape(3, 2)  # 3 points in 2-D
    np.testing.assert_array_equal(kmt_ref.rows_to_columns(rows), rows.T)
    with pytest.raises(ValueError, match="one row per point"):
        kmt_ref.rows_to_columns(np.zeros(3))



@pytest.mark.parametrize("name,X,C0", degenerate_cases()[:6], ids=[c[0] for c in degenerate_cases()[:6]])
def test_attention_switch_runs_theorem_2_2(name, X, C0):
    """``attention="dot"`` is Theorem 2.2; it must give the same trace (tested fully in tests/algorithms/test_dot_product.py)."""
    assert_same_trace(lloyd(X, C0, 3), kmeans_transformer(X, C0, 3, attention="dot"), X)



def test_attention_switch_rejects_unknown_values():
    with pytest.raises(ValueError, match=r"attention='cosine' should be one of"):
        kmeans_transformer(np.zeros((1, 3)), np.zeros((1, 1)), 1, attention="cosine")
    with pytest.raises(ValueError, match=r"center_update='linear' applies to attention='euclidean' only"):
        kmeans_transformer(np.zeros((1, 3)), np.zeros((1, 1)), 1, attention="dot", center_update="linear")



def test_centers_are_bit_identical_to_lloyds_on_the_whole_table():
    """Stronger than the 1e-12 the spec asks for, and what the README claims: at gamma = inf the
    reset-first residual order and the key-ordered member sums reproduce Lloyd's arithmetic."""
    for name, X, C0 in CASES:
        ref, trf = lloyd(X, C0, N_LAYERS), kmeans_transformer(X, C0, N_LAYERS)
        assert np.array_equal(trf.centers, ref.centers), name



# --------------------------------------------------------------------------
# empty="reseed": the authors' Lloyd baseline (utils.lloyds_iters_batched)
# --------------------------------------------------------------------------
def test_reseed_moves_an_empty_center_onto_the_drawn_point():
    X = np.array([[0.0, 1.0, 2.0, 10.0]])
    C0 = np.array([[1.0, 50.0]])  # center 1 is empty at the first step
    tr = lloyd(X, C0, 1, empty="reseed", rng=np.random.default_rng(7))
    pick = np.random.default_rng(7).choice(4, size=1, replace=False)  # the same draw, made independently
    np.testing.assert_array_equal(tr.centers[1], [[13.0 / 4.0, X[0, pick[0]]]])
    np.testing.assert_array_equal(tr.info["n_empty"], [1])
    keep = lloyd(X, C0, 1)
    np.testing.assert_array_equal(keep.centers[1], [[13.0 / 4.0, 50.0]])
    np.testing.assert_array_equal(keep.info["n_empty"], [1])


def test_reseed_gives_distinct_data_points_to_several_empty_clusters():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 9))
    C0 = np.column_stack([X[:, 0], [1e3, 1e3], [-1e3, 1e3], [1e3, -1e3]])  # 3 far centers, all empty
    tr = lloyd(X, C0, 1, empty="reseed", rng=np.random.default_rng(0))
    new = tr.centers[1][:, 1:]  # (2, 3)
    hits = [np.flatnonzero(np.all(X == new[:, [j]], axis=0)) for j in range(3)]
    assert all(h.size == 1 for h in hits) and len({int(h[0]) for h in hits}) == 3


@pytest.mark.parametrize("name,X,C0", CASES[::10], ids=[c[0] for c in CASES[::10]])
def test_reseed_equals_keep_until_a_cluster_empties(name, X, C0):
    keep = lloyd(X, C0, N_LAYERS)
    rng = np.random.default_rng(0)
    re = lloyd(X, C0, N_LAYERS, empty="reseed", rng=rng)
    first = np.flatnonzero(keep.info["n_empty"] > 0)
    t_stop = first[0] if first.size else N_LAYERS  # step t_stop is the first to meet an empty cluster
    np.testing.assert_array_equal(re.centers[:t_stop + 1], keep.centers[:t_stop + 1])
    np.testing.assert_array_equal(re.labels[:t_stop + 1], keep.labels[:t_stop + 1])
    if not first.size:  # no draw was made
        assert rng.bit_generator.state == np.random.default_rng(0).bit_generator.state


def test_reseed_is_reproducible_and_lowers_the_objective_here():
    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(size=(2, 30)), rng.normal(size=(2, 30)) + 8.0], axis=1)
    C0 = np.array([[0.0, 0.1, 100.0], [0.0, 0.0, 100.0]])  # the third center never gets a point
    a = lloyd(X, C0, 4, empty="reseed", rng=np.random.default_rng(3))
    b = lloyd(X, C0, 4, empty="reseed", rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a.centers, b.centers)
    assert a.objective[-1] < lloyd(X, C0, 4).objective[-1]


def test_reseed_needs_a_generator_and_keep_refuses_one():
    X, C0 = np.zeros((1, 3)), np.zeros((1, 1))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        lloyd(X, C0, 1, empty="reseed")
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        lloyd(X, C0, 1, empty="reseed", rng=0)
    with pytest.raises(ValueError, match="rng is used by empty='reseed' only"):
        lloyd(X, C0, 1, rng=np.random.default_rng(0))


def test_only_lloyd_reseeds():
    from kmt_ref.algorithms.trimmed import trimmed_kmeans
    with pytest.raises(ValueError, match=r"empty='reseed' should be one of \['keep'\]"):
        trimmed_kmeans(np.zeros((1, 3)), np.zeros((1, 1)), 1, 0.1, empty="reseed")


@pytest.mark.parametrize("case", CASES[::3], ids=lambda c: c[0])
@pytest.mark.parametrize("record", [False, True])
def test_objective_from_the_read_out_labels_is_the_searched_one(case, record):
    """At gamma = inf the objective of centers[t] is computed from the labels read out after layer t+1
    (run_layers(nearest_readout=True)); bit for bit the objective with its own nearest-center search."""
    from kmt_ref.algorithms.lloyd import lloyd_layer
    from kmt_ref.core.tokens import prepare, run_layers

    _, X, C0 = case
    Xf, Cf, n_layers, frame = prepare(X, C0, 4)
    params, emb = lloyd_weights(*Cf.shape)
    runs = [run_layers(Xf, params, lloyd_layer(), emb, Cf, n_layers, frame=frame, record=record, nearest_readout=flag)
            for flag in (False, True)]
    np.testing.assert_array_equal(runs[1].objective, runs[0].objective)
    np.testing.assert_array_equal(runs[1].objective, kmeans_transformer(X, C0, 4, record=record).objective)


def test_averaging_block1_moves_a_center_with_no_full_member_onto_the_tied_point():
    """Why block 1 uses the lowest-index hardmax (lloyd_weights' Notes): with the averaging hardmax a point
    equidistant from two centers gets y = (e_0 + e_1)/2 and scores -1/2 in block 3; cluster 0 has a full
    member and leaves it out, cluster 1 has none and moves onto it (1.5 -> 1.0); Lloyd keeps 1.5."""
    import dataclasses

    from kmt_ref.algorithms.lloyd import lloyd_layer, lloyd_weights
    from kmt_ref.core.attention import layer_forward

    X, C0 = np.array([[0.0, 1.0]]), np.array([[0.5, 1.5]])

    def averaging(layer):
        return tuple(dataclasses.replace(sub, blocks=tuple(
            dataclasses.replace(b, normalizer="hardmax_average") if b.name == "1" else b for b in sub.blocks))
            for sub in layer)

    params, emb = lloyd_weights(1, 2, "euclidean")
    Xbar, Cbar = layer_forward(params, emb.embed_points(X), emb.embed_centers(C0), averaging(lloyd_layer()))
    np.testing.assert_array_equal(Xbar[emb.rows("y")], [[1.0, 0.5], [0.0, 0.5]])  # the tied point's y
    np.testing.assert_array_equal(emb.centers(Cbar), [[0.0, 1.0]])
    np.testing.assert_array_equal(lloyd(X, C0, 1).centers[-1], [[0.5, 1.5]])
    np.testing.assert_array_equal(kmeans_transformer(X, C0, 1).centers[-1], [[0.5, 1.5]])  # lowest index: Lloyd
    params, emb = lloyd_weights(1, 2, "linear")  # the linear update: weight 1/2 in each cluster
    _, Cbar = layer_forward(params, emb.embed_points(X), emb.embed_centers(C0),
                            averaging(lloyd_layer(center_update="linear")))
    np.testing.assert_allclose(emb.centers(Cbar), [[1.0 / 3.0, 1.0]], rtol=1e-15)


@pytest.mark.parametrize("fn", [lloyd, kmeans_transformer])
def test_zero_extent_data_take_their_scale_from_the_centers(fn):
    """All points the same: the frame scales by the centers' distance, so nothing underflows or is refused."""
    np.testing.assert_array_equal(fn([[0.0, 0.0]], [[1e-162, 0.0]], 1).labels, [[1, 1]])
    np.testing.assert_array_equal(fn([[0.0, 0.0]], [[1e162, 0.0]], 1).labels, [[1, 1]])
    big = np.ldexp(1.0, 401)
    tr = fn([[big]], [[0.0]], 1)
    np.testing.assert_array_equal(tr.centers[-1], [[big]])


@pytest.mark.parametrize("fn", [lloyd, kmeans_transformer])
def test_kept_centers_keep_their_value_and_sign(fn):
    """A kept (empty) center and centers[0] are C0 as given: the frame's round trip never touches them."""
    tr = fn([[1e8, 1e8 + 1]], [[0.1, 1e8]], 2)  # a frame shifted by 1e8
    np.testing.assert_array_equal(tr.centers[:, 0, 0], 0.1)
    tr = fn([[1.0, 2.0]], [[1.5, -0.0]], 2)  # the second cluster stays empty
    assert all(np.signbit(tr.centers[:, 0, 1]))


@pytest.mark.parametrize("run", ["lloyd", "transformer", "transformer, record"])
@pytest.mark.parametrize("scale", [1.0, 2.0**-1060, 1e300])
def test_the_deferred_objective_is_the_objective_whatever_is_written_into_the_trace(run, scale):
    """lloyd and the transformers compute the objective when it is first read (trace.DeferredObjective):
    the numbers of frame_objective, log_objective too (finite where the objective itself under- or
    overflows), whichever is read first, after the trace's arrays were overwritten, and after pickling."""
    import pickle

    from kmt_ref import kmeans_transformer, kmeans_objective
    from kmt_ref.frame import data_frame
    from kmt_ref.algorithms.lloyd import cluster_means
    from kmt_ref.trace import DeferredObjective, frame_objective, nearest_labels

    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, (2, 300)).astype(float) * scale  # ties
    C0 = X[:, :4].copy()
    make = {"lloyd": lambda: lloyd(X, C0, 3), "transformer": lambda: kmeans_transformer(X, C0, 3),
            "transformer, record": lambda: kmeans_transformer(X[:, :40], C0, 3, record=True)}[run]
    Xr = X if run != "transformer, record" else X[:, :40]
    frame = data_frame(Xr, C0)
    Xf, C = frame.to_frame(Xr), frame.to_frame(C0)
    J = [frame_objective(Xf, C)]
    for _ in range(3):  # the objective computed at once, step by step in the frame (the transformer: Lloyd's centers)
        C = cluster_means(Xf, nearest_labels(Xf, C), C)[0]
        J.append(frame_objective(Xf, C))
    J = np.array(J)
    first = make()
    assert isinstance(first.__dict__["_deferred"], DeferredObjective)  # nothing computed yet
    for read_log_first in (False, True):
        trace = make()
        centers = trace.centers.copy()
        trace.labels[...] = 0
        trace.centers[...] = 7.0
        if trace.assignments is not None:
            trace.assignments[...] = 0.0
        if trace.layers:
            for record in trace.layers:
                for value in vars(record).values():
                    if isinstance(value, np.ndarray) and value.dtype == float:
                        value[...] = 5.0
        trace = pickle.loads(pickle.dumps(trace)) if read_log_first else trace
        log = trace.log_objective if read_log_first else None
        assert trace.objective.tobytes() == frame.objective(J).tobytes()
        assert trace.log_objective.tobytes() == frame.log_objective(J).tobytes()
        assert log is None or log.tobytes() == trace.log_objective.tobytes()
        assert np.isfinite(trace.log_objective[J > 0]).all()
        if scale == 1.0:
            assert trace.objective[0] == kmeans_objective(Xr, centers[0])


def test_a_deferred_objective_survives_an_interrupted_first_read_and_old_pickles(monkeypatch):
    """The deferral is dropped only once the objective is stored: a read that fails leaves it for the next
    read; a trace pickled with its objective as a plain attribute (the dataclass field) loads with it."""
    import pickle
    from kmt_ref import trace as trace_module

    X = np.random.default_rng(3).random((2, 40))
    fresh = kmt_ref.lloyd(X, X[:, :3].copy(), 3)
    want, want_log = fresh.objective, fresh.log_objective
    tr = kmt_ref.lloyd(X, X[:, :3].copy(), 3)
    real = trace_module.frame_objective

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(trace_module, "frame_objective", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tr.objective
    monkeypatch.setattr(trace_module, "frame_objective", real)
    assert np.array_equal(tr.objective, want) and np.array_equal(tr.log_objective, want_log)
    old = tr.__dict__.copy()          # the state a pickle of the plain dataclass held
    old["objective"], old["log_objective"] = old.pop("_objective"), old.pop("_log_objective")
    del old["_deferred"]
    loaded = trace_module.ClusteringTrace.__new__(trace_module.ClusteringTrace)
    loaded.__setstate__(old)
    assert np.array_equal(loaded.objective, want) and np.array_equal(loaded.log_objective, tr.log_objective)
    assert np.array_equal(pickle.loads(pickle.dumps(loaded)).objective, want)


def test_the_transformer_objective_ignores_writes_into_its_assignments():
    X = np.random.default_rng(4).random((2, 30))
    want = kmt_ref.kmeans_transformer(X, X[:, :3].copy(), 2).objective
    tr = kmt_ref.kmeans_transformer(X, X[:, :3].copy(), 2)
    if tr.assignments.base is not None:
        tr.assignments.base[...] = 0.0   # the token matrix the assignments are a view of
    assert np.array_equal(tr.objective, want)
