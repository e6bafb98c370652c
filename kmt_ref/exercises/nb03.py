"""Exercises of notebook 03: sparse normalizers, trimmed and robust k-means, randomized k-medoids.

The code exercises ask for functions of their inputs (a score vector for a given length, a threshold
for given data and parameters, a probability for given data, centers and gamma); each checker calls
the student's function (:func:`call_answer`) on data the notebook never shows, drawn here with fixed
seeds, and compares it with a reference computed here, outside that call, from closed forms (03.2,
03.4, 03.5, 03.7) or from the library's normalizers (03.1).

The premises the exercises rest on, as measured (tests/exercises/test_nb03.py re-measures them):

- 03.1: with two scores sparsemax and alpha = inf normmax always keep the same entries (a score at tau
  has tau = max z - 1, where normmax is one-hot), so the function is asked for lengths m >= 3.
- 03.2: the largest gamma1 at which a non-member gets weight > 0 in some layer is the closed form on
  the reference trajectory (below: :func:`_leak_thresholds`): on every checker case the transformer
  leaks at 0.999 gamma1* and not at 1.001 gamma1*. On the notebook's data (gamma2 = 0.5, 5 layers)
  layer 3 sets it, about 5 % above layer 1; on two of the three checker cases a later layer sets it too.
- 03.4: within each window ``trimmed_kmeans_attention(X, C0, 1, gamma2)`` keeps exactly the quantile
  rule's members, 0.1 % outside it not; on the notebook's data the three windows have no common point.
- 03.5: the robust transformer gives every outlier weight exactly 0 from the closed-form gamma on, and
  not 0.1 % below it (on the notebook's data and every checker case).
- 03.7: P(some center lands on an outlier) = 1 - prod_j (1 - sum_{outliers o in M_j} softmax_j(o)),
  the softmax over the members around their mean; seeded Gumbel draws agree within 4 standard errors.
  At gamma = 2 on the notebook's data P = 0.005340, so an estimate from N draws has a relative standard
  error sqrt((1 - P)/(P N)): 3.1 % at N = 200,000, about 30 % at N = 2,000.
"""
from __future__ import annotations

import numpy as np

from ..algorithms.kmedoids import randomized_kmedoids, randomized_kmedoids_transformer
from ..core.normalizers import gumbel, gumbel_noise, normmax, simplex_threshold, softmax, sparsemax
from ._registry import (Wrong, as_array, as_float, as_int, call_answer, exercise, expect, expect_value,
                        multiple_choice)

#: the notebook's seed and parameters (notebooks/src/03_sparse_and_sampling_variants.py)
SEED = 4
GAMMA2, N_LAYERS = 3.0, 5
GAMMA2_LEAK = 0.5             # exercise 03.2's gamma2 on the notebook's data: there layer 3 sets the threshold
Q = 0.95                      # the authors' quantile (trimmed_kmeans_quantile's default)
GAMMA_SAMPLE = 2.0            # exercise 03.7's sampling gamma on the notebook's data

#: relative tolerance for thresholds a student may find by bisection on the transformer: 0.5 %
#: (a bisection of 12 halvings from a bracket of width 10x gets there; the exact values come from
#: the closed forms below, and the nearest plausible wrong answers differ by factors of sqrt(2) or more)
BISECTION_RTOL = 5e-3


def _data():
    """The notebook's data: X (2, 94), C0 (2, 3), is_out (94,)."""
    from ..data import blobs_with_outliers
    return blobs_with_outliers(rng=np.random.default_rng(SEED))


def _blobs(seed, **kwargs):
    from ..data import blobs_with_outliers
    return blobs_with_outliers(rng=np.random.default_rng(seed), **kwargs)


def _blobs_3d(seed, n_per_cluster=25, n_outliers=3):
    """Three 3-d blobs in the unit cube and far outliers at distance 1.5 from its center: (X, C0, is_out)."""
    rng = np.random.default_rng(seed)
    means = 0.15 + 0.7 * rng.uniform(size=(3, 3))  # (d, k)
    X_in = np.repeat(means, n_per_cluster, axis=1) + 0.05 * rng.standard_normal((3, 3 * n_per_cluster))
    u = rng.standard_normal((3, n_outliers))
    X_out = 0.5 + 1.5 * u / np.linalg.norm(u, axis=0)
    X = np.concatenate([X_in, X_out], axis=1)
    return X, X_in[:, ::n_per_cluster].copy(), np.arange(X.shape[1]) >= X_in.shape[1]


def _sq(X, c):
    diff = X - c[:, None]
    return np.sum(diff * diff, axis=0)  # (m,)


def _first_labels(X, C0):
    from .. import lloyd
    return lloyd(X, C0, 1).labels[0]  # (n,) Lloyd's first assignment (ties: lowest index)


def _close(value, target, rtol):
    return abs(value - target) <= rtol * abs(target)


# ----------------------------------------------------------------------------- 03.1
#: the lengths 03.1's function is called with (two scores can never disagree: see the module docstring)
DISAGREE_LENGTHS = (3, 4, 7, 16, 33)


@exercise("03.1", "Score vectors on which sparsemax and normmax disagree", kind="code", difficulty=1, minutes=10,
          objective="Read the supports of sparsemax ({z > τ}) and α = ∞ normmax ({z ≥ τ}, or the maximum "
                    "alone) off the simplex threshold τ",
          checks="a function m -> a score vector of length m on which sparsemax(z) > 0 and normmax(z, alpha=inf) "
                 "> 0 differ, for m = 3, 4, 7, 16, 33 (exact: a score must sit exactly at the threshold τ in "
                 "float64; built without simplex_threshold, sparsemax or normmax)",
          forbid=(simplex_threshold, sparsemax, normmax))
def _c031(answer):
    for m in DISAGREE_LENGTHS:
        z = as_array(call_answer(answer, m), (m,), f"the score vector for m = {m}")
        tau = simplex_threshold(z)[0]
        sp, nm = sparsemax(z) > 0, normmax(z, alpha=np.inf) > 0
        if np.array_equal(sp, nm):
            at_tau = np.any(z == tau)
            if at_tau and tau <= z.max() - 1.0:
                raise Wrong(f"for m = {m} a score sits at tau, but tau = max z - 1: then normmax is one-hot on the "
                            "maximum, as sparsemax is. Put the score at tau while tau > max z - 1")
            if at_tau:
                raise Wrong(f"for m = {m} both keep the same entries; check which entries normmax keeps at tau")
            raise Wrong(f"for m = {m} no score equals tau exactly, so both keep {{z > tau}}. Pick scores whose "
                        "partial sums are exact in binary floating point (halves, quarters), and think about what "
                        "a further score below tau does to tau (exercise 03.3 (d))")
    return f"right for m = {', '.join(map(str, DISAGREE_LENGTHS))}: normmax keeps the scores at tau, sparsemax drops them"


# ----------------------------------------------------------------------------- 03.2
def _leak_thresholds(X, C0, n_layers, gamma2):
    """Per layer t, the largest gamma1 at which a non-member gets weight > 0 in block 3 (trimmed transformer).

    Until something leaks the transformer follows the reference
    (:func:`trimmed_kmeans_attention`), so the thresholds are read on the
    reference trajectory. In layer t, center j, a non-member's score is
    ``b_i - 2 gamma1`` (``b_i = -gamma2 ||x_i - c_j||^2``; ``||e_j - y_i||^2 = 2``)
    and normmax keeps it iff it reaches the members' threshold tau_j (a score
    below tau leaves tau unchanged): it leaks iff ``gamma1 <= (b_i - tau_j) / 2``.
    """
    from ..algorithms.trimmed import trimmed_kmeans_attention
    ref = trimmed_kmeans_attention(X, C0, n_layers, gamma2)
    out = np.full(n_layers, -np.inf)
    for t in range(n_layers):
        C, lab = ref.centers[t], ref.labels[t]
        for j in range(C.shape[1]):
            z = -gamma2 * _sq(X, C[:, j])  # (n,)
            if np.any(lab == j) and np.any(lab != j):
                tau = simplex_threshold(z[lab == j])[0]
                out[t] = max(out[t], (z[lab != j].max() - tau) / 2.0)
    return out


def _leak_cases():
    """(name, X, C0, gamma2, T) for 03.2's function: data the notebook never shows, each with gamma1* > 0."""
    X9, C9, _ = _blobs(9, n_outliers=0)
    X10, C10, _ = _blobs(10)
    X0, C00, _ = _blobs(0, n_outliers=2)
    return [("blobs_with_outliers(n_outliers=0, rng=default_rng(9)), gamma2 = 2, T = 4", X9, C9, 2.0, 4),
            ("blobs_with_outliers(rng=default_rng(10)), gamma2 = 0.5, T = 3", X10, C10, 0.5, 3),
            ("blobs_with_outliers(n_outliers=2, rng=default_rng(0)), gamma2 = 2, T = 4", X0, C00, 2.0, 4)]


@exercise("03.2", "How small must γ₁ be before non-members leak?", kind="code", difficulty=3, minutes=25,
          objective="Tell a sufficient condition (the separating inequalities) from the actual threshold, by "
                    "computing where the member penalty γ₁ stops keeping non-members out of block 3",
          checks="a function (X, C0, gamma2, T) -> the threshold γ₁* (trimmed transformer, T layers), on three "
                 "data sets the notebook does not show (on two a later layer sets it), each within 0.5 % of the "
                 "closed form on the reference trajectory")
def _c032(answer):
    from ..algorithms.sparse_update import separating_penalties
    ratios = []
    for name, X, C0, gamma2, T in _leak_cases():
        per_layer = _leak_thresholds(X, C0, T, gamma2)
        target = float(per_layer.max())
        value = as_float(call_answer(answer, X.copy(), C0.copy(), gamma2, T), f"gamma1* on {name}, a number")
        if _close(value, target, BISECTION_RTOL):
            ratios.append(separating_penalties(X, C0, gamma2)[0] / target)
            continue
        where = f"on {name}: "
        expect(value > 0, where + "gamma1* is a positive number")
        if _close(value, 2 * target, 0.02):
            raise Wrong(where + "a non-member's score is lowered by gamma1 ||e_j - y_i||^2: what is ||e_j - y_i||^2 "
                        "for a non-member?")
        if value > target:
            raise Wrong(where + f"at gamma1 = {value:g} no non-member gets a nonzero weight in any of the {T} layers: "
                        "the threshold is lower")
        if any(_close(value, t, BISECTION_RTOL) for t in per_layer):
            raise Wrong(where + f"at gamma1 = {value:g} one layer stops leaking, but the centers move: another layer "
                        "still leaks above it. Read every layer of the trajectory, not only one")
        raise Wrong(where + f"at gamma1 = {value:g} something leaks, but it also leaks at somewhat larger gamma1: "
                    "find the largest value (every layer counts, not only the first)")
    return (f"right on all three: separating_penalties' gamma1 is {min(ratios):.0f} to {max(ratios):.0f} times "
            "gamma1* there: the inequalities are sufficient, far from necessary")


# ----------------------------------------------------------------------------- 03.3
#: 03.3's scores: which appended score w gets weight exactly 0?
THRESHOLD_Z = np.array([2.0, 1.5, 1.2])


@exercise("03.3", "Sparsemax's threshold, and why a gap of 1 is enough", kind="proof", difficulty=2, minutes=20,
          objective="Prove that sparsemax(z) = [z − τ]₊ with τ = max_s (z_{1:s} − 1)/s, that every score at or "
                    "below τ gets exactly 0, and that a score 1 below the maximum is always at or below τ: the "
                    "margin the circuits' penalties buy",
          checks="the largest w for which sparsemax([2, 1.5, 1.2, w]) gives w weight exactly 0, to 4 significant "
                 "digits (the proof is graded by reading)")
def _c033(answer):
    z = THRESHOLD_Z
    terms = (np.cumsum(np.sort(z)[::-1]) - 1) / np.arange(1, z.size + 1)
    expect_value(answer, terms.max(), what="the largest w",
                 wrong=[(z.max() - 1, "a score 1 below the maximum always gets 0 (part (c)), but that is sufficient, "
                                      "not necessary: part (d) says exactly which w get 0"),
                        (terms[-1], "that is (z_1:s - 1)/s for s = 3 only: tau is the largest of these terms"),
                        (terms[0], "that is the term s = 1 only: tau is the largest of the terms (z_1:s - 1)/s"),
                        (z[2], "w = 1.2 does get weight 0, but so does a somewhat larger w: find the largest "
                               "(part (d))"),
                        (z[1], "w = 1.5 ties the second score, which sparsemax keeps, and a w just below it still gets "
                               "a weight: use part (d)")],
                 hint="not that: compute tau of [2, 1.5, 1.2] and use part (d): what does a score w <= tau get?")
    return "right: w gets 0 exactly when w <= tau of the other scores, 1.25 here, well above max z - 1 = 1"


# ----------------------------------------------------------------------------- 03.4
def _keep_window(D_sorted, keep):
    """(lo, hi]: the gamma2 at which alpha = inf normmax keeps exactly the ``keep`` closest of these distances.

    Member s (in increasing distance) is kept iff ``gamma2 * f(s) <= 1`` with
    ``f(s) = sum_{i < s} (D_(s) - D_(i))`` (nondecreasing in s).
    """
    f = lambda s: s * D_sorted[s - 1] - np.sum(D_sorted[:s])  # noqa: E731
    lo = 1.0 / f(keep + 1) if keep < D_sorted.size else 0.0
    hi = 1.0 / f(keep) if keep > 1 else np.inf
    return lo, hi


def _quantile_windows(X, C0, q, keep_of=None):
    """(k, 2): per cluster of the first step, the gamma2 window in which normmax keeps the quantile rule's members.

    The quantile rule's kept count per cluster is the library's (``trimmed_kmeans_quantile(...).info["kept"]``);
    ``keep_of(n_j)`` replaces it (for the plausible mistakes).
    """
    from ..algorithms.trimmed import trimmed_kmeans_quantile
    lab = _first_labels(X, C0)
    kept = trimmed_kmeans_quantile(X, C0, 1, q=q).info["kept"][0]
    rows = []
    for j in range(C0.shape[1]):
        D = np.sort(_sq(X[:, lab == j], C0[:, j]))
        keep = int(np.sum(kept[lab == j])) if keep_of is None else keep_of(D.size)
        rows.append(_keep_window(D, keep))
    return np.array(rows)


def _window_cases():
    """(name, X, C0, q) for 03.4's function: data the notebook never shows (every cluster of 25 or more members)."""
    X1, C1, _ = _blobs(1)
    X8, C8, _ = _blobs(8, n_per_cluster=40, n_outliers=6)
    X6, C6, _ = _blobs(6, k=4, n_per_cluster=25)
    return [("blobs_with_outliers(rng=default_rng(1)), q = 0.95", X1, C1, 0.95),
            ("blobs_with_outliers(n_per_cluster=40, n_outliers=6, rng=default_rng(8)), q = 0.8", X8, C8, 0.8),
            ("blobs_with_outliers(k=4, n_per_cluster=25, rng=default_rng(6)), q = 0.9", X6, C6, 0.9)]


@exercise("03.4", "When does normmax trimming equal the authors' quantile rule?", kind="code", difficulty=2,
          minutes=20,
          objective="Work out which members α = ∞ normmax keeps as γ₂ varies, and compare trimming set by a "
                    "score gap (γ₂) with trimming set by rank (the quantile rule)",
          checks="a function (X, C0, q) -> the (k, 2) array of per-cluster γ₂ windows (first step) on three data "
                 "sets the notebook does not show (q = 0.95, 0.8, 0.9; k = 3, 3, 4), within 0.5 % of the closed "
                 "form")
def _c034(answer):
    for name, X, C0, q in _window_cases():
        k = C0.shape[1]
        target = _quantile_windows(X, C0, q)
        drop_one = _quantile_windows(X, C0, q, keep_of=lambda m: m - 1)
        W = as_array(call_answer(answer, X.copy(), C0.copy(), q), (k, 2),
                     f"the windows on {name}: a (k, 2) array [[lo_0, hi_0], ...]")
        where = f"on {name}: "
        expect(np.all(W[:, 0] < W[:, 1]), where + "each row is (lowest, highest) gamma2 of a window, lowest first")
        good = np.all(np.abs(W - target) <= BISECTION_RTOL * np.abs(target), axis=1)
        if good.all():
            continue
        if np.allclose(W, drop_one, rtol=BISECTION_RTOL):
            raise Wrong(where + "these windows keep all members but the farthest; how many members does the "
                        "quantile rule keep in a cluster of n_j members (see §8b)?")
        bad = ", ".join(str(j) for j in np.flatnonzero(~good))
        raise Wrong(where + f"row(s) {bad} are off: check them by running trimmed_kmeans_attention(X, C0, 1, gamma2) "
                    "just inside and just outside your ends")
    return "right on all three: the count normmax keeps follows the score gaps, the quantile rule's the rank"


# ----------------------------------------------------------------------------- 03.5
def _outlier_gammas(X, C0, is_out):
    """Per outlier, the smallest gamma at which the robust rule gives it weight 0 at the first step.

    Sparsemax keeps the member of rank s (increasing distance) iff
    ``g sum_{i<s} (D_(s) - D_(i)) < 1`` with ``g = gamma / sqrt(d)``: monotone
    in g, so an outlier o is dropped iff ``gamma >= sqrt(d) / sum_{D_i < D_o}(D_o - D_i)``.
    """
    lab = _first_labels(X, C0)
    d = X.shape[0]
    need = []
    for j in range(C0.shape[1]):
        members = np.flatnonzero(lab == j)
        D = _sq(X[:, members], C0[:, j])
        for o in np.flatnonzero(is_out[members]):
            need.append(np.sqrt(d) / np.sum(D[o] - D[D < D[o]]))
    return np.array(need)


def _robust_cases():
    """(name, X, C0, is_out) for 03.5's function: data the notebook never shows, one of them 3-d."""
    X7, C7, o7 = _blobs(7, n_outliers=6)
    X2, C2, o2 = _blobs(2, n_outliers=2)
    X3, C3, o3 = _blobs_3d(5)
    return [("blobs_with_outliers(n_outliers=6, rng=default_rng(7))", X7, C7, o7),
            ("blobs_with_outliers(n_outliers=2, rng=default_rng(2))", X2, C2, o2),
            ("three 3-d blobs with 3 outliers", X3, C3, o3)]


@exercise("03.5", "The γ at which robust k-means ignores the outliers", kind="code", difficulty=2, minutes=15,
          objective="Use sparsemax's support test to find when the robust rule gives an outlier weight exactly 0, "
                    "and judge the authors' default γ = 0.01 on unit-scale data",
          checks="a function (X, C0, is_out) -> the smallest γ at which every outlier has weight 0 at the first "
                 "step, on three data sets the notebook does not show (one 3-d), each within 0.5 % of the closed "
                 "form")
def _c035(answer):
    for name, X, C0, is_out in _robust_cases():
        need = _outlier_gammas(X, C0, is_out)
        target, d = float(need.max()), X.shape[0]
        value = as_float(call_answer(answer, X.copy(), C0.copy(), is_out.copy()), f"gamma on {name}, a number")
        wrong = [(0.01, "at the authors' default every outlier still has a nonzero weight: print block 3's "
                        "weights of the outliers in layer 1"),
                 (target / np.sqrt(d), "the robust score is -gamma ||x_i - c_j||^2 / sqrt(d): did you leave out the "
                                       "sqrt(d)?")]
        if d != 2:
            wrong.append((target * np.sqrt(2 / d), f"these data have d = {d}: the robust score divides by sqrt(d) of "
                                                   "the data, not by the notebook's sqrt(2)"))
        if need.size > 1 and not _close(need.min(), target, 2 * BISECTION_RTOL):
            wrong.append((float(need.min()), "that gamma drops the first outlier to go; which outlier is the last?"))
        expect_value(value, target, rtol=BISECTION_RTOL, what=f"gamma on {name}", wrong=wrong,
                     hint=(f"on {name}: at gamma = {value:g} some outlier still has a nonzero weight at the first "
                           "step: which outlier is the last to go?") if value < target else
                          f"on {name}: at gamma = {value:g} every outlier has weight 0, but also at smaller gamma: "
                          "find the smallest")
    return "right on all three: an outlier goes once gamma times its summed distance gaps to the closer members reaches sqrt(d)"


# ----------------------------------------------------------------------------- 03.6
#: 03.6's scores for P[max_i (z_i + g_i) <= 0]
GUMBEL_Z = np.array([0.0, np.log(2.0)])


@exercise("03.6", "The Gumbel-max trick samples from softmax", kind="proof", difficulty=2, minutes=20,
          objective="Prove P[argmax_i (z_i + g_i) = j] = softmax(z)_j for i.i.d. standard Gumbel g_i, and say "
                    "why bounded noise lets the k-medoids circuit keep non-members out",
          checks="P[max_i (z_i + g_i) <= 0] for z = (0, ln 2), to 4 significant digits, and a choice among four "
                 "statements about why no non-member is sampled (the proof is graded by reading)",
          parts=("P[max_i (z_i + g_i) <= 0] for z = (0, ln 2)", "why no non-member is sampled"))
def _c036(answer, part):
    expect(isinstance(answer, (tuple, list)) and len(answer) == 2,
           "answer = (probability, letter): the probability of part 1 and the letter of part 2")
    if part == 1:
        Z = float(np.sum(np.exp(GUMBEL_Z)))
        expect_value(answer[0], np.exp(-Z), what="the probability",
                     wrong=[(float(np.exp(-np.sum(np.exp(-GUMBEL_Z)))),
                             "P[z_i + g_i <= 0] = P[g_i <= -z_i] = exp(-e^{z_i}): check the sign in the CDF"),
                            (float(softmax(GUMBEL_Z)[1]), "that is P[argmax = 2]; the question asks for the maximum "
                                                          "itself to be <= 0"),
                            (float(softmax(GUMBEL_Z)[0]), "that is P[argmax = 1]; the question asks for the maximum "
                                                          "itself to be <= 0")],
                     hint="not that: the maximum is <= 0 when every z_i + g_i is; the g_i are independent")
        return "right: the product of the CDFs is exp(-e^{-y} Z), a Gumbel law shifted by log Z"
    multiple_choice(answer[1], "b", {
        "a": "the non-members' scores are finite (a data term minus 2 gamma1): what stops finite scores from "
             "winning once noise is added?",
        "c": "a standard Gumbel variable is unbounded; what bounds the circuit's noise, and by how much?",
        "d": "block 3 attends to every key, the other clusters' points and the center tokens included: the "
             "scores decide",
    })
    return "right: a gap of more than 1 + W survives any noise of range W"


# ----------------------------------------------------------------------------- 03.7
def _outlier_probabilities(X, C0, is_out, gamma, use_mean=True):
    """Per center, P(it lands on an outlier at the first step), randomized k-medoids (0 for an empty cluster)."""
    lab = _first_labels(X, C0)
    p = []
    for j in range(C0.shape[1]):
        members = np.flatnonzero(lab == j)
        if members.size == 0:
            p.append(0.0)  # an empty cluster keeps its center
            continue
        ref = X[:, members].mean(axis=1) if use_mean else C0[:, j]
        w = softmax(-gamma * _sq(X[:, members], ref))
        p.append(float(np.sum(w[is_out[members]])))
    return np.array(p)


def _medoid_probability(X, C0, is_out, gamma):
    """P(at least one center lands on an outlier at the first step): the centers draw independently."""
    return float(1.0 - np.prod(1.0 - _outlier_probabilities(X, C0, is_out, gamma)))


def _medoid_cases():
    """(name, X, C0, is_out, gamma) for 03.7's function: data the notebook never shows, one with an empty cluster."""
    X1, C1, o1 = _blobs(1)
    X7, C7, o7 = _blobs(7, n_outliers=6)
    X2, C2, o2 = _blobs(2)
    C2e = np.concatenate([C2, [[5.0], [5.0]]], axis=1)  # a fourth center that attracts no point
    return [("blobs_with_outliers(rng=default_rng(1)), gamma = 1", X1, C1, o1, 1.0),
            ("blobs_with_outliers(n_outliers=6, rng=default_rng(7)), gamma = 3", X7, C7, o7, 3.0),
            ("blobs_with_outliers(rng=default_rng(2)) with a fourth center at (5, 5), gamma = 2", X2, C2e, o2, 2.0)]


@exercise("03.7", "The probability that a sampled medoid is an outlier", kind="code", difficulty=2, minutes=15,
          objective="Turn the Gumbel sampler into the distribution it samples (softmax over the members, around "
                    "the member mean, independently per center) and compute an event's probability exactly",
          checks="a function (X, C0, is_out, gamma) -> P(some center becomes an outlier at the first step), on "
                 "three data sets the notebook does not show (one with an empty cluster), to 4 significant digits "
                 "(an estimate from draws is not; built without randomized_kmedoids, "
                 "randomized_kmedoids_transformer, gumbel or gumbel_noise)",
          forbid=(randomized_kmedoids, randomized_kmedoids_transformer, gumbel, gumbel_noise))
def _c037(answer):
    for name, X, C0, is_out, gamma in _medoid_cases():
        target = _medoid_probability(X, C0, is_out, gamma)
        p = _outlier_probabilities(X, C0, is_out, gamma)
        around_c = 1.0 - np.prod(1.0 - _outlier_probabilities(X, C0, is_out, gamma, use_mean=False))
        value = as_float(call_answer(answer, X.copy(), C0.copy(), is_out.copy(), gamma),
                         f"the probability on {name}")
        where = f"on {name}: "
        expect(0.0 <= value <= 1.0, where + "a probability lies in [0, 1]")
        if abs(value - target) <= 0.15 * target:
            rse = np.sqrt((1 - target) / (target * 200_000))
            estimate = (where + "close, but an estimate from N draws has a relative standard error of "
                        f"sqrt((1 - P)/(P N)), {rse:.1%} here even at N = 200,000: compute the probability from "
                        "the distribution the sampler draws from")
        else:
            estimate = (where + "not that: for each center, which members can it become, with which "
                        "probabilities, and which of them are outliers?")
        expect_value(value, target, what=f"the probability on {name}",
                     wrong=[(float(np.sum(p)), where + "the centers are drawn independently: P(at least one) is not "
                                                       "the sum of the per-center probabilities"),
                            (float(around_c), where + "the sampling scores are -gamma ||x_i - mu_j||^2 around the "
                                                      "member mean mu_j, not around the center c_j")] +
                           [(p_j, where + "that is one center's probability; the question asks for at least one "
                                          "of the centers") for p_j in p if p_j > 0],
                     hint=estimate)
    return "right on all three: the centers draw independently, each from the softmax over its members"


# ----------------------------------------------------------------------------- 03.8
#: 03.8's checked count: the outliers Cuesta-Albertos keeps with rho = 0.05 at this many outliers
CA_OUTLIERS, CA_RHO = 20, 0.05


def _ca_outliers_kept(n_outliers=CA_OUTLIERS, rho=CA_RHO):
    from ..algorithms.trimmed import trimmed_kmeans
    X, C0, is_out = _blobs(SEED, n_outliers=n_outliers)
    return int(np.sum(trimmed_kmeans(X, C0, N_LAYERS, rho=rho).labels[-1][is_out] >= 0))


@exercise("03.8", "More outliers than a trimming proportion allows", kind="explore", difficulty=2, minutes=25,
          objective="Compare trimming set by a score gap (normmax, sparsemax) with trimming set by a proportion "
                    "(Cuesta-Albertos) and with sampling (k-medoids) as the number of outliers grows",
          checks="the number of outliers Cuesta-Albertos (ρ = 0.05) does not trim after 5 steps at n_o = 20 "
                 "(exact: an integer; the comparison is graded by reading)")
def _c038(answer):
    got = as_int(answer, "a count of outliers (an integer)")
    want = _ca_outliers_kept()
    if got == 0:
        raise Wrong("at n_o = 20 Cuesta-Albertos does keep outliers: how many points does rho = 0.05 trim?")
    if got == CA_OUTLIERS:
        raise Wrong("it trims some points, and the far outliers are the farthest: how many does rho = 0.05 trim?")
    expect(got == want, "not that count: n = 90 + n_o points, h = ceil((1 - rho) n) are kept, and the trimmed "
                        "ones are the farthest from their nearest center")
    return f"right: it trims only n - h points, so {want} of the {CA_OUTLIERS} outliers stay in"


# ============================================================================= self-checks (quiz), one per section
# Each sits right after the section it checks; the notebook prints nothing that gives its answer before it.

# ----------------------------------------------------------------------------- 03.9 (after section 1)
QUIZ_Z = np.array([1.0, 0.5, -1.0])           # 03.9's scores


@exercise("03.9", "Self-check: sparsemax by hand", kind="quiz", difficulty=1, minutes=2,
          objective="compute sparsemax from its threshold tau and tell it from normmax and softmax",
          checks="sparsemax([1, 0.5, -1]) (3 weights) to 4 significant digits")
def _c(answer):
    from ..core.normalizers import normmax, softmax, sparsemax
    want = sparsemax(QUIZ_Z)
    expect_value(answer, want, what="the sparsemax weights",
                 wrong=[(normmax(QUIZ_Z, alpha=np.inf), "that is alpha = inf normmax, uniform on the support; "
                                                        "sparsemax's weights are z - tau on it"),
                        (softmax(QUIZ_Z), "that is softmax: sparsemax gives exact zeros"),
                        ([1.0, 0.0, 0.0], "the second score is less than 1 below the maximum: does it get weight 0?")],
                 hint="not sparsemax: find tau = max_s (z_1:s - 1)/s over the sorted scores, then take [z - tau]_+")
    return "right: tau = 1/4, so the weights are [z - 1/4]_+"


# ----------------------------------------------------------------------------- 03.10 (after section 4)
QUIZ_SQ = np.array([0.0, 0.1, 0.5])           # 03.10's members' squared distances to their center
QUIZ_GAMMA, QUIZ_D = 4.0, 2                   # the robust gamma of section 4 and the data's d


@exercise("03.10", "Self-check: robust weights of three members", kind="quiz", difficulty=1, minutes=2,
          objective="compute the robust rule's member weights (sparsemax of -gamma ||x - c||^2 / sqrt(d))",
          checks="block 3's weights of three members at squared distances 0, 0.1, 0.5 (gamma = 4, d = 2), "
                 "to 4 significant digits")
def _c(answer):
    from ..core.normalizers import normmax, sparsemax
    g = QUIZ_GAMMA / np.sqrt(QUIZ_D)
    want = sparsemax(-g * QUIZ_SQ)
    expect_value(answer, want, what="the three weights",
                 wrong=[(sparsemax(-QUIZ_GAMMA * QUIZ_SQ), "the robust score divides by sqrt(d)"),
                        (normmax(-g * QUIZ_SQ, alpha=np.inf), "uniform on the kept members is the trimmed rule "
                                                              "(normmax); the robust rule uses sparsemax"),
                        (np.full(3, 1 / 3), "that is Lloyd's mean: sparsemax can give a far member weight 0")],
                 hint="not the weights: scores z = -gamma ||x - c||^2 / sqrt(d), then sparsemax (section 1's tau)")
    return "right: a straight line in the squared distance, and the farthest member is cut off"


# ----------------------------------------------------------------------------- 03.11 (after section 5)
@exercise("03.11", "Self-check: what a medoid is", kind="quiz", difficulty=1, minutes=1,
          objective="say what the k-medoids circuit's hard Gumbel block 3 writes into a center token",
          checks="a choice among four statements about the new center of a populated cluster")
def _c(answer):
    multiple_choice(answer, "a", {
        "b": "mu_j is computed first (block mu), but block 3 then samples: what does a one-hot attention over "
             "points write?",
        "c": "non-members are penalized beyond the Gumbel noise range: can one be sampled?",
        "d": "that is what a soft attention would write; hard Gumbel attention is one-hot",
    })
    return "right: a one-hot attention over the members writes one member point"
