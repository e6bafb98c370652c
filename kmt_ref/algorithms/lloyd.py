r"""Lloyd's algorithm and Theorem 2.1: the k-means transformer, one layer = one iteration.

Lloyd's algorithm, iteration t::

    l_i^{(t)}   = argmin_j ||x_i - c_j^{(t)}||^2          (ties: lowest j)
    c_j^{(t+1)} = mean{x_i : l_i^{(t)} = j}               (empty: c_j^{(t)}, SPEC §3 "(open)")

Theorem 2.1 of the paper (kmt_ref's numbering; the follow-up, "Leaner
Transformers Can Easily Learn to Cluster", arXiv 2610.09760, cites the ICML
version's Theorem 2 for it in its Appendix B; the layer as the authors'
``cnst_model.py`` computes it): with the hand-set weights of
:func:`lloyd_weights`, the encoder-decoder layer::

    Xbar' = Xbar + A(Xbar, Cbar; Q1,K1,V1) + A(Xbar, Xbar; Q2,K2,V2)     assign, reset Y
    Cbar' = Cbar + A(Cbar, Xbar'; Q3,K3,V3) + A(Cbar, Cbar; Q4,K4,V4)    update, reset C

carries exactly Lloyd's state, ``[X; Y^{(t+1)}]`` and ``[C^{(t+1)}; I_k]``.

**Equality** (float64, ``gamma = inf``): :func:`kmeans_transformer`'s trace
equals :func:`lloyd`'s bit for bit -- labels, centers and objective, the sign
of zero included, at every step. Tested over hard inputs (integer grids with
ties, duplicates, empty clusters, data scaled from 1e-300 to 1e300 and
shifted by up to 1e12) by
``tests/properties/test_lloyd_properties.py::test_theorem_2_1_is_lloyd_bit_for_bit``,
and at the chunk boundaries (n around 1024, 2048 and 4096, k up to 1025) by
``tests/properties/test_chunk_properties.py::test_theorem_2_1_at_chunk_boundaries``.

This file holds both sides of that equality: first the classical loop
(:func:`lloyd`, plain NumPy: nothing from :mod:`kmt_ref.core`, so that the
check stays independent), then the circuit (:func:`lloyd_weights`,
:func:`lloyd_layer`, :func:`kmeans_transformer`). The helpers the other
classical references share (:func:`cluster_means`, :func:`start_trace`,
:func:`finish_trace`) live here, with the algorithm they generalise.
"""
from __future__ import annotations

import numpy as np

from ..core.attention import Block, Sublayer
from ..core.tokens import Embedding, prepare, projector, run_layers
from ..frame import Frame, data_frame
from ..columns import segment_sums
from ..trace import ClusteringTrace, DeferredObjective, frame_objective, nearest_labels, squared_norms
from ..validation import as_centers, as_points, check_choice, check_count, check_gamma, check_rng

__all__ = [
    "lloyd",
    "lloyd_step",
    "reseed_empty",
    "cluster_means",
    "start_trace",
    "finish_trace",
    "EMPTY_POLICIES",
    "lloyd_weights",
    "lloyd_layer",
    "kmeans_transformer",
    "OTHER_ATTENTIONS",
]


# ==========================================================================
# The classical algorithm (plain NumPy)
# ==========================================================================
#: what Lloyd's algorithm does with a cluster that lost all its points: ``"keep"`` its center
#: (kmt_ref's policy, the one the transformer realises), or ``"reseed"`` it with a random data
#: point (the authors' Lloyd baseline, ``utils.lloyds_iters_batched``). Other references keep only.
EMPTY_POLICIES = ("keep", "reseed")


def cluster_means(X, labels, C_prev):
    """Mean of the points of each cluster; an empty cluster keeps ``C_prev``'s column.

    Parameters
    ----------
    X : ndarray, shape (d, n)
    labels : ndarray of int, shape (n,)
    C_prev : ndarray, shape (d, k)

    Returns
    -------
    C : ndarray, shape (d, k)
    counts : ndarray of int, shape (k,)
    """
    k = C_prev.shape[1]
    counts = np.bincount(labels, minlength=k)  # (k,)
    sums = segment_sums(X, labels, k)  # (d, k) in index order, as np.bincount sums
    C = C_prev.copy()
    nonempty = counts > 0
    # + 0.0: a mean that rounds to -0.0 is +0.0, as the circuits' residual update (c - c) + mu gives it
    C[:, nonempty] = sums[:, nonempty] / counts[nonempty] + 0.0
    return C, counts


def reseed_empty(X, C, counts, rng):
    """Move every empty cluster's center onto a random data point (distinct points, drawn without replacement).

    The empty clusters, in index order, receive the points
    ``rng.choice(n, size=n_empty, replace=False)`` in draw order: one draw per
    step that has an empty cluster, none otherwise.

    Returns
    -------
    C : ndarray, shape (d, k) (a copy when something was reseeded)
    """
    empty = np.flatnonzero(counts == 0)  # (n_empty,)
    if empty.size == 0:
        return C
    C = C.copy()
    C[:, empty] = X[:, rng.choice(X.shape[1], size=empty.size, replace=False)]  # n_empty <= k <= n
    return C


def lloyd_step(X, C, empty="keep", rng=None):
    """One Lloyd iteration: assign to the nearest center, move each center to its mean.

    ``empty="reseed"`` (needs ``rng``) moves an empty cluster's center onto a
    random data point (:func:`reseed_empty`); ``"keep"`` leaves it.

    Returns
    -------
    C_new : ndarray, shape (d, k)
    labels : ndarray of int, shape (n,)
    """
    labels = nearest_labels(X, C)
    C_new, counts = cluster_means(X, labels, C)
    if empty == "reseed":
        C_new = reseed_empty(X, C_new, counts, rng)
    return C_new, labels


def lloyd(X, C0, n_iter, empty="keep", rng=None):
    r"""Lloyd's algorithm for k-means, with tokens as columns.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column.
    C0 : array_like, shape (d, k)
        Initial centers, one per column (1 <= k <= n).
    n_iter : int
        Number of iterations T >= 0.
    empty : {"keep", "reseed"}
        Empty-cluster policy: ``"keep"`` (default) leaves the center where it
        was; ``"reseed"`` moves it onto a data point drawn at random from
        ``rng`` (distinct points for several empty clusters), as the authors'
        Lloyd baseline does (``utils.lloyds_iters_batched``: a NaN mean is
        replaced by ``X[randperm(n)[:n_empty]]``).
    rng : numpy.random.Generator, optional
        Required by ``empty="reseed"``, refused otherwise (it would be unused).

    Returns
    -------
    ClusteringTrace
        ``centers`` (T+1, d, k), ``labels`` (T, n), ``objective`` (T+1,);
        ``info["n_empty"]`` (T,): the clusters left empty by each step's
        assignment (before any reseeding).

    Notes
    -----
    Iteration t::

        l_i^{(t)} = argmin_j ||x_i - c_j^{(t)}||^2          (ties: lowest j)
        c_j^{(t+1)} = mean{x_i : l_i^{(t)} = j}             (empty: c_j^{(t)})

    In exact arithmetic the objective ``sum_i min_j ||x_i - c_j^{(t)}||^2``
    never increases (in floating point, to rounding; no test pins it).
    Squared distances are ``||x||^2 + ||c||^2 - 2 c.x`` (one matrix product),
    so memory is O(n (d + k)). They are computed in the data frame of X
    (:mod:`kmt_ref.frame`: centered and rescaled by a power of two where the
    data's position or scale needs it, the identity otherwise), so the labels
    do not depend on where the data sit or in what units. Integer and float32
    input is computed in float64.

    The transformer of Theorem 2.1 (:func:`kmeans_transformer`) equals this
    loop for ``empty="keep"`` only: its block 3 keeps an empty cluster's center
    (the default token); reseeding draws random numbers, which no layer does.
    A reseeded center is a data point in data units up to the frame's
    round trip (exact when the frame is the identity).
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty, policies=EMPTY_POLICIES)
    if empty == "reseed":
        rng = check_rng(rng)
    elif rng is not None:
        raise ValueError(f"rng is used by empty='reseed' only, got empty={empty!r} and rng={rng!r}")
    n_empty = np.zeros(n_iter, dtype=np.intp)
    x_sq = squared_norms(X)  # (n,) fixed: computed once
    for t in range(n_iter):  # lloyd_step
        labels[t] = nearest_labels(X, C, x_sq)
        C, counts = cluster_means(X, labels[t], C)
        if empty == "reseed":
            C = reseed_empty(X, C, counts, rng)
        n_empty[t] = np.sum(counts == 0)
        centers[t + 1] = C
    # the objective of each centers[t] from its labels (the last one's searched), when first read: copies of
    # what the trace shows (X in the frame is this function's own)
    J = DeferredObjective(X, centers.copy(), list(labels.copy()) + [None], frame, x_sq)
    return finish_trace(X, centers, labels, {"empty": empty, "n_empty": n_empty}, frame, objective=J)


def start_trace(X, C0, n_iter, empty, use_frame=True, policies=("keep",)):
    """Validate the common arguments of an iterative reference, move them into the data frame, allocate its trace.

    Parameters
    ----------
    use_frame : bool
        ``False`` for algorithms that must not shift the data (spherical
        k-means): the frame is then the identity.
    policies : tuple of str
        The values ``empty`` may take (every reference keeps; :func:`lloyd`
        also reseeds).

    Returns
    -------
    X : ndarray, shape (d, n) (float64, in the frame); C : ndarray, shape (d, k) (likewise)
    n_iter : int
    centers : ndarray, shape (n_iter+1, d, k), with ``centers[0] = C``
    labels : ndarray of int, shape (n_iter, n), to be filled
    frame : :class:`~kmt_ref.frame.Frame`, to pass to :func:`finish_trace`
    """
    X = as_points(X)
    C = as_centers(C0, X)
    n_iter = check_count(n_iter, "n_iter")
    check_choice(empty, "empty", policies)
    frame = data_frame(X, C) if use_frame else Frame(np.zeros(X.shape[0]), 0)
    X, C = frame.to_frame(X), frame.to_frame(C)
    d, n = X.shape
    k = C.shape[1]
    centers = np.empty((n_iter + 1, d, k))
    centers[0] = C
    labels = np.empty((n_iter, n), dtype=np.intp)
    return X, C, n_iter, centers, labels, frame


def finish_trace(X, centers, labels, info, frame, objective=None):
    """A :class:`ClusteringTrace` in data units, with the k-means objective of every ``centers[t]``.

    ``X`` and ``centers`` are in ``frame``; the trace's centers and objective
    are read out of it (:meth:`~kmt_ref.frame.Frame.from_frame`). ``objective``,
    if given, is a :class:`~kmt_ref.trace.DeferredObjective` of these centers
    (as :func:`lloyd` gives, from its labels); otherwise
    :func:`~kmt_ref.trace.frame_objective` of each ``centers[t]`` is computed here.
    """
    if objective is not None:
        return ClusteringTrace(centers=frame.read_out(centers), labels=labels, objective=objective, info=info)
    J = np.array([frame_objective(X, C) for C in centers])  # (T+1,)
    return ClusteringTrace(centers=frame.read_out(centers), labels=labels, objective=frame.objective(J),
                           info=info, log_objective=frame.log_objective(J))


# ==========================================================================
# The circuit: Theorem 2.1
# ==========================================================================
def lloyd_weights(d, k, center_update="euclidean"):
    r"""The hand-set Q, K, V of Theorem 2.1 (SPEC §3), as a parameter dict.

    Parameters
    ----------
    d, k : int
    center_update : {"euclidean", "linear"}
        ``"euclidean"``: block 3 is Euclidean attention over ``[Xbar', Cbar]``
        with the project's default-token extension (exact for empty clusters).
        ``"linear"``: the authors' block 3 (their ``cnst_model.py``,
        ``CModel(ldp=True)``), normalized linear attention with dot-product
        scores ``e_j . y_i``: the exact member mean whenever y is one-hot
        (block 1 at gamma = inf; block 3 itself has no gamma); with block 1
        at a finite gamma y is soft and block 3 gives the y-weighted mean
        ``sum_i y_ij x_i / sum_i y_ij``. Assumes no cluster is empty.

    Returns
    -------
    params : dict
        ``Q1, K1, V1, ..., Q4, K4, V4``, each of shape (d_emb, d_emb).
    emb : Embedding

    Notes
    -----
    Proof sketch of Theorem 2.1 (as SPEC §3 summarises it: a transformer
    with fixed weights and limit softmax runs one Lloyd iteration per layer,
    exactly), for these weights. With ``center_update="linear"``
    they are the authors' (their ``cnst_model.py``: blocks CAX, SAX, CAC, SAC
    = 1, 2, 3, 4); the flag row is the project's extension.
    ``P_X``, ``P_Y``, ``P_T`` keep the data block, the one-hot block and the
    type flag.

    *Block 1* (Q1 = K1 = P_X, V1 = P_Y; queries points, keys centers):
    ``S_ji = -gamma ||c_j - x_i||^2``, so the lowest-index hardmax selects
    ``j* = argmin_j ||x_i - c_j||^2`` (Lloyd's tie rule) and writes
    ``V1 cbar_{j*} = [0; e_{j*}; 0]`` into point i.

    *Block 2* (Q2 = K2 = P_X, V2 = -P_Y; self-attention on points): the score
    ``-||x_l - x_i||^2`` is maximal (0) exactly at the copies of x_i, which all
    carry the same y (y is a function of x); it writes ``-y_i``. Blocks 1 + 2
    turn ``y_i`` into ``e_{j*}``: the assignment step.

    *Block 3* (queries centers, keys the updated points and, with the
    extension, the centers): Q3 = P_Y, K3 = P_Y + P_T, V3 = P_X. Against a
    point the score is ``-||y_i - e_j||^2`` = 0 for members, -2 otherwise;
    against a center token ``-(||e_l - e_j||^2 + 1)`` = -1 for its own token,
    -3 otherwise. The averaging hardmax therefore takes the members' mean
    ``mu_j`` when cluster j has members, and ``c_j`` (score -1 beats -2) when it
    is empty: Lloyd's "keep" policy, exactly. (The flag row is the same device
    as tracr's default-attention token; it is the project's own construction,
    SPEC §3 "(open)".) With ``center_update="linear"``: scores ``e_j . y_i``
    (1 for members, 0 otherwise) normalized by their sum give ``mu_j``
    exactly, whatever the gammas of the other blocks, as long as block 1
    writes one-hot y (gamma = inf). With block 1 at a finite gamma, y_i is
    soft, the scores are ``y_ij`` and the result is the y-weighted mean
    ``sum_i y_ij x_i / sum_i y_ij`` (soft k-means' update), not ``mu_j``.

    *Block 4* (Q4 = K4 = P_Y, V4 = -P_X; self-attention on centers): the
    ``e_j`` are distinct, so this is identity attention and writes ``-c_j``.
    Blocks 3 + 4 turn ``c_j`` into ``mu_j`` (or keep it): the update step.

    The residual stream after one layer is exactly ``[X; Y^{(t+1)}]`` and
    ``[C^{(t+1)}; I_k]``: one layer is one Lloyd iteration.

    *Why block 1 uses the lowest-index hardmax.* This is the project's tie
    convention, not a limit of the attention. As ``gamma -> inf``,
    ``softmax(gamma s)_j = 1 / sum_l exp(gamma (s_l - s_j))`` tends to 1 on a
    unique maximum, and on ``t`` tied maxima to ``1/t`` each (the other terms
    vanish, the tied ones stay ``exp(0) = 1``): the limit is the
    *averaging* hardmax. A point equidistant from two centers ``j < l`` would
    then get ``y_i = (e_j + e_l)/2``, which is no assignment. Block 3 at
    ``gamma = inf`` scores it ``-||y_i - e_j||^2 = -1/2`` for both centers:
    below a full member's 0, above the own token's -1 and a non-member's -2.
    So a cluster with a full member leaves the tied point out of its mean,
    but a cluster with no full member moves onto it (onto the mean of its
    tied points). For ``X = [0, 1]``, ``C = [0.5, 1.5]`` (d = 1) the point 1
    ties: center 0 takes its full member, 0, and center 1 moves from 1.5 to
    1.0, while Lloyd gives the point to cluster 0 (centers 0.5 and 1.5, the
    empty cluster kept). The linear update counts the tied point with
    weight 1/2 in each cluster (there: 1/3 and 1.0). Lloyd's ``argmin``
    gives it to the lowest index (notebook 01, exercise 01.2, measures it).
    Block 1 therefore uses ``hardmax`` (ties to the lowest index), so that the
    transformer equals ``np.argmin`` Lloyd on every input, ties included;
    without ties the two hardmaxes coincide and both are the limit. Block 3
    needs the averaging form (the members of a cluster tie by design).
    """
    check_choice(center_update, "center_update", ("euclidean", "linear"))
    layout = ("x", "y", "flag") if center_update == "euclidean" else ("x", "y")
    emb = Embedding(d, k, layout)
    P_X, P_Y = projector(emb, "x"), projector(emb, "y")
    params = {
        "Q1": P_X, "K1": P_X, "V1": P_Y,      # assign: write e_{j*}
        "Q2": P_X, "K2": P_X, "V2": -P_Y,     # reset: subtract old y_i
        "Q3": P_Y, "K3": P_Y, "V3": P_X,      # update: mean of the members
        "Q4": P_Y, "K4": P_Y, "V4": -P_X,     # reset: subtract old c_j
    }
    if center_update == "euclidean":
        params["K3"] = projector(emb, "y", "flag")  # the key adds the type flag
    return params, emb


def lloyd_layer(gamma=np.inf, gamma_reset=np.inf, center_update="euclidean", gamma_update=None,
                gamma_center_reset=None):
    """The layer description of Theorem 2.1 for :func:`kmt_ref.core.attention.layer_forward`.

    Parameters
    ----------
    gamma : float
        Block 1 (assignment). ``inf``: lowest-index hardmax; finite: softmax.
    gamma_reset : float
        Blocks 2 and 4 (the resets). ``inf`` (default): their exact limit,
        identity attention, as in the authors' validation.
    center_update : {"euclidean", "linear"}
    gamma_update : float or None
        Block 3 for ``center_update="euclidean"`` (default: ``gamma``).
        ``inf``: averaging hardmax.
    gamma_center_reset : float or None
        Block 4 alone (default: ``gamma_reset``). Blocks 1 and 2 score squared
        distances of the data, blocks 3 and 4 distances of one-hot codes, so
        in a data frame (:mod:`kmt_ref.frame`) only the former are rescaled.
    """
    gamma_update = gamma if gamma_update is None else gamma_update
    gamma_center_reset = gamma_reset if gamma_center_reset is None else gamma_center_reset

    def soft_or_hard(g, hard):
        return (hard, np.inf) if g == np.inf else ("softmax", g)

    n1, g1 = soft_or_hard(gamma, "hardmax")
    nr, gr = soft_or_hard(gamma_reset, "hardmax")
    nc, gc = soft_or_hard(gamma_center_reset, "hardmax")
    if center_update == "euclidean":
        n3, g3 = soft_or_hard(gamma_update, "hardmax_average")
        block3 = Block("3", keys="X+C", normalizer=n3, gamma=g3)
    else:
        block3 = Block("3", keys="X", score="dot", normalizer="linear")
    # The reset block is listed first: the residual sum is then (c - c) + mu, which
    # is exactly mu in floating point ((c + mu) - c is not), and likewise (y - y) + e.
    return (
        Sublayer("X", (Block("2", keys="X", normalizer=nr, gamma=gr), Block("1", keys="C", normalizer=n1, gamma=g1))),
        Sublayer("C", (Block("4", keys="C", normalizer=nc, gamma=gc), block3)),
    )


#: ``kmeans_transformer(..., attention=name)`` for the circuits other than Theorem 2.1's Euclidean one:
#: name -> a function with kmeans_transformer's signature. Theorem 2.2 registers ``"dot"``
#: (:mod:`kmt_ref.algorithms.dot_product`), so this module never imports the circuits built on it.
OTHER_ATTENTIONS = {}


def kmeans_transformer(X, C0, n_layers, gamma=np.inf, *, attention="euclidean", gamma_reset=np.inf,
                       gamma_update=None, center_update="euclidean", record=False, chunk_size=1024):
    r"""Run the k-means transformer of Theorem 2.1: one layer = one Lloyd iteration.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column.
    C0 : array_like, shape (d, k)
        Initial centers, one per column.
    n_layers : int
        T >= 0 layers with shared, hand-set weights.
    gamma : float
        Inverse temperature of the assignment block 1 (and of block 3 unless
        ``gamma_update`` is given). ``inf`` (default) is the exact limit.
    attention : {"euclidean", "dot"}
        ``"euclidean"``: Theorem 2.1 (distance attention). ``"dot"``: Theorem
        2.2, plain dot-product attention with squared norms in the tokens and a
        ReQU feed-forward block
        (:func:`kmt_ref.algorithms.dot_product.dot_product_transformer`); the same
        trace. Its scores carry the offset ``||x_i||^2``, so in floating point
        two points closer than about 1e-8 times the data scale cannot be told
        apart by its reset block 2 (see that function's Notes).
    gamma_reset : float
        Inverse temperature of the reset blocks 2 and 4; default ``inf`` (the
        exact identity limit, as in the authors' validation). A finite value
        makes block 2 mix the y of nearby points; it is computed in query
        chunks of ``chunk_size`` (memory O(chunk_size * n)).
    gamma_update : float, optional
        Block 3's inverse temperature (``center_update="euclidean"``).
    center_update : {"euclidean", "linear"}
        See :func:`lloyd_weights`. ``"linear"`` raises
        :class:`EmptyClusterError` (a ``ValueError``) if a cluster empties.
    record : bool
        Keep every layer's tokens and attention matrices in ``trace.layers``
        (dense matrices: for small examples).
    chunk_size : int

    Returns
    -------
    ClusteringTrace
        ``centers`` (T+1, d, k), ``labels`` (T, n), ``objective`` (T+1,),
        ``assignments`` (final Y, (k, n)), ``one_hot`` (T,), ``layers``.

    Notes
    -----
    At ``gamma = inf`` the trace equals :func:`kmt_ref.lloyd`'s bit for bit,
    ties (lowest index), duplicates, empty clusters (kept), ``k = 1`` and
    ``k = n`` included (the module docstring names the tests). Integer and
    float32 input is computed in float64.
    """
    check_choice(attention, "attention", ("euclidean",) + tuple(OTHER_ATTENTIONS))
    if attention != "euclidean":
        if center_update != "euclidean":
            raise ValueError(f"center_update={center_update!r} applies to attention='euclidean' only")
        return OTHER_ATTENTIONS[attention](X, C0, n_layers, gamma, gamma_reset=gamma_reset,
                                           gamma_update=gamma_update, record=record, chunk_size=chunk_size)
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    gamma = check_gamma(gamma, "gamma")
    gamma_reset = check_gamma(gamma_reset, "gamma_reset")
    gamma_update = gamma if gamma_update is None else check_gamma(gamma_update, "gamma_update")
    check_choice(center_update, "center_update", ("euclidean", "linear"))
    chunk_size = check_count(chunk_size, "chunk_size", minimum=1)
    d, k = C0.shape
    params, emb = lloyd_weights(d, k, center_update)
    # blocks 1 and 2 score squared data distances: their gammas enter the frame scaled;
    # block 3's scores are distances between one-hot codes, which the frame leaves alone
    layer = lloyd_layer(frame.gamma(gamma), frame.gamma(gamma_reset, "gamma_reset"), center_update, gamma_update,
                        gamma_center_reset=gamma_reset)
    # At gamma = gamma_reset = inf a one-hot read-out after layer t+1 is nearest_labels(X, C_t) itself:
    # block 1 is that call (on the data rows of the tokens, which hold X and C_t: no block writes
    # them), block 2 sets y_i to +0 and block 1 adds e_{l_i}; so the objective may use those labels
    trace = run_layers(X, params, layer, emb, C0, n_layers, record=record, chunk_size=chunk_size,
                       check_nonempty=center_update == "linear", frame=frame,
                       nearest_readout=gamma == np.inf and gamma_reset == np.inf)
    trace.info.update(gamma=gamma, gamma_reset=gamma_reset, center_update=center_update)
    return trace
