r"""What makes the gamma = inf limits exact and fast: each shortcut of :func:`kmt_ref.core.attention.attention`, with its proof.

:mod:`kmt_ref.core.attention` states the equation, ``A(Z, Z'; Q, K, V, sigma) =
V Z' sigma(S)``, and computes it plainly for finite gamma. When the normalizer
is a hard one (``hardmax``, ``hardmax_average``: the gamma = inf limit) or the
weights are hand-set projectors, the same numbers can be had exactly and
without the (r, q) matrices; the functions here do that, and nothing else:

=============================  =================================================================
:func:`project`                ``W Z + b`` computing only the nonzero sub-block of a hand-set W
                               (the same sum without its exact-zero terms)
:func:`used_rows`              the rows of Q, K (and V) that can change a score (an output)
:func:`same_map`               Q = K with equal biases: self-attention has its maximum on the diagonal
:func:`self_attention_limit`   gamma = inf Euclidean self-attention with Q = K by grouping
                               identical keys: O(n log n), no n x n matrix, no rounding
:func:`hard_cross`             gamma = inf cross-attention: a column selection (lowest-index
                               hardmax) or a mean over the tied maxima (averaging hardmax)
:func:`segment_mean`           a uniform mean over disjoint key sets, summed key by key: the
                               very arithmetic of :func:`kmt_ref.algorithms.lloyd.cluster_means`
:func:`is_disjoint_uniform`    recognises such a mean among computed weights (normmax, alpha = inf)
:func:`selection`              W as a signed row selection: ``W Z`` is a view of rows of Z
:func:`one_hot_columns`        the labels of exactly one-hot (or zero) columns, in one pass
:func:`fast_layer_forward`     a whole hand-set layer with selection weights on plain NumPy: at
                               gamma = inf no (r, q) matrix, block 3 by one-hot lookup in O(n);
                               finite-gamma blocks on views (:func:`_soft_cross`); residual sums in place
=============================  =================================================================

Every shortcut is tested against the plain path on the shared case table (tests/core/test_exact.py,
tests/core/test_exact_layer.py). They work on plain NumPy arrays; the autograd path (training) never
takes them, except :func:`project`, which on that path is plainly ``W Z + b``.
"""
from __future__ import annotations

import autograd.numpy as np
import numpy as onp
from autograd.tracer import getval

from ..trace import CHUNK, nearest_labels

__all__ = [
    "support",
    "project",
    "used_rows",
    "same_map",
    "duplicate_groups",
    "self_attention_limit",
    "segment_mean",
    "is_disjoint_uniform",
    "hard_cross",
    "selection",
    "one_hot_columns",
    "fast_layer_forward",
]


# --------------------------------------------------------------------------
# Projector weights: only their nonzero sub-block
# --------------------------------------------------------------------------
def support(mask):
    """Indices where ``mask`` is true, as a slice when they are contiguous (a view, no copy)."""
    idx = onp.flatnonzero(mask)
    if idx.size and idx[-1] - idx[0] + 1 == idx.size:
        return slice(int(idx[0]), int(idx[-1]) + 1), idx.size
    return idx, idx.size


def project(W, b, Z, rows=None):
    """``W Z + b`` for Z of shape (..., d_in, m); W (d_out, d_in); b (d_out,) or None.

    With ``rows`` (a slice or index array) only those output rows are returned.
    Hand-set weights are mostly zero (projectors onto row blocks). When nothing
    is being differentiated, only the nonzero sub-block of W is multiplied: the
    same sum without its exact-zero terms.
    """
    if type(W) is not onp.ndarray or type(Z) is not onp.ndarray:  # autograd path
        out = np.matmul(W, Z)  # (..., d_out, m)
        return out if b is None else out + b[:, None]
    if rows is not None:
        W = W[rows]
        b = None if b is None else onp.asarray(b)[rows]
    nz_rows, n_rows = support(onp.any(W != 0, axis=1))
    cols, n_cols = support(onp.any(W != 0, axis=0))
    if n_rows * n_cols > W.size // 2:
        out = onp.matmul(W, Z)
    else:
        out = onp.zeros(Z.shape[:-2] + (W.shape[0], Z.shape[-1]))  # (..., d_out, m)
        if n_rows and n_cols:
            out[..., nz_rows, :] = onp.matmul(W[nz_rows][:, cols], Z[..., cols, :])
    if b is not None:
        out += b[:, None]
    return out


def used_rows(Q, K, V, bQ=None, bK=None, bV=None):
    """The rows of ``Q, K`` that can change a score, and the rows of ``V`` that can be nonzero.

    A row where Q, K and their biases are all zero adds ``0`` to every projected query and key, so it
    adds nothing to any score (Euclidean or dot); a zero row of V (and bV) writes 0. Returns
    ``(rows, v_rows)``, each a slice or an index array (a slice when contiguous: a view, no copy);
    ``slice(None)`` on the autograd path.
    """
    if not (type(Q) is onp.ndarray and type(K) is onp.ndarray and type(V) is onp.ndarray):
        return slice(None), slice(None)
    used = onp.any(Q != 0, axis=1) | onp.any(K != 0, axis=1)
    for b in (bQ, bK):
        if b is not None:
            used = used | (onp.asarray(b) != 0)
    v_used = onp.any(V != 0, axis=1) if bV is None else onp.any(V != 0, axis=1) | (onp.asarray(bV) != 0)
    return support(used)[0], support(v_used)[0]


def same_map(Q, K, bQ=None, bK=None):
    """``Q = K`` and ``bQ = bK``: queries and keys are the same map of the same tokens.

    Then in self-attention the Euclidean score ``-||K z_l - Q z_i||^2`` is ``<= 0`` with equality
    exactly on the tokens equal to ``z_i`` under that map (:func:`self_attention_limit`).
    """
    if not onp.array_equal(getval(Q), getval(K)):
        return False
    if bQ is None and bK is None:
        return True
    return bQ is not None and bK is not None and onp.array_equal(getval(bQ), getval(bK))


# --------------------------------------------------------------------------
# gamma = inf self-attention with Q = K: group identical keys
# --------------------------------------------------------------------------
def duplicate_groups(KZ):
    """Group the columns of KZ (d_k, n) by exact equality.

    Returns ``first`` (index of the lowest column in the group of each column,
    shape (n,)) and ``inverse`` (a group id per column, shape (n,)).

    Equal columns have equal hashes ``h = sum_m r_m KZ[m]`` (computed row by
    row, the same operations for every column), so only columns that share a
    hash value can be equal; those few are grouped exactly with ``np.unique``.
    Cost: one pass over KZ and one sort of n numbers.
    """
    n = KZ.shape[-1]
    r = onp.random.default_rng(12345).uniform(1.0, 2.0, KZ.shape[0])  # fixed weights, not global state
    h = onp.zeros(n)
    for m in range(KZ.shape[0]):
        h += r[m] * KZ[m]
    hs = onp.sort(h)
    if not onp.any(hs[1:] == hs[:-1]):  # all hashes distinct, so all columns distinct (a sort without indices)
        return onp.arange(n), onp.arange(n)
    order = onp.argsort(h, kind="stable")
    hs = h[order]
    same = hs[1:] == hs[:-1]  # (n-1,) neighbours in sorted order sharing a hash
    first = onp.arange(n)
    inverse = onp.arange(n)
    if not same.any():
        return first, inverse
    in_run = onp.zeros(n, dtype=bool)
    in_run[:-1] |= same
    in_run[1:] |= same
    cand = onp.sort(order[in_run])  # candidate columns, ascending index
    _, first_c, inv_c = onp.unique(
        onp.ascontiguousarray(KZ[:, cand].T), axis=0, return_index=True, return_inverse=True
    )
    inv_c = inv_c.reshape(-1)
    first[cand] = cand[first_c[inv_c]]  # lowest index of the exact-equality group
    inverse = first.copy()  # group id: its lowest member
    return first, inverse


def _self_attention_limit_2d(KZ, VZ, normalizer, want_weights):
    r"""Exact gamma = inf limit of Euclidean self-attention with Q = K.

    Proof. With keys equal to queries and Q = K (biases equal too), the score
    ``-||K z_l - K z_i||^2`` is <= 0 and equals 0 exactly when
    ``K z_l = K z_i``. So the maximum of column i is 0, attained on the set
    ``G(i) = {l : K z_l = K z_i}`` (which contains i). The lowest-index
    hardmax selects ``min G(i)``; the averaging hardmax takes the mean of
    ``V z_l`` over ``G(i)``. Grouping the columns of ``K Z`` by exact equality
    finds every ``G(i)`` in O(n log n) time and O(n d) memory, with no n x n
    score matrix and no rounding in the comparison (the expanded formula
    ``||a||^2 + ||b||^2 - 2 a.b`` is not exactly 0 on the diagonal).
    When all keys are distinct this is identity attention, the form the
    authors used for the reset blocks 2 and 4 in their validation.
    """
    first, inverse = duplicate_groups(KZ)
    n = KZ.shape[-1]
    if onp.array_equal(first, onp.arange(n)):  # all keys distinct: identity attention
        return VZ, (onp.eye(n) if want_weights else None)
    if normalizer == "hardmax":
        out = VZ[:, first]  # (d_v, n)
        W = None
        if want_weights:
            W = onp.zeros((n, n))
            W[first, onp.arange(n)] = 1.0
        return out, W
    # averaging hardmax: mean of V z over the group
    counts = onp.bincount(inverse, minlength=n)  # group sizes, indexed by group id
    sums = onp.stack([onp.bincount(inverse, weights=row, minlength=n) for row in VZ])  # (d_v, n)
    out = (sums[:, inverse] / counts[inverse])
    W = None
    if want_weights:
        W = (inverse[:, None] == inverse[None, :]) / counts[inverse][None, :]
    return out, W


def self_attention_limit(KZ, VZ, normalizer, want_weights=False):
    """:func:`_self_attention_limit_2d` for tokens (d, n) or a batch (B, d, n), one instance at a time.

    Returns ``out`` (.., d_v, n), or ``(out, W, None)`` with ``want_weights``
    (the record's dense weights; no raw scores on this path).
    """
    if KZ.ndim == 2:
        out, W = _self_attention_limit_2d(KZ, VZ, normalizer, want_weights)
    else:
        parts = [_self_attention_limit_2d(KZ[b], VZ[b], normalizer, want_weights) for b in range(KZ.shape[0])]
        out = onp.stack([p[0] for p in parts])
        W = onp.stack([p[1] for p in parts]) if want_weights else None
    return (out, W, None) if want_weights else out


# --------------------------------------------------------------------------
# gamma = inf cross-attention: selections and means in the reference's arithmetic
# --------------------------------------------------------------------------
def segment_mean(top, VZk, v_rows):
    """Mean of the columns of VZk (d_v, r) over each query's key set, summed in key order.

    ``top`` (r, q) is boolean with at most one True per row (every key serves at most one query). The
    sums are accumulated key by key with ``np.bincount``, the same arithmetic as
    :func:`kmt_ref.algorithms.lloyd.cluster_means`, so a mean of the same points is the same number.
    """
    q = top.shape[1]
    member = top.any(axis=1)  # (r,)
    seg = onp.argmax(top, axis=1)[member]  # query of each member key
    counts = top.sum(axis=0)  # (q,)
    out = onp.zeros((VZk.shape[0], q))  # (d_v, q)
    for m in onp.arange(VZk.shape[0])[v_rows]:  # rows of V that are not identically zero
        out[m] = onp.bincount(seg, weights=VZk[m][member], minlength=q) / counts
    return out


def is_disjoint_uniform(W):
    """True if W (r, q), not being differentiated, is a uniform mean over disjoint key sets.

    That is: every column is ``1/m`` on ``m >= 1`` keys and 0 elsewhere, and no key serves two queries.
    Such an attention is a plain mean, computed by :func:`segment_mean` with the reference's arithmetic.
    """
    if type(W) is not onp.ndarray or W.ndim != 2 or W.shape[0] < W.shape[1]:  # q disjoint sets need q <= r keys
        return False
    top = W > 0
    counts = top.sum(axis=0)  # a total above r: some key serves two queries (checked first: one fast sum)
    return bool(onp.all(counts > 0) and counts.sum() <= W.shape[0] and onp.all(top.sum(axis=1) <= 1)
                and onp.array_equal(W, top / counts))


def hard_cross(S, VZk, normalizer, v_rows=slice(None)):
    """gamma = inf attention from a score matrix S (..., r, q): exact selection or mean."""
    if normalizer == "hardmax":
        idx = onp.argmax(S, axis=-2)  # (..., q): lowest index among maxima
        if VZk.ndim == 2:  # gather only the rows V can write
            out = onp.zeros((VZk.shape[0], idx.size))  # (d_v, q)
            out[v_rows] = VZk[v_rows][:, idx]
            return out
        return onp.take_along_axis(VZk, idx[..., None, :], axis=-1)
    top = S == onp.max(S, axis=-2, keepdims=True)  # (..., r, q)
    if top.ndim == 2 and onp.all(top.sum(axis=1) <= 1):
        return segment_mean(top, VZk, v_rows)
    return onp.matmul(VZk, top / top.sum(axis=-2, keepdims=True))


# --------------------------------------------------------------------------
# A whole layer at gamma = inf, on plain NumPy, without (r, q) matrices
# --------------------------------------------------------------------------
def selection(W):
    """``(out_rows, in_rows, sign)`` if ``W`` is ``sign`` times a row selection, else None.

    That is: the nonzero entries of W form one square sub-block ``sign * I``
    (sign +1 or -1), so ``(W Z)[out_rows] = sign * Z[in_rows]`` and the other
    rows of ``W Z`` are 0. A projector ``P_X`` is the selection of the data rows.
    The rows are slices when contiguous, so ``Z[in_rows]`` is a view.
    """
    if type(W) is not onp.ndarray or W.ndim != 2:
        return None
    rows, m = support(onp.any(W != 0, axis=1))
    cols, m2 = support(onp.any(W != 0, axis=0))
    if m == 0 or m != m2:
        return None
    sign = float(W[rows][:, cols].flat[0])
    if sign not in (1.0, -1.0) or not onp.array_equal(W[rows][:, cols], sign * onp.eye(m)):
        return None
    return rows, cols, sign


def _projected(W, Z, sel, rows=None):
    """Rows ``rows`` (default: those W can write) of ``W Z``: a view ``Z[in_rows]`` when W is a selection
    onto exactly those rows (times its sign: a copy for -1), else the product (:func:`project`)."""
    if sel is not None and (rows is None or _same_rows(sel[0], rows, W.shape[0])):
        return Z[sel[1]] if sel[2] == 1.0 else -Z[sel[1]]
    return project(W, None, Z, used_rows(W, W, W)[0] if rows is None else rows)


def _same_rows(a, b, size):
    return onp.array_equal(onp.arange(size)[a], onp.arange(size)[b])


def one_hot_columns(A):
    """``labels`` (n,) if every column of A (m, n) is zero or a standard basis vector, else None.

    ``labels[i]`` is the row of the 1 in column i, or -1 for a zero column.
    Exact: every entry must be 0 or 1, and then the matrix product
    ``[1 ... 1; 0 1 ... m-1] A`` computes, without rounding (sums of at most m
    small integers), each column's count of ones (at most 1 required) and the
    row of its 1. Computed CHUNK columns at a time.
    """
    m, n = A.shape
    labels = onp.empty(n, dtype=onp.intp)
    weights = onp.stack([onp.ones(m), onp.arange(m, dtype=float)])  # (2, m)
    for a in range(0, n, CHUNK):
        B = A[:, a : a + CHUNK]
        if not onp.all((B == 0) | (B == 1)):
            return None
        count, row = weights @ B  # (w,) each, exact integers
        if count.max(initial=0) > 1:
            return None
        labels[a : a + CHUNK] = onp.where(count == 1, row, -1)
    return labels


def _hard_euclidean_cross(Z, parts, Q, K, V, normalizer, scale):
    """gamma = inf Euclidean cross-attention of the queries Z over the key parts (token arrays side by side).

    Returns ``(v_rows, out)``: the rows of the output that V can write, and
    their values (len(v_rows), q); None when no exact shortcut applies (the
    caller then computes the block plainly). Both shortcuts compute the plain
    path's scores ``-((||K z'||^2 + ||Q z||^2) - 2 (K z').(Q z))`` entry by entry
    in the same arithmetic:

    - ``hardmax`` over one key part: :func:`kmt_ref.trace.nearest_labels`,
      CHUNK queries at a time (its ``(q_sq + k_sq) - 2 k.q``, the same numbers;
      its argmin is the lowest-index argmax of their negation);
    - ``hardmax_average`` with a first part of one-hot (or zero) projected keys
      (:func:`one_hot_columns`): such a key's score against a query is the
      score of the basis vector it equals, so the m + 1 scores of the basis
      vectors and of 0 are computed once, and each key's score is looked up by
      its label: O(r) work. The mean over the tied maxima is then accumulated
      key by key, as :func:`segment_mean` does on the plain path.
    """
    from .attention import scores_from_projections  # the plain path's scores, for the small tables

    selQ, selK, selV = selection(Q), selection(K), selection(V)
    if selV is None:
        return None
    v_rows = selV[0]
    rows = used_rows(Q, K, V)[0]  # the rows of Q and K that can change a score, as on the plain path
    QZ = _projected(Q, Z, selQ, rows)  # (m, q)
    keys = [_projected(K, P, selK, rows) for P in parts]  # (m, r_p) each
    values = [_projected(V, P, selV) for P in parts]  # (d_v, r_p) each
    if normalizer == "hardmax":
        if len(parts) != 1 or scale != 1.0:  # a division could create ties the selection must see
            return None
        idx = nearest_labels(QZ, keys[0])  # (q,) lowest-index argmax of the scores
        return v_rows, values[0][:, idx]  # (fancy indexing gathers faster than take along axis 1)
    labels = one_hot_columns(keys[0])
    if labels is None or any(P.shape[-1] > CHUNK for P in parts[1:]):
        return None
    m, q = QZ.shape
    basis = onp.concatenate([onp.eye(m), onp.zeros((m, 1))], axis=1)  # the m + 1 possible keys
    table = scores_from_projections(basis, QZ, "euclidean", scale)  # (m + 1, q)
    rest = [scores_from_projections(Kp, QZ, "euclidean", scale) for Kp in keys[1:]]  # small (r_p, q)
    present = onp.bincount(onp.where(labels < 0, m, labels), minlength=m + 1) > 0  # (m + 1,); a zero key: row m
    best = onp.max(onp.concatenate([table[present]] + rest), axis=0)  # (q,) the maximum of each query
    top_table, top_rest = table == best, [S == best for S in rest]
    if onp.any(top_table[present].sum(axis=1) > 1) or any(onp.any(t.sum(axis=1) > 1) for t in top_rest):
        return None  # a key serving two queries: the plain path's dense mean
    query_of = onp.where(top_table.any(axis=1), onp.argmax(top_table, axis=1), -1)  # (m + 1,)
    seg = query_of[labels]  # (r_0,) the query each key of the first part serves, -1 for none
    member = seg >= 0
    every = bool(member.all())  # (the usual case: no mask to apply)
    seg_m = seg if every else seg[member]
    counts = onp.bincount(seg_m, minlength=q) + sum(t.sum(axis=0) for t in top_rest)  # (q,)
    out = onp.empty((values[0].shape[0], q))
    for row in range(out.shape[0]):  # summed key by key, in key order (segment_mean's arithmetic)
        out[row] = onp.bincount(seg_m, weights=values[0][row] if every else values[0][row][member], minlength=q)
        for t, vals in zip(top_rest, values[1:]):
            for i in onp.flatnonzero(t.any(axis=1)):
                out[row, onp.argmax(t[i])] += vals[row, i]
    return v_rows, out / counts


def _soft_cross(Z, P, Q, K, V, blk, chunk_size):
    """Finite-gamma cross-attention of the queries Z over the keys P, on plain NumPy; ``(v_rows, out)`` or None.

    The plain path's computation (:func:`kmt_ref.core.attention.attention`: the same query chunks, scores,
    normalizer and product, or :func:`segment_mean`) on row views of the tokens, only for the rows V
    writes. A product's rounding can depend on its number of rows, so the product with the weights keeps
    the plain path's (d_emb, r) operand (the keys themselves when V selects rows in place); a product
    with one-hot rows (block 1's values) is an exact lookup instead.
    """
    from .attention import scores_from_projections
    from .normalizers import get_normalizer

    selQ, selK, selV = selection(Q), selection(K), selection(V)
    if selV is None:
        return None
    rows = used_rows(Q, K, V)[0]
    QZ, KZk, VZk = _projected(Q, Z, selQ, rows), _projected(K, P, selK, rows), _projected(V, P, selV)
    sigma = get_normalizer(blk.normalizer)
    q, r = Z.shape[-1], P.shape[-1]
    big = chunk_size and q > chunk_size and r > chunk_size
    hot = one_hot_columns(VZk.T) if VZk.shape[1] <= CHUNK else None  # the row of each value row's 1, or -1
    in_place = selV[2] == 1.0 and _same_rows(selV[0], selV[1], V.shape[0])
    outs = []
    for a in range(0, q, chunk_size) if big else [0]:
        Qc = QZ[:, a : a + chunk_size] if big else QZ
        if blk.score == "euclidean" and blk.normalizer == "softmax":
            W = _euclidean_softmax(KZk, Qc, blk.scale, blk.gamma)
        else:
            W = sigma(scores_from_projections(KZk, Qc, blk.score, blk.scale), gamma=blk.gamma, axis=-2)
        if is_disjoint_uniform(W):
            outs.append(segment_mean(W > 0, VZk, slice(None)))
        elif hot is not None:  # row hot[m] of W, 0 for hot[m] = -1; W itself when V's values are the identity
            identity = onp.array_equal(hot, onp.arange(W.shape[0]))
            outs.append(W if identity else onp.where((hot >= 0)[:, None], W[onp.maximum(hot, 0)], 0.0))
        else:  # the plain path's product, with its (d_emb, r) operand
            outs.append(onp.matmul(P if in_place else project(V, None, P), W)[selV[0]])
    return selV[0], outs[0] if len(outs) == 1 else onp.concatenate(outs, axis=-1)


def _euclidean_softmax(KZk, QZ, scale, gamma):
    """``softmax(scores_from_projections(KZk, QZ, "euclidean", scale), gamma, axis=0)``: the same operations
    on the same numbers, in place in one (r, q) array instead of a new array per operation."""
    from ..validation import check_score_max
    S = onp.sum(KZk * KZk, axis=0)[:, None] + onp.sum(QZ * QZ, axis=0)[None, :]  # (r, q)
    T = onp.matmul(KZk.T, QZ)
    T *= 2.0
    T -= S  # 2 k.q - (||k||^2 + ||q||^2) = -((||k||^2 + ||q||^2) - 2 k.q) exactly (a - b = -(b - a))
    if scale != 1.0:
        T /= scale
    M = onp.max(T, axis=0, keepdims=True)
    check_score_max(M, T, 0, who="softmax")
    T -= M
    T *= gamma
    E = onp.zeros_like(T)  # exp(x) is +0 for x <= -1000 (e^x < 2^-1075): exp (slow there) only runs on the others
    with onp.errstate(over="ignore"):
        onp.exp(T, out=E, where=T > -1000.0)
    E /= onp.sum(E, axis=0, keepdims=True)
    return E


def _hard_self(Z, Q, K, V):
    """gamma = inf Euclidean self-attention with Q = K, lowest-index hardmax (:func:`self_attention_limit`).

    Returns ``(v_rows, out)``, or ``(v_rows, (in_rows, sign))`` for identity
    attention (all keys distinct): the output is then ``sign * Z[in_rows]``,
    left to the caller as a view.
    """
    selK, selV = selection(K), selection(V)
    if selV is None:
        return None
    first, _ = duplicate_groups(_projected(K, Z, selK))
    if onp.array_equal(first, onp.arange(Z.shape[-1])):
        return selV[0], selV[1:]  # identity attention
    return selV[0], _projected(V, Z, selV)[:, first]


def fast_layer_forward(params, Xbar, Cbar, layer, overwrite=False, chunk_size=None):
    """:func:`kmt_ref.core.attention.layer_forward` on plain NumPy for hand-set layers, or None.

    Applies when the tokens are plain 2-D arrays and every block is a
    Euclidean attention with hard normalizer, or (finite gamma) a Euclidean or
    dot attention with ``softmax`` or ``linear``, with no biases, no
    post-operation, no options and no dropout, whose V (and Q, K where a
    shortcut needs it) is a signed row selection (:func:`selection`). Each
    block's output is computed only on the rows V writes (:func:`_hard_self`,
    :func:`_hard_euclidean_cross`, :func:`_soft_cross`; a block without
    shortcut is computed by :func:`~kmt_ref.core.attention.attention`),
    and the residual sums are done in place, block by block in the layer's
    order: ``stream[rows] += out``, the very additions of the plain path on
    the rows where ``out`` is not 0 (elsewhere the plain path adds 0).
    One exact shortcut: when a block writes ``-Z[rows]`` into the rows it
    reads and nothing has been added there yet, ``z + (-z)`` is +0 for every
    finite z, and the rows are set to 0.

    ``overwrite=True`` lets the streams passed in be overwritten (the loop of
    :func:`kmt_ref.core.tokens.run_layers` owns its tokens).
    """
    from .attention import FeedForward, attention
    from .normalizers import HARD

    if type(Xbar) is not onp.ndarray or type(Cbar) is not onp.ndarray or Xbar.ndim != 2 or Cbar.ndim != 2:
        return None
    for sub in layer:
        if isinstance(sub, FeedForward):
            return None
        for blk in sub.blocks:
            hard = blk.normalizer in HARD and blk.score == "euclidean"
            soft = blk.normalizer in ("softmax", "linear") and blk.gamma < onp.inf
            if (not (hard or soft) or blk.post is not None or blk.dropout or blk.options
                    or any(params.get(b + blk.name) is not None for b in ("bQ", "bK", "bV"))
                    or any(type(params[m + blk.name]) is not onp.ndarray for m in "QKV")):
                return None
    streams = {"X": Xbar if overwrite else Xbar.copy(), "C": Cbar if overwrite else Cbar.copy()}
    for sub in layer:
        Z = streams[sub.stream]
        outs = []
        for blk in sub.blocks:
            Q, K, V = (params[m + blk.name] for m in "QKV")
            parts = [streams[s] for s in blk.keys.split("+")]
            res = None
            if blk.normalizer not in HARD:
                if blk.keys != sub.stream and len(parts) == 1:
                    res = _soft_cross(Z, parts[0], Q, K, V, blk, chunk_size)
            elif blk.keys == sub.stream and blk.normalizer == "hardmax" and same_map(Q, K):
                res = _hard_self(Z, Q, K, V)
            elif blk.keys != sub.stream:
                res = _hard_euclidean_cross(Z, parts, Q, K, V, blk.normalizer, blk.scale)
            if res is None:  # no shortcut: the plain computation (dense, for small blocks)
                Zk = parts[0] if len(parts) == 1 else onp.concatenate(parts, axis=-1)
                res = (slice(None), attention(Z, Zk, Q, K, V, score=blk.score, normalizer=blk.normalizer,
                                              gamma=blk.gamma, scale=blk.scale, self_attention=blk.keys == sub.stream,
                                              chunk_size=chunk_size))
            outs.append(res)
        # views of Z (sign * Z[in_rows]) become arrays before Z changes; -Z[rows] first on its rows is +0
        adds, touched = [], []
        for rows, out in outs:
            if isinstance(out, tuple):
                in_rows, sign = out
                if sign == -1.0 and in_rows == rows and isinstance(rows, slice) and not touched:
                    out = None
                else:
                    out = sign * Z[in_rows]
            adds.append((rows, out))
            touched.append(rows)
        zeroed = None  # rows set to +0 and not yet written: the next add to them is (+0) + out = out + 0.0
        for rows, out in adds + [(None, None)]:
            same = zeroed is not None and isinstance(rows, slice) and rows == zeroed
            if zeroed is not None and (out is None or not same):
                Z[zeroed], zeroed = 0.0, None
            if out is None:
                zeroed = rows
            elif same:
                onp.add(out, 0.0, out=Z[rows])  # one pass instead of two
                zeroed = None
            else:
                Z[rows] += out
    return streams["X"], streams["C"]
