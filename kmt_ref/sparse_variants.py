r"""Sparse and sampling variants of the k-means transformer (SPEC §5, issue 4).

Each variant is a small, named change of the Theorem 2.1 construction
(:func:`kmt_ref.constructions.lloyd_weights` / :func:`~kmt_ref.constructions.lloyd_layer`):
the encoder (blocks 1 and 2: Lloyd's assignment, ties to the lowest index) and
the center reset (block 4) are unchanged; only the center update changes.

=========================  ====================================================  =========================================
variant                    block 3 (queries: centers; keys ``[Xbar', Cbar]``)    classical reference
=========================  ====================================================  =========================================
trimmed k-means **(open)** alpha = inf normmax over ``-gamma1 ||e_j - y_i||^2``  :func:`~kmt_ref.reference_sparse.trimmed_kmeans_attention`
                           ``- gamma2 ||c_j - x_i||^2``
robust k-means             sparsemax over ``-gamma1 ||e_j - y_i||^2``            :func:`~kmt_ref.reference_sparse.robust_kmeans`
                           ``- gamma ||c_j - x_i||^2 / sqrt(d)``                 (the authors' rule)
randomized k-medoids       an extra decoder block writes the member mean mu_j;   :func:`~kmt_ref.reference_sparse.randomized_kmedoids`
**(open)**                 block 3 is hard Gumbel attention over
                           ``-gamma1 ||e_j - y_i||^2 - gamma ||mu_j - x_i||^2``
=========================  ====================================================  =========================================

What the sources give and what is the project's own: SPEC §5 states each
variant as a change of the center-update normalizer. The robust rule is the
authors' (their code); the trimmed and k-medoids rules are marked **(open)**:
no source we could read states them. The explicit weights below -- the
penalty ``gamma1`` that keeps non-members out of a sparse normalizer, the
default-token flag that makes an empty cluster keep its center, the extra
decoder block for ``mu_j`` -- and their proofs are the project's own
constructions for all three; no theorem of the paper covers them.

Why one Euclidean score suffices. Block 3 attends from center tokens
``cbar_j = [c_j; e_j; 1]`` to keys ``[x_i; y_i; 0]`` (points, with the
updated one-hot ``y_i``) and ``[c_l; e_l; 1]`` (centers). With

    Q3 = diag(sqrt(g) I_d, sqrt(gamma1) I_k, 0),
    K3 = diag(sqrt(g) I_d, sqrt(gamma1) I_k, sqrt(gamma_flag)),

the score ``-||K3 kbar - Q3 cbar_j||^2`` is

    point i, member of j:   -g ||x_i - c_j||^2
    point i, non-member:    -g ||x_i - c_j||^2 - 2 gamma1
    own center token j:     -gamma_flag
    other center token l:   -g ||c_l - c_j||^2 - 2 gamma1 - gamma_flag.

Sparsemax and alpha = inf normmax give weight exactly 0 to every score at or
below ``tau >= max score - 1`` (:func:`kmt_ref.normalizers.simplex_threshold`)
and do not move ``tau`` for such scores. So if every squared distance that can
occur is at most ``D^2`` and

    gamma_flag >= g D^2 + 1,   2 gamma1 >= g D^2 + 1,   2 gamma1 >= gamma_flag + 1,

a cluster with members attends to its members only (with exactly the weights
of the normalizer applied to ``-g ||x_i - c_j||^2`` over the members), and an
empty cluster attends to its own token only, which writes ``c_j`` back
(Lloyd's "keep" policy). :func:`separating_penalties` picks such values from
the bounding box of ``[X, C0]``: every center of these algorithms stays in
the convex hull of the data and the initial centers, so ``D^2`` bounds every
distance at every layer. For the Gumbel block the noise adds at most the
width of :data:`kmt_ref.normalizers.GUMBEL_RANGE` to any gap, and the margins
grow by it.

Degenerate cases (all variants, pinned by tests): ties in the assignment go to
the lowest center index (block 1 is Lloyd's); an empty cluster keeps its
center; a singleton cluster moves onto its point; no step divides by zero, so
no NaN ever appears.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .attention import Block, Sublayer
from .constructions import Embedding, lloyd_layer, lloyd_weights, prepare, projector, run_layers
from .normalizers import GUMBEL_RANGE
from .validation import check_count, check_gamma, check_rng

__all__ = [
    "separating_penalties",
    "sparse_update_weights",
    "sparse_update_layer",
    "trimmed_kmeans_transformer",
    "robust_kmeans_transformer",
    "MedoidEmbedding",
    "kmedoids_weights",
    "kmedoids_layer",
    "randomized_kmedoids_transformer",
]

#: width of the Gumbel noise range: the most noise can change a score gap
GUMBEL_WIDTH = GUMBEL_RANGE[1] - GUMBEL_RANGE[0]


# --------------------------------------------------------------------------
# Penalties that keep non-members out (the project's construction)
# --------------------------------------------------------------------------
def _bounding_diameter_sq(X, C0):
    """Squared diameter of the bounding box of the columns of ``[X, C0]``."""
    Z = np.concatenate([X, C0], axis=1)
    span = Z.max(axis=1) - Z.min(axis=1)  # (d,)
    return float(np.sum(span * span))


def separating_penalties(X, C0, g, noise_width=0.0):
    r"""Sufficient ``(gamma1, gamma_flag)`` for block 3 to see members only.

    Parameters
    ----------
    X : ndarray, shape (d, n)
    C0 : ndarray, shape (d, k)
    g : float
        The coefficient of the squared distance in the score (``gamma2`` for
        trimmed, ``gamma / sqrt(d)`` for robust, ``gamma`` for k-medoids).
    noise_width : float
        ``0`` for sparsemax/normmax (margin 1); the Gumbel noise width for
        the sampling block.

    Returns
    -------
    gamma1, gamma_flag : float

    Notes
    -----
    With ``D^2`` the squared diameter of the bounding box of ``[X, C0]`` and
    ``m = 1 + noise_width`` the margin a score gap needs, returns
    ``gamma1 = gamma_flag = g D^2 + m + 1``. Then ``gamma_flag > g D^2 + m``
    (the own token loses to every member), ``2 gamma1 > g D^2 + m`` (every
    non-member loses to every member) and ``2 gamma1 > gamma_flag + m`` (in an
    empty cluster the own token beats every non-member), each with one unit to
    spare for rounding. See the module docstring for the scores.
    """
    D2 = _bounding_diameter_sq(X, C0)
    value = g * D2 + 1.0 + noise_width + 1.0
    return value, value


def _check_penalty(value, name):
    return check_gamma(value, name, allow_inf=False, allow_zero=False)


def sparse_update_weights(d, k, g, gamma1, gamma_flag):
    r"""Theorem 2.1's weights with block 3 scoring ``-gamma1 ||e_j - y_i||^2 - g ||c_j - x_i||^2``.

    Parameters
    ----------
    d, k : int
    g : float
        Coefficient of the squared distance (``>= 0``).
    gamma1, gamma_flag : float
        The member penalty and the default-token flag (:func:`separating_penalties`).

    Returns
    -------
    params : dict
        ``Q1 .. V4`` of :func:`kmt_ref.constructions.lloyd_weights` with
        ``Q3 = diag(sqrt(g) I_d, sqrt(gamma1) I_k, 0)`` and
        ``K3 = diag(sqrt(g) I_d, sqrt(gamma1) I_k, sqrt(gamma_flag))``.
    emb : Embedding
        Layout ``("x", "y", "flag")``.

    Notes
    -----
    Proof sketch: the scores are listed in the module docstring. ``Q3 = K3``
    on the ``x`` and ``y`` blocks, so the score is one Euclidean distance
    between rescaled tokens; the key alone carries the flag, so a center's
    own token sits at ``-gamma_flag`` and every other center token below
    ``-2 gamma1``. With the penalties of :func:`separating_penalties` the
    sparse normalizer's support is the member set of cluster j (or the own
    token if that set is empty), and on that support the scores are exactly
    ``-g ||x_i - c_j||^2``: the normalizer applied to the members, which is
    what the reference computes. ``V3 = P_X`` reads out ``x_i`` (``c_j`` for
    the own token), and block 4 subtracts the old ``c_j``.
    """
    params, emb = lloyd_weights(d, k, "euclidean")
    scaled = np.sqrt(g) * projector(emb, "x") + np.sqrt(gamma1) * projector(emb, "y")  # (d_emb, d_emb)
    params = dict(params)
    params["Q3"] = scaled
    params["K3"] = scaled + np.sqrt(gamma_flag) * projector(emb, "flag")
    return params, emb


def sparse_update_layer(normalizer, options=()):
    """Theorem 2.1's layer (gamma = inf encoder) with block 3 replaced by ``normalizer`` over ``[Xbar', Cbar]``."""
    block3 = Block("3", keys="X+C", score="euclidean", normalizer=normalizer, gamma=1.0, options=tuple(options))
    layer = []
    for sub in lloyd_layer(np.inf, np.inf, "euclidean"):
        blocks = tuple(block3 if b.name == "3" else b for b in sub.blocks)
        layer.append(dataclasses.replace(sub, blocks=blocks))
    return tuple(layer)




def _penalties(X, C0, g, gamma1, gamma_flag, noise_width=0.0):
    auto1, autof = separating_penalties(X, C0, g, noise_width)
    gamma1 = auto1 if gamma1 is None else _check_penalty(gamma1, "gamma1")
    gamma_flag = autof if gamma_flag is None else _check_penalty(gamma_flag, "gamma_flag")
    return gamma1, gamma_flag


# --------------------------------------------------------------------------
# Trimmed k-means (normmax, alpha = inf)
# --------------------------------------------------------------------------
def trimmed_kmeans_transformer(X, C0, n_layers, gamma2, *, gamma1=None, gamma_flag=None, record=False,
                               chunk_size=1024):
    r"""Trimmed k-means transformer: block 3 is alpha = inf normmax (SPEC §5, **(open)**).

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_layers : int
        T >= 0 layers with shared weights.
    gamma2 : float
        ``0 <= gamma2 < inf``: the weight of ``||c_j - x_i||^2`` in block 3's
        score; sets the trimming level (0: no trimming, Lloyd).
    gamma1, gamma_flag : float, optional
        Member penalty and default-token flag; default
        :func:`separating_penalties` (``gamma1 >> gamma2``), under which the
        result equals the reference. Smaller values give a different (valid)
        transformer with no reference.
    record : bool
        Keep every layer's attention matrices (``trace.layers[t].weights["3"]``
        is block 3's (n + k, k) matrix: which points each center listens to).
    chunk_size : int

    Returns
    -------
    ClusteringTrace
        Equal to :func:`kmt_ref.reference_sparse.trimmed_kmeans_attention`
        (labels exactly, centers to rounding).

    Notes
    -----
    Block 3 over ``z_i = -gamma1 ||e_j - y_i||^2 - gamma2 ||c_j - x_i||^2``
    with ``normmax_inf`` gives the uniform mean of the ``s*`` members with the
    largest ``z``, ``s* = argmax_s (S_s - 1)/s`` (SPEC §2): members farther
    than the kept ones by roughly ``1/gamma2`` in squared distance are trimmed.
    Proof of the weights: :func:`sparse_update_weights`. **(open)**: the paper
    does not state this construction; it is the project's own.

    Policies: ties in the assignment -- lowest index; equal distances within a
    cluster -- kept or trimmed together; empty cluster -- keeps ``c_j`` (its
    own token is the unique maximum by more than 1, so normmax is one-hot on
    it); singleton -- ``s* = 1``, the center moves onto the point.
    """
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    gamma2 = check_gamma(gamma2, "gamma2", allow_inf=False)
    g = frame.gamma(gamma2, "gamma2")  # it weighs squared data distances: scaled into the frame
    gamma1, gamma_flag = _penalties(X, C0, g, gamma1, gamma_flag)
    d, k = C0.shape
    params, emb = sparse_update_weights(d, k, g, gamma1, gamma_flag)
    layer = sparse_update_layer("normmax", (("alpha", np.inf),))
    trace = run_layers(X, params, layer, emb, C0, n_layers, record=record,
                       chunk_size=check_count(chunk_size, "chunk_size", minimum=1), frame=frame)
    trace.info.update(variant="trimmed", gamma2=gamma2, gamma1=gamma1, gamma_flag=gamma_flag)
    return trace


# --------------------------------------------------------------------------
# Robust k-means (sparsemax)
# --------------------------------------------------------------------------
def robust_kmeans_transformer(X, C0, n_layers, gamma=0.01, *, gamma1=None, gamma_flag=None, record=False,
                              chunk_size=1024):
    r"""Robust k-means transformer: block 3 is sparsemax over the member scores (SPEC §5).

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_layers : int
    gamma : float
        ``0 <= gamma < inf``; the authors' default 0.01. The member score is
        ``-gamma ||x_i - c_j||^2 / sqrt(d)``.
    gamma1, gamma_flag : float, optional
        As in :func:`trimmed_kmeans_transformer`.
    record : bool
    chunk_size : int

    Returns
    -------
    ClusteringTrace
        Equal to :func:`kmt_ref.reference_sparse.robust_kmeans`.

    Notes
    -----
    ``c_j <- sum_{i in S_j} p_i x_i`` with
    ``p = sparsemax_{i in S_j}(-gamma ||x_i - c_j||^2 / sqrt(d))``: the
    authors' robust rule (their code). The layer realising it -- block 3 with
    sparsemax over one Euclidean score ``-||K3 kbar - Q3 cbar||^2`` with
    ``g = gamma / sqrt(d)`` (:func:`sparse_update_weights`), the penalty and
    the default token -- is the project's construction.

    Policies: as :func:`trimmed_kmeans_transformer`; equal distances get equal
    weights.
    """
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    gamma = check_gamma(gamma, "gamma", allow_inf=False)
    d, k = C0.shape
    g = frame.gamma(gamma) / np.sqrt(d)  # it weighs squared data distances: scaled into the frame
    gamma1, gamma_flag = _penalties(X, C0, g, gamma1, gamma_flag)
    params, emb = sparse_update_weights(d, k, g, gamma1, gamma_flag)
    layer = sparse_update_layer("sparsemax")
    trace = run_layers(X, params, layer, emb, C0, n_layers, record=record,
                       chunk_size=check_count(chunk_size, "chunk_size", minimum=1), frame=frame)
    trace.info.update(variant="robust", gamma=gamma, gamma1=gamma1, gamma_flag=gamma_flag)
    return trace


# --------------------------------------------------------------------------
# Randomized k-medoids (an extra decoder block, then hard Gumbel attention)
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class MedoidEmbedding(Embedding):
    """:class:`~kmt_ref.constructions.Embedding` with an extra ``mu`` row block (d rows, 0 at embedding).

    Default layout ``("x", "y", "flag", "mu")``: point tokens ``[x_i; y_i; 0; 0]``,
    center tokens ``[c_j; e_j; 1; 0]``. The first decoder sublayer writes the
    member mean ``mu_j`` into the ``mu`` rows of center j.
    """

    layout: tuple = ("x", "y", "flag", "mu")

    def size(self, name):
        return self.d if name == "mu" else super().size(name)

    def _stack(self, Z, embed):
        m = Z.shape[1]
        parts = [np.zeros((self.d, m)) if name == "mu" else embed(Embedding(self.d, self.k, (name,)), Z)
                 for name in self.layout]
        return np.concatenate(parts, axis=0)

    def embed_points(self, X):
        """``Xbar``, shape (d_emb, n)."""
        return self._stack(X, Embedding.embed_points)

    def embed_centers(self, C):
        """``Cbar``, shape (d_emb, k)."""
        return self._stack(C, Embedding.embed_centers)


def _block_copy(emb, src, dst):
    """Matrix (d_emb, d_emb) copying row block ``src`` of a token into row block ``dst``."""
    M = np.zeros((emb.d_emb, emb.d_emb))
    M[emb.rows(dst), emb.rows(src)] = np.eye(emb.size(src))
    return M


def kmedoids_weights(d, k, gamma, gamma1, gamma_flag):
    r"""Weights of the randomized k-medoids transformer (**(open)**: the project's construction).

    Parameters
    ----------
    d, k : int
    gamma : float
        Coefficient of ``||mu_j - x_i||^2`` in the sampling logits.
    gamma1, gamma_flag : float
        Penalties (:func:`separating_penalties` with the Gumbel noise width).

    Returns
    -------
    params : dict
        ``Q1 .. V4`` and the mean block ``Qmu, Kmu, Vmu`` and its reset
        ``Qmu_reset, Kmu_reset, Vmu_reset``.
    emb : MedoidEmbedding

    Notes
    -----
    Proof sketch. Blocks 1, 2 and 4 are Theorem 2.1's (:func:`lloyd_weights`);
    they read only the ``x``/``y`` rows, so the extra rows change nothing.

    *Block mu* (queries centers, keys ``[Xbar', Cbar]``, averaging hardmax):
    Theorem 2.1's block 3 with the empty-cluster token (scores 0 for members,
    -1 for the own token, -2 and below otherwise) but ``V = copy x -> mu``: it
    writes ``mu_j`` (the member mean; ``c_j`` for an empty cluster) into the
    ``mu`` rows. *Block mu_reset* (identity self-attention on centers,
    ``V = -P_mu``) removes the previous ``mu``.

    *Block 3* (keys ``[Xbar', Cbar]``, hard Gumbel attention):
    ``Q3 = sqrt(gamma) copy(mu -> x) + sqrt(gamma1) P_Y``,
    ``K3 = sqrt(gamma) P_X + sqrt(gamma1) P_Y + sqrt(gamma_flag) P_flag``;
    the logit of point i for center j is
    ``-gamma ||x_i - mu_j||^2 - gamma1 ||y_i - e_j||^2`` (``-2 gamma1`` extra
    for non-members), the own token's is ``-gamma ||c_j - mu_j||^2 - gamma_flag``.
    Gumbel noise lies in an interval of width ``W`` (:data:`GUMBEL_WIDTH`), so
    with the penalties of :func:`separating_penalties` (margin ``1 + W``) the
    argmax of logit + noise is always a member when there is one (then it is
    exactly the reference's Gumbel-max draw over the members), and the own
    token when there is none. ``V3 = P_X`` writes that token's ``x`` rows:
    the sampled member ``x_{i*}``, or ``c_j``; block 4 subtracts the old ``c_j``.
    """
    emb = MedoidEmbedding(d, k)
    P_X, P_Y, P_T, P_M = (projector(emb, name) for name in ("x", "y", "flag", "mu"))
    params = {
        "Q1": P_X, "K1": P_X, "V1": P_Y,            # assign: write e_{j*}
        "Q2": P_X, "K2": P_X, "V2": -P_Y,           # reset: subtract old y_i
        "Qmu": P_Y, "Kmu": P_Y + P_T, "Vmu": _block_copy(emb, "x", "mu"),  # mean of members -> mu rows
        "Qmu_reset": P_Y, "Kmu_reset": P_Y, "Vmu_reset": -P_M,            # subtract old mu
        "Q3": np.sqrt(gamma) * _block_copy(emb, "mu", "x") + np.sqrt(gamma1) * P_Y,
        "K3": np.sqrt(gamma) * P_X + np.sqrt(gamma1) * P_Y + np.sqrt(gamma_flag) * P_T,
        "V3": P_X,                                  # the sampled token's x rows
        "Q4": P_Y, "K4": P_Y, "V4": -P_X,           # reset: subtract old c_j
    }
    return params, emb


def kmedoids_layer():
    """The k-medoids layer: encoder, then the mean sublayer, then the sampling sublayer.

    Each sublayer lists its reset block first, so the residual sum is
    ``(old - old) + new`` (exact in floating point), as in :func:`lloyd_layer`.
    """
    return (
        Sublayer("X", (Block("2", keys="X", normalizer="hardmax", gamma=np.inf),
                       Block("1", keys="C", normalizer="hardmax", gamma=np.inf))),
        Sublayer("C", (Block("mu_reset", keys="C", normalizer="hardmax", gamma=np.inf),
                       Block("mu", keys="X+C", normalizer="hardmax_average", gamma=np.inf))),
        Sublayer("C", (Block("4", keys="C", normalizer="hardmax", gamma=np.inf),
                       Block("3", keys="X+C", normalizer="gumbel", gamma=1.0, options=(("hard", True),)))),
    )


def randomized_kmedoids_transformer(X, C0, n_layers, gamma, rng, *, gamma1=None, gamma_flag=None,
                                    record=False, chunk_size=1024):
    r"""Randomized k-medoids transformer: an extra decoder block for mu_j, then hard Gumbel attention (**(open)**).

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_layers : int
    gamma : float
        ``0 <= gamma < inf``: sampling logits ``-gamma ||x_i - mu_j||^2``.
    rng : numpy.random.Generator
        Drives the Gumbel noise (one (n + k, k) draw per layer). The same
        Generator state given to
        :func:`kmt_ref.reference_sparse.randomized_kmedoids` gives the
        identical trace.
    gamma1, gamma_flag : float, optional
        Default: :func:`separating_penalties` with the Gumbel noise width.
    record : bool
    chunk_size : int

    Returns
    -------
    ClusteringTrace

    Notes
    -----
    Every center becomes a member point sampled with probability
    ``softmax_{i in S_j}(-gamma ||x_i - mu_j||^2)``, ``mu_j`` the member mean;
    an empty cluster keeps its center; a singleton moves onto its point;
    exact ties of logit + noise go to the lowest key index (``np.argmax``).
    Proof: :func:`kmedoids_weights`. The whole construction is the project's
    own (SPEC §5 "(open)").
    """
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    gamma = check_gamma(gamma, "gamma", allow_inf=False)
    rng = check_rng(rng)
    g = frame.gamma(gamma)  # it weighs squared data distances: scaled into the frame
    gamma1, gamma_flag = _penalties(X, C0, g, gamma1, gamma_flag, noise_width=GUMBEL_WIDTH)
    d, k = C0.shape
    params, emb = kmedoids_weights(d, k, g, gamma1, gamma_flag)
    # block 3 has k queries: never split it into chunks, so the noise is one (n + k, k) draw per layer
    chunk_size = max(check_count(chunk_size, "chunk_size", minimum=1), k)
    trace = run_layers(X, params, kmedoids_layer(), emb, C0, n_layers, rng=rng, record=record,
                       chunk_size=chunk_size, frame=frame)
    trace.info.update(variant="kmedoids", gamma=gamma, gamma1=gamma1, gamma_flag=gamma_flag)
    return trace
