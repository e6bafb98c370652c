"""Tokens, the shared loop and the trace: how a construction becomes a :class:`~kmt_ref.trace.ClusteringTrace`.

The token layout of Theorem 2.1 (the authors' ``cnst_model.py``; the
follow-up's (OH) embedding; SPEC §1): point tokens ``Xbar = [X; Y]``
(d_emb, n) with ``Y^(0) = 0``, center tokens ``Cbar = [C; I_k]`` (d_emb, k),
``d_emb = d + k``; the projectors ``P_X = diag(I_d, 0)`` and ``P_Y = diag(0, I_k)``.
:class:`Embedding` names the row blocks (the constructions add a type flag,
squared norms, a constant, ...); :func:`projector` builds ``P_X``, ``P_Y``, ...

:func:`run_layers` is the one loop every hand-set construction runs: embed,
apply ``T`` shared-weight layers (:func:`kmt_ref.core.attention.layer_forward`),
read the centers and assignments out after each, and collect the trace. The
data enter in their frame (:func:`prepare`, :mod:`kmt_ref.frame`) and leave in
data units.

Nothing here knows a particular algorithm: the constructions in
:mod:`kmt_ref.algorithms` are weights and layer descriptions for this loop.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..frame import Frame, data_frame
from ..trace import ClusteringTrace, DeferredObjective, argmax_columns, squared_norms
from ..validation import as_centers, as_points, check_count
from .attention import Sublayer, layer_forward
from .exact import Memo, one_hot_columns

__all__ = ["Embedding", "projector", "with_block", "prepare", "run_layers", "EmptyClusterError"]


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

    The layout of Theorem 2.1 as SPEC §1 states it, and of the authors' code
    (``train.py``, ``cnst_model.py``), is ``("x", "y")``: ``Xbar = [X; Y]``,
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
        return Xbar[..., self.assignment_rows(), :]

    def assignment_rows(self):
        """The rows of the point tokens that :meth:`assignments` returns as they are, or None (a decoded read-out)."""
        return self.rows("y")


def projector(emb, *names):
    """Diagonal 0/1 matrix keeping the given row blocks: ``P_X = projector(emb, "x")``."""
    P = np.zeros((emb.d_emb, emb.d_emb))
    for name in names:
        r = emb.rows(name)
        P[r, r] = np.eye(r.stop - r.start)
    return P


def with_block(layer, name, **changes):
    """A copy of ``layer`` in which attention block ``name`` has some fields changed.

    Parameters
    ----------
    layer : tuple of Sublayer / FeedForward
    name : str
        The block's name, ``"1"`` ... ``"4"``.
    **changes
        Fields of :class:`kmt_ref.core.attention.Block` (``score``, ``post``, ...).

    This is how each variant below states its change to Theorem 2.1:
    ``with_block(lloyd_layer(), "1", score="dot")`` is the Lloyd layer with a
    dot-product block 1 and nothing else changed.
    """
    out, found = [], False
    for sub in layer:
        if isinstance(sub, Sublayer):
            blocks = tuple(dataclasses.replace(b, **changes) if b.name == name else b for b in sub.blocks)
            found = found or any(b.name == name for b in sub.blocks)
            sub = dataclasses.replace(sub, blocks=blocks)
        out.append(sub)
    if not found:
        raise KeyError(f"the layer has no attention block named {name!r}")
    return tuple(out)


# --------------------------------------------------------------------------
# The loop
# --------------------------------------------------------------------------
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
               check_nonempty=False, embed_points=None, frame=None, nearest_readout=False):
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
        Keep a :class:`~kmt_ref.core.attention.LayerRecord` per layer.
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
    nearest_readout : bool
        The caller guarantees (a theorem about its weights) that whenever
        every y_i is exactly one-hot after layer t+1, the labels read out are
        :func:`kmt_ref.trace.nearest_labels` ``(X, centers[t])``. The
        objective of ``centers[t]`` is then computed from those labels,
        ``frame_objective(X, centers[t], labels[t])``: the same terms summed in
        the same order as ``frame_objective(X, centers[t])``, without its
        second nearest-center search.

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
    x_rows = emb.rows("x") if "x" in emb.layout else None
    x_kept = None  # whether Xbar[x_rows] holds X itself (checked once, when a fact of the memo needs it)
    nearest = [None] * (n_layers + 1)  # labels of nearest_labels(X, centers[t]) where a layer computed them
    memo = Memo()  # what the exact path knows of the tokens' rows (e.g. that y holds exactly these one-hot labels)
    for t in range(n_layers):
        # the tokens are this loop's own: a layer may overwrite them (exact path, residual sums in place)
        out = layer_forward(params, Xbar, Cbar, layer, rng=rng, record=record, chunk_size=chunk_size, overwrite=True,
                            memo=memo)
        Xbar, Cbar = out[0], out[1]
        if record:
            records.append(out[2])
        fact = None if x_rows is None else memo.get("nearest", Xbar, x_rows)
        if fact is not None and np.array_equal(fact[1], centers[t]):  # block 1 searched these very centers
            x_kept = np.array_equal(Xbar[x_rows], X) if x_kept is None else x_kept
            nearest[t] = fact[0] if x_kept else None
        Y = emb.assignments(Xbar)  # (k, n)
        rows = emb.assignment_rows()
        hot = None if rows is None else memo.one_hot(Xbar, rows)  # known when the layer wrote them one-hot
        hot = one_hot_columns(Y) if hot is None else hot  # (n,) else one pass; None unless every y_i is one-hot or 0
        if hot is not None and hot.min() >= 0:
            labels[t], one_hot[t] = hot, n
        else:
            labels[t], one_hot[t] = argmax_columns(Y, count_one_hot=True)  # np.argmax(Y, axis=0), and the e_j
        if check_nonempty:
            empty = np.flatnonzero(np.sum(Y, axis=1) == 0)
            if empty.size:
                raise EmptyClusterError(
                    f"cluster {int(empty[0])} is empty at layer {t + 1}: this construction "
                    "(the linear center update of the authors' cnst_model.py) assumes every cluster keeps a member; "
                    "use center_update='euclidean', which keeps an empty cluster's center exactly"
                )
        centers[t + 1] = emb.centers(Cbar)
    frame = frame or Frame(np.zeros(d), 0)
    known = [nearest_readout and t < n_layers and one_hot[t] == n for t in range(n_layers + 1)]
    found = [nearest[t] if nearest[t] is not None else labels[t].copy() if known[t] else None
             for t in range(n_layers + 1)]
    # the objective of each centers[t] (in the frame), computed when first read, on copies nothing else writes;
    # the squared norms block 1 kept in the memo when the tokens' data rows still hold X
    x_kept = not record and x_rows is not None and (x_kept or (x_kept is None and np.array_equal(Xbar[x_rows], X)))
    sq = memo.get("sqnorms", Xbar, x_rows) if x_kept else None
    X_obj = X.copy()
    J = DeferredObjective(X_obj, centers.copy(), found, frame, squared_norms(X_obj) if sq is None else sq)
    Y_final = emb.assignments(Xbar) if n_layers else None
    return ClusteringTrace(
        centers=frame.read_out(centers), labels=labels, objective=J, assignments=Y_final,
        one_hot=one_hot, layers=records,
    )
