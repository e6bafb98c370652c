r"""Robust k-means (the authors' rule): sparsemax-weighted centers; as a transformer, sparsemax in block 3.

The classical rule (SPEC §5; the authors' code, ``rithram/kmeans-trf``)::

    l_i = argmin_j ||x_i - c_j||^2                           (ties: lowest j)
    p   = sparsemax over the members M_j of -gamma ||x_i - c_j||^2 / sqrt(d)
    c_j <- sum_{i in M_j} p_i x_i                            (empty: c_j)

(``utils.rkm_iters`` of the authors' code, except the empty cluster: theirs
re-seeds it with a random point.) The circuit (:func:`robust_kmeans_transformer`) is Theorem 2.1 with block 3's
normalizer replaced by sparsemax over one Euclidean score that keeps
non-members out (:mod:`kmt_ref.algorithms.sparse_update`).

**Equality: to rounding, not bit for bit.** The circuit's centers agree with
:func:`robust_kmeans`'s to 1e-10 times the data's extent (plus, where the
data's frame is shifted, the read-out's rounding: 2 ulps of the data's
largest coordinate), and the labels are equal up to the first step where a
point's two centers are equidistant to 1e-10 of the squared extent (judged
in exact rational arithmetic). Tested by
``tests/properties/test_variant_properties.py``:
``test_robust_circuit_is_its_rule_to_rounding`` (hard inputs, ``gamma`` in
{0, 0.7, 1, 5}) and ``test_robust_in_the_data_units_is_its_rule_to_rounding``
(``gamma`` of 0.25 to 30 over the data's squared extent).
"""
from __future__ import annotations

import numpy as np

from ..core.tokens import prepare, run_layers
from ..validation import check_count, check_gamma
from .lloyd import finish_trace, start_trace
from .sparse_update import (assign_then_update, direct_weights, member_scores, penalties, sparse_update_layer,
                            sparse_update_weights)

__all__ = ["robust_kmeans", "robust_kmeans_transformer"]


# ==========================================================================
# The classical algorithm (plain NumPy)
# ==========================================================================
def _sparsemax_plain(z):
    """Sparsemax of a 1-D vector by Martins & Astudillo's support test (an independent form).

    The scores are first shifted to a maximum of exactly 0 (sparsemax is invariant under a shift):
    the support test ``1 + s z_(s) > z_{1:s}`` then holds at ``s = 1`` in floating point too, where
    for scores of size 1e16 (a far center) ``1 + z_(1)`` would round to ``z_(1)`` and leave no support.
    """
    z = z - np.max(z)
    z_desc = np.sort(z)[::-1]
    csum = np.cumsum(z_desc)
    s = np.arange(1, z.size + 1)
    support = 1.0 + s * z_desc > csum  # true on a prefix
    k_z = int(s[support][-1])
    tau = (csum[k_z - 1] - 1.0) / k_z
    return np.maximum(z - tau, 0.0)


def robust_kmeans(X, C0, n_iter, gamma=0.01, empty="keep"):
    r"""Robust k-means of the authors' code: Lloyd's assignment, sparsemax-weighted centers.

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_iter : int
    gamma : float
        ``0 <= gamma < inf``; the authors' default is 0.01. ``gamma = 0``
        gives equal weights: Lloyd.
    empty : {"keep"}

    Returns
    -------
    ClusteringTrace

    Notes
    -----
    SPEC §5 (the authors' rule; ``rithram/kmeans-trf``)::

        l_i = argmin_j ||x_i - c_j||^2                          (ties: lowest j)
        p   = sparsemax over the members M_j of  -gamma ||x_i - c_j||^2 / sqrt(d)
        c_j <- sum_{i in M_j} p_i x_i                           (empty: c_j)

    Sparsemax (Martins & Astudillo 2016) gives far members weight exactly 0
    once their score is more than the threshold below the best: outliers
    stop pulling the center. Equal distances get equal weights; a singleton
    cluster moves onto its point.

    The weighted sum is taken from an anchor ``a``, the first member of
    largest weight: ``c_j = a + sum_i p_i (x_i - a) / sum_i p_i``, the same
    number in exact arithmetic. So a cluster whose weighted members are
    copies of one point moves onto that point exactly (each ``x_i - a`` is an
    exact 0), as the circuit's block 3 does
    (:func:`kmt_ref.core.blocks.anchored_combination`); the plain product
    ``X p`` would land an ulp off, and a center that should coincide with a
    duplicated one would stop tying with it.

    Provenance: the authors' rule is ``utils.rkm_iters`` in
    ``rithram/kmeans-trf`` (``utils.py``): per iteration, squared
    distances, ``sqd, assign = min`` over the centers, and for each
    non-empty cluster ``sparsemax(-inv_temp * sqd[members] / sqrt(d)) @
    X[members]`` (``entmax.sparsemax``; ``inv_temp`` defaults to 0.01). This
    function is that rule, with one departure: an empty cluster keeps its
    center here, while theirs becomes NaN and is then replaced by a random
    data point. (Their distances come from ``torch.cdist``, ours are
    computed directly: rounding only.) ``tests/algorithms/test_robust.py``
    checks it against an independent NumPy transcription of their loop.
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    gamma = check_gamma(gamma, "gamma", allow_inf=False)
    g = frame.gamma(gamma) / np.sqrt(X.shape[0])  # acts on squared data distances

    def update(t, j, members, c):
        p = _sparsemax_plain(member_scores(X[:, members], c, g))  # (n_j,) the circuit's shifted scores
        a = X[:, members[np.argmax(p)]]  # the first member of largest weight: the anchor
        return a + (X[:, members] - a[:, None]) @ p / np.sum(p)  # copies of one point give that point

    assign_then_update(X, C, centers, labels, update)
    return finish_trace(X, centers, labels, {"gamma": gamma, "empty": empty}, frame)


# ==========================================================================
# The circuit
# ==========================================================================
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
        The trace of :func:`kmt_ref.algorithms.robust.robust_kmeans`, to
        rounding (the tolerance and its tests: the module docstring).

    Notes
    -----
    ``c_j <- sum_{i in M_j} p_i x_i`` with
    ``p = sparsemax_{i in M_j}(-gamma ||x_i - c_j||^2 / sqrt(d))``: the
    authors' robust rule (their code). The layer realising it -- block 3 with
    sparsemax over one Euclidean score ``-||K3 kbar - Q3 cbar||^2`` with
    ``g = gamma / sqrt(d)`` (:func:`sparse_update_weights`), the penalty and
    the default token -- is the project's construction. Its scores are
    computed from the tokens' differences and divided by ``1/g``
    (``score="euclidean_direct"``,
    :func:`~kmt_ref.algorithms.sparse_update.direct_weights`): a member's score is the reference's
    ``-||x_i - c_j||^2 / (1/g)``, shifted by the same maximum, bit for bit
    (:func:`~kmt_ref.algorithms.sparse_update.member_scores`), with no rounding at the scale of the
    penalties (which a far initial center with members makes large), so the
    weights differ only by the two sparsemax thresholds' rounding.

    Policies: as :func:`trimmed_kmeans_transformer`; equal distances get equal
    weights.

    Why the labels equal the reference's, duplicated centers included (the
    project's proof, **(open)**). Block 1 is Lloyd's assignment: identical
    centers give identical score rows, and the tie goes to the lowest index on
    both sides. Block 3's weights vanish outside the members' support (the
    penalties), and :func:`kmt_ref.core.attention.attention` sums a sparsemax
    block as ``v_a + sum_i w_i (v_i - v_a)`` from its key of largest weight
    (:func:`kmt_ref.core.blocks.anchored_combination`), as the reference sums
    from its member of largest weight. Hence (i) an empty cluster's support is
    its own token alone: ``c_j`` exactly; (ii) a cluster whose support is
    copies of one point moves onto that point exactly, on both sides, whatever
    the rounding of the weights (each difference ``v_i - v_a`` is an exact 0).
    A duplicated center that is pulled to where its copies stay (the members
    in its support all sit there) therefore still equals them bit for bit, and
    the next tie goes to the lowest index on both sides. Otherwise the two
    sides' centers agree to rounding (the same scores, but two formulas for the
    sparsemax threshold, each rounded its own way): a
    later assignment could then differ only where a point's two nearest
    centers are within rounding of each other without being copies; the
    whole-trajectory tests (``tests/algorithms/test_robust.py``: the shared
    degenerate cases and 40 seeded instances with duplicated centers, for
    gamma in {0, 0.7, 5}) meet none.
    """
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    gamma = check_gamma(gamma, "gamma", allow_inf=False)
    d, k = C0.shape
    g = frame.gamma(gamma) / np.sqrt(d)  # it weighs squared data distances: scaled into the frame
    gamma1, gamma_flag = penalties(X, C0, g, gamma1, gamma_flag)
    g_w, gamma1_w, flag_w, scale = direct_weights(g, gamma1, gamma_flag)  # scores -||x - c||^2 / (1/g) - ...
    params, emb = sparse_update_weights(d, k, g_w, gamma1_w, flag_w)
    layer = sparse_update_layer("sparsemax", scale=scale)
    trace = run_layers(X, params, layer, emb, C0, n_layers, record=record,
                       chunk_size=check_count(chunk_size, "chunk_size", minimum=1), frame=frame)
    trace.info.update(variant="robust", gamma=gamma, gamma1=gamma1, gamma_flag=gamma_flag)
    return trace
