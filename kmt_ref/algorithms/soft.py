r"""Soft k-means: responsibilities by a softmax over squared distances; as a transformer, Theorem 2.1 at finite gamma.

The classical algorithm (SPEC §5, "soft k-means")::

    r_ij = exp(-beta ||x_i - c_j||^2) / sum_l exp(-beta ||x_i - c_l||^2)
    c_j' = sum_i r_ij x_i / sum_i r_ij

The circuit: Theorem 2.1 with block 1 at the finite inverse temperature
``gamma = beta`` (it writes ``r_i`` into the assignment slot) and the
normalized linear attention of the authors' block 3 (their ``cnst_model.py``,
``CModel(ldp=True)``) in block 3 (the weighted mean, at any beta).

**Equality: to rounding, not bit for bit.** The circuit's centers agree with
:func:`soft_kmeans`'s to 1e-12 times the data's extent (plus, where the
data's frame is shifted, the read-out's rounding: 2 ulps of the data's
largest coordinate), and the labels are equal up to the first step where a
point's two centers are equidistant to 1e-12 of the squared extent (judged
in exact rational arithmetic); where the circuit refuses an input
(:class:`kmt_ref.EmptyClusterError`, below) there is nothing to compare.
Tested by
``tests/properties/test_variant_properties.py::test_soft_circuit_is_its_rule_to_rounding``
(hard inputs, ``beta`` in {0.5, 1, 3}), and on unit-scale data over
``beta`` = 1e-4 ... 1e3 (centers and responsibilities to 1e-10 over 8
layers) by ``tests/algorithms/test_soft.py::test_soft_transformer_equals_soft_kmeans``.
"""
from __future__ import annotations

import numpy as np

from ..core.tokens import EmptyClusterError, prepare, run_layers
from ..validation import check_beta, check_count
from .lloyd import finish_trace, lloyd_layer, lloyd_weights, start_trace
from ..trace import nearest_center

__all__ = ["soft_kmeans", "soft_kmeans_transformer"]


# ==========================================================================
# The classical algorithm (plain NumPy)
# ==========================================================================
def soft_kmeans(X, C0, n_iter, beta):
    r"""Soft k-means: responsibilities by a softmax over negative squared distances.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column.
    C0 : array_like, shape (d, k)
        Initial centers, one per column (1 <= k <= n).
    n_iter : int
        Number of iterations T >= 0.
    beta : float
        Inverse temperature, ``0 < beta < inf``.

    Returns
    -------
    ClusteringTrace
        ``centers`` (T+1, d, k); ``labels`` (T, n), the largest responsibility
        of each point (lowest index on ties); ``assignments`` (k, n), the final
        responsibilities ``R``; ``objective`` (T+1,), the (hard) k-means
        objective of each set of centers.

    Notes
    -----
    Iteration t (SPEC §5, the "soft k-means" row)::

        r_ij = exp(-beta ||x_i - c_j||^2) / sum_l exp(-beta ||x_i - c_l||^2)
        c_j' = sum_i r_ij x_i / sum_i r_ij

    The softmax subtracts each point's smallest squared distance first, so no
    ``exp`` overflows and each point's nearest center gets ``exp(0) = 1``
    before normalising, for any ``beta``.

    Policies:

    - *Very large beta*: ``r`` tends to Lloyd's one-hot assignment (but an
      exact tie shares the responsibility equally; Lloyd gives it to the
      lowest index). A responsibility ``r_ij = E_ij / sum_l E_il`` with
      ``E_ij = exp(-beta gap_ij)`` (``gap_ij`` the squared distance to c_j
      minus that to the nearest center) is exactly 0.0 in float64 when
      ``E_ij`` underflows, i.e. ``beta gap_ij >= 1075 ln 2`` (about
      745.133), and also when a subnormal ``E_ij`` is rounded to 0 by the
      division by the column sum (at least 1, and 2 or more when nearest
      centers tie: ``E_ij`` at ``beta gap_ij = 744.6`` beside two tied
      nearest centers gives 0.0).
      When every responsibility of a cluster is 0.0, its total ``sum_i r_ij``
      is exactly 0: that cluster **keeps** its center, the floating-point
      form of Lloyd's "keep" policy for an empty cluster. (The transformer
      cannot express this and raises instead, see
      :func:`kmt_ref.algorithms.soft.soft_kmeans_transformer`.)
    - *Very small beta*: ``r_ij -> 1/k``, so after one step every center is
      (to O(beta)) the mean of all the data.
    - *Ties*: equidistant centers get equal responsibilities; ``labels``
      breaks the tie by the lowest index (``np.argmax``).
    - *Duplicated centers* stay equal, as in exact arithmetic: each center is
      its own product ``X r_j``, so equal responsibilities give equal centers
      bit for bit (``tests/algorithms/test_soft.py``,
      ``test_soft_duplicated_centers_stay_equal_as_in_exact_arithmetic``).
      One matrix product ``X R^T`` for all centers can round a column
      differently from its neighbours, and soft k-means amplifies such a
      difference about a hundredfold per step: on the duplicated-centers
      case of ``tests/cases.py`` at beta = 50, centers computed as one
      product per iteration part the copies by 1e-16 after one step and by
      0.007 after 8, and end 0.005 from the circuit (measured with NumPy's
      OpenBLAS; which column rounds differently depends on the BLAS kernel).
    - ``beta <= 0``, NaN or inf: ``ValueError``.
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, "keep")
    beta = check_beta(beta)
    beta_frame = frame.gamma(beta, "beta")  # beta acts on squared data distances
    R = None
    for t in range(n_iter):
        _, D = nearest_center(X, C)  # (k, n) squared distances (in the frame)
        E = np.exp(-beta_frame * (D - np.min(D, axis=0)))  # (k, n), largest entry of a column is 1
        R = E / np.sum(E, axis=0)  # (k, n) responsibilities, columns sum to 1
        labels[t] = np.argmax(R, axis=0)
        mass = np.sum(R, axis=1)  # (k,)
        C = C.copy()
        alive = mass > 0
        for j in np.flatnonzero(alive):  # one product per center: equal responsibilities, equal centers
            C[:, j] = (X @ R[j]) / mass[j]  # (d,)
        centers[t + 1] = C
    trace = finish_trace(X, centers, labels, {"beta": beta}, frame)
    trace.assignments = R
    return trace


# ==========================================================================
# The circuit
# ==========================================================================
def soft_kmeans_transformer(X, C0, n_layers, beta, *, record=False, chunk_size=1024):
    r"""Soft k-means as a transformer: Theorem 2.1 with ``gamma = beta`` and the linear block 3.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column.
    C0 : array_like, shape (d, k)
        Initial centers.
    n_layers : int
        T >= 0 layers.
    beta : float
        Inverse temperature of the assignment block, ``0 < beta < inf``.
    record : bool
        Keep each layer's attention matrices; ``trace.layers[t].weights["1"]``
        (k, n) is then the responsibility matrix of step t+1.
    chunk_size : int
        Query chunk for dense attention.

    Returns
    -------
    ClusteringTrace
        ``assignments`` (k, n): the final responsibilities ``Y = R``;
        ``labels`` (T, n): the largest responsibility, lowest index on ties;
        ``one_hot``: columns of Y that are exactly one-hot (only when
        ``beta`` is so large that the other entries underflow to 0).

    Notes
    -----
    The change to Theorem 2.1 (SPEC §5, "soft k-means") is two arguments::

        params, emb = lloyd_weights(d, k, center_update="linear")
        layer = lloyd_layer(gamma=beta, center_update="linear")

    Proof sketch. Block 1 keeps the Euclidean scores ``-||x_i - c_j||^2`` but
    at the finite inverse temperature ``beta``: it writes
    ``r_i = softmax_j(-beta ||x_i - c_j||^2)``, the responsibilities. Block 2
    (exact identity attention, ``gamma_reset = inf``) removes the old ``y_i``,
    so ``y_i = r_i`` (listed first, ``(y_i - y_i) + r_i = r_i`` exactly).
    Block 3 is the authors' normalized linear attention (their
    ``cnst_model.py``) with scores ``e_j . y_i = r_ij``: it returns
    ``sum_i r_ij x_i / sum_i r_ij``, the soft k-means update, at any
    ``beta``; block 4 removes the old ``c_j``. The result equals
    :func:`kmt_ref.soft_kmeans`'s to rounding, which ``exp`` amplifies by
    about ``beta * ||x||^2`` (the tolerance and its tests: the module
    docstring).

    Policies:

    - *Very small beta*: ``r_ij -> 1/k`` and every center moves to the data
      mean in one step.
    - *Very large beta*: ``r`` tends to Lloyd's one-hot assignment (exact ties
      share the weight equally, where Lloyd picks the lowest index). A
      responsibility is exactly 0.0 when ``exp`` underflows
      (``beta gap >= 1075 ln 2``, about 745.133) or when the division by
      the column sum rounds a subnormal to 0 (see :func:`soft_kmeans`); if a
      cluster's responsibilities are then all exactly 0, the linear block 3
      has no weights to normalize (``0/0``) and cannot express Lloyd's "keep"
      (the reference :func:`kmt_ref.soft_kmeans` keeps that center):
      :class:`kmt_ref.EmptyClusterError` is raised, naming the cluster, the
      layer and ``beta``. Use :func:`kmt_ref.kmeans_transformer` (``gamma =
      inf``) for the hard limit.
    - *Ties*: equal responsibilities; ``labels`` takes the lowest index.
    - ``beta <= 0``, NaN or inf: ``ValueError``.
    """
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    chunk_size = check_count(chunk_size, "chunk_size", minimum=1)
    beta = check_beta(beta)
    d, k = C0.shape
    params, emb = lloyd_weights(d, k, center_update="linear")
    layer = lloyd_layer(gamma=frame.gamma(beta, "beta"), center_update="linear")
    try:
        trace = run_layers(X, params, layer, emb, C0, n_layers, record=record, chunk_size=chunk_size,
                           check_nonempty=True, frame=frame)
    except EmptyClusterError as exc:
        raise EmptyClusterError(
            f"soft k-means with beta={beta!r}: {exc.args[0].split(':')[0]}: every responsibility of "
            "this cluster underflowed to exactly 0, and the linear center update (the authors' "
            "block 3) has no weight to average; use a smaller beta, or kmt_ref.kmeans_transformer "
            "(gamma=inf) for the hard limit"
        ) from exc
    trace.info.update(beta=beta)
    return trace
