"""Exercises of notebook 03: sparse normalizers, trimmed and robust k-means, randomized k-medoids.

Every expected value is computed here with kmt_ref on the notebook's data
(``blobs_with_outliers(rng=np.random.default_rng(4))``, initial centers its
``C0``), so a checker is exact where the quantity is exact and states its
tolerance where a student may reasonably find it by bisection.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._registry import Wrong, as_array, as_float, exercise, expect, expect_value, multiple_choice

#: the notebook's seed and parameters (notebooks/src/03_sparse_and_sampling_variants.py)
SEED = 4
GAMMA2, N_LAYERS = 3.0, 5
GAMMA2_LEAK = 0.5             # exercise 03.2's gamma2: there a later layer, not the first, sets the leak threshold
Q = 0.95                      # the authors' quantile (trimmed_kmeans_quantile's default)
GAMMA_SAMPLE = 2.0            # exercise 03.7's sampling gamma

#: relative tolerance for thresholds a student may find by bisection on the transformer: 0.5 %
#: (a bisection of 12 halvings from a bracket of width 10x gets there; the exact values come from
#: the closed forms below, and the nearest plausible wrong answers differ by factors of sqrt(2) or more)
BISECTION_RTOL = 5e-3


@lru_cache(maxsize=1)
def _data():
    from ..data import blobs_with_outliers
    X, C0, is_out = blobs_with_outliers(rng=np.random.default_rng(SEED))
    return X, C0, is_out


def _sq(X, c):
    diff = X - c[:, None]
    return np.sum(diff * diff, axis=0)  # (m,)


def _first_labels():
    from .. import lloyd
    X, C0, _ = _data()
    return lloyd(X, C0, 1).labels[0]  # (n,) Lloyd's first assignment (ties: lowest index)


def _close(value, target, rtol):
    return abs(value - target) <= rtol * abs(target)


# ----------------------------------------------------------------------------- 03.1
@exercise("03.1", "A score vector on which sparsemax and normmax disagree", kind="code", difficulty=1, minutes=10,
          objective="Read the supports of sparsemax ({z > τ}) and α = ∞ normmax ({z ≥ τ}, or the maximum "
                    "alone) off the simplex threshold τ",
          checks="a 1-D score vector (length >= 2) on which sparsemax(z) > 0 and normmax(z, alpha=inf) > 0 "
                 "differ, computed with kmt_ref (exact: a score must sit exactly at the threshold τ in float64)")
def _c031(answer):
    from ..core.normalizers import normmax, simplex_threshold, sparsemax
    z = as_array(answer, (None,), "a 1-D array of scores")
    expect(z.size >= 2, "give at least two scores")
    tau = simplex_threshold(z)[0]
    sp, nm = sparsemax(z) > 0, normmax(z, alpha=np.inf) > 0
    if np.array_equal(sp, nm):
        at_tau = np.any(z == tau)
        if at_tau and tau <= z.max() - 1.0:
            raise Wrong("a score sits at tau, but tau = max z - 1: then normmax is one-hot on the maximum, as "
                        "sparsemax is. Put the score at tau while tau > max z - 1")
        if at_tau:
            raise Wrong("both keep the same entries here; check which entries normmax keeps at tau")
        raise Wrong("no score equals tau = simplex_threshold(z) exactly, so both keep {z > tau}. Pick scores "
                    "whose partial sums are exact in binary floating point (halves, quarters)")
    return f"right: tau = {tau:g}; sparsemax keeps {int(sp.sum())} entries, normmax {int(nm.sum())}"


# ----------------------------------------------------------------------------- 03.2
@lru_cache(maxsize=1)
def leak_thresholds():
    """Per layer t, the largest gamma1 at which a non-member gets weight > 0 in block 3 (trimmed, gamma2 = 0.5, T = 5).

    Until something leaks the transformer follows the reference
    (:func:`trimmed_kmeans_attention`), so the thresholds are read on the
    reference trajectory. In layer t, center j, a non-member's score is
    ``b_i - 2 gamma1`` (``b_i = -gamma2 ||x_i - c_j||^2``; ``||e_j - y_i||^2 = 2``)
    and normmax keeps it iff it reaches the members' threshold tau_j (a score
    below tau leaves tau unchanged): it leaks iff ``gamma1 <= (b_i - tau_j) / 2``.
    At gamma2 = 0.5 the largest threshold is layer 3's, about 2 % above layer 2's and
    5 % above layer 1's (tests/exercises/test_nb03.py), so every layer must be read.
    """
    from ..algorithms.trimmed import trimmed_kmeans_attention
    from ..core.normalizers import simplex_threshold
    X, C0, _ = _data()
    ref = trimmed_kmeans_attention(X, C0, N_LAYERS, GAMMA2_LEAK)
    out = np.full(N_LAYERS, -np.inf)
    for t in range(N_LAYERS):
        C, lab = ref.centers[t], ref.labels[t]
        for j in range(C.shape[1]):
            z = -GAMMA2_LEAK * _sq(X, C[:, j])  # (n,)
            if np.any(lab == j) and np.any(lab != j):
                tau = simplex_threshold(z[lab == j])[0]
                out[t] = max(out[t], (z[lab != j].max() - tau) / 2.0)
    return out


def leak_threshold():
    """gamma1*: the largest gamma1 at which a non-member gets weight > 0 in block 3 of some layer."""
    return float(leak_thresholds().max())


@exercise("03.2", "How small must γ₁ be before non-members leak?", kind="code", difficulty=3, minutes=25,
          objective="Tell a sufficient condition (the separating inequalities) from the actual threshold, by "
                    "computing where the member penalty γ₁ stops keeping non-members out of block 3",
          checks="the threshold γ₁* (trimmed, γ₂ = 0.5, 5 layers, the notebook's data; a later layer sets it) "
                 "within 0.5 % (closed form on the reference trajectory)")
def _c032(answer):
    value = as_float(answer, "gamma1* as a number")
    target = leak_threshold()
    expect(value > 0, "gamma1* is a positive number")
    if _close(value, target, BISECTION_RTOL):
        from ..algorithms.sparse_update import separating_penalties
        X, C0, _ = _data()
        chosen = separating_penalties(X, C0, GAMMA2_LEAK)[0]
        return (f"right: gamma1* = {target:.4g}, about {chosen / target:.0f} times below separating_penalties' "
                f"choice: the inequalities are sufficient, far from necessary")
    if _close(value, 2 * target, 0.02):
        raise Wrong("a non-member's score is lowered by gamma1 ||e_j - y_i||^2: what is ||e_j - y_i||^2 for a "
                    "non-member?")
    if value > target:
        raise Wrong(f"at gamma1 = {value:g} no non-member gets a nonzero weight in any of the 5 layers: "
                    "the threshold is lower")
    if any(_close(value, t, BISECTION_RTOL) for t in leak_thresholds()):
        raise Wrong(f"at gamma1 = {value:g} one layer stops leaking, but the centers move: another layer still "
                    "leaks above it. Read every layer of the trajectory (record=True), not only one")
    raise Wrong(f"at gamma1 = {value:g} something leaks, but it also leaks at somewhat larger gamma1: find the "
                "largest value (every layer counts, not only the first)")


# ----------------------------------------------------------------------------- 03.3 (graded by reading)
exercise("03.3", "Sparsemax's threshold, and why a gap of 1 is enough", kind="proof", difficulty=2, minutes=20,
         objective="Prove that sparsemax(z) = [z − τ]₊ with τ = max_s (z_{1:s} − 1)/s, that every score at or "
                   "below τ gets exactly 0, and that a score 1 below the maximum is always at or below τ: the "
                   "margin the circuits' penalties buy")(None)


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


@lru_cache(maxsize=1)
def quantile_windows():
    """(k, 2): per cluster of the first step, the gamma2 window in which normmax keeps the quantile rule's members."""
    X, C0, _ = _data()
    lab = _first_labels()
    rows = []
    for j in range(C0.shape[1]):
        D = np.sort(_sq(X[:, lab == j], C0[:, j]))
        keep = int(np.ceil(round(Q * (D.size - 1), 9)))  # distinct distances: the quantile rule keeps this many
        rows.append(_keep_window(D, keep))
    return np.array(rows)


def _drop_farthest_windows():
    """The plausible mistake: "the quantile rule drops the farthest member" (true only for n_j <= 20)."""
    X, C0, _ = _data()
    lab = _first_labels()
    return np.array([_keep_window(np.sort(_sq(X[:, lab == j], C0[:, j])), int(np.sum(lab == j)) - 1)
                     for j in range(C0.shape[1])])


@exercise("03.4", "When does normmax trimming equal the authors' quantile rule?", kind="code", difficulty=2,
          minutes=20,
          objective="Work out which members α = ∞ normmax keeps as γ₂ varies, and compare trimming set by a "
                    "score gap (γ₂) with trimming set by rank (the quantile rule)",
          checks="a (3, 2) array of per-cluster γ₂ windows (first step, the notebook's data) within 0.5 % "
                 "of the closed form")
def _c034(answer):
    W = as_array(answer, (3, 2), "the (3, 2) array of windows [[lo_0, hi_0], [lo_1, hi_1], [lo_2, hi_2]]")
    target = quantile_windows()
    expect(np.all(W[:, 0] < W[:, 1]), "each row is (lowest, highest) gamma2 of a window, lowest first")
    good = np.all(np.abs(W - target) <= BISECTION_RTOL * np.abs(target), axis=1)
    if good.all():
        overlap = target[:, 0].max() < target[:, 1].min()
        return ("right. " + ("The windows overlap: one gamma2 matches every cluster." if overlap else
                             "The windows do not all overlap: no single gamma2 matches the quantile rule on "
                             "every cluster at once."))
    if np.allclose(W, _drop_farthest_windows(), rtol=BISECTION_RTOL):
        raise Wrong("these windows keep all members but the farthest; how many members does the quantile rule "
                    "keep in a cluster of 30 or 32 (see §8b)?")
    bad = ", ".join(str(j) for j in np.flatnonzero(~good))
    raise Wrong(f"row(s) {bad} are off: check them by running trimmed_kmeans_attention(X, C0, 1, gamma2) just "
                "inside and just outside your ends")


# ----------------------------------------------------------------------------- 03.5
@lru_cache(maxsize=1)
def robust_outlier_gamma():
    """The smallest gamma at which the robust rule gives every outlier weight 0 at the first step.

    Sparsemax keeps the member of rank s (increasing distance) iff
    ``g sum_{i<s} (D_(s) - D_(i)) < 1`` with ``g = gamma / sqrt(d)``: monotone
    in g, so an outlier o is dropped iff ``gamma >= sqrt(d) / sum_{D_i < D_o}(D_o - D_i)``.
    """
    X, C0, is_out = _data()
    lab = _first_labels()
    d = X.shape[0]
    need = 0.0
    for j in range(C0.shape[1]):
        members = np.flatnonzero(lab == j)
        D = _sq(X[:, members], C0[:, j])
        for o in np.flatnonzero(is_out[members]):
            need = max(need, np.sqrt(d) / np.sum(D[o] - D[D < D[o]]))
    return float(need)


@exercise("03.5", "The γ at which robust k-means ignores the outliers", kind="code", difficulty=2, minutes=15,
          objective="Use sparsemax's support test to find when the robust rule gives an outlier weight exactly 0, "
                    "and judge the authors' default γ = 0.01 on unit-scale data",
          checks="the smallest γ (first step, the notebook's data) at which every outlier has weight 0, "
                 "within 0.5 % of the closed form")
def _c035(answer):
    value = as_float(answer, "gamma as a number")
    target = robust_outlier_gamma()
    expect_value(value, target, rtol=BISECTION_RTOL, what="gamma",
                 wrong=[(0.01, "at the authors' default every outlier still has a nonzero weight: print block 3's "
                               "weights of the outliers in layer 1"),
                        (target / np.sqrt(2), "the robust score is -gamma ||x_i - c_j||^2 / sqrt(d): did you leave "
                                              "out the sqrt(d)?")],
                 hint=(f"at gamma = {value:g} some outlier still has a nonzero weight at the first step: which "
                       "outlier is the last to go?") if value < target else
                      f"at gamma = {value:g} every outlier has weight 0, but also at smaller gamma: find the smallest")
    return f"right: gamma = {target:.4g}, about {target / 0.01:.1f} times the authors' default 0.01"


# ----------------------------------------------------------------------------- 03.6 (graded by reading)
exercise("03.6", "The Gumbel-max trick samples from softmax", kind="proof", difficulty=2, minutes=20,
         objective="Prove P[argmax_i (z_i + g_i) = j] = softmax(z)_j for i.i.d. standard Gumbel g_i, and say "
                   "why bounded noise lets the k-medoids circuit keep non-members out")(None)


# ----------------------------------------------------------------------------- 03.7
def _outlier_probabilities(use_mean=True):
    from ..core.normalizers import softmax
    X, C0, is_out = _data()
    lab = _first_labels()
    p = []
    for j in range(C0.shape[1]):
        members = np.flatnonzero(lab == j)
        ref = X[:, members].mean(axis=1) if use_mean else C0[:, j]
        w = softmax(-GAMMA_SAMPLE * _sq(X[:, members], ref))
        p.append(float(np.sum(w[is_out[members]])))
    return np.array(p)


@lru_cache(maxsize=1)
def medoid_outlier_probability():
    """P(at least one center becomes an outlier at the first step), randomized k-medoids, gamma = 2."""
    return float(1.0 - np.prod(1.0 - _outlier_probabilities()))


@exercise("03.7", "The probability that a sampled medoid is an outlier", kind="code", difficulty=2, minutes=15,
          objective="Turn the Gumbel sampler into the distribution it samples (softmax over the members, around "
                    "the member mean, independently per center) and compute an event's probability exactly",
          checks="P(some center becomes an outlier at the first step, γ = 2, the notebook's data), "
                 "to 4 significant digits (an estimate from draws is not)")
def _c037(answer):
    value = as_float(answer, "a probability")
    expect(0.0 <= value <= 1.0, "a probability lies in [0, 1]")
    target = medoid_outlier_probability()
    p = _outlier_probabilities()
    estimate = ("an estimate from draws is not enough here (200,000 draws give about 3 %); compute the "
                "probability from the distribution the sampler draws from")
    expect_value(value, target, what="the probability",
                 wrong=[(float(np.sum(p)), "the centers are drawn independently: P(at least one) is not the sum of "
                                           "the per-center probabilities"),
                        (float(1.0 - np.prod(1.0 - _outlier_probabilities(use_mean=False))),
                         "the sampling scores are -gamma ||x_i - mu_j||^2 around the member mean mu_j, not around "
                         "the center c_j")] +
                       [(p_j, "that is one center's probability; the question asks for at least one of the three "
                              "centers") for p_j in p if p_j > 0],
                 hint=estimate if abs(value - target) <= 0.15 * target else
                      "not that: for each center, which members can it become, with which probabilities, and which "
                      "of them are outliers?")
    return f"right: {target:.4g}; the sampling check of the solutions agrees within its 4-sigma band"


# ----------------------------------------------------------------------------- 03.8 (graded by reading)
exercise("03.8", "More outliers than a trimming proportion allows", kind="explore", difficulty=2, minutes=25,
         objective="Compare trimming set by a score gap (normmax, sparsemax) with trimming set by a proportion "
                   "(Cuesta-Albertos) and with sampling (k-medoids) as the number of outliers grows")(None)


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
