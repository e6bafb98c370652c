r"""Theorem 2.2: Lloyd's algorithm with plain dot-product attention and a ReQU feed-forward block.

Theorem 2.2 (reported by the paper, from a summary; not verified against its text): plain
dot-product attention runs k-means exactly if the token embeddings carry their squared norms and a
feed-forward block with the rectified quadratic activation
``ReQU(z) = max(z, 0)^2`` updates them. The explicit construction below (token
layout, weights, the empty-cluster token, block 2) is the project's own
(SPEC §4, "(open)"); the authors' code has no Theorem 2.2 model::

    point tokens [x_i; ||x_i||^2; 1; y_i; 0],  center tokens [c_j; ||c_j||^2; 1; e_j; 1]
                                             (d + k + 3 rows: data, norm, one, y, flag)
    block 1:  (2 x_i).c_j - ||c_j||^2 = -||x_i - c_j||^2 + ||x_i||^2   (||x_i||^2 is constant over j)
    FFN:      sum_a ReQU(c_ja) + ReQU(-c_ja) = ||c_j||^2                (exact; c_ja the a-th coordinate)

The last row is the type flag (0 for points, 1 for centers): block 3 reads
it so that an empty cluster's own center token wins (its default token).

**Equality: to rounding, not bit for bit.** The dot score
``2 x.c - ||c||^2`` and Lloyd's ``||x||^2 + ||c||^2 - 2 x.c`` are the same
number in exact arithmetic but are rounded differently. On integer grids
(points 1 apart or identical) the centers agree with :func:`kmt_ref.lloyd`'s
to 8e-15 times the data's extent (plus, where the data's frame is shifted,
the read-out's rounding: 2 ulps of the data's largest coordinate), and the
labels are equal up to the first step where a point's two centers are
equidistant to 8e-15 of the squared extent (judged in exact rational
arithmetic):
``tests/properties/test_variant_properties.py::test_theorem_2_2_is_lloyd_to_rounding``.
On the shared case table,
``tests/algorithms/test_dot_product.py::test_dot_product_transformer_equals_lloyd_at_every_layer``
allows a label to differ only where, in exact arithmetic, both centers are
nearest to within ``8 eps (||x||^2 + ||c||^2)``. Block 2 has a known limit:
two distinct points within about ``1e-8 ||x||`` of each other and assigned
differently cannot be told apart (see :func:`dot_product_transformer`).

Its classical reference is :func:`kmt_ref.algorithms.lloyd.lloyd`. The change
to Theorem 2.1 (:mod:`kmt_ref.algorithms.lloyd`) is the token layout, the
score maps of the four blocks and one FFN; ``kmeans_transformer(...,
attention="dot")`` runs it (registered in
:data:`kmt_ref.algorithms.lloyd.OTHER_ATTENTIONS`).
"""
from __future__ import annotations

import numpy as np

from ..core.attention import FeedForward
from ..core.tokens import Embedding, prepare, projector, run_layers, with_block
from ..validation import check_count, check_gamma
from .lloyd import OTHER_ATTENTIONS, lloyd_layer

__all__ = ["dot_product_weights", "dot_product_layer", "dot_product_transformer"]


def dot_product_weights(d, k):
    r"""Hand-set weights of Theorem 2.2 (SPEC §4): dot-product scores only, plus a ReQU FFN.

    Parameters
    ----------
    d, k : int
        Data dimension and number of clusters.

    Returns
    -------
    params : dict
        ``Q1, K1, V1, ..., Q4, K4, V4`` (each (d_emb, d_emb)), ``W1`` (2d,
        d_emb) and ``W2`` (d_emb, 2d).
    emb : Embedding
        Layout ``("x", "norm", "one", "y", "flag")``, ``d_emb = d + k + 3``:
        point tokens ``[x_i; ||x_i||^2; 1; y_i; 0]``, center tokens
        ``[c_j; ||c_j||^2; 1; e_j; 1]``.

    Notes
    -----
    Proof sketch for the project's construction of Theorem 2.2 (the
    statement reported by the paper, from a summary; these weights, including the
    empty-cluster token and block 2, are the project's own, SPEC §4 "(open)").
    Scores are ``S_ji = (K z'_j) . (Q z_i)``; hardmax in the limit.

    *The norm trick* (blocks 1 and 2). ``Q_a z = [2x; -1]`` and
    ``K_a z = [x; ||x||^2]`` (both in the rows ``x``, ``norm``):
    ``(K_a z'_j) . (Q_a z_i) = 2 x_i . x'_j - ||x'_j||^2
    = ||x_i||^2 - ||x_i - x'_j||^2``. The term ``||x_i||^2`` is the same for
    every key of query i, and softmax, hardmax and the averaging hardmax are
    shift invariant per query, so these scores select exactly what the
    Euclidean scores ``-||x_i - x'_j||^2`` of Theorem 2.1 select.

    *Block 1* (Q_a, K_a, V1 = P_Y; keys: centers): point i takes the nearest
    center ``j*``, lowest index on ties, and writes ``e_{j*}``.

    *Block 2* (Q_a, K_a, V2 = -P_Y; keys: points): the score is largest at the
    copies of x_i, which carry the same ``y`` as x_i; it writes ``-y_i``.
    Blocks 2 + 1 give ``(y_i - y_i) + e_{j*} = e_{j*}``.

    *Block 3* (Q3 = P_Y, K3 z = y - 1/2 flag 1_k, V3 = P_X; keys: points and
    centers). Against point i the score is ``e_j . y_i`` = 1 for members of
    cluster j, 0 otherwise. Against center token l it is
    ``e_j . (e_l - 1/2 1_k) = [j = l] - 1/2`` (``[j = l]`` is 1 if j = l,
    else 0): 1/2 for the center's own token,
    -1/2 for the others. So 1 (members) > 1/2 (own token) > 0, -1/2: the
    averaging hardmax takes the members' mean ``mu_j`` when cluster j has
    members, and ``c_j`` when it is empty (Lloyd's "keep" policy). This is the
    dot-product form of the default token of Theorem 2.1's construction.

    *Block 4* (Q4 = K4 = P_Y, V4 = -(P_X + P_norm); keys: centers): scores
    ``e_l . e_j = [l = j]`` (1 if l = j, else 0), so it is identity attention; it writes
    ``-[c_j; ||c_j||^2]``, clearing the old center **and its old norm**.
    Blocks 4 + 3 give ``[mu_j; 0]`` in the rows ``x``, ``norm``.

    *FFN* ``z + W2 ReQU(W1 z)`` on the center stream, ``W1 = [I_d; -I_d]`` on
    the data rows, ``W2`` sums the 2d hidden units into the ``norm`` row:
    ``sum_a ReQU(c_ja) + ReQU(-c_ja) = sum_a c_ja^2 = ||c_j||^2`` (``c_ja``
    the a-th coordinate of ``c_j``), exactly
    (one of each pair is 0). It fills the cleared slot with the new norm.

    After one layer the tokens are again ``[x_i; ||x_i||^2; 1; e_{l_i}; 0]``
    and ``[c_j'; ||c_j'||^2; 1; e_j; 1]``: one layer is one Lloyd iteration,
    and only dot products were used.
    """
    emb = Embedding(d, k, ("x", "norm", "one", "y", "flag"))
    P_X, P_Y, P_N = projector(emb, "x"), projector(emb, "y"), projector(emb, "norm")
    x, y, norm, one, flag = (emb.rows(b) for b in ("x", "y", "norm", "one", "flag"))
    # the norm trick: query [2x; -1], key [x; ||x||^2]
    Q_a = 2.0 * P_X
    Q_a[norm, one] = -1.0
    K_a = P_X + P_N
    # block 3's key: y - 1/2 flag 1_k (the default token of an empty cluster scores 1/2)
    K3 = P_Y.copy()
    K3[y, flag] = -0.5
    # FFN: W1 = [I_d; -I_d] on the data rows, W2 sums all hidden units into the norm row
    W1 = np.zeros((2 * d, emb.d_emb))
    W1[:d, x] = np.eye(d)
    W1[d:, x] = -np.eye(d)
    W2 = np.zeros((emb.d_emb, 2 * d))
    W2[norm, :] = 1.0
    params = {
        "Q1": Q_a, "K1": K_a, "V1": P_Y,            # assign: write e_{j*}
        "Q2": Q_a.copy(), "K2": K_a.copy(), "V2": -P_Y,  # reset: subtract old y_i
        "Q3": P_Y, "K3": K3, "V3": P_X,             # update: mean of the members (or keep)
        "Q4": P_Y, "K4": P_Y, "V4": -(P_X + P_N),   # reset: subtract old c_j and ||c_j||^2
        "W1": W1, "W2": W2,                         # FFN: write the new ||c_j||^2
    }
    return params, emb


def dot_product_layer(gamma=np.inf, gamma_reset=np.inf, gamma_update=None, gamma_center_reset=None):
    """Layer description of Theorem 2.2: Theorem 2.1's layer with dot scores and a ReQU FFN.

    Parameters
    ----------
    gamma, gamma_reset, gamma_update, gamma_center_reset : float
        As in :func:`kmt_ref.algorithms.lloyd.lloyd_layer` (blocks 1, 2 + 4, 3, 4).

    Returns
    -------
    layer : tuple
        The Lloyd layer (reset blocks listed first, see
        :func:`~kmt_ref.algorithms.lloyd.lloyd_layer`) with ``score="dot"`` in
        all four blocks, followed by ``FeedForward("C", "requ")``.
    """
    layer = lloyd_layer(gamma, gamma_reset, "euclidean", gamma_update, gamma_center_reset)
    for name in ("1", "2", "3", "4"):
        layer = with_block(layer, name, score="dot")
    return layer + (FeedForward("C", activation="requ"),)


def dot_product_transformer(X, C0, n_layers, gamma=np.inf, *, gamma_reset=np.inf, gamma_update=None,
                            record=False, chunk_size=1024):
    r"""Run Theorem 2.2: Lloyd's algorithm with plain dot-product attention and a ReQU FFN.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column.
    C0 : array_like, shape (d, k)
        Initial centers, one per column.
    n_layers : int
        T >= 0 layers with shared, hand-set weights (:func:`dot_product_weights`).
    gamma : float
        Inverse temperature of block 1 (and block 3 unless ``gamma_update``
        is given). ``inf`` (default): the exact limit.
    gamma_reset : float
        Blocks 2 and 4; default ``inf`` (their exact limit, as in the
        authors' validation).
    gamma_update : float, optional
        Block 3.
    record : bool
        Keep each layer's tokens and attention matrices in ``trace.layers``.
    chunk_size : int
        Query chunk of the point self-attention (block 2): memory
        O(chunk_size * n). With dot scores block 2 has no O(n log n) shortcut, so
        it costs O(n^2 d) time per layer.

    Returns
    -------
    ClusteringTrace
        As :func:`kmt_ref.kmeans_transformer` (with ``record=True`` the
        ``||c_j||^2`` slot is visible in ``trace.layers[t].Cbar_out``).

    Notes
    -----
    Theorem 2.2 (reported by the paper, from a summary), by the project's own
    construction (SPEC §4, "(open)"); the proof sketch is in
    :func:`dot_product_weights`. Compared with Theorem 2.1
    (:func:`kmt_ref.kmeans_transformer`) it changes only the token layout
    (``||x||^2``, ``1``), the weights of the score maps and adds one FFN.

    Policies (at ``gamma = inf``): ties go to the lowest index; duplicates
    share their label; an empty cluster keeps its center (the default token of
    block 3); ``k = 1`` and ``k = n`` need nothing special. The labels equal
    :func:`kmt_ref.lloyd`'s except where rounding decides Lloyd's distance
    comparison: the two expansions round differently, so two centers whose
    squared distances to a point differ by less than about
    ``8 eps (||x||^2 + ||c||^2)`` may be ordered differently (the equality's
    strength and its tests: the module docstring). Block 2 relies on the
    diagonal score beating every other point's, which holds unless two
    distinct points lie within about ``1e-8 * ||x||`` of each other *and*
    were assigned differently.
    """
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    chunk_size = check_count(chunk_size, "chunk_size", minimum=1)
    gamma = check_gamma(gamma, "gamma")
    gamma_reset = check_gamma(gamma_reset, "gamma_reset")
    gamma_update = gamma if gamma_update is None else check_gamma(gamma_update, "gamma_update")
    d, k = C0.shape
    params, emb = dot_product_weights(d, k)
    # blocks 1 and 2 score data (scaled into the frame), blocks 3 and 4 one-hot codes (not)
    layer = dot_product_layer(frame.gamma(gamma), frame.gamma(gamma_reset, "gamma_reset"), gamma_update,
                              gamma_center_reset=gamma_reset)
    trace = run_layers(X, params, layer, emb, C0, n_layers, record=record, chunk_size=chunk_size, frame=frame)
    trace.info.update(gamma=gamma, gamma_reset=gamma_reset, attention="dot")
    return trace


OTHER_ATTENTIONS["dot"] = dot_product_transformer  # kmeans_transformer(..., attention="dot")
