"""Hand-set weights: Theorem 2.1 (the k-means transformer) and shared machinery.

The generic layer (:func:`kmt_ref.attention.layer_forward`) knows nothing
about k-means; this module gives it particular weights and a particular token
layout. Variants (:mod:`kmt_ref.variants`, ...) reuse :class:`Embedding`,
:func:`projector` and :func:`run_layers`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attention import Block, Sublayer, layer_forward
from .frame import Frame, data_frame
from .trace import ClusteringTrace, frame_objective
from .validation import as_centers, as_points, check_choice, check_count, check_gamma

__all__ = [
    "Embedding",
    "projector",
    "lloyd_weights",
    "lloyd_layer",
    "run_layers",
    "prepare",
    "kmeans_transformer",
    "EmptyClusterError",
]


class EmptyClusterError(ValueError):
    """A construction that assumes non-empty clusters met an empty one."""


# --------------------------------------------------------------------------
# Token layout
# --------------------------------------------------------------------------
def _point_row(name, X, k):
    d, n = X.shape
    if name == "x":
        return X
    if name == "y":
        return np.zeros((k, n))
    if name == "flag":
        return np.zeros((1, n))
    if name == "norm":
        return np.sum(X * X, axis=0)[None, :]
    if name == "one":
        return np.ones((1, n))
    raise ValueError(f"unknown embedding row {name!r}")


def _center_row(name, C):
    d, k = C.shape
    if name == "x":
        return C
    if name == "y":
        return np.eye(k)
    if name == "flag":
        return np.ones((1, k))
    if name == "norm":
        return np.sum(C * C, axis=0)[None, :]
    if name == "one":
        return np.ones((1, k))
    raise ValueError(f"unknown embedding row {name!r}")


@dataclass(frozen=True)
class Embedding:
    """A token layout: named row blocks stacked in order.

    Row blocks (points | centers):

    ========  ==========  ==========  =====
    name      points      centers     rows
    ========  ==========  ==========  =====
    ``x``     x_i         c_j         d
    ``y``     y_i (= 0)   e_j         k
    ``flag``  0           1           1
    ``norm``  ||x_i||^2   ||c_j||^2   1
    ``one``   1           1           1
    ========  ==========  ==========  =====

    The paper's layout (SPEC §1) is ``("x", "y")``: ``Xbar = [X; Y]``,
    ``Cbar = [C; I_k]``, ``d_emb = d + k``.
    """

    d: int
    k: int
    layout: tuple = ("x", "y")

    def size(self, name):
        return {"x": self.d, "y": self.k}.get(name, 1)

    @property
    def d_emb(self):
        return sum(self.size(name) for name in self.layout)

    def rows(self, name):
        """The slice of rows holding block ``name``."""
        start = 0
        for block in self.layout:
            if block == name:
                return slice(start, start + self.size(block))
            start += self.size(block)
        raise KeyError(f"layout {self.layout} has no block {name!r}")

    def embed_points(self, X):
        """``Xbar``, shape (d_emb, n), with ``Y = 0``."""
        return np.concatenate([_point_row(name, X, self.k) for name in self.layout], axis=0)

    def embed_centers(self, C):
        """``Cbar``, shape (d_emb, k)."""
        return np.concatenate([_center_row(name, C) for name in self.layout], axis=0)

    def centers(self, Cbar):
        """Read ``C`` (d, k) back from the center tokens."""
        return Cbar[..., self.rows("x"), :]

    def assignments(self, Xbar):
        """Read ``Y`` (k, n) back from the point tokens."""
        return Xbar[..., self.rows("y"), :]


def projector(emb, *names):
    """Diagonal 0/1 matrix keeping the given row blocks: ``P_X = projector(emb, "x")``."""
    P = np.zeros((emb.d_emb, emb.d_emb))
    for name in names:
        r = emb.rows(name)
        P[r, r] = np.eye(r.stop - r.start)
    return P


# --------------------------------------------------------------------------
# Theorem 2.1
# --------------------------------------------------------------------------
def lloyd_weights(d, k, center_update="euclidean"):
    r"""The hand-set Q, K, V of Theorem 2.1 (SPEC §3), as a parameter dict.

    Parameters
    ----------
    d, k : int
    center_update : {"euclidean", "linear"}
        ``"euclidean"``: block 3 is Euclidean attention over ``[Xbar', Cbar]``
        with the project's default-token extension (exact for empty clusters).
        ``"linear"``: the paper's block 3, normalized linear attention with
        dot-product scores ``e_j . y_i`` (exact mean at any gamma; assumes no
        cluster is empty).

    Returns
    -------
    params : dict
        ``Q1, K1, V1, ..., Q4, K4, V4``, each of shape (d_emb, d_emb).
    emb : Embedding

    Notes
    -----
    Proof sketch (the paper's Theorem 2.1, with the project's extension).
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
    ``m_j`` when cluster j has members, and ``c_j`` (score -1 beats -2) when it
    is empty: Lloyd's "keep" policy, exactly. (The flag row is the same device
    as tracr's default-attention token; it is the project's own construction,
    SPEC §3 "(open)".) With ``center_update="linear"``: scores ``e_j . y_i``
    (1 for members, 0 otherwise) normalized by their sum give ``m_j`` at any gamma.

    *Block 4* (Q4 = K4 = P_Y, V4 = -P_X; self-attention on centers): the
    ``e_j`` are distinct, so this is identity attention and writes ``-c_j``.
    Blocks 3 + 4 turn ``c_j`` into ``m_j`` (or keep it): the update step.

    The residual stream after one layer is exactly ``[X; Y^{(t+1)}]`` and
    ``[C^{(t+1)}; I_k]``: one layer is one Lloyd iteration.
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
    """The layer description of Theorem 2.1 for :func:`kmt_ref.attention.layer_forward`.

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
    # The reset block is listed first: the residual sum is then (c - c) + m, which
    # is exactly m in floating point ((c + m) - c is not), and likewise (y - y) + e.
    return (
        Sublayer("X", (Block("2", keys="X", normalizer=nr, gamma=gr), Block("1", keys="C", normalizer=n1, gamma=g1))),
        Sublayer("C", (Block("4", keys="C", normalizer=nc, gamma=gc), block3)),
    )


def prepare(X, C0, n_layers, use_frame=True):
    """Validate a transformer's data, initial centers and depth; move them into the data frame.

    Every hand-set transformer embeds its tokens in the data frame of X
    (:mod:`kmt_ref.frame`): ``x~ = (x - s) / 2^e``, the identity on data of
    ordinary position and scale. It is part of the embedding, and undone at
    the read-out by :func:`run_layers`.

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_layers : int
    use_frame : bool
        ``False`` for circuits that must not shift the data (spherical
        k-means normalizes every token instead): the identity frame.

    Returns
    -------
    X : ndarray, shape (d, n); C0 : ndarray, shape (d, k)   (float64, in the frame)
    n_layers : int
    frame : :class:`~kmt_ref.frame.Frame`
    """
    X = as_points(X)
    C0 = as_centers(C0, X)
    n_layers = check_count(n_layers, "n_layers")
    frame = data_frame(X, C0) if use_frame else Frame(np.zeros(X.shape[0]), 0)
    return frame.to_frame(X), frame.to_frame(C0), n_layers, frame


def run_layers(X, params, layer, emb, C0, n_layers, *, rng=None, record=False, chunk_size=1024,
               check_nonempty=False, embed_points=None, frame=None):
    """Run ``n_layers`` shared-weight layers and collect a :class:`ClusteringTrace`.

    Parameters
    ----------
    X : ndarray, shape (d, n)   (validated float64, in ``frame``)
    params, layer : the weights and layer description
    emb : Embedding
    C0 : ndarray, shape (d, k)
    n_layers : int
    rng : numpy.random.Generator, optional
    record : bool
        Keep a :class:`~kmt_ref.attention.LayerRecord` per layer.
    chunk_size : int
        Query chunk for dense (finite-gamma) attention.
    check_nonempty : bool
        Raise :class:`EmptyClusterError` if a cluster has no member after an
        encoder step (for constructions that assume none).
    embed_points : callable, optional
        ``X -> Xbar``; default ``emb.embed_points``.
    frame : :class:`~kmt_ref.frame.Frame`, optional
        The data frame X and C0 are in (:func:`prepare`); the trace's centers
        and objective are read out of it. Default: the identity. Recorded
        tokens (``record=True``) stay in the frame.

    Returns
    -------
    ClusteringTrace
    """
    Xbar = (embed_points or emb.embed_points)(X)  # (d_emb, n)
    Cbar = emb.embed_centers(C0)  # (d_emb, k)
    d, n = X.shape
    k = C0.shape[1]
    centers = np.empty((n_layers + 1, d, k))
    labels = np.empty((n_layers, n), dtype=np.intp)
    one_hot = np.empty(n_layers, dtype=np.intp)
    centers[0] = C0
    records = [] if record else None
    for t in range(n_layers):
        out = layer_forward(params, Xbar, Cbar, layer, rng=rng, record=record, chunk_size=chunk_size)
        Xbar, Cbar = out[0], out[1]
        if record:
            records.append(out[2])
        Y = emb.assignments(Xbar)  # (k, n)
        labels[t] = np.argmax(Y, axis=0)
        one_hot[t] = int(np.sum(np.all((Y == 0) | (Y == 1), axis=0) & (np.sum(Y == 1, axis=0) == 1)))
        if check_nonempty:
            empty = np.flatnonzero(np.sum(Y, axis=1) == 0)
            if empty.size:
                raise EmptyClusterError(
                    f"cluster {int(empty[0])} is empty at layer {t + 1}: this construction "
                    "(the paper's linear center update) assumes every cluster keeps a member; "
                    "use center_update='euclidean', which keeps an empty cluster's center exactly"
                )
        centers[t + 1] = emb.centers(Cbar)
    frame = frame or Frame(np.zeros(d), 0)
    J = np.array([frame_objective(X, centers[t]) for t in range(n_layers + 1)])  # (T+1,) in the frame
    Y_final = emb.assignments(Xbar) if n_layers else None
    return ClusteringTrace(
        centers=frame.from_frame(centers), labels=labels, objective=frame.objective(J), assignments=Y_final,
        one_hot=one_hot, layers=records, log_objective=frame.log_objective(J),
    )


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
        (:func:`kmt_ref.standard_variants.dot_product_transformer`); the same
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
    At ``gamma = inf`` the trace equals :func:`kmt_ref.lloyd` exactly
    (labels) and to rounding (centers, ~1e-16 relative), including ties
    (lowest index), duplicates, empty clusters (kept), ``k = 1`` and ``k = n``.
    Integer and float32 input is computed in float64.
    """
    check_choice(attention, "attention", ("euclidean", "dot"))
    if attention == "dot":
        if center_update != "euclidean":
            raise ValueError(f"center_update={center_update!r} applies to attention='euclidean' only")
        from .standard_variants import dot_product_transformer  # noqa: PLC0415 (it imports this module)

        return dot_product_transformer(X, C0, n_layers, gamma, gamma_reset=gamma_reset,
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
    trace = run_layers(X, params, layer, emb, C0, n_layers, record=record, chunk_size=chunk_size,
                       check_nonempty=center_update == "linear", frame=frame)
    trace.info.update(gamma=gamma, gamma_reset=gamma_reset, center_update=center_update)
    return trace
