"""The result object shared by every clustering algorithm in kmt_ref."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .columns import _ArgminScratch, _scratch
from .frame import data_frame
from .validation import as_points

__all__ = [
    "ClusteringTrace",
    "DeferredObjective",
    "kmeans_objective",
    "assign",
    "log_objective",
    "squared_distances",
    "nearest_center",
    "nearest_labels",
    "argmax_columns",
    "frame_objective",
    "query_chunks",
    "squared_norms",
    "CHUNK",
]

#: points per block of :func:`frame_objective` (whose sum of the blocks' terms fixes its last bits), of
#: the argmax of :func:`argmax_columns`, and the unit of the product blocks (PRODUCT_ENTRIES)
CHUNK = 2048

#: bytes of one block of squared distances in :func:`distance_blocks` (the widest block of at most this
#: many bytes, between CHUNK and 8 CHUNK points: :func:`distance_width`). Measured at one thread on a 2-core
#: AMD EPYC (1 MB L2 cache per core), n = 100,000, d = 16, k = 16, OpenBLAS's Haswell and SkylakeX kernels,
#: five alternating rounds on a loaded machine: the labels of :func:`nearest_labels` took 7.1-8.1 ms in
#: blocks of 2,048 points (256 kB) and 5.1-6.5 ms in blocks of 8,192 (1 MB): each block costs a dozen
#: NumPy calls, and the block stays in the L2 cache
BLOCK_BYTES = 2**20

#: entries of one matrix product of :func:`distance_blocks` (:func:`product_blocks`), 16 MB: few
#: and large products, because a threaded BLAS splits each one over its threads and waits for them
#: (measured on a loaded 2-core machine, n = 100,000, k = d = 16: 49 products of 2,048 points took
#: more than five times as long on two threads as on one), while the memory stays bounded
PRODUCT_ENTRIES = 2**21


@dataclass
class ClusteringTrace:
    """What a clustering algorithm (classical or transformer) did, step by step.

    Attributes
    ----------
    centers : ndarray, shape (T+1, d, k)
        ``centers[0]`` are the initial centers, ``centers[t]`` those after step t.
    labels : ndarray of int, shape (T, n)
        ``labels[t]`` is the assignment made in step t+1 (to ``centers[t]``).
        For a transformer: the lowest index of the largest entry of y_i.
    objective : ndarray, shape (T+1,)
        ``sum_i min_j ||x_i - c_j||^2`` for ``centers[t]``, in data units. For
        data near the ends of float64's range it can overflow to ``inf`` (or
        underflow to 0), while :attr:`log_objective` stays finite. May be
        given as a :class:`DeferredObjective`: it is then computed when
        :attr:`objective` or :attr:`log_objective` is first read (the same
        numbers; :func:`kmt_ref.lloyd` and the transformers defer it, so that
        a run whose objective nobody reads does not pay for it).
    assignments : ndarray, shape (k, n) or None
        Final assignment block Y (one-hot, or soft responsibilities).
    one_hot : ndarray of int, shape (T,) or None
        Transformers only: how many columns of Y are exactly one-hot after each layer.
    layers : list of LayerRecord or None
        Transformers with ``record=True``: tokens and attention matrices per layer.
    info : dict
        Anything else an algorithm reports (e.g. the parameters used).
    log_objective : ndarray, shape (T+1,)
        Natural log of :attr:`objective` (the metric the authors' ``numerical_validation.ipynb`` plots),
        computed in the data frame (:mod:`kmt_ref.frame`) so that it is finite
        wherever the objective is positive, even if the objective itself is
        not representable. Derived from ``objective`` when not given.
    """

    centers: np.ndarray
    labels: np.ndarray
    objective: np.ndarray
    assignments: np.ndarray = None
    one_hot: np.ndarray = None
    layers: list = None
    info: dict = field(default_factory=dict)
    log_objective: np.ndarray = None

    def __post_init__(self):
        if self.__dict__["_deferred"] is None and self.log_objective is None:
            self.log_objective = log_objective(self.objective)

    @property
    def n_steps(self):
        """T, the number of iterations (layers)."""
        return self.labels.shape[0]


def _objective_property(name):
    """``objective`` or ``log_objective`` of :class:`ClusteringTrace`: a field whose value a
    :class:`DeferredObjective` computes when it is first read."""
    key = "_" + name

    def resolve(trace):
        # computed, stored, then the deferral dropped: a reader in another thread meanwhile computes the same
        # numbers, and an interrupted computation leaves the deferral for the next read
        deferred = trace.__dict__.get("_deferred")
        if deferred is not None:
            J, log_J = deferred()
            trace.__dict__["_objective"] = J
            if trace.__dict__.get("_log_objective") is None:
                trace.__dict__["_log_objective"] = log_J
            trace.__dict__["_deferred"] = None

    def get(trace):
        resolve(trace)
        return trace.__dict__.get(key)

    def put(trace, value):
        if name == "objective" and isinstance(value, DeferredObjective):
            trace.__dict__["_deferred"], value = value, None
        elif value is None and trace.__dict__.get("_deferred") is not None:
            return  # log_objective=None (the default) while the objective is deferred: derived when it is computed
        else:
            resolve(trace)  # a deferred objective is computed before either is replaced
            trace.__dict__.setdefault("_deferred", None)
        trace.__dict__[key] = value

    return property(get, put, doc=f"See :class:`ClusteringTrace` ({name}).")


def _setstate(trace, state):
    """Unpickling: a trace pickled with its objective as a plain attribute keeps it."""
    state = dict(state)
    for name in ("objective", "log_objective"):
        if name in state:
            state["_" + name] = state.pop(name)
    state.setdefault("_deferred", None)
    trace.__dict__.update(state)


ClusteringTrace.objective = _objective_property("objective")
ClusteringTrace.log_objective = _objective_property("log_objective")
ClusteringTrace.__setstate__ = _setstate


class DeferredObjective:
    """The objective of a trace's centers, computed when the trace's objective is first read.

    ``frame_objective(X, centers[t], labels[t], x_sq)`` for each t (``labels[t]`` None: the nearest
    centers are searched), in ``frame``, read out of it: ``(objective, log_objective)``, the numbers
    :func:`frame_objective` gives at once. The caller hands over arrays that nothing writes any more
    (copies of what the trace shows: a user may write into a trace's arrays).
    """

    def __init__(self, X, centers, labels, frame, x_sq=None):
        self.X, self.centers, self.labels, self.frame, self.x_sq = X, centers, labels, frame, x_sq

    def __call__(self):
        J = np.array([frame_objective(self.X, C, l, self.x_sq) for C, l in zip(self.centers, self.labels)])
        return self.frame.objective(J), self.frame.log_objective(J)


def squared_distances(X, C):
    """Squared distances ``||x_i - c_j||^2`` (k, n) as ``||x_i||^2 + ||c_j||^2 - 2 c_j . x_i``.

    One matrix product, no (k, n, d) array. The caller guarantees that X
    (d, n) and C (d, k) are in a data frame (:mod:`kmt_ref.frame`), where the
    expansion is well conditioned: every algorithm in kmt_ref runs in one.
    """
    return np.sum(X * X, axis=0)[None, :] + np.sum(C * C, axis=0)[:, None] - 2.0 * (C.T @ X)  # (k, n)


def nearest_center(X, C):
    """``argmin_j`` of :func:`squared_distances` (ties: the lowest index), for X, C in a frame.

    Returns
    -------
    labels : ndarray of int, shape (n,)
    D : ndarray, shape (k, n)
    """
    D = squared_distances(X, C)  # (k, n)
    return np.argmin(D, axis=0), D


def _chunks(n, width=None):
    """``(a, b)`` bounds of consecutive blocks of at most ``width`` (CHUNK) columns covering ``range(n)``.

    A last block of one column joins the previous one, so that every block is
    a matrix product of at least two columns (numpy computes a one-column
    product with a matrix-vector kernel, which may round differently).
    """
    bounds = list(range(0, n, width or CHUNK)) + [n]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] == 1:
        del bounds[-2]
    return zip(bounds[:-1], bounds[1:])


def query_chunks(q, r, chunk_size):
    """``(a, b)`` bounds of the query chunks of an attention block with ``q`` queries and ``r`` keys.

    One chunk unless both ``q`` and ``r`` exceed ``chunk_size`` (only a large (r, q) score matrix is
    split); otherwise consecutive chunks of ``max(chunk_size, 2)`` queries, a last one-query chunk
    joined to the one before (:func:`_chunks`). So every product of a chunk has at least two columns
    whenever the block has: numpy computes a one-column product with a matrix-vector kernel, which
    may round differently from the matrix product one unchunked call would take. The plain path
    (:func:`kmt_ref.core.blocks.attention`) and the exact layer chunk with this one function.
    """
    if not (chunk_size and q > chunk_size and r > chunk_size):
        return [(0, q)]
    return list(_chunks(q, max(int(chunk_size), 2)))


def product_blocks(n, k):
    """``(a, b)`` bounds of the column blocks in which a (k, d) x (d, n) product is taken.

    Blocks of the largest multiple of CHUNK columns whose (k, width) product
    has at most :data:`PRODUCT_ENTRIES` entries (at least CHUNK columns), the
    last one-column block joined to the one before (:func:`_chunks`). A
    function of the shape alone, not of the number of threads:
    :func:`distance_blocks` and the attention scores of
    :mod:`kmt_ref.core.blocks` (:func:`block_products`) take their products
    in these blocks, so they compute the same numbers (a BLAS kernel can round
    a column of a product differently with the columns around it).
    """
    return _chunks(n, CHUNK * max(1, PRODUCT_ENTRIES // (CHUNK * max(1, k))))


def nearest_labels(X, C, x_sq=None, objective=False):
    """The labels of :func:`nearest_center`, computed block by block.

    Every squared distance is the expression of :func:`squared_distances`
    (``(||x||^2 + ||c||^2) - 2 c.x``, the same operations in the same order),
    but the (k, n) matrix is never formed: memory O(k CHUNK) for the distances
    (:func:`distance_width` points at a time, a block of at most BLOCK_BYTES
    bytes when k <= BLOCK_BYTES / (8 CHUNK) = 64, in cache), and O(min(k n, PRODUCT_ENTRIES + k CHUNK))
    for the products ``c.x`` (at least CHUNK points per product, so more than
    PRODUCT_ENTRIES when k > PRODUCT_ENTRIES / CHUNK = 1024), taken in the
    larger blocks of :func:`product_blocks` (:func:`distance_blocks`). A BLAS
    kernel can round a column of a product differently with the number of
    columns around it (seen: one weight of a 4,097-point softmax layer,
    tests/core/test_exact_layer.py), so the attention scores of
    :mod:`kmt_ref.core.blocks` take their products in the same blocks
    (:func:`block_products`). Lloyd (:func:`kmt_ref.lloyd`) and every circuit
    at gamma = inf call this one function, so their bit-for-bit equality does
    not rest on that either.

    Parameters
    ----------
    X : ndarray, shape (d, n); C : ndarray, shape (d, k)   (in a frame)
    x_sq : ndarray, shape (n,), optional
        ``np.sum(X * X, axis=0)`` if already at hand (an iteration over fixed X).
    objective : bool
        Also return :func:`frame_objective` of C, from these labels.

    Returns
    -------
    labels : ndarray of int, shape (n,)
    J : float (only with ``objective=True``)
    """
    n, k = X.shape[1], C.shape[1]
    labels = np.empty(n, dtype=np.intp)
    scratch = _ArgminScratch(k, min(n, distance_width(k) + 1))
    for a, b, Db in distance_blocks(X, C, x_sq):
        labels[a:b] = scratch.argmin(Db)
    return (labels, frame_objective(X, C, labels)) if objective else labels


def block_products(K, Q):
    """``K.T @ Q`` (r, q) for K (m, r) and Q (m, q), one product per block of :func:`product_blocks`.

    The products of :func:`distance_blocks`: the plain path's attention scores
    (:func:`kmt_ref.core.blocks.scores_from_projections`) take theirs here,
    so that its scores and the exact layer's are the same numbers.
    """
    blocks = list(product_blocks(Q.shape[1], K.shape[1]))
    if len(blocks) == 1:
        return np.matmul(K.T, Q)
    out = np.empty((K.shape[1], Q.shape[1]))
    for a, b in blocks:
        out[:, a:b] = np.matmul(K.T, Q[:, a:b])
    return out


def distance_width(k):
    """Points per block of :func:`distance_blocks` for ``k`` centers: ``BLOCK_BYTES / (8 k)``, within [CHUNK, 8 CHUNK].

    (A last block of one point joins the one before: a block has at most this many points plus one.)
    The blocks only bound the elementwise work: every number :func:`distance_blocks` yields, and the
    argmin of every column, is the same whatever the width (the products are taken in the blocks of
    :func:`product_blocks`, which do not depend on it).
    """
    return max(CHUNK, min(8 * CHUNK, BLOCK_BYTES // (8 * max(1, k))))


def distance_blocks(X, C, x_sq=None):
    """The squared distances of :func:`nearest_labels`, block by block: yields ``(a, b, D)``.

    ``D`` (k, b - a) holds ``(||x_i||^2 + ||c_j||^2) - 2 c_j.x_i`` for the
    points ``a <= i < b`` (the expression of :func:`squared_distances`, the
    same operations in the same order), in a contiguous scratch block that the
    next step overwrites: use it, or copy it, before asking for the next. The
    products ``c.x`` are taken one per block of :func:`product_blocks` (a few
    large products, which a threaded BLAS splits over its threads), the rest
    :func:`distance_width` points at a time in cache. The
    one function that computes these numbers for :func:`nearest_labels` and
    for the finite-gamma softmax of the exact layer
    (:mod:`kmt_ref.core.exact.layer`), so that the argmin of its scores is
    :func:`nearest_labels` by construction.
    """
    n, k = X.shape[1], C.shape[1]
    c_sq = np.sum(C * C, axis=0)[:, None]  # (k, 1)
    CT = C.T  # (k, d), a view: the operand the plain path passes (a copy can take another BLAS kernel, e.g. for one point)
    blocks = list(product_blocks(n, k))
    width = distance_width(k)
    D = np.empty(k * min(n, width + 1))  # one block
    cross = np.empty(k * max((b - a for a, b in blocks), default=0))  # one product (none for n = 0)
    for pa, pb in blocks:
        crossp = _scratch(cross, k, pb - pa)
        np.matmul(CT, X[:, pa:pb], out=crossp)  # c . x, one product per block of product_blocks
        for a, b in _chunks(pb - pa, width):
            a, b = pa + a, pa + b
            Db, crossb, Xb = _scratch(D, k, b - a), crossp[:, a - pa : b - pa], X[:, a:b]
            xb_sq = np.sum(Xb * Xb, axis=0) if x_sq is None else x_sq[a:b]  # (b - a,) the same numbers, in cache
            Db[...] = xb_sq
            Db += c_sq  # ||x||^2 + ||c||^2 (a copy and an add are faster than one broadcast add)
            crossb *= 2.0
            Db -= crossb  # (k, b - a) squared distances
            yield a, b, Db


def squared_norms(X):
    """``np.sum(X * X, axis=0)`` (n,) for X (d, n), CHUNK columns at a time: the same numbers, memory O(d CHUNK).

    NumPy sums along axis 0 of a block of two or more columns one row after the other, each column on
    its own, so a block's sums are those of the whole array (:func:`_chunks` makes no block of one
    column, whose sum NumPy would take pairwise); :func:`distance_blocks` computes them block by block
    when not given them (tests/core/test_exact_layer.py compares the three).
    """
    out = np.empty(X.shape[1])
    for a, b in _chunks(X.shape[1]):
        Xb = X[:, a:b]
        np.sum(Xb * Xb, axis=0, out=out[a:b])
    return out


def argmax_columns(A, count_one_hot=False):
    """``np.argmax(A, axis=0)`` (ties: the lowest index) for A (k, n), CHUNK columns at a time.

    The same index as ``np.argmax``, computed as :class:`kmt_ref.columns._ArgminScratch` computes the argmin
    (the maximum of each column, the mask of its entries equal to it, the
    lowest row in the mask; a block with a NaN column is left to ``np.argmax``).

    With ``count_one_hot=True`` also returns how many columns are exactly a
    standard basis vector, counted in the same pass: a column is ``e_j``
    exactly when it has one nonzero entry and its maximum is 1 (then the
    nonzero entry is the 1: were it anything else, the maximum would be it or
    0; a NaN is nonzero and makes the maximum NaN).
    """
    k, n = A.shape
    out = np.empty(n, dtype=np.intp)
    scratch = _ArgminScratch(k, min(n, CHUNK + 1))
    count, small = 0, np.int16 if k < 2**15 else np.int64
    for a, b in _chunks(n):
        B = A[:, a:b]
        best = np.max(B, axis=0)
        out[a:b] = scratch.first_equal(B, best, np.argmax)
        if count_one_hot:
            nonzero = np.not_equal(B, 0.0, out=_scratch(scratch.hit, k, b - a)).sum(axis=0, dtype=small)
            count += int(np.count_nonzero((nonzero == 1) & (best == 1.0)))
    return (out, count) if count_one_hot else out


def _block_objective(Xb, C, labels, out):
    """``sum_i ||x_i - c_{l_i}||^2`` over a block of points, with ``out`` (d, m) as scratch.

    The sum is NumPy's own (pairwise) reduction, not a BLAS dot product: a
    threaded BLAS splits a long dot product over its threads, so that its
    rounding, and the objective's last bits, would depend on the thread count
    (and each block would wait for a second thread).
    """
    np.subtract(Xb, C.take(labels, axis=1), out=out)  # x_i - c_{l_i} (take gathers twice as fast as C[:, labels])
    np.multiply(out, out, out=out)
    return float(out.sum())


def frame_objective(X, C, labels=None, x_sq=None):
    """``sum_i min_j ||x_i - c_j||^2`` for X, C already in a frame.

    The nearest center is found with :func:`nearest_labels` (or given:
    ``labels`` must then be those labels for these centers; ``x_sq`` is
    passed on to it); the distance to it is computed directly as
    ``||x_i - c_{l_i}||^2`` (no cancellation), CHUNK points at a time.
    """
    if labels is None:
        labels = nearest_labels(X, C, x_sq)
    d, width = X.shape[0], min(X.shape[1], CHUNK + 1)
    diff = np.empty(d * width)
    return _add_in_order(_block_objective(X[:, a:b], C, labels[a:b], _scratch(diff, d, b - a))
                         for a, b in _chunks(X.shape[1]))


def _add_in_order(terms):
    """The sum of the blocks' objectives, one float addition at a time from the left.

    The one place where the blocks' terms are added, by :func:`nearest_labels`
    and by :func:`frame_objective` with given labels, so that the two give the
    same bits. Not Python's built-in ``sum``: since Python 3.12 it compensates
    the rounding of float additions, which would make its last bits differ from
    this loop's (by 1 ulp, seen) and depend on the Python version.
    """
    J = 0.0
    for term in terms:
        J += term
    return J


def _points_and_centers(X, C):
    X = as_points(X, warn_shape=False)
    C = as_points(C, "C", warn_shape=False)
    if C.shape[0] != X.shape[0]:
        raise ValueError(
            f"C has {C.shape[0]} rows but X has d={X.shape[0]}: both hold tokens as columns, "
            f"shapes (d, k) and (d, n); got C.shape={C.shape}, X.shape={X.shape}"
        )
    return X, C


def assign(X, C):
    """Nearest center of each point, ties to the lowest index, for data anywhere in float64's range.

    Parameters
    ----------
    X : array_like, shape (d, n)
    C : array_like, shape (d, k)

    Returns
    -------
    labels : ndarray of int, shape (n,)
    D : ndarray, shape (k, n)
        Squared distances ``||x_i - c_j||^2`` in data units, computed as
        ``||x_i||^2 + ||c_j||^2 - 2 c_j . x_i`` (one matrix product) in the
        data frame of X (:mod:`kmt_ref.frame`), so that shifting or scaling
        the data does not change the labels. Clipped at 0 (the expansion can
        round an exact 0 to a tiny negative number); entries that overflow
        float64 are ``inf``.
    """
    X, C = _points_and_centers(X, C)
    frame = data_frame(X, C, names=("X", "C"))
    labels, D = nearest_center(frame.to_frame(X), frame.to_frame(C))
    return labels, frame.objective(np.maximum(D, 0.0))  # the expansion can round a 0 to -1e-16


def kmeans_objective(X, C):
    """``sum_i min_j ||x_i - c_j||^2`` for X (d, n) and C (d, k), in data units.

    Computed in the data frame of X (:mod:`kmt_ref.frame`): the nearest center
    by :func:`nearest_center`, the distance to it directly. The result
    overflows to ``inf`` only where float64 cannot hold it; for its logarithm,
    which is always finite when the objective is positive, see
    :attr:`ClusteringTrace.log_objective`.
    """
    X, C = _points_and_centers(X, C)
    frame = data_frame(X, C, names=("X", "C"))
    return float(frame.objective(frame_objective(frame.to_frame(X), frame.to_frame(C))))


def log_objective(obj):
    """Natural log of an objective value or array (``-inf`` at exactly 0)."""
    obj = np.asarray(obj, dtype=float)
    with np.errstate(divide="ignore"):
        return np.log(obj)
