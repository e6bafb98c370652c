r"""Spherical k-means (Dhillon & Modha 2001) and its circuit: cosine assignment, normalized member means.

The classical algorithm (SPEC §5, "spherical k-means"), on unit vectors::

    l_i  = argmax_j x_i . c_j                   (ties: lowest j)
    mu_j  = mean{x_i : l_i = j}                   (empty: c_j)
    c_j' = mu_j / ||mu_j||

The circuit: Theorem 2.1 with the data normalized at embedding, a dot-product
(cosine) block 1 and RMSNorm (no centering, gain ``1/sqrt(d_emb)``) on block
3's output, which puts the member mean on the sphere. A summary of the paper
mentions only dot-product attention and token-wise normalization, e.g.
RMSNorm, for spherical k-means; placing RMSNorm on block 3's output, with that
gain, is the project's choice **(open)**.

**Equality.** :func:`spherical_kmeans_transformer` equals
:func:`spherical_kmeans` bit for bit -- the same labels, centers equal bit
for bit, the sign of zero included -- for every ``chunk_size``, on nonzero
points and centers (a zero vector has no direction: ``ValueError`` on both
sides). Tested by
``tests/properties/test_variant_properties.py::test_spherical_circuit_is_its_rule_bit_for_bit``
(hard inputs, chunk sizes 1, 2, 3 and 1024) and
``tests/properties/test_chunk_properties.py::test_spherical_at_chunk_boundaries``.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..core.attention import rms_norm
from ..core.tokens import prepare, run_layers, with_block
from ..trace import block_products
from ..validation import check_count
from .lloyd import cluster_means, finish_trace, lloyd_layer, lloyd_weights, start_trace

__all__ = ["spherical_kmeans", "unit_columns", "spherical_kmeans_layer", "spherical_kmeans_transformer"]


# ==========================================================================
# The classical algorithm (plain NumPy)
# ==========================================================================
def unit_columns(A, name="X"):
    """Scale every column of A (d, m) to unit Euclidean norm.

    Parameters
    ----------
    A : ndarray, shape (d, m)
        Already validated (finite float64).
    name : str
        Used in the error message.

    Returns
    -------
    U : ndarray, shape (d, m)
        ``A[:, i] / ||A[:, i]||``.

    Raises
    ------
    ValueError
        If a column has zero norm: it has no direction, so its cosine with
        anything is undefined.
    """
    # Each column is first scaled by a power of two (exact) so that its largest
    # entry lies in [1/2, 1): then ||a||^2 can neither overflow (norms ~1e200)
    # nor underflow (norms ~1e-200), and the result is bit-for-bit A / ||A||
    # wherever that is computable directly.
    peak = np.max(np.abs(A), axis=0)  # (m,)
    zero = np.flatnonzero(peak == 0)
    if zero.size:
        i = int(zero[0])
        raise ValueError(
            f"{name}[:, {i}] has zero norm ({name}[:, {i}]={A[:, i].tolist()!r:.80}): spherical k-means "
            f"needs nonzero vectors, whose direction (cosine similarity) is defined; "
            f"{zero.size} such column(s) in total"
        )
    A = np.ldexp(A, -np.frexp(peak)[1])  # (d, m), columns scaled by 2^-e_i
    norms = np.sqrt(np.sum(A * A, axis=0))  # (m,) in [1/2, sqrt(d))
    return A / norms


def spherical_kmeans(X, C0, n_iter):
    r"""Spherical k-means (Dhillon & Modha 2001): cosine assignment, normalized member sums.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column; every column must be nonzero. It is scaled
        to unit norm first (``centers`` and ``objective`` refer to the scaled
        data).
    C0 : array_like, shape (d, k)
        Initial centers, nonzero columns; scaled to unit norm first.
    n_iter : int
        Number of iterations T >= 0.

    Returns
    -------
    ClusteringTrace
        ``centers`` (T+1, d, k) (unit columns, see the zero-sum policy);
        ``labels`` (T, n); ``objective`` (T+1,) the k-means objective of the
        unit data, which for unit centers is ``sum_i (2 - 2 max_j x_i . c_j)``;
        ``info["X_unit"]`` the scaled data (d, n).

    Notes
    -----
    Iteration t, with ``||x_i|| = ||c_j|| = 1`` (SPEC §5, "spherical k-means")::

        l_i = argmax_j  x_i . c_j                    (ties: lowest j)
        mu_j = mean{x_i : l_i = j}                   (empty: c_j)
        c_j' = mu_j / ||mu_j||

    The member mean has the direction of the member sum (Dhillon & Modha's
    concept vector). It is summed in point order and normalized as
    ``mu_j / sqrt(sum(mu_j^2))``, and a kept center is normalized too (it is a unit
    vector already, up to its last bit): the same floating-point steps as the
    transformer's, so that the two agree bit for bit and an exact tie in exact
    arithmetic (all points equal, equal centers) is broken the same way.

    Policies:

    - *Ties*: the lowest index, as in Lloyd.
    - *Empty cluster*: keeps its center (Lloyd's "keep").
    - *Zero member sum* (e.g. the cluster holds x and -x, antipodal points):
      ``mu_j = 0`` has no direction; the new center is the **zero vector**
      (the convention of ``sklearn.preprocessing.normalize``), never NaN. A
      zero center then has cosine score 0 with every point, so it takes the
      points that have no positive cosine with any other center. A member
      sum that is zero in exact arithmetic but not in floating point gets the
      direction of its rounding error: that case is ill-conditioned and its
      result is not reproducible across summation orders.
    - *Zero-norm point or initial center*: ``ValueError`` (no direction).
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, "keep", use_frame=False)
    X, C = unit_columns(X, "X"), unit_columns(C, "C0")
    centers[0] = C
    for t in range(n_iter):
        cos = block_products(C, X)  # (k, n) cosine similarities, in the column blocks the circuit's block 1 takes
        lab = np.argmax(cos, axis=0)  # lowest index among maxima
        labels[t] = lab
        M, _ = cluster_means(X, lab, C)  # (d, k) member means; empty: c_j
        norms = np.sqrt(np.sum(M * M, axis=0))  # (k,)
        C = M / np.where(norms == 0, 1.0, norms)  # zero mean -> zero center
        centers[t + 1] = C
    return finish_trace(X, centers, labels, {"X_unit": X}, frame)


# ==========================================================================
# The circuit
# ==========================================================================
def spherical_kmeans_layer(d_emb):
    """Theorem 2.1's layer with a dot-product block 1 and RMSNorm on block 3's output.

    Parameters
    ----------
    d_emb : int
        Token size; RMSNorm's gain is ``1/sqrt(d_emb)``.

    Returns
    -------
    layer : tuple
        ``lloyd_layer()`` with exactly two fields changed (see
        :func:`spherical_kmeans_transformer`).
    """
    layer = with_block(lloyd_layer(), "1", score="dot")  # cosine similarity
    # block 3 writes [mu_j; 0]: RMSNorm over the d_emb rows with gain 1/sqrt(d_emb) (gain=None) is mu_j/||mu_j||
    return with_block(layer, "3", post=partial(rms_norm, gain=None))


def spherical_kmeans_transformer(X, C0, n_layers, *, record=False, chunk_size=1024):
    r"""Spherical k-means (Dhillon & Modha) as a transformer.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one nonzero point per column; scaled to unit norm at embedding.
    C0 : array_like, shape (d, k)
        Initial centers, nonzero columns; scaled to unit norm.
    n_layers : int
        T >= 0 layers.
    record : bool
        Keep each layer's tokens and attention matrices.
    chunk_size : int
        Query chunk of the dense blocks; raised to at least k, so that block 1 is never split (see
        the Notes): the result does not depend on it.

    Returns
    -------
    ClusteringTrace
        As :func:`kmt_ref.spherical_kmeans` (centers and objective refer to
        the unit-norm data; ``info["X_unit"]`` holds it, (d, n)).

    Notes
    -----
    The change to Theorem 2.1 (SPEC §5, "spherical k-means"):

    1. *Embedding*: ``x_i / ||x_i||`` (and ``c_j / ||c_j||``) instead of ``x_i``.
    2. *Block 1*: ``score="dot"``. With Q1 = K1 = P_X the score is
       ``c_j . x_i``, the cosine similarity of unit vectors; the lowest-index
       hardmax assigns each point to the center of largest cosine (ties: the
       lowest index), as Dhillon & Modha.
    3. *Block 3*: ``post = RMSNorm`` (no centering, gain ``1/sqrt(d_emb)``;
       this placement is the project's choice, **(open)**: the paper names
       only "token-wise normalization, e.g. RMSNorm", reported by the paper,
       from a summary).
       Block 3 is unchanged and writes ``[mu_j; 0]`` with ``mu_j`` the members'
       mean (or ``c_j`` for an empty cluster, through the default token); its
       only nonzero rows are the data rows, so
       ``RMSNorm(z) = z / (sqrt(||mu_j||^2 / d_emb) sqrt(d_emb)) = [mu_j / ||mu_j||; 0]``:
       the normalized member sum (mean and sum have the same direction).
       Block 4 then removes the old ``c_j``: ``(c_j - c_j) + mu_j/||mu_j||``.

    Blocks 2 and 4 are Theorem 2.1's exact resets. The result does not
    depend on ``chunk_size`` (the equality with :func:`kmt_ref.spherical_kmeans`
    and its tests: the module docstring): block 1's cosines are taken in the
    column blocks of :func:`kmt_ref.trace.block_products`, as the reference's,
    never split into query chunks (``chunk_size`` is raised to k; memory
    O(k n), the reference's own).

    Policies: ties go to the lowest index; an empty cluster keeps its
    center; a cluster whose member sum is exactly zero (antipodal members,
    e.g. x and -x) gets the **zero vector** (:func:`kmt_ref.core.attention.rms_norm`
    maps a zero column to zero), exactly as the reference, never NaN; a zero
    center then scores 0 against every point. A zero-norm point or initial
    center raises ``ValueError``.
    """
    X, C0, n_layers, _ = prepare(X, C0, n_layers, use_frame=False)  # directions: no shift, no scale
    # block 1's (k, n) cosines are never split into query chunks (the reference holds them whole too): a BLAS
    # kernel can round a column of a product differently with the columns around it, and a near-tie of two
    # cosines would then be decided by the chunking (seen: n = 4095, k = 1025, chunk_size = 1024)
    chunk_size = max(check_count(chunk_size, "chunk_size", minimum=1), C0.shape[1])
    X = unit_columns(X, "X")
    C0 = unit_columns(C0, "C0")
    d, k = C0.shape
    params, emb = lloyd_weights(d, k)
    layer = spherical_kmeans_layer(emb.d_emb)
    trace = run_layers(X, params, layer, emb, C0, n_layers, record=record, chunk_size=chunk_size)
    trace.info.update(X_unit=X)
    return trace
