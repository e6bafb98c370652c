r"""Randomized k-medoids **(open)**: every center becomes a member drawn near the member mean; as a transformer, hard Gumbel attention.

The classical rule (the project's own construction: no source we could read
states a k-medoids rule)::

    l_i  = argmin_j ||x_i - c_j||^2                           (ties: lowest j)
    mu_j = mean{x_i : l_i = j}
    c_j <- x_{i*},  i* ~ softmax_{i in M_j}(-gamma ||x_i - mu_j||^2)     (empty: c_j)

The circuit (:func:`randomized_kmedoids_transformer`): an extra decoder block
writes ``mu_j``, then block 3 is hard Gumbel attention over the members. The
same ``numpy.random.Generator`` stream drives both, and both compute the
same logits (the member mean summed in point order, the distances to it
directly, divided by ``1/gamma`` and shifted to a maximum of 0, plus the
noise).

**Equality.** Given Generators in the same state, the circuit and the
classical loop draw the same medoids: the same labels, and centers equal bit
for bit, the sign of zero included, tied medoids included. Tested by
``tests/properties/test_variant_properties.py``:
``test_kmedoids_circuit_is_its_rule_draw_for_draw`` (hard inputs, data
scaled from 1e-300 to 1e300 and shifted by up to 1e12, ``gamma`` in
{0, 0.25, 0.5, 1, 4, 30, 1000}) and
``test_kmedoids_in_the_data_units_is_its_rule_draw_for_draw`` (``gamma`` of
0.25 to 30 over the data's squared extent).
The classical loop draws its noise with :func:`kmt_ref.core.normalizers.gumbel_noise`,
the transformer's own sampler: that shared random stream is its one import from the core.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.attention import Block, Sublayer
from ..core.normalizers import gumbel_noise
from ..core.tokens import Embedding, prepare, projector, run_layers
from ..validation import check_count, check_gamma, check_rng
from .lloyd import cluster_means, finish_trace, start_trace
from .sparse_update import GUMBEL_WIDTH, assign_then_update, direct_weights, member_scores, penalties

__all__ = ["randomized_kmedoids", "MedoidEmbedding", "kmedoids_weights", "kmedoids_layer",
           "randomized_kmedoids_transformer"]


# ==========================================================================
# The classical algorithm (plain NumPy)
# ==========================================================================
def randomized_kmedoids(X, C0, n_iter, gamma, rng, empty="keep"):
    r"""Randomized k-medoids: every center becomes a member drawn with probability softmax(-gamma ||x_i - mu_j||^2).

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_iter : int
    gamma : float
        ``0 <= gamma < inf``. ``0``: a uniformly random member; large: the
        member closest to the mean (a medoid), chosen uniformly at random
        among members tied at that distance.
    rng : numpy.random.Generator
        The only source of randomness. Passing a Generator in the same state
        to :func:`kmt_ref.algorithms.kmedoids.randomized_kmedoids_transformer` gives
        the same trace (module docstring: the equality and its tests).
    empty : {"keep"}

    Returns
    -------
    ClusteringTrace
        ``info["medoids"]`` (T, k) int: the index of the point each center
        became at each step, ``-1`` for a kept (empty) center.

    Notes
    -----
    **(open)**: the project's own construction (SPEC §5). Step t::

        l_i  = argmin_j ||x_i - c_j||^2                        (ties: lowest j)
        mu_j = mean{x_i : l_i = j}
        c_j <- x_{i*},  i* ~ softmax_{i in M_j}(-gamma ||x_i - mu_j||^2)   (empty: c_j)

    The draw is the Gumbel-max trick: ``i* = argmax_{i in M_j}
    (S_i - max S + g_ij)``, ``S_i = -||x_i - mu_j||^2 / (1/gamma)`` (the
    shift changes no draw; scale and shift are the circuit's arithmetic,
    :func:`~kmt_ref.algorithms.sparse_update.member_scores`) with standard Gumbel ``g`` from
    :func:`kmt_ref.core.normalizers.gumbel_noise` (ties: lowest index). To share
    one random stream with the transformer, each step draws the noise array
    the transformer's block 3 draws, one variable per (key, center) pair with
    the keys ``[x_1 .. x_n, c_1 .. c_k]``: shape (n + k, k), C order; only the
    rows of the members are used.

    *Why it is a k-medoids rule.* A medoid of ``M_j`` (``n_j = |M_j|``
    members, mean ``mu_j``) is the member minimising its total squared
    distance to the others, ``sum_{l in M_j} ||x_i - x_l||^2``. Writing
    ``x_i - x_l = (x_i - mu_j) - (x_l - mu_j)`` and using
    ``sum_{l in M_j} (x_l - mu_j) = 0``::

        sum_{l in M_j} ||x_i - x_l||^2 = n_j ||x_i - mu_j||^2 + sum_{l in M_j} ||x_l - mu_j||^2,

    and the last sum does not depend on ``i``. So ranking members by
    ``||x_i - mu_j||^2`` is ranking them by the medoid cost:
    ``softmax(-gamma ||x_i - mu_j||^2)`` is the Gibbs distribution of the
    medoid cost at inverse temperature ``gamma / n_j``: as ``gamma -> inf``
    it concentrates on the medoids, so a unique medoid is picked (almost
    surely), and ``gamma = 0`` gives a uniform member. Tied medoids (members
    at exactly the same distance from ``mu_j``) have exactly equal logits at
    every ``gamma``, so the noise decides between them: each is drawn with
    the same probability, at ``gamma = 1e6`` as at ``gamma = 1``. (Four tied
    members over 400 seeds: 119, 101, 96, 84 draws; the transformer draws the
    very same members. The lowest-index rule above applies only to exact
    ties of logit + noise.) (With squared distances; the classical k-medoids
    of Kaufman & Rousseeuw uses unsquared ones, where no such identity holds.)
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    gamma = check_gamma(gamma, "gamma", allow_inf=False)
    rng = check_rng(rng)
    g = frame.gamma(gamma)  # acts on squared data distances
    n = X.shape[1]
    k = C.shape[1]
    medoids = np.full((n_iter, k), -1, dtype=np.intp)
    noise = {}

    def draw(t):
        noise["G"] = gumbel_noise(rng, (n + k, k))  # the transformer's (keys, queries) noise

    def update(t, j, members, c):
        mu = cluster_means(X[:, members], np.zeros(members.size, dtype=np.intp), c[:, None])[0][:, 0]  # in point order
        logits = member_scores(X[:, members], mu, g) + noise["G"][members, j]  # block 3's shifted scores + noise
        medoids[t, j] = members[int(np.argmax(logits))]  # Gumbel-max draw; ties: lowest index
        return X[:, medoids[t, j]]

    assign_then_update(X, C, centers, labels, update, per_step=draw)
    return finish_trace(X, centers, labels, {"gamma": gamma, "empty": empty, "medoids": medoids}, frame)


# ==========================================================================
# The circuit
# ==========================================================================
@dataclass(frozen=True)
class MedoidEmbedding(Embedding):
    """:class:`~kmt_ref.core.tokens.Embedding` with an extra ``mu`` row block (d rows, 0 at embedding).

    Default layout ``("x", "y", "flag", "mu")``: point tokens ``[x_i; y_i; 0; 0]``,
    center tokens ``[c_j; e_j; 1; 0]``. The first decoder sublayer writes the
    member mean ``mu_j`` into the ``mu`` rows of center j.
    """

    layout: tuple = ("x", "y", "flag", "mu")

    def size(self, name):
        return self.d if name == "mu" else super().size(name)

    def _stack(self, Z, embed):
        ncol = Z.shape[1]
        parts = [np.zeros((self.d, ncol)) if name == "mu" else embed(Embedding(self.d, self.k, (name,)), Z)
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


def kmedoids_layer(scale=1.0):
    """The k-medoids layer: encoder, then the mean sublayer, then the sampling sublayer.

    Each sublayer lists its reset block first, so the residual sum is
    ``(old - old) + new`` (exact in floating point), as in :func:`lloyd_layer`.
    Block 3 divides its direct distances by ``scale``
    (:func:`~kmt_ref.algorithms.sparse_update.direct_weights`).
    """
    return (
        Sublayer("X", (Block("2", keys="X", normalizer="hardmax", gamma=np.inf),
                       Block("1", keys="C", normalizer="hardmax", gamma=np.inf))),
        Sublayer("C", (Block("mu_reset", keys="C", normalizer="hardmax", gamma=np.inf),
                       Block("mu", keys="X+C", normalizer="hardmax_average", gamma=np.inf))),
        Sublayer("C", (Block("4", keys="C", normalizer="hardmax", gamma=np.inf),
                       Block("3", keys="X+C", score="euclidean_direct", normalizer="gumbel", gamma=1.0,
                             scale=scale, options=(("hard", True),)))),
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
        :func:`kmt_ref.algorithms.kmedoids.randomized_kmedoids` gives the
        same trace (module docstring: the equality and its tests).
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
    ``softmax_{i in M_j}(-gamma ||x_i - mu_j||^2)``, ``mu_j`` the member mean;
    an empty cluster keeps its center; a singleton moves onto its point;
    exact ties of logit + noise go to the lowest key index (``np.argmax``).
    Proof: :func:`kmedoids_weights`. The whole construction is the project's
    own (SPEC §5 "(open)").
    """
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    gamma = check_gamma(gamma, "gamma", allow_inf=False)
    rng = check_rng(rng)
    g = frame.gamma(gamma)  # it weighs squared data distances: scaled into the frame
    gamma1, gamma_flag = penalties(X, C0, g, gamma1, gamma_flag, noise_width=GUMBEL_WIDTH, initial=False)
    d, k = C0.shape
    g_w, gamma1_w, flag_w, scale = direct_weights(g, gamma1, gamma_flag)  # scores -||x - mu||^2 / (1/g) - ...
    params, emb = kmedoids_weights(d, k, g_w, gamma1_w, flag_w)
    # block 3 has k queries: never split it into chunks, so the noise is one (n + k, k) draw per layer
    chunk_size = max(check_count(chunk_size, "chunk_size", minimum=1), k)
    layer = kmedoids_layer(scale)
    trace = run_layers(X, params, layer, emb, C0, n_layers, rng=rng, record=record,
                       chunk_size=chunk_size, frame=frame)
    trace.info.update(variant="kmedoids", gamma=gamma, gamma1=gamma1, gamma_flag=gamma_flag)
    return trace
