r"""Block 3 over the members only: what trimmed, robust k-means and k-medoids share (SPEC §5).

Each variant is a small, named change of the Theorem 2.1 construction
(:func:`kmt_ref.algorithms.lloyd.lloyd_weights` / :func:`~kmt_ref.algorithms.lloyd.lloyd_layer`):
the encoder (blocks 1 and 2: Lloyd's assignment, ties to the lowest index) and
the center reset (block 4) are unchanged; only the center update changes.

=========================  ====================================================  =========================================
variant                    block 3 (queries: centers; keys ``[Xbar', Cbar]``)    classical reference
=========================  ====================================================  =========================================
trimmed k-means **(open)** alpha = inf normmax over ``-gamma1 ||e_j - y_i||^2``  :func:`~kmt_ref.algorithms.trimmed.trimmed_kmeans_attention`
                           ``- gamma2 ||c_j - x_i||^2``
robust k-means             sparsemax over ``-gamma1 ||e_j - y_i||^2``            :func:`~kmt_ref.algorithms.robust.robust_kmeans`
                           ``- gamma ||c_j - x_i||^2 / sqrt(d)``                 (the authors' rule)
randomized k-medoids       an extra decoder block writes the member mean mu_j;   :func:`~kmt_ref.algorithms.kmedoids.randomized_kmedoids`
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

Sparsemax gives weight exactly 0 to every score at or below its threshold
``tau >= max score - 1`` (:func:`kmt_ref.core.normalizers.simplex_threshold`),
alpha = inf normmax to every score below it (and at it only when the maximum is
unique and 1 above the rest), and neither moves ``tau`` for such scores. So if the
squared distance from every non-empty cluster's center to its nearest member is at
most ``D^2`` at every layer and

    gamma_flag >= g D^2 + 1,   2 gamma1 >= g D^2 + 1,   2 gamma1 >= gamma_flag + 1,

a cluster with members attends to its members only (with exactly the weights
of the normalizer applied to ``-g ||x_i - c_j||^2`` over the members), and an
empty cluster attends to its own token only, which writes ``c_j`` back
(Lloyd's "keep" policy). Only the distance from a center to its *best*
member matters (the conditions compare the best member with the others), so
``D^2`` need only bound that: :func:`separating_penalties` takes it from the
data's bounding box and from the farthest a point is from its nearest initial
center (:func:`member_distance_bound`), never from an empty center far away.
For the Gumbel block the noise adds at most the width of
:data:`kmt_ref.core.normalizers.GUMBEL_RANGE` to any gap, and the margins grow
by it.

Degenerate cases (all variants, pinned by tests): ties in the assignment go to
the lowest center index (block 1 is Lloyd's); an empty cluster keeps its
center; a singleton cluster moves onto its point; no step divides by zero, so
no NaN ever appears. Duplicated initial centers: the copies tie, the first
takes the points. A sparsemax center whose support is copies of one point
lands on it exactly, in the circuit and the reference alike (both sum from
the support's key of largest weight,
:func:`kmt_ref.core.blocks.anchored_combination`), so copies that stay
together keep tying; the uniform means of trimmed k-means and the medoids of
k-medoids are the reference's own arithmetic, bit for bit.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core.attention import Block
from ..core.normalizers import GUMBEL_RANGE
from ..core.tokens import projector
from ..trace import nearest_center, nearest_labels
from ..validation import check_gamma
from .lloyd import lloyd_layer, lloyd_weights

__all__ = ["separating_penalties", "member_distance_bound", "member_scores", "direct_weights", "score_scale", "sparse_update_weights", "sparse_update_layer",
           "GUMBEL_WIDTH"]

#: width of the Gumbel noise range: the most noise can change a score gap
GUMBEL_WIDTH = GUMBEL_RANGE[1] - GUMBEL_RANGE[0]


# --------------------------------------------------------------------------
# The classical side: Lloyd's assignment, then a per-cluster update
# --------------------------------------------------------------------------
def sq_dist(X, c):
    """``||x_i - c||^2`` for the columns of X (d, n_j), computed directly.

    The squared differences are added coordinate by coordinate, in order, from the first: the
    arithmetic of :func:`kmt_ref.core.blocks.direct_sq_distances` (the trimmed circuit's block 3
    scores), so that the two compute the same numbers.
    """
    diff = X - c[:, None]
    acc = diff[0] * diff[0]  # (n_j,)
    for row in diff[1:]:
        acc += row * row
    return acc


#: the coefficients ``g`` of the squared distance that block 3 takes as a score scale ``1/g`` (below: inside
#: the weights, as ``sqrt(g)``): within it ``1/g`` and the penalties divided by ``g`` are finite
SCALED_RANGE = (2.0**-900, 2.0**900)


def score_scale(g):
    """``1/g``, the ``scale`` block 3 divides its direct distances by (scores ``-||x - c||^2 / (1/g)``), or None.

    None for ``g = 0`` and outside :data:`SCALED_RANGE`; then ``sqrt(g)`` sits in the weights instead.
    """
    return 1.0 / g if SCALED_RANGE[0] <= g <= SCALED_RANGE[1] else None


def member_scores(Xm, c, g):
    """The members' block-3 scores ``-g ||x_i - c||^2``, as the circuits compute them, shifted to a maximum of 0.

    ``S_i = -||x_i - c||^2 / (1/g)`` (:func:`sq_dist`, :func:`score_scale`) minus ``max S``: the numbers
    block 3 of the trimmed, robust and k-medoids circuits hands its normalizer (direct distances
    between tokens that differ only in their data rows, the same division, the same shift), so that
    reference and circuit decide every tie alike; exact for a power-of-two ``g``. Outside
    :data:`SCALED_RANGE` the circuit carries ``sqrt(g)`` in its weights and scores
    ``-||sqrt(g) x_i - sqrt(g) c||^2``; so do these scores there. The shift also keeps a far center's
    huge scores from swallowing the ``1`` of the sparse normalizers' threshold.
    """
    scale = score_scale(g)
    if scale is not None:
        S = -sq_dist(Xm, c) / scale
    else:  # g = 0, or g * 2^(2e) past 2^(+-900) in the frame: the circuit's own arithmetic
        r = np.sqrt(g)
        S = -sq_dist(r * Xm, r * c)
    return S - np.max(S)


def direct_weights(g, gamma1, gamma_flag):
    """``(g_w, gamma1_w, gamma_flag_w, scale)``: block 3's weights and score scale for :func:`member_scores`.

    With ``s = 1/g`` (:func:`score_scale`): ``(1, gamma1 s, gamma_flag s, s)``, the weights of
    ``-||x_i - c_j||^2 - gamma1 s ||e_j - y_i||^2 - ...`` divided by ``s``: the same scores as
    ``(g, gamma1, gamma_flag, 1)`` in exact arithmetic, the members' computed as the reference's.
    """
    scale = score_scale(g)
    if scale is None or not np.isfinite(max(gamma1, gamma_flag) * scale):
        return g, gamma1, gamma_flag, 1.0
    return 1.0, gamma1 * scale, gamma_flag * scale, scale


def assign_then_update(X, C, centers, labels, update, per_step=None):
    """Lloyd's assignment, then ``c_j <- update(t, j, members, c_j)`` for every non-empty cluster.

    Fills ``centers[1:]`` and ``labels`` in place. An empty cluster keeps its
    center (the ``"keep"`` policy). ``per_step(t)``, if given, runs once per
    step after the assignment (e.g. to draw that step's random numbers).
    """
    k = C.shape[1]
    for t in range(labels.shape[0]):
        labels[t], _ = nearest_center(X, C)  # ties: lowest index
        if per_step is not None:
            per_step(t)
        C_new = C.copy()
        for j in range(k):
            members = np.flatnonzero(labels[t] == j)
            if members.size:
                C_new[:, j] = update(t, j, members, C[:, j])
        C = C_new
        centers[t + 1] = C


# --------------------------------------------------------------------------
# The circuit side: penalties that keep non-members out (the project's construction)
# --------------------------------------------------------------------------
def _bounding_diameter_sq(X):
    """Squared diameter of the bounding box of the columns of ``X``."""
    span = X.max(axis=1) - X.min(axis=1)  # (d,)
    return float(np.sum(span * span))


def member_distance_bound(X, C0, initial=True):
    """``D^2``: a bound on the squared distance from every non-empty cluster's center to its nearest member.

    ``max(diam^2, max_i min_j ||x_i - c_j||^2)``, ``diam`` the diameter of the
    bounding box of the data; the second term (the farthest any point is from
    its nearest initial center) only with ``initial`` (block 3 scores distances
    to the centers themselves, which start at ``C0``; k-medoids scores
    distances to the member mean, always in the data's convex hull).

    Why it bounds every layer. At the first step a member's distance to its
    center is its distance to its nearest initial center. After it, some
    center lies in the data's convex hull (every non-empty cluster moves
    there: a mean, a convex combination or a member), so every point has a
    center within ``diam``, and its nearest center is no farther. An initial
    center far from the data that stays empty does not enter the bound: its
    own token is alone in its block 3 whatever its distance.
    """
    D2 = _bounding_diameter_sq(X)
    if initial:
        labels = nearest_labels(X, C0)
        D2 = max(D2, float(np.max(sq_dist_columns(X, C0[:, labels]))))
    return D2


def sq_dist_columns(A, B):
    """``||a_i - b_i||^2`` for the paired columns of A and B (d, m), computed directly."""
    diff = A - B
    return np.einsum("dm,dm->m", diff, diff)


#: relative margin of the default penalties over ``g D^2``: the computed scores carry a rounding of
#: at most a few ``d_emb eps`` times the squared norms in them (a few tens of ``g D^2`` in a frame),
#: far below it for any ``d d_emb < 10^6``
RELATIVE_MARGIN = 2.0 ** -20


def separating_penalties(X, C0, g, noise_width=0.0, initial=True):
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
    initial : bool
        Whether block 3 scores distances to the centers (trimmed, robust) or
        to the member mean (k-medoids): :func:`member_distance_bound`.

    Returns
    -------
    gamma1, gamma_flag : float

    Notes
    -----
    With ``D^2`` of :func:`member_distance_bound` and ``w = 1 + noise_width``
    the width a score gap needs, returns
    ``gamma1 = gamma_flag = g D^2 (1 + 2^-20) + w + 1``. Then
    ``gamma_flag > g D^2 + w`` (the own token loses to the best member),
    ``2 gamma1 > g D^2 + w`` (every non-member loses to it) and
    ``2 gamma1 > gamma_flag + w`` (in an empty cluster the own token beats
    every non-member), each with one unit and ``2^-20 g D^2`` to spare for
    rounding (:data:`RELATIVE_MARGIN`). See the module docstring for the
    scores. ``D`` comes from the members, not from the bounding box of the
    initial centers: an empty center far from the data would otherwise make
    the penalties, and the rounding of every score they enter, as large as
    its distance.
    """
    D2 = member_distance_bound(X, C0, initial)
    value = g * D2 * (1.0 + RELATIVE_MARGIN) + 1.0 + noise_width + 1.0
    return value, value


def check_penalty(value, name):
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
        ``Q1 .. V4`` of :func:`kmt_ref.algorithms.lloyd.lloyd_weights` with
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


def sparse_update_layer(normalizer, options=(), score="euclidean_direct", scale=1.0):
    """Theorem 2.1's layer (gamma = inf encoder) with block 3 replaced by ``normalizer`` over ``[Xbar', Cbar]``.

    Block 3's scores are divided by ``scale`` (:func:`direct_weights`).
    """
    block3 = Block("3", keys="X+C", score=score, normalizer=normalizer, gamma=1.0, scale=scale,
                   options=tuple(options))
    layer = []
    for sub in lloyd_layer(np.inf, np.inf, "euclidean"):
        blocks = tuple(block3 if b.name == "3" else b for b in sub.blocks)
        layer.append(dataclasses.replace(sub, blocks=blocks))
    return tuple(layer)




def penalties(X, C0, g, gamma1, gamma_flag, noise_width=0.0, initial=True):
    """The penalties given, checked, or :func:`separating_penalties`' for those not given."""
    auto1, autof = separating_penalties(X, C0, g, noise_width, initial)
    gamma1 = auto1 if gamma1 is None else check_penalty(gamma1, "gamma1")
    gamma_flag = autof if gamma_flag is None else check_penalty(gamma_flag, "gamma_flag")
    return gamma1, gamma_flag
