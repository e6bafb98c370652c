r"""The leaner k-means transformer: binary codes instead of one-hot assignments, ``d_emb = d + ceil(log2 k)``.

The follow-up by the same authors, C. Park, K. L. Clarkson, L. Horesh, T. Ito,
P. Ram, "Leaner Transformers Can Easily Learn to Cluster" (arXiv 2610.09760),
replaces the one-hot slot of Theorem 2.1 by binary codes (its Section 2 and
Appendix B). What it states (*follow-up*), and where kmt_ref differs:

- *follow-up*, Definition 2.1 (eq. (BN)): ``B_k`` in {0,1}^{m x k},
  ``m = ceil(log2 k)``, column i the binary representation of i - 1 in m
  bits; its example ``B_6`` has rows 010101 / 001100 / 000011, so the first
  row is the least significant bit. Here column j (0-based) holds the bits of
  j: the same matrix. *Differs:* for k = 1 the follow-up has m = 0 rows;
  kmt_ref keeps one (:func:`code_length`).
- *follow-up*, Definition 2.1: point tokens ``[x_i; y_i]`` with
  ``Y^(0) = 0``, center tokens ``[c_j; b_j]``.
- *follow-up*, Definition 2.2 (eq. (3)): the attention
  ``V Z' softmax(-(gamma / sqrt(d_emb)) sqdist(Q Z, K Z'))``, no biases.
  *Differs:* kmt_ref's hand-set circuits score ``-gamma ||K z'_j - Q z_i||^2``,
  without the ``1/sqrt(d_emb)``: the same at gamma = inf; at finite gamma
  kmt_ref's gamma is the follow-up's gamma / sqrt(d_emb).
- *follow-up*, Definition 2.3 (eq. (4)): the paper's layer (kmt_ref's
  Theorem 2.1), the decoder reading the updated points.
- *follow-up*, its own Theorem 2.1, restated and proved as Theorem B.1
  (Appendix B): ``Q1 = K1 = Q2 = K2 = P_X``, ``V1 = -V2 = P_B`` (the code projector): block
  1 writes ``b_{j*}`` into ``y_i``, block 2 subtracts the old y;
  ``Q3 = K3 = Q4 = K4 = P_B``, ``V3 = -V4 = P_X``: block 3, the averaging
  hardmax over ``-sqdist(B_k, Y)`` (eqs. (17)-(18)), takes the mean of the
  members (code distance 0; non-members are at distance >= 1), block 4
  subtracts the old C. Then layer t equals Lloyd after t iterations at
  gamma = inf. Theorem B.1 assumes that no iteration leaves a cluster empty;
  its proof also assumes distinct points (``hardmax(-sqdist(X, X)) = I_n``)
  and a unique maximum in every column of block 1's hardmax (a unique
  nearest center). Eq. (14) as printed reads ``[0_{dxk}; 0_k]`` where eq.
  (13) has ``[0_{dxk}; B_k]``. The follow-up notes (end of Appendix B) that
  its block 3 is distance attention at gamma = inf where the ICML paper's is
  linear attention. *Differs:* kmt_ref needs none of the three assumptions:
  duplicate points carry the same y, ties and empty clusters as below.

What kmt_ref adds, each the project's own and marked **(open)**:

- ``empty="nearest_code"`` is the follow-up's construction as stated, with its
  behaviour outside its assumptions pinned: an empty cluster j takes the mean
  of the points whose codes are nearest to ``b_j`` in Hamming distance (which
  depends on the code order), and :func:`code_lloyd` is that rule as a plain
  loop.
- ``empty="keep"`` (default) is an extension **within the token budget** (no
  extra row, ``d_emb = d + m``) that keeps an empty cluster's center exactly,
  as kmt_ref's Theorem 2.1 does with its flag row. Points carry their code
  shifted by ``delta = 2^-p`` in every bit, ``y_i = b_{j*} + delta 1`` (a bias
  of block 1's value), and block 3's query carries the same shift (a bias of
  Q3), while its keys are the updated points *and* the centers. Then against
  center j's query ``b_j + delta 1``: members score 0, every other point
  ``-Hamming <= -1``, center j's own token ``-m delta^2`` (in ``[-1/2, 0)``,
  :func:`code_shift`), every other center ``< -m delta^2`` (because
  ``delta < 1/2``). The averaging hardmax therefore takes the members' mean, or
  ``c_j`` alone when there is none: Lloyd's "keep", bit for bit.
- ``tie="lowest"`` (default): block 1 uses the lowest-index hardmax, so a tied
  point gets the code of the lowest-index center, as in ``np.argmin`` Lloyd:
  ties are exact at no cost (the convention kmt_ref's Theorem 2.1 uses).
  ``tie="average"`` is the true gamma -> inf limit of the softmax: a tied
  point gets ``y = (b_j + b_l)/2``, which is no code at all. Its squared
  distance to a code ``b_q`` is ``h/4`` (h = Hamming(j, l), the bits where
  ``b_j`` and ``b_l`` differ, each 1/2 away) plus the number of bits where
  ``b_j`` and ``b_l`` agree and ``b_q`` does not: at least ``h/4 > 0``, equal
  for ``b_j`` and ``b_l`` (k = 8: the midpoint of 000 and 100 is 1/4 from
  both and 2.25 from 111). So it drops out of every cluster that has members
  (the one-hot construction loses it the same way). With binary codes the
  loss is final for any later block that reads the code slot only: the mean
  of the tied codes does not determine their lowest index (``{00, 11}`` and
  ``{01, 10}`` have the same mean, lowest indices 0 and 1). Whether a block
  that also reads the data rows could repair it is **(open)**; the
  lowest-index hardmax makes the question moot.

How few rows the decoder needs: at gamma = inf block 3 only needs k distinct
codes with a margin, so ``ceil(log2 k)`` is the fewest rows of 0/1 codes; with
real codes one row would do (scalar codes ``0, ..., k-1``, 1 apart), but the
average of two scalar codes can be a code (``(0 + 2)/2 = 1``), so a tie under
the averaging hardmax lands in a third cluster, where a binary average (some
bit 1/2) is never a code (notebook 05, exercises 05.2 and 05.3).

Why the "keep" extension needs no flag row: without the shift, the point and
center tokens of one cluster carry the same code in the code slot (``b_j``
here, ``e_j`` with one-hot codes), and an affine map with biases (the model
class) cannot tell them apart by that slot alone; the shift ``delta 1`` on the
points' slot makes them differ. The same shift would serve one-hot codes too
(``k delta^2 < 2`` suffices there: non-members score -2, other centers
``-(2 + k delta^2)``; tests/algorithms/test_binary.py runs it on the case
table). kmt_ref's Theorem 2.1 uses a flag row instead, a choice it made first.

The leak at finite gamma. In kmt_ref's unscaled scores, block 3 weighs a point
at code distance h from a center's query by ``e^(-gamma h)`` against a member:
non-members sit at h >= 1 with binary codes and at h = 2 with one-hot codes, so
at the same gamma the binary decoder leaks about ``e^gamma`` times more. In the
follow-up's scaling (Definition 2.2) the weights are ``e^(-gamma /
sqrt(d + m))`` against ``e^(-2 gamma / sqrt(d + k))``: binary leaks more only
while ``4 (d + m) > d + k``. The follow-up notes (Appendix A) that its codes
"can introduce an arbitrary topological order among the cluster centers with a
finite gamma".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.tokens import Embedding, prepare, projector, run_layers, with_block
from ..trace import nearest_center
from ..validation import check_choice, check_count, check_gamma
from .lloyd import cluster_means, finish_trace, lloyd_layer, start_trace

__all__ = [
    "code_length",
    "binary_codes",
    "code_shift",
    "code_lloyd",
    "CodeEmbedding",
    "binary_weights",
    "binary_layer",
    "binary_transformer",
    "BINARY_EMPTY_POLICIES",
    "FOLLOW_UP_TABLE1_MS",
]

#: the follow-up's Table 1 at k = 1000 (d = 32, n = 1024, 32 tasks at once, one laptop GPU): forward pass, ms
FOLLOW_UP_TABLE1_MS = {"onehot": 193.07, "binary": 15.90}

#: what the binary-code transformer does with an empty cluster: ``"keep"`` its center (kmt_ref's
#: extension, = Lloyd) or take the mean of the points with the ``"nearest_code"`` (the follow-up as stated)
BINARY_EMPTY_POLICIES = ("keep", "nearest_code")


def code_length(k):
    """``m = ceil(log2 k)``, the rows of the code slot; 1 for ``k = 1`` (a slot needs a row to shift).

    Computed on integers (``(k - 1).bit_length()``), so it is exact for every k.
    """
    k = check_count(k, "k", minimum=1)
    return max(1, (k - 1).bit_length())


def binary_codes(k):
    """The follow-up's code matrix ``B_k`` (m, k): column j holds the bits of j, least significant first.

    Parameters
    ----------
    k : int, >= 1

    Returns
    -------
    B : ndarray of float64, shape (m, k), entries 0 or 1, ``m = code_length(k)``

    Examples
    --------
    >>> binary_codes(6).astype(int)
    array([[0, 1, 0, 1, 0, 1],
           [0, 0, 1, 1, 0, 0],
           [0, 0, 0, 0, 1, 1]])
    """
    m = code_length(k)
    j = np.arange(k)
    return ((j[None, :] >> np.arange(m)[:, None]) & 1).astype(np.float64)  # (m, k)


def code_shift(m):
    r"""``delta = 2^-p``, the shift of the points' codes in the ``"keep"`` extension: the largest with ``m delta^2 <= 1/2``, ``delta <= 1/4``.

    Notes
    -----
    Block 3's scores against center j's query ``b_j + delta 1`` (see the module
    docstring): members 0, other points ``-Hamming(b_l, b_j) <= -1``, the own
    center ``-m delta^2``, another center l ``-sum_r (b_lr - b_jr - delta)^2 <=
    -(h (1 - delta)^2 + (m - h) delta^2) < -m delta^2`` for ``delta < 1/2``
    (h >= 1 differing bits). So the order member > own center > everything
    else needs ``0 < m delta^2 < 1`` and ``delta < 1/2``; a power of two keeps
    every score exact in floating point (sums of a few dyadic numbers).
    """
    p = 2
    while m * 4.0 ** -p > 0.5:
        p += 1
    return 2.0 ** -p


# ==========================================================================
# The classical algorithm: Lloyd, with the follow-up's empty-cluster rule
# ==========================================================================
def code_lloyd(X, C0, n_iter, empty="nearest_code"):
    r"""Lloyd's algorithm with the binary-code circuit's empty-cluster rule (plain NumPy).

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_iter : int
    empty : {"nearest_code", "keep"}
        ``"keep"`` is :func:`kmt_ref.lloyd`. ``"nearest_code"`` **(open)**: an
        empty cluster j moves to the mean of the points whose assigned code is
        nearest to ``b_j`` in Hamming distance, what the follow-up's block 3
        computes at gamma = inf (averaging hardmax over code distances).

    Returns
    -------
    ClusteringTrace (as :func:`kmt_ref.lloyd`; ``info["n_empty"]``)

    Notes
    -----
    Iteration t::

        l_i = argmin_j ||x_i - c_j||^2                 (ties: lowest j)
        c_j = mean{x_i : l_i = j}                     if cluster j has members
        c_j = mean{x_i : H(l_i, j) = min_i' H(l_i', j)} otherwise, H = Hamming distance of the codes
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty, policies=BINARY_EMPTY_POLICIES)
    k = C.shape[1]
    B = binary_codes(k).astype(np.intp)  # (m, k)
    n_empty = np.zeros(n_iter, dtype=np.intp)
    for t in range(n_iter):
        labels[t], _ = nearest_center(X, C)
        C_new, counts = cluster_means(X, labels[t], C)
        empty_j = np.flatnonzero(counts == 0)
        n_empty[t] = empty_j.size
        if empty == "nearest_code":
            for j in empty_j:
                H = np.sum(B[:, labels[t]] != B[:, [j]], axis=0)  # (n,) Hamming distance of each point's code
                C_new[:, j] = np.mean(X[:, H == H.min()], axis=1)
        C = C_new
        centers[t + 1] = C
    return finish_trace(X, centers, labels, {"empty": empty, "n_empty": n_empty}, frame)


# ==========================================================================
# The circuit
# ==========================================================================
@dataclass(frozen=True)
class CodeEmbedding(Embedding):
    """The token layout ``[x; code]``: points ``[x_i; y_i]`` (Y^(0) = 0), centers ``[c_j; b_j]``.

    ``d_emb = d + m`` with ``m = code_length(k)``. ``shift`` is the ``delta`` by
    which the points' codes are offset in the ``"keep"`` extension (0 in the
    follow-up's construction); the read-out subtracts it.
    """

    layout: tuple = ("x", "code")
    shift: float = 0.0

    def size(self, name):
        return {"x": self.d, "code": code_length(self.k)}[name]

    def embed_points(self, X):
        """``Xbar = [X; 0]``, shape (d + m, n)."""
        return np.concatenate([X, np.zeros((self.size("code"), X.shape[1]))], axis=0)

    def embed_centers(self, C):
        """``Cbar = [C; B_k]``, shape (d + m, k)."""
        return np.concatenate([C, binary_codes(C.shape[1])], axis=0)

    def codes(self, Xbar):
        """The points' code slot, shift removed: ``y_i`` (m, n)."""
        return Xbar[..., self.rows("code"), :] - self.shift

    def assignment_rows(self):
        return None  # the assignments are decoded from the codes (:meth:`assignments`), not rows of the tokens

    def assignments(self, Xbar):
        """Y (k, n) read from the codes: 1 at j where ``y_i`` is exactly ``b_j``; 1/2 at the nearest code otherwise.

        A code that is no code (a tie under ``tie="average"``, or a finite
        gamma) is read as its nearest code (lowest index on ties) and marked
        by the 1/2, so that ``trace.one_hot`` counts exact codes and
        ``trace.labels`` the nearest ones.
        """
        Yc = self.codes(Xbar)  # (m, n)
        B = binary_codes(self.k)  # (m, k)
        D = np.sum(B * B, axis=0)[:, None] + np.sum(Yc * Yc, axis=0)[None, :] - 2.0 * (B.T @ Yc)  # (k, n)
        j = np.argmin(D, axis=0)  # (n,)
        exact = np.all(Yc == B[:, j], axis=0)  # (n,)
        Y = np.zeros((self.k, Yc.shape[1]))
        Y[j, np.arange(Yc.shape[1])] = np.where(exact, 1.0, 0.5)
        return Y


def binary_weights(d, k, empty="keep"):
    r"""The hand-set Q, K, V (and biases) of the binary-code transformer.

    Parameters
    ----------
    d, k : int
    empty : {"keep", "nearest_code"}
        ``"nearest_code"``: the follow-up's weights (its proof of Theorem B.1),
        no biases. ``"keep"``: the same plus the shift ``delta`` (biases ``bV1``
        and ``bQ3`` on the code rows), for block 3 over ``[Xbar', Cbar]``.

    Returns
    -------
    params : dict
        ``Q1 ... V4`` (d_emb, d_emb); with ``"keep"`` also ``bV1``, ``bQ3`` (d_emb,).
    emb : CodeEmbedding

    Notes
    -----
    Proof sketch (gamma = inf; ``P_X``, ``P_B`` keep the data and the code rows).

    *Block 1* (Q1 = K1 = P_X, V1 = P_B, bV1 = delta on the code rows): scores
    ``-||c_j - x_i||^2``; the lowest-index hardmax picks Lloyd's ``j*`` and
    writes ``[0; b_{j*} + delta 1]``.
    *Block 2* (Q2 = K2 = P_X, V2 = -P_B): identity attention up to duplicate
    points, which carry the same y; it writes ``-y_i``. Listed first, the
    residual sum is ``(y - y) + (b + delta)``, exactly ``b + delta``.
    *Block 3* (Q3 = K3 = P_B, bQ3 = delta, V3 = P_X; keys the updated points,
    and the centers with ``"keep"``): the scores are sums of a few dyadic
    numbers, exact; members 0, other points <= -1, the own center
    ``-m delta^2`` in (-1, 0) and other centers below it (:func:`code_shift`).
    Members present: the averaging hardmax is their mean, summed in key order
    as :func:`kmt_ref.algorithms.lloyd.cluster_means` does (bit for bit).
    None: ``c_j`` itself. With ``"nearest_code"`` (no centers among the keys,
    delta = 0), an empty cluster takes the points at the smallest code distance.
    *Block 4* (Q4 = K4 = P_B, V4 = -P_X): the codes ``b_j`` are distinct, so
    identity attention; it writes ``-c_j``.
    """
    check_count(d, "d", minimum=1)
    check_count(k, "k", minimum=1)
    check_choice(empty, "empty", BINARY_EMPTY_POLICIES)
    m = code_length(k)
    delta = code_shift(m) if empty == "keep" else 0.0
    emb = CodeEmbedding(d, k, shift=delta)
    P_X, P_B = projector(emb, "x"), projector(emb, "code")
    params = {
        "Q1": P_X, "K1": P_X, "V1": P_B,      # assign: write b_{j*} (+ delta)
        "Q2": P_X, "K2": P_X, "V2": -P_B,     # reset: subtract old y_i
        "Q3": P_B, "K3": P_B, "V3": P_X,      # update: mean of the members at code distance 0
        "Q4": P_B, "K4": P_B, "V4": -P_X,     # reset: subtract old c_j
    }
    if empty == "keep":
        shift = delta * np.diag(P_B)  # (d_emb,) delta on the code rows
        params["bV1"] = shift  # points carry b + delta 1
        params["bQ3"] = shift.copy()  # the center's query looks for b + delta 1
    return params, emb


def binary_layer(gamma=np.inf, gamma_reset=np.inf, gamma_update=None, gamma_center_reset=None, empty="keep",
                 tie="lowest"):
    """The layer description: :func:`kmt_ref.algorithms.lloyd.lloyd_layer` with block 3's keys and block 1's tie rule named.

    ``empty="keep"``: block 3 attends to ``[Xbar', Cbar]`` (Theorem 2.1's
    Euclidean layer as it is); ``"nearest_code"``: to ``Xbar'`` only.
    ``tie="average"`` (with ``gamma = inf``): block 1 uses the averaging
    hardmax, the true limit of the softmax.
    """
    layer = lloyd_layer(gamma, gamma_reset, "euclidean", gamma_update, gamma_center_reset)
    if empty == "nearest_code":
        layer = with_block(layer, "3", keys="X")
    if tie == "average" and gamma == np.inf:
        layer = with_block(layer, "1", normalizer="hardmax_average")
    return layer


def binary_transformer(X, C0, n_layers, gamma=np.inf, *, empty="keep", tie="lowest", gamma_reset=np.inf,
                       gamma_update=None, record=False, chunk_size=1024):
    r"""Run the leaner k-means transformer (binary codes, ``d_emb = d + ceil(log2 k)``).

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_layers : int
    gamma : float
        Block 1 (and block 3 unless ``gamma_update``); ``inf``: the exact limit.
    empty : {"keep", "nearest_code"}
        ``"keep"`` (default, kmt_ref's extension, **(open)**): an empty
        cluster keeps its center, as :func:`kmt_ref.lloyd`.
        ``"nearest_code"``: the follow-up's construction as stated; an empty
        cluster moves as :func:`code_lloyd` says.
    tie : {"lowest", "average"}
        Block 1 at gamma = inf: lowest-index hardmax (= ``np.argmin``) or the
        averaging hardmax (the softmax's limit; a tied point gets no code).
    gamma_reset, gamma_update, record, chunk_size
        As in :func:`kmt_ref.kmeans_transformer`.

    Returns
    -------
    ClusteringTrace
        As :func:`kmt_ref.kmeans_transformer`; ``assignments`` (k, n) is read
        from the codes (:meth:`CodeEmbedding.assignments`), ``one_hot`` counts
        the points whose code slot holds exactly a code (after each layer).

    Notes
    -----
    At ``gamma = inf`` with the defaults the trace equals :func:`kmt_ref.lloyd`'s
    bit for bit (labels, centers and objective, the sign of zero included),
    so its centers equal :func:`kmt_ref.kmeans_transformer`'s: ties (lowest
    index), duplicates, empty clusters (kept), ``k = 1``, ``k = n``. Tested
    over hard inputs by
    ``tests/properties/test_lloyd_properties.py::test_binary_circuit_is_lloyd_bit_for_bit``
    and on the case table by ``tests/algorithms/test_binary.py``.
    """
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    gamma = check_gamma(gamma, "gamma")
    gamma_reset = check_gamma(gamma_reset, "gamma_reset")
    gamma_update = gamma if gamma_update is None else check_gamma(gamma_update, "gamma_update")
    check_choice(empty, "empty", BINARY_EMPTY_POLICIES)
    check_choice(tie, "tie", ("lowest", "average"))
    chunk_size = check_count(chunk_size, "chunk_size", minimum=1)
    d, k = C0.shape
    params, emb = binary_weights(d, k, empty)
    # blocks 1 and 2 score squared data distances (scaled by the frame); blocks 3 and 4 code distances
    layer = binary_layer(frame.gamma(gamma), frame.gamma(gamma_reset, "gamma_reset"), gamma_update,
                         gamma_center_reset=gamma_reset, empty=empty, tie=tie)
    trace = run_layers(X, params, layer, emb, C0, n_layers, record=record, chunk_size=chunk_size, frame=frame)
    trace.info.update(gamma=gamma, gamma_reset=gamma_reset, empty=empty, tie=tie, d_emb=emb.d_emb,
                      shift=emb.shift)
    return trace
