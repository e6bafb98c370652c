"""A whole hand-set layer on plain NumPy (:func:`fast_layer_forward`), and what it remembers (:class:`Memo`).

The layer applies the block shortcuts of :mod:`kmt_ref.core.exact.limits` in the layer's order and
does the residual sums in place; tests/core/test_exact_layer.py compares it with the plain path
(:func:`kmt_ref.core.attention.layer_forward` with ``exact=False``) token by token on the shared
case table.
"""
from __future__ import annotations

import numpy as onp

from ...columns import _ArgminScratch, _scratch, segment_sums
from ...trace import CHUNK, distance_blocks, distance_width, nearest_labels, query_chunks, squared_norms
from .limits import (_projected, _same_rows, duplicate_groups, is_disjoint_uniform, one_hot_columns, project,
                     same_map, segment_mean, selection, used_rows)

__all__ = ["Memo", "fast_layer_forward"]


class Memo:
    """Facts about rows of the token arrays, each kept until a block writes those rows.

    :func:`fast_layer_forward` makes every change to the tokens itself (the
    residual sums), so it knows when a fact stops holding: before a block's
    output is added to ``Z[rows]``, every fact about any of those rows is
    dropped (:meth:`forget`). The facts, each about ``Z[rows]`` of one token array Z:

    - ``"hot"``: its columns are exactly one-hot (entries +0 and 1) or 0, with
      these labels (those of :func:`one_hot_columns`, -1 for a zero column).
      Recorded when a block writes a one-hot selection onto rows of +0 (block 1
      at gamma = inf writes ``e_l`` into every y_i that block 2 has just reset).
      Read by a later block whose keys are those rows (block 3's lookup) and by
      the read-out (:func:`kmt_ref.core.tokens.run_layers`): two passes over
      the k x n codes fewer per layer.
    - ``"distinct"``: its columns are pairwise distinct, so gamma = inf
      self-attention with Q = K over them is the identity (:func:`_hard_self`).
      The data rows of the point tokens are never written, so the reset block
      of every later layer skips the hash and the sort of :func:`duplicate_groups`.
    - ``"nearest"``: ``(labels, keys)``: ``labels`` are
      :func:`kmt_ref.trace.nearest_labels` ``(Z[rows], keys)`` for the key
      values ``keys`` (a copy). Block 1 computes them with its scores, at gamma
      = inf and at finite gamma alike; the read-out uses them for the
      objective of the centers the layer started from, where it would
      otherwise search for the nearest centers once more.
    - ``"sqnorms"``: ``np.sum(Z[rows] ** 2, axis=0)``, the squared norms that
      :func:`kmt_ref.trace.nearest_labels` would compute of these queries
      (:func:`kmt_ref.trace.squared_norms`, the same numbers). Block 1 at gamma
      = inf records them for the data rows, which no block writes: every later
      layer's search skips that pass over the d x n data.

    A fact holds the array itself (so no other array can take its ``id``).
    Whatever else writes the tokens must :meth:`clear` the memo
    (:func:`kmt_ref.core.attention.layer_forward` does when it takes the plain path).
    """

    def __init__(self):
        self._facts = {}  # (kind, id(Z), rows as a tuple) -> (Z, value)

    @staticmethod
    def _key(kind, Z, rows):
        return kind, id(Z), tuple(onp.arange(Z.shape[-2])[rows].tolist())

    def get(self, kind, Z, rows):
        """The fact ``kind`` about ``Z[rows]``, or None."""
        fact = self._facts.get(self._key(kind, Z, rows))
        return None if fact is None or fact[0] is not Z else fact[1]

    def one_hot(self, Z, rows):
        """The labels of ``Z[rows]`` if a "hot" fact covers its first rows and the rest are 0, else None.

        Rows of zeros after one-hot rows leave every column's 1, and so its
        label, where it was (block 3's keys are y and the flag, which is 0 on
        every point token: one short pass over the flag finds it).
        """
        want = self._key("hot", Z, rows)[2]
        for (kind, _, have), (arr, labels) in self._facts.items():
            if kind == "hot" and arr is Z and want[: len(have)] == have and not onp.any(Z[list(want[len(have):])]):
                return labels
        return None

    def put(self, kind, Z, rows, value):
        self._facts[self._key(kind, Z, rows)] = (Z, value)

    def forget(self, Z, rows):
        """``Z[rows]`` is about to be written: drop every fact about any of these rows."""
        written = set(onp.arange(Z.shape[-2])[rows].tolist())
        for key in [key for key, (arr, _) in self._facts.items() if arr is Z and written & set(key[2])]:
            del self._facts[key]

    def clear(self):
        self._facts.clear()

    def __iter__(self):
        """Every fact, as ``(kind, Z, rows, value)`` (rows a tuple of row indices)."""
        return ((kind, Z, rows, value) for (kind, _, rows), (Z, value) in self._facts.items())


class _OneHot:
    """``values[:, idx]`` where every column of ``values`` is one-hot or 0 (entries 1 and +0, no -0).

    Its columns are ``e_l`` for the labels ``l = hot[idx]`` (0 where -1). Written
    onto rows of +0 (``0 + out`` is ``out`` exactly) it is a fill and one scatter
    of q ones, instead of a gather and an add of m x q numbers; anywhere else,
    :meth:`dense` is the gather itself.
    """

    def __init__(self, values, idx, hot):
        self.values, self.idx, self.labels = values, idx, hot[idx]

    def dense(self):
        return self.values[:, self.idx]

    def write(self, Y):
        """Set ``Y`` (m, q) to this matrix (every label >= 0 and Y contiguous: one scatter into its flat view)."""
        Y[...] = 0.0
        if self.labels.min(initial=0) < 0:
            cols = onp.flatnonzero(self.labels >= 0)
            Y[self.labels[cols], cols] = 1.0
        elif Y.flags.c_contiguous:
            at = self.labels * Y.shape[1]  # (q,) the flat index of each column's 1
            at += onp.arange(Y.shape[1])
            Y.reshape(-1)[at] = 1.0
        else:
            Y[self.labels, onp.arange(Y.shape[1])] = 1.0


def _remember_nearest(memo, Z, Q, selQ, K, selK, rows, KZk, labels):
    """Record that ``labels`` are :func:`~kmt_ref.trace.nearest_labels` of the queries (rows of Z) among the keys KZk.

    Only for queries and keys that are rows of the tokens (unsigned selections) and few keys, whose
    values are kept (the keys change when their block writes them; the fact is about these values).
    """
    q_rows = _view_rows(Q, selQ, rows) if selQ is not None and selQ[2] == 1.0 else None
    k_rows = _view_rows(K, selK, rows) if selK is not None and selK[2] == 1.0 else None
    if q_rows is not None and k_rows is not None and KZk.shape[1] <= CHUNK:
        memo.put("nearest", Z, q_rows, (labels, KZk.copy()))


def _query_norms(memo, Z, Q, selQ, rows, QZ):
    """:func:`~kmt_ref.trace.squared_norms` of the queries QZ, from ``memo`` when QZ is rows of Z it knows.

    Kept (``"sqnorms"``) only for queries that are rows of the tokens (an unsigned selection), until
    a block writes those rows; others are computed here (the same numbers as nearest_labels' own).
    """
    q_rows = _view_rows(Q, selQ, rows) if selQ is not None and selQ[2] == 1.0 else None
    x_sq = None if q_rows is None else memo.get("sqnorms", Z, q_rows)
    if x_sq is None:
        x_sq = squared_norms(QZ)
        if q_rows is not None:
            memo.put("sqnorms", Z, q_rows, x_sq)
    return x_sq


def _view_rows(W, sel, rows):
    """The rows of Z that ``_projected(W, Z, sel, rows)`` returns (times the selection's sign), or None."""
    if sel is not None and (rows is None or _same_rows(sel[0], rows, W.shape[0])):
        return sel[1]
    return None


def _hard_euclidean_cross(Z, parts, Q, K, V, normalizer, scale, memo):
    """gamma = inf Euclidean cross-attention of the queries Z over the key parts (token arrays side by side).

    Returns ``(v_rows, out)``: the rows of the output that V can write, and
    their values (len(v_rows), q); None when no exact shortcut applies (the
    caller then computes the block plainly). Both shortcuts compute the plain
    path's scores ``-((||K z'||^2 + ||Q z||^2) - 2 (K z').(Q z))`` entry by entry
    in the same arithmetic:

    - ``hardmax`` over one key part: :func:`kmt_ref.trace.nearest_labels`,
      block by block (its ``(q_sq + k_sq) - 2 k.q``, the same numbers;
      its argmin is the lowest-index argmax of their negation); with one-hot
      value columns (block 1's ``e_j``) the output is an :class:`_OneHot`;
    - ``hardmax_average`` with a first part of one-hot (or zero) projected keys
      (:func:`one_hot_columns`): such a key's score against a query is the
      score of the basis vector it equals, so the m + 1 scores of the basis
      vectors and of 0 are computed once, and each key's score is looked up by
      its label: O(r) work. The mean over the tied maxima is then accumulated
      key by key, as :func:`segment_mean` does on the plain path. The labels
      come from ``memo`` when a block of this layer wrote those keys (:class:`Memo`).
    """
    from ..blocks import scores_from_projections  # the plain path's scores, for the small tables

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
        idx = nearest_labels(QZ, keys[0], _query_norms(memo, Z, Q, selQ, rows, QZ))  # (q,) lowest-index argmax
        _remember_nearest(memo, Z, Q, selQ, K, selK, rows, keys[0], idx)
        hot = one_hot_columns(values[0]) if values[0].shape[1] <= CHUNK else None  # small: (d_v, r)
        if hot is not None and not onp.signbit(values[0]).any():
            return v_rows, _OneHot(values[0], idx, hot)
        return v_rows, values[0][:, idx]  # (fancy indexing gathers faster than take along axis 1)
    k_rows = _view_rows(K, selK, rows) if selK is not None and selK[2] == 1.0 else None
    labels = None if k_rows is None else memo.one_hot(parts[0], k_rows)
    labels = one_hot_columns(keys[0]) if labels is None else labels
    if labels is None or any(P.shape[-1] > CHUNK for P in parts[1:]):
        return None
    kq, q = QZ.shape  # kq = the projected rows: k one-hot rows (k + 1 with the flag row)
    basis = onp.concatenate([onp.eye(kq), onp.zeros((kq, 1))], axis=1)  # the kq + 1 possible keys
    table = scores_from_projections(basis, QZ, "euclidean", scale)  # (kq + 1, q)
    rest = [scores_from_projections(Kp, QZ, "euclidean", scale) for Kp in keys[1:]]  # small (r_p, q)
    present = onp.bincount(onp.where(labels < 0, kq, labels), minlength=kq + 1) > 0  # (kq + 1,); a zero key: row kq
    best = onp.max(onp.concatenate([table[present]] + rest), axis=0)  # (q,) the maximum of each query
    top_table, top_rest = table == best, [S == best for S in rest]
    if onp.any(top_table[present].sum(axis=1) > 1) or any(onp.any(t.sum(axis=1) > 1) for t in top_rest):
        return None  # a key serving two queries: the plain path's dense mean
    query_of = onp.where(top_table.any(axis=1), onp.argmax(top_table, axis=1), -1)  # (kq + 1,)
    seg = query_of[labels]  # (r_0,) the query each key of the first part serves, -1 for none
    member = seg >= 0
    every = bool(member.all())  # (the usual case: no mask to apply)
    seg_m = seg if every else seg[member]
    counts = onp.bincount(seg_m, minlength=q) + sum(t.sum(axis=0) for t in top_rest)  # (q,)
    # summed key by key, in key order (segment_mean's arithmetic: segment_sums equals its bincount)
    out = segment_sums(values[0] if every else values[0][:, member], seg_m, q)  # (d_v, q)
    for row in range(out.shape[0]):
        for t, vals in zip(top_rest, values[1:]):
            for i in onp.flatnonzero(t.any(axis=1)):
                out[row, onp.argmax(t[i])] += vals[row, i]
    return v_rows, out / counts


def _soft_cross(Z, P, Q, K, V, blk, chunk_size, memo):
    """Finite-gamma cross-attention of the queries Z over the keys P, on plain NumPy; ``(v_rows, out)`` or None.

    The plain path's computation (:func:`kmt_ref.core.attention.attention`: the same query chunks, scores,
    normalizer and product, or :func:`segment_mean`) on row views of the tokens, only for the rows V
    writes. A product's rounding can depend on its number of rows, so the product with the weights keeps
    the plain path's (d_emb, r) operand (the keys themselves when V selects rows in place); a product
    with one-hot rows (block 1's values) is an exact lookup instead.
    """
    from ..blocks import scores_from_projections
    from ..normalizers import get_normalizer

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
    euclidean = blk.score == "euclidean" and blk.normalizer == "softmax"
    q_sq = _query_norms(memo, Z, Q, selQ, rows, QZ) if euclidean else None  # (q,) kept while Z[rows] is
    for a, b in query_chunks(q, r, chunk_size):
        Qc = QZ[:, a:b] if big else QZ
        fast = _euclidean_softmax(KZk, Qc, blk.scale, blk.gamma, q_sq[a:b]) if euclidean else None
        if fast is None:
            W = sigma(scores_from_projections(KZk, Qc, blk.score, blk.scale), gamma=blk.gamma, axis=-2)
        else:
            W = fast[0]
            if not big:  # the queries' nearest keys come free with the scores: remember them
                _remember_nearest(memo, Z, Q, selQ, K, selK, rows, KZk, fast[1])
        if is_disjoint_uniform(W):
            outs.append(segment_mean(W > 0, VZk, slice(None)))
        elif hot is not None:  # row hot[m] of W, 0 for hot[m] = -1; W itself when V's values are the identity
            identity = onp.array_equal(hot, onp.arange(W.shape[0]))
            outs.append(W if identity else onp.where((hot >= 0)[:, None], W[onp.maximum(hot, 0)], 0.0))
        else:  # the plain path's product, with its (d_emb, r) operand
            outs.append(onp.matmul(P if in_place else project(V, None, P), W)[selV[0]])
    return selV[0], outs[0] if len(outs) == 1 else onp.concatenate(outs, axis=-1)


def _euclidean_softmax(KZk, QZ, scale, gamma, q_sq=None):
    """``(W, labels)``: ``softmax(scores_from_projections(KZk, QZ, "euclidean", scale), gamma, axis=0)``
    and :func:`kmt_ref.trace.nearest_labels` ``(QZ, KZk)``; None if a query's maximum score is not finite.

    The scores are ``-D`` for the squared distances D of
    :func:`kmt_ref.trace.distance_blocks` (the plain path's expression;
    ``-(a - b)`` is exact), divided by ``scale``; then the softmax's own
    operations in its order: the maximum, subtracted, times gamma, exp,
    divided by the sum. All of it block by block (:func:`~kmt_ref.trace.distance_width` queries), so that every
    operation runs on a block in cache (the products are taken block by block,
    as :func:`~kmt_ref.trace.nearest_labels` takes them: the caveat of its
    docstring). exp only runs on scores above -1000 (below, e^x is +0, which
    NumPy's exp reaches by a slow path): in place where many are, else on
    those alone (elementwise: the same numbers). The labels are the lowest
    argmin of the same D by nearest_labels' own function: they *are*
    nearest_labels, not a second search that could round differently. ``q_sq``:
    the queries' squared norms (:func:`kmt_ref.trace.squared_norms`), if at hand. When a
    maximum is not finite (NaN, +inf, or every score -inf) the caller's plain
    path raises its error.
    """
    r, q = KZk.shape[1], QZ.shape[1]
    W, labels = onp.empty((r, q)), onp.empty(q, dtype=onp.intp)
    width = min(q, distance_width(r) + 1)  # the widest block of distance_blocks
    E, argmin = onp.empty(r * width), _ArgminScratch(r, width)
    for a, b, T in distance_blocks(QZ, KZk, q_sq):  # T holds D, then the scores, in place
        labels[a:b] = argmin.argmin(T)
        onp.negative(T, out=T)
        if scale != 1.0:
            T /= scale
        M = onp.max(T, axis=0, keepdims=True)
        if not onp.isfinite(M).all():
            return None
        T -= M
        Eb = _scratch(E, r, b - a)
        Eb[...] = 0.0  # exp(x) is +0 for x <= -1000 (e^x < 2^-1075)
        with onp.errstate(over="ignore"):  # gamma (s - max) is -inf far below the maximum: weight 0
            T *= gamma
            live = T > -1000.0
            if onp.count_nonzero(live) > live.size // 8:
                onp.exp(T, out=Eb, where=live)
            else:  # large gamma, few live scores: exp of those alone, put back in place
                at = onp.flatnonzero(live)
                Eb.ravel()[at] = onp.exp(T.ravel()[at])
        onp.divide(Eb, onp.sum(Eb, axis=0, keepdims=True), out=W[:, a:b])
    return W, labels


def _hard_self(Z, Q, K, V, memo):
    """gamma = inf Euclidean self-attention with Q = K, lowest-index hardmax (:func:`self_attention_limit`).

    Returns ``(v_rows, out)``, or ``(v_rows, (in_rows, sign))`` for identity
    attention (all keys distinct): the output is then ``sign * Z[in_rows]``,
    left to the caller as a view. Keys that are rows of Z (K a selection) and
    found distinct once stay distinct until those rows are written (``memo``).
    """
    selK, selV = selection(K), selection(V)
    if selV is None:
        return None
    if selK is not None and memo.get("distinct", Z, selK[1]):
        return selV[0], selV[1:]  # identity attention
    first, _ = duplicate_groups(_projected(K, Z, selK))
    if onp.array_equal(first, onp.arange(Z.shape[-1])):
        if selK is not None:
            memo.put("distinct", Z, selK[1], True)
        return selV[0], selV[1:]  # identity attention
    return selV[0], _projected(V, Z, selV)[:, first]


def fast_layer_forward(params, Xbar, Cbar, layer, overwrite=False, chunk_size=None, memo=None):
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
    :func:`kmt_ref.core.tokens.run_layers` owns its tokens). ``memo`` (a
    :class:`Memo`, used only with ``overwrite=True``, when the returned
    arrays are the ones passed in) carries facts about the token rows from
    one layer to the next and out to the read-out; it is updated in place.
    """
    from ..blocks import FeedForward, attention
    from ..normalizers import HARD

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
    memo = memo if overwrite and memo is not None else Memo()  # facts about copies would not outlive the call
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
                    res = _soft_cross(Z, parts[0], Q, K, V, blk, chunk_size, memo)
            elif blk.keys == sub.stream and blk.normalizer == "hardmax" and same_map(Q, K):
                res = _hard_self(Z, Q, K, V, memo)
            elif blk.keys != sub.stream:
                res = _hard_euclidean_cross(Z, parts, Q, K, V, blk.normalizer, blk.scale, memo)
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
            if rows is not None:
                memo.forget(Z, rows)
            same = zeroed is not None and isinstance(rows, slice) and rows == zeroed
            if zeroed is not None and (out is None or not same):
                Z[zeroed], zeroed = 0.0, None
            if out is None:
                zeroed = rows
            elif same and isinstance(out, _OneHot):  # e_l onto +0: exactly e_l, known one-hot from now on
                out.write(Z[rows])
                memo.put("hot", Z, rows, out.labels)
                zeroed = None
            elif same:
                onp.add(out, 0.0, out=Z[rows])  # one pass instead of two
                zeroed = None
            else:
                Z[rows] += out.dense() if isinstance(out, _OneHot) else out
    return streams["X"], streams["C"]
