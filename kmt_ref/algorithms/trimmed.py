r"""Trimmed k-means: each center moves to the mean of its closest members; as a transformer, alpha = inf normmax in block 3.

Three classical rules (SPEC §5):

- :func:`trimmed_kmeans_attention`, **(open)** the project's own rule, the
  classical reading of block 3 with alpha = inf normmax over
  ``-gamma1 ||e_j - y_i||^2 - gamma2 ||c_j - x_i||^2``: each center moves to the
  uniform mean of its ``s*`` closest members;
- :func:`trimmed_kmeans`, the textbook trimmed k-means of Cuesta-Albertos,
  Gordaliza & Matran (1997): a global trimming proportion ``rho``,
  concentration steps;
- :func:`trimmed_kmeans_quantile`, the authors' rule (their ``utils.trimmed_iters``,
  a reference in their code, not in the paper): per cluster, drop the members
  at or beyond the q-quantile of their squared distances.

**Equality.** With its default penalties the circuit
(:func:`trimmed_kmeans_transformer`) equals the first rule bit for bit: the
same labels, and centers equal bit for bit, the sign of zero included, at
every step. Tested over hard inputs (integer grids with ties, duplicates,
empty clusters, data scaled from 1e-300 to 1e300 and shifted by up to 1e12)
by ``tests/properties/test_variant_properties.py``:
``test_trimmed_circuit_is_its_rule_bit_for_bit`` for
``gamma2`` in {0, 0.25, 0.5, 1, 4, 30, 1000}, and
``test_trimmed_in_the_data_units_is_its_rule_bit_for_bit`` for ``gamma2``
of 0.25 to 30 over the data's squared extent. The default penalties satisfy
``2 gamma1 >= gamma2 D^2 + 1`` and two companion conditions with a margin
(``D^2`` bounds every member's squared distance to its center:
:func:`~kmt_ref.algorithms.sparse_update.member_distance_bound`; the
conditions and why they need a margin in floating point are in
:func:`trimmed_kmeans_transformer`'s Notes). The quantile rule
has no exact circuit of Theorem 2.1's form (block 3 reading the keys' data
rows) with any normalizer of the registry (the argument, and what it does
not cover, is in :func:`trimmed_kmeans_quantile`'s Notes).
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ..core.tokens import prepare, run_layers
from ..trace import nearest_center
from ..validation import check_count, check_gamma, check_real_in
from .lloyd import cluster_means, finish_trace, start_trace
from .sparse_update import (assign_then_update, direct_weights, member_scores, penalties, sparse_update_layer,
                            sparse_update_weights, sq_dist)

__all__ = ["trimmed_kmeans_attention", "trimmed_size", "trimmed_kmeans", "linear_quantile", "trimmed_kmeans_quantile",
           "trimmed_kmeans_transformer"]


# ==========================================================================
# The classical algorithm (plain NumPy)
# ==========================================================================
def _best_prefix(z_desc):
    """The number ``s*`` of members kept, for scores sorted in descending order.

    ``tau = max_s (z_{1:s} - 1)/s`` (``z_{1:s}`` the sum of the s largest scores); ``s*`` is the
    number of scores ``>= tau`` if ``tau > z_(1) - 1``, else 1 (a unique best
    member at least 1 above the rest). That is the largest maximiser of
    ``(z_{1:s} - 1)/s`` unless 1 is a maximiser: the alpha -> inf limit of
    alpha-normmax at ties, the rule of
    :func:`kmt_ref.core.sparse.infinity_normmax_support` (proof in
    :func:`kmt_ref.core.sparse.normmax`), with the same comparisons.
    (The smallest maximiser would not be that limit.)
    """
    tau = np.max((np.cumsum(z_desc) - 1.0) / np.arange(1, z_desc.size + 1))
    if tau > z_desc[0] - 1.0:  # z_desc[0] = 0 for shifted scores: tau > -1
        return int(np.count_nonzero(z_desc >= tau))
    return int(np.count_nonzero(z_desc > tau))


def trimmed_kmeans_attention(X, C0, n_iter, gamma2, empty="keep"):
    r"""Trimmed k-means as realised by normmax attention: each center keeps its ``s*`` closest members.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column.
    C0 : array_like, shape (d, k)
        Initial centers, one per column.
    n_iter : int
        Number of iterations T >= 0.
    gamma2 : float
        ``0 <= gamma2 < inf``; sets the trimming level (larger trims more).
    empty : {"keep"}
        An empty cluster keeps its center.

    Returns
    -------
    ClusteringTrace
        ``labels[t]`` is Lloyd's assignment of step t+1 (every point has a
        label; trimming only decides who moves the center). ``info["kept"]``
        (T, n) bool: the points that entered some center's mean.

    Notes
    -----
    **(open)**: the project's own rule (SPEC §5), the classical reading of
    block 3 with alpha = inf normmax over ``-gamma1 ||e_j - y_i||^2 -
    gamma2 ||c_j - x_i||^2``. Step t::

        l_i = argmin_j ||x_i - c_j||^2                         (ties: lowest j)
        z_i = -gamma2 ||x_i - c_j||^2 for the members i of cluster j,
              sorted z_(1) >= z_(2) >= ...,  z_{1:s} = z_(1) + ... + z_(s), the sum of the s largest
        s*  = largest argmax_s (z_{1:s} - 1) / s, or 1 when s = 1 attains the maximum,
              i.e. z_(1) - z_(2) >= 1 (the alpha -> inf limit of normmax; _best_prefix)
        c_j <- mean of the s* members with the largest z       (empty: c_j)

    ``(z_{1:s} - 1)/s`` is the alpha = inf normmax closed form (SPEC §2). A member
    is dropped when it is farther than the kept ones by a margin of order
    ``1/gamma2`` in squared distance: ``gamma2 = 0`` keeps every member
    (Lloyd), ``gamma2 -> inf`` keeps only the closest member. Equal distances
    are kept or dropped together; a singleton cluster moves onto its point.
    Distances are computed directly as ``||x_i - c_j||^2`` (the squares of the
    coordinates' differences added in coordinate order), and the scores as
    ``S_i - max S`` with ``S_i = -||x_i - c_j||^2 / (1/gamma2)``
    (:func:`~kmt_ref.algorithms.sparse_update.member_scores`): ``z`` shifted so
    that its maximum is exactly 0 (the rule is invariant under a shift), so
    that a far center's huge scores do not swallow the ``- 1`` of the
    criterion, and the circuit computes the very same numbers (exactly
    ``-gamma2 ||x_i - c_j||^2`` up to the shift for a power-of-two ``gamma2``).
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    gamma2 = check_gamma(gamma2, "gamma2", allow_inf=False)
    g = frame.gamma(gamma2, "gamma2")  # acts on squared data distances
    kept = np.zeros(labels.shape, dtype=bool)

    def update(t, j, members, c):
        z = member_scores(X[:, members], c, g)  # (n_j,) -g ||x_i - c||^2 shifted to a maximum of 0, as block 3
        order = np.argsort(-z, kind="stable")
        chosen = np.sort(members[order[:_best_prefix(z[order])]])  # the s* best-scored members
        kept[t, chosen] = True
        # their mean, summed in point order as cluster_means (and Lloyd) does
        return cluster_means(X[:, chosen], np.zeros(chosen.size, dtype=np.intp), c[:, None])[0][:, 0]

    assign_then_update(X, C, centers, labels, update)
    return finish_trace(X, centers, labels, {"gamma2": gamma2, "empty": empty, "kept": kept}, frame)


# --------------------------------------------------------------------------
# Trimmed k-means, Cuesta-Albertos, Gordaliza & Matran (1997)
# --------------------------------------------------------------------------
def trimmed_size(n, rho, name="rho"):
    """``h = ceil((1 - rho) n)``, the number of points trimmed k-means keeps (``rho`` the trimming proportion).

    ``(1 - rho) n`` is rounded to 9 decimals before the ceiling, so that
    floating-point noise (``(1 - 0.7) * 10 = 3.0000000000000004``) does not add
    a point. Always ``1 <= h <= n``. ``name``: the argument's name in an error
    message (the keyword the caller used).
    """
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real):
        raise TypeError(f"{name} must be a real number in [0, 1), got {rho!r} ({type(rho).__name__})")
    given, rho = rho, float(rho)
    if not 0.0 <= rho < 1.0:  # also rejects NaN
        raise ValueError(f"trimming proportion {name}={given!r} should be in [0, 1)")
    return min(n, max(1, math.ceil(round((1.0 - rho) * n, 9))))


def _trimming_proportion(rho, alpha):
    """``(value, name)``: ``rho``, or the deprecated keyword ``alpha`` (with a ``DeprecationWarning`` naming ``rho``)."""
    if alpha is None:
        if rho is None:
            raise TypeError("trimmed_kmeans() missing the trimming proportion: pass rho=... (0 <= rho < 1)")
        return rho, "rho"
    if rho is not None:
        raise TypeError(f"trimmed_kmeans() got both rho={rho!r} and alpha={alpha!r}: pass rho only")
    warnings.warn("trimmed_kmeans(alpha=...) is deprecated and will be removed in 0.2: the trimming "
                  "proportion is named rho (alpha is the normmax exponent); pass rho=...",
                  DeprecationWarning, stacklevel=3)
    return alpha, "alpha"


def trimmed_kmeans(X, C0, n_iter, rho=None, empty="keep", *, alpha=None):
    r"""Trimmed k-means (Cuesta-Albertos, Gordaliza & Matran 1997) by concentration steps.

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_iter : int
        Number of concentration steps T >= 0.
    rho : float
        Trimming proportion, ``0 <= rho < 1``; ``h = ceil((1 - rho) n)``
        points are kept (:func:`trimmed_size`). ``rho = 0`` is Lloyd.
    empty : {"keep"}
    alpha : float, optional
        Deprecated name of ``rho`` (accepted until 0.2, with a
        ``DeprecationWarning``); alpha is the normmax exponent everywhere else.

    Returns
    -------
    ClusteringTrace
        ``labels[t]``: the nearest center of every point, ``-1`` for the
        ``n - h`` trimmed points. ``objective`` is the plain k-means objective
        of all points (as for every trace); ``info["trimmed_objective"]`` (T+1,)
        is the trimmed objective, the sum over the ``h`` closest points;
        ``info["rho"]``, ``info["h"]``.

    Notes
    -----
    The estimator minimises ``sum_{i in H} min_j ||x_i - c_j||^2`` over centers
    and subsets ``H`` of size ``h``. One concentration step (the "C-step" of
    Rousseeuw & Van Driessen's FAST-MCD, applied to the trimmed k-means
    objective)::

        D_i = min_j ||x_i - c_j||^2,   H = the h points with the smallest D_i
        l_i = argmin_j ||x_i - c_j||^2 for i in H              (ties: lowest j)
        c_j <- mean{x_i : i in H, l_i = j}                     (empty: c_j)

    Ties in ``D`` at the cut are broken by the lowest point index (a stable
    sort). In exact arithmetic the trimmed objective never increases (in
    floating point, to rounding; no test pins it).
    """
    rho, rho_name = _trimming_proportion(rho, alpha)
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    h = trimmed_size(X.shape[1], rho, rho_name)

    def nearest(C):
        lab, _ = nearest_center(X, C)  # ties: lowest index
        return lab, np.sum((X - C[:, lab]) ** 2, axis=0)  # (n,) D_i, computed directly

    def trimmed_objective(C):
        return float(np.sum(np.sort(nearest(C)[1])[:h]))

    trimmed_obj = [trimmed_objective(C)]
    for t in range(n_iter):
        lab, D = nearest(C)
        H = np.sort(np.argsort(D, kind="stable")[:h])  # the h closest, in point order
        labels[t] = -1
        labels[t, H] = lab[H]
        C, _ = cluster_means(X[:, H], lab[H], C)  # empty: keep
        centers[t + 1] = C
        trimmed_obj.append(trimmed_objective(C))
    info = {"rho": float(rho), "h": h, "empty": empty,
            "trimmed_objective": frame.objective(np.array(trimmed_obj))}
    return finish_trace(X, centers, labels, info, frame)


# --------------------------------------------------------------------------
# The authors' trimmed k-means (utils.trimmed_iters): a per-cluster quantile
# --------------------------------------------------------------------------
def linear_quantile(v_sorted, q):
    """The q-quantile of sorted values with linear interpolation (``np.quantile``'s and ``torch.quantile``'s default).

    ``pos = (n - 1) q`` (``n`` values), ``lo = floor(pos)``, ``w = pos - lo``; the value is
    ``a + (b - a) w`` for ``w < 0.5`` and ``b - (b - a)(1 - w)`` otherwise,
    with ``a = v[lo]``, ``b = v[min(lo + 1, n - 1)]`` (both libraries' lerp).
    """
    n = v_sorted.size
    pos = (n - 1) * q
    lo = int(math.floor(pos))
    a, b = v_sorted[lo], v_sorted[min(lo + 1, n - 1)]
    w = pos - lo
    return a + (b - a) * w if w < 0.5 else b - (b - a) * (1.0 - w)


def trimmed_kmeans_quantile(X, C0, n_iter, q=0.95, empty="keep"):
    r"""The authors' trimmed k-means: each center moves to the mean of its members below their q-quantile distance.

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_iter : int
        Number of iterations T >= 0.
    q : float
        ``0 < q <= 1``, the quantile (0.95 in the authors' code).
    empty : {"keep"}
        A center with no member strictly below its threshold keeps its place
        (see "Degenerate clusters").

    Returns
    -------
    ClusteringTrace
        ``labels[t]``: Lloyd's assignment of step t+1 (trimming only decides
        who moves the center). ``info["kept"]`` (T, n) bool: the points that
        entered a mean; ``info["stalled"]`` (T, k) bool: non-empty clusters
        none of whose members was strictly below the threshold.

    Notes
    -----
    The authors' ``utils.trimmed_iters`` (kmeans-trf), step t::

        l_i   = argmin_j ||x_i - c_j||^2                        (ties: lowest j)
        D_i   = ||x_i - c_{l_i}||^2
        tau_j = quantile_q{D_i : l_i = j}                        (linear interpolation)
        c_j  <- mean{x_i : l_i = j, D_i < tau_j}                 (strictly below)

    The quantile is ``torch.quantile``'s default, linear interpolation at the
    virtual index ``(n_j - 1) q`` (:func:`linear_quantile`, equal to
    ``np.quantile(..., method="linear")`` bit for bit). With the ``n_j`` members'
    distances distinct, exactly ``ceil(q (n_j - 1))`` members are kept, the
    closest: for ``q = 0.95`` and ``2 <= n_j <= 20`` only the farthest member is
    dropped, ``n_j = 21`` drops two, and so on. Unlike :func:`trimmed_kmeans_attention`
    the count depends on ``n_j`` alone (no scale: multiplying a cluster's
    distances changes nothing); unlike :func:`trimmed_kmeans` it is per cluster
    and never relabels. It is not Lloyd at any q: a cluster of two or more
    distinct distances always loses its farthest member.

    Degenerate clusters. Members at exactly ``tau`` are dropped (the
    inequality is strict), so a singleton (``tau`` is its own distance) or a
    cluster whose members are all at one distance keeps no one. The authors'
    mean is then NaN and their code re-seeds the center with a random data
    point, as it does for an empty cluster; kmt_ref keeps the center in both
    cases, its policy everywhere (``info["stalled"]`` marks the former).
    Distances are computed directly in float64 (theirs: ``cdist`` squared, in
    float32).

    **No exact circuit of Theorem 2.1's form with the registry's normalizers.**
    The claim is narrow: it covers block 3 with ``V3 = P_X`` (a key's value
    is its own data rows, as in Theorem 2.1) and scores ``f(cbar_j, key token)``, each a fixed continuous
    function of the two tokens (Euclidean or dot scores of ``Q3``, ``K3``,
    with biases or not), normalized by any normalizer of the registry. Block
    3 then gives center j the value ``sum_i w_i x_i`` over the keys. An affine
    ``V3``, extra layers or other blocks are not argued here.

    Take k = 1, ``n_j >= 3`` points ``x_i = c + kappa u_i`` with distinct
    ``|u_i|`` and ``c, x_1, ..., x_{n_j}`` affinely independent: the output
    is an affine combination of the keys' values (the points and ``c``), so
    it equals the rule's mean only if the weights are uniform on the
    ``ceil(q (n_j - 1))`` closest points and 0 elsewhere, for every
    ``kappa > 0``.

    - *Continuous, permutation-equivariant sigma* (softmax at finite gamma,
      sparsemax, normmax at alpha < inf, linear): as ``kappa -> 0`` the member
      tokens, hence their scores, become equal; the constant weights would be
      ``sigma`` of the limit scores, which must weigh equal scores equally: a
      contradiction.
    - *normmax at alpha = inf* (uniform over the top ``s*``, ``s*`` maximising
      ``(z_{1:s} - 1)/s``): as ``kappa -> 0`` the gaps vanish while
      ``(z_{1:s} - 1)/s`` grows with s by ``1/(s (s + 1))``, so ``s* = n_j``:
      every member, Lloyd.
    - *hardmax* (lowest index, or averaging over the maximum set): the kept
      points must share the top score and the dropped ones score lower, for
      every configuration. With ``|a| < |b| < |e| < |g|`` (points relative to
      c), ``{a, b, e}`` needs ``f(b) > f(e)`` and ``{b, e, g}`` needs
      ``f(b) = f(e)`` (q = 0.95: three members keep two).
    - *gumbel*, with any noise draw. Relaxed (``hard=False``) at finite
      gamma: every key of finite score gets a positive weight, so the
      farthest member is never dropped. Hard (``hard=True``): one key's
      value, a single point or ``c``, which is never the mean of the two or
      more distinct kept points (affinely independent). At ``gamma = inf``
      the support is the maximum set, and the hardmax argument applies.

    So no weights make any normalizer of the registry realise the rule in
    this form. An exact sigma would have to count the members (tell them
    from other keys by a score gap) and keep a fixed fraction by rank,
    scale-free and discontinuous: the rule itself moved into sigma, proving
    nothing the loop does not, so the project does not build it.
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    q = check_real_in(q, "q", 0.0, 1.0, lo_open=True, hi_open=False)
    kept = np.zeros(labels.shape, dtype=bool)
    stalled = np.zeros((n_iter, C.shape[1]), dtype=bool)

    def update(t, j, members, c):
        D = sq_dist(X[:, members], c)  # (n_j,)
        chosen = members[D < linear_quantile(np.sort(D), q)]  # in point order
        if chosen.size == 0:  # singleton or all tied: nothing strictly below (the authors: NaN, reseed)
            stalled[t, j] = True
            return c
        kept[t, chosen] = True
        return cluster_means(X[:, chosen], np.zeros(chosen.size, dtype=np.intp), c[:, None])[0][:, 0]

    assign_then_update(X, C, centers, labels, update)
    return finish_trace(X, centers, labels, {"q": float(q), "empty": empty, "kept": kept, "stalled": stalled}, frame)


# ==========================================================================
# The circuit
# ==========================================================================
def trimmed_kmeans_transformer(X, C0, n_layers, gamma2, *, gamma1=None, gamma_flag=None, record=False,
                               chunk_size=1024):
    r"""Trimmed k-means transformer: block 3 is alpha = inf normmax (SPEC §5, **(open)**).

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_layers : int
        T >= 0 layers with shared weights.
    gamma2 : float
        ``0 <= gamma2 < inf``: the weight of ``||c_j - x_i||^2`` in block 3's
        score; sets the trimming level (0: no trimming, Lloyd).
    gamma1, gamma_flag : float, optional
        Member penalty and default-token flag; default
        :func:`~kmt_ref.algorithms.sparse_update.separating_penalties`,
        ``gamma1 = gamma_flag = gamma2 D^2 (1 + 2^-20) + 2``. The result equals the
        reference when the three conditions in the Notes hold with a margin
        (they hold in exact arithmetic; in floating point the default keeps
        one unit, and a margin of 1e-3 in each suffices on the test table);
        smaller values give a different (valid) transformer with no reference.
    record : bool
        Keep every layer's attention matrices (``trace.layers[t].weights["3"]``
        is block 3's (n + k, k) matrix: which points each center listens to).
    chunk_size : int

    Returns
    -------
    ClusteringTrace
        The trace of :func:`kmt_ref.algorithms.trimmed.trimmed_kmeans_attention`
        (with the default penalties; the equality and its tests: the module
        docstring).

    Notes
    -----
    Block 3 over ``z_i = -gamma1 ||e_j - y_i||^2 - gamma2 ||c_j - x_i||^2``
    with ``normmax_inf`` gives the uniform mean of the ``s*`` members with the
    largest ``z``, ``s* = argmax_s (z_{1:s} - 1)/s`` (SPEC §2): members farther
    than the kept ones by roughly ``1/gamma2`` in squared distance are trimmed.
    Proof of the weights: :func:`sparse_update_weights`. **(open)**: the paper
    does not state this construction; it is the project's own.

    *When the circuit equals the rule.* Block 3 scores (module docstring of
    :mod:`kmt_ref.algorithms.sparse_update`): a member ``-gamma2 ||x_i - c_j||^2``,
    a non-member that minus ``2 gamma1``, the own center token ``-gamma_flag``,
    another center token below ``-2 gamma1 - gamma_flag``. alpha = inf normmax
    keeps a score only if it lies above ``max z - 1`` (or is the maximum), and
    scores at or below ``max z - 1`` do not move its threshold. With ``D`` a
    bound on the distance from every non-empty cluster's center to its nearest
    member (:func:`~kmt_ref.algorithms.sparse_update.member_distance_bound`:
    the data's bounding box, and each point's nearest initial center), the best
    member scores at least ``-gamma2 D^2`` and a non-member at most
    ``-2 gamma1``; so, in exact arithmetic, the scores separate if::

        2 gamma1   >= gamma2 D^2 + 1     (every non-member out of a cluster with members)
        gamma_flag >= gamma2 D^2 + 1     (the own token out of a cluster with members)
        2 gamma1   >= gamma_flag + 1     (an empty cluster: its own token alone, c_j kept)

    Block 3 computes ``-(||x_i - c_j||^2 + (gamma1/gamma2) ||e_j - y_i||^2 + ...)
    / (1/gamma2)`` from the tokens' differences (``score="euclidean_direct"``,
    ``scale = 1/gamma2``: :func:`~kmt_ref.algorithms.sparse_update.direct_weights`),
    so a member's score is the reference's own number, bit for bit, and the
    normmax shifts it by the same maximum: exact ties of ``(z_{1:s} - 1)/s``
    (integer data, dyadic ``gamma2``) are decided alike. (Where ``gamma2 = 0``,
    or where ``gamma2`` in the data's frame, ``gamma2 2^(2e)``, lies outside
    ``2^-900 .. 2^900``, ``sqrt(gamma2)`` sits in the weights, and the reference
    scores ``-||sqrt(g) x_i - sqrt(g) c_j||^2`` as the circuit does.)
    The other scores carry rounding at the scale of ``gamma1`` and
    ``gamma_flag``, so in floating point the inequalities need a margin: at
    exact equality, an empty cluster whose center sits on another cluster's
    point ties that point with its own token's margin, and rounding decides
    (a case of the test table); a margin of 1e-3 in each suffices on every
    case of the table, and the default keeps one unit to spare.

    The conditions weigh ``gamma1`` against ``gamma2 D^2``, not against
    ``gamma2``: they are invariant under rescaling the data with ``gamma2``
    scaled inversely. ``gamma1 >> gamma2`` is neither needed nor enough: on
    data of diameter 0.29, ``gamma2 = 1000`` is exact with ``gamma1 = 43.05``
    and ``gamma_flag = 85.1``; the same data times 1000 with ``gamma2 = 0.001``
    and ``gamma1 = 100 gamma2`` break the first condition, and a non-member
    captures a center (tests/algorithms/test_trimmed.py).

    Policies: ties in the assignment -- lowest index; equal distances within a
    cluster -- kept or trimmed together; empty cluster -- keeps ``c_j`` (its
    own token is the unique maximum by more than 1, so normmax is one-hot on
    it); singleton -- ``s* = 1``, the center moves onto the point.
    """
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    gamma2 = check_gamma(gamma2, "gamma2", allow_inf=False)
    g = frame.gamma(gamma2, "gamma2")  # it weighs squared data distances: scaled into the frame
    gamma1, gamma_flag = penalties(X, C0, g, gamma1, gamma_flag)
    d, k = C0.shape
    g_w, gamma1_w, flag_w, scale = direct_weights(g, gamma1, gamma_flag)  # scores -||x - c||^2 / (1/g) - ...
    params, emb = sparse_update_weights(d, k, g_w, gamma1_w, flag_w)
    layer = sparse_update_layer("normmax", (("alpha", np.inf),), scale=scale)
    trace = run_layers(X, params, layer, emb, C0, n_layers, record=record,
                       chunk_size=check_count(chunk_size, "chunk_size", minimum=1), frame=frame)
    trace.info.update(variant="trimmed", gamma2=gamma2, gamma1=gamma1, gamma_flag=gamma_flag)
    return trace
