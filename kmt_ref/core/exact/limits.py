"""The shortcuts of one attention block at gamma = inf (or with hand-set projector weights), each with its proof.

Overview and the table of what is here: :mod:`kmt_ref.core.exact`. Each function computes what the
plain path (:func:`kmt_ref.core.attention.attention`) computes, with the same numbers, and is tested
against it and against brute force (tests/core/test_exact.py).
"""
from __future__ import annotations

import autograd.numpy as np
import numpy as onp
from autograd.tracer import getval

from ...trace import CHUNK



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

    That is: every column is ``1/s`` on ``s >= 1`` keys and 0 elsewhere, and no key serves two queries.
    Such an attention is a plain mean, computed by :func:`segment_mean` with the reference's arithmetic.
    """
    if type(W) is not onp.ndarray or W.ndim != 2 or W.shape[0] < W.shape[1]:  # q disjoint sets need q <= r keys
        return False
    if onp.count_nonzero(W) > W.shape[0]:  # more nonzero weights than keys: a key serves two queries (one fast pass)
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
