"""Exercises of notebook 02: Theorem 2.2 (the norm trick, the ReQU norm, the empty-cluster key),
soft k-means (beta) and spherical k-means.

Every checker computes its expected answer with kmt_ref itself, on the notebook's data
(:func:`kmt_ref.data.toy_data` with its default seed), in well under a second. The
measured facts each exercise rests on are written beside its checker.
"""
from __future__ import annotations

import numpy as np

from ..algorithms.dot_product import dot_product_layer, dot_product_weights
from ..algorithms.lloyd import lloyd
from ..algorithms.soft import soft_kmeans
from ..algorithms.spherical import spherical_kmeans
from ..core.attention import requ
from ..core.tokens import run_layers
from ..data import toy_data
from ..trace import nearest_center
from ._registry import Wrong, as_array, as_float, call_answer, exercise, expect, expect_value

__all__ = ["SEPARATION_THRESHOLD", "SOFT_LAYERS", "min_separation", "separation_beta", "critical_beta"]


def _toy():
    return toy_data()  # the notebook's X (2, 24) and C0 (2, 3): seed 19


# ----------------------------------------------------------------------------- 02.1
def _norm_row_dropped():
    """Indices of the points whose block-1 label changes when K1 loses its norm row.

    Measured: at Lloyd's converged centers on the toy data, 8 of the 24 points
    (indices 4, 8, 10, 11, 16, 21, 22, 23) move to the center of largest norm.
    """
    X, C0 = _toy()
    C = lloyd(X, C0, 5).centers[-1]  # (2, 3), converged (Lloyd's labels stop changing after step 3)
    right, _ = nearest_center(X, C)  # argmax of 2 x.c - ||c||^2
    S_bug = 2.0 * C.T @ X  # (k, n): the score without -||c_j||^2
    return np.flatnonzero(np.argmax(S_bug, axis=0) != right)


def _as_index_set(answer, n):
    try:
        raw = np.asarray(answer) if isinstance(answer, (list, tuple, np.ndarray)) else None
    except ValueError:  # a ragged list: as_array below gives the hint
        raw = None
    if raw is not None and raw.dtype == bool:  # a boolean mask over the points: the same set, another form
        expect(raw.shape == (n,), f"a boolean mask over the points has shape ({n},), got {raw.shape}")
        return set(np.flatnonzero(raw).tolist())
    idx = as_array(answer, (None,), "a 1-D array (or list) of point indices, or a boolean mask over the points")
    expect(np.all(idx == np.round(idx)), "point indices are integers")
    idx = idx.astype(int)
    expect(np.all((idx >= 0) & (idx < n)), f"point indices run from 0 to {n - 1}")
    expect(np.unique(idx).size == idx.size, "each point index should appear once")
    return set(idx.tolist())


@exercise("02.1", "What the key's norm row is for", kind="code", difficulty=2, minutes=15,
          objective="Tell which term of -||x - c||^2 the circuit must carry (||c_j||^2) and which it may drop "
                    "(||x_i||^2), by breaking the key and measuring what changes",
          checks="the set of point indices whose label changes when K1 = P_X, at Lloyd's converged centers "
                 "(computed with kmt_ref; exact: integer labels), as indices or as a boolean mask")
def _c021(answer):
    X, _ = _toy()
    got, want = _as_index_set(answer, X.shape[1]), set(_norm_row_dropped().tolist())
    expect(got, "the score 2 x.c is not 2 x.c - ||c||^2 plus a constant per point: the ||c_j||^2 differ "
                "between centers, so some labels can change. Compare the labels, point by point")
    X0, C0 = _toy()
    at_start = set(np.flatnonzero(np.argmax(2.0 * C0.T @ X0, axis=0) != nearest_center(X0, C0)[0]).tolist())
    expect(got != at_start or got == want, "these are the changes at the initial centers C0; the exercise "
                                           "uses Lloyd's converged centers, lloyd(X, C0, 5).centers[-1]")
    expect(not got - want, f"{len(got - want)} of your points keep their label with the broken key")
    expect(not want - got, f"{len(want - got)} more point(s) change their label: compare all {X.shape[1]}")
    return (f"right: {len(want)} of {X.shape[1]} points move, each to the center of largest ||c_j||^2 "
            "among its near ones; ||x_i||^2 may be dropped, ||c_j||^2 may not")


# ----------------------------------------------------------------------------- 02.2
exercise("02.2", "Proof: why the norm trick and the ReQU norm are exact", kind="proof", difficulty=2, minutes=20,
         objective="Prove that the dot score 2 x.c - ||c||^2 selects what -||x - c||^2 selects under any "
                   "shift-invariant normalizer, and that two ReQU units per coordinate give ||c||^2 exactly")(None)


# ----------------------------------------------------------------------------- 02.3
@exercise("02.3", "A ReQU block with d units for non-negative data", kind="code", difficulty=2, minutes=15,
          objective="Build a feed-forward block by hand and know what its activation can and cannot compute",
          checks="W1 (h, 8), W2 (8, h) with h <= d = 2; z + W2 ReQU(W1 z) on center tokens with a cleared norm "
                 "row and non-negative c writes ||c||^2 (rtol 1e-13: a sum of d rounded squares) and leaves "
                 "every other row exactly as it was")
def _c023(answer):
    d, k = 2, 3
    _, emb = dot_product_weights(d, k)  # d_emb = 8
    expect(isinstance(answer, (tuple, list)) and len(answer) == 2, "answer = (W1, W2), two arrays")
    W1 = as_array(answer[0], (None, emb.d_emb), "W1")
    h = W1.shape[0]
    W2 = as_array(answer[1], (emb.d_emb, h), "W2")
    expect(h >= 1, "W1 needs at least one hidden unit (one row)")
    expect(h <= d, f"W1 has {h} hidden units; the notebook's FFN already uses 2d = {2 * d}: use at most d = {d}")
    rng = np.random.default_rng(0)
    X, C0 = _toy()
    tests = [rng.uniform(0, 3, (d, k)), np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 2.5]]),
             lloyd(X, C0, 5).centers[-1], rng.uniform(0, 1e-3, (d, k))]  # (d, k) each, c >= 0
    norm = emb.rows("norm")
    for C in tests:
        Z = emb.embed_centers(C)  # (8, k)
        Z[norm] = 0.0  # what block 4 leaves
        out = Z + W2 @ requ(W1 @ Z)  # (8, k)
        others = np.ones(emb.d_emb, bool)
        others[norm] = False
        expect(np.array_equal(out[others], Z[others]), "your block changes rows other than `norm`: W2 may only "
                                                       "write into the norm row")
        want = np.sum(C * C, axis=0)
        expect(np.allclose(out[norm][0], want, rtol=1e-13, atol=1e-300),
               f"for the centers {C.round(3).T.tolist()} your block writes {out[norm][0].round(4).tolist()} "
               "into the norm row, not ||c_j||^2")
    c = np.array([[-0.5, 1.0, 2.0], [1.0, 0.0, 1.0]])  # (d, k): the first center has a negative coordinate
    Z = emb.embed_centers(c)
    Z[norm] = 0.0
    neg = float((Z + W2 @ requ(W1 @ Z))[norm][0, 0])
    return (f"right. On c = (-0.5, 1) it writes {neg:g} instead of ||c||^2 = 1.25: ReQU(z) = 0 for z < 0, "
            "hence the second unit -c_p per coordinate in Theorem 2.2")


# ----------------------------------------------------------------------------- 02.4
EMPTY_CENTER = (3.0, 3.0)  # the notebook's far fourth center (no point is nearer to it)


def _empty_center_after_one_layer(offset):
    X, C0 = _toy()
    C0e = np.column_stack([C0, EMPTY_CENTER])  # (2, 4)
    params, emb = dot_product_weights(2, 4)
    params = {name: W.copy() for name, W in params.items()}
    params["K3"][emb.rows("y"), emb.rows("flag")] = -offset
    return run_layers(X, params, dot_product_layer(), emb, C0e, 1).centers[1][:, 3]  # (2,)


@exercise("02.4", "Moving the empty-cluster offset", kind="code", difficulty=2, minutes=15,
          objective="Read off from block 3's scores (members 1, own token 1 - a, others 0 or -a) which keys "
                    "an empty cluster's center averages, and for which offsets a the circuit keeps it",
          checks="the empty center after one layer with K3's flag offset -1.5 (run with kmt_ref), "
                 "to 4 significant digits")
def _c024(answer):
    want = _empty_center_after_one_layer(1.5)
    expect_value(answer, want, what="the empty cluster's center after one layer",
                 wrong=[(EMPTY_CENTER, "that is the kept center, what offsets 0 < a < 1 give; at a = 1.5 compare the "
                                       "own token's score with the points' scores")],
                 hint="not this point. List the scores e_3 . k of every key for the empty center 3 with a = 1.5 "
                      "(points, its own token, the other center tokens): which keys tie for the maximum?")
    return "right: every point scores 0 > 1 - 1.5, so the empty center jumps to the mean of all the data"


# ----------------------------------------------------------------------------- 02.5
SOFT_LAYERS = 10  # layers, as in the notebook's beta sweep
SEPARATION_THRESHOLD = 0.3  # about half the hard-limit separation (0.598 on the toy data)


def min_separation(beta, X=None, C0=None, n_layers=SOFT_LAYERS):
    """Smallest distance between two centers after ``n_layers`` soft k-means steps (toy data by default)."""
    if X is None:
        X, C0 = _toy()
    C = soft_kmeans(X, C0, n_layers, beta).centers[-1]  # (d, k)
    k = C.shape[1]
    return min(float(np.linalg.norm(C[:, a] - C[:, b])) for a in range(k) for b in range(a + 1, k))


def separation_beta(threshold=SEPARATION_THRESHOLD, lo=5.0, hi=10.0, tol=1e-9):
    """The beta in [lo, hi] at which min_separation crosses ``threshold``, by bisection.

    Measured on the toy data: min_separation(beta) is increasing on [5, 12] (701 grid points), below
    0.3 for every beta < 7.50 and above it for every beta in (7.51, 1000] (400 log-spaced points from
    0.01); the crossing is beta* = 7.5042 (min_separation(5) = 0.006, (10) = 0.549).
    """
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if min_separation(mid) >= threshold else (mid, hi)
    return hi


@exercise("02.5", "When do the soft clusters come apart? (bisection)", kind="code", difficulty=2, minutes=20,
          objective="Turn a visual statement ('the clusters stay apart') into a measured, well-defined "
                    "quantity and find it by bisection to a stated tolerance",
          checks="beta with min separation after 10 layers = 0.3, within 0.01 of the checker's own bisection "
                 "(to 1e-9) on soft_kmeans, which equals the transformer to 1e-10 in the centers")
def _c025(answer):
    beta = as_float(answer, "beta, a positive number")
    expect(beta > 0, "beta is an inverse temperature, > 0")
    want = separation_beta()
    if abs(beta - want) <= 0.01:  # a bracket of width 0.02 around the crossing; sep changes by < 0.01 there
        return (f"right: beta* = {want:.4f}. Below it two centers are closer than 0.3 after 10 layers; "
                "at beta = 10 they are already 0.55 apart")
    sep = min_separation(beta)
    expect(sep >= SEPARATION_THRESHOLD, f"at beta = {beta:g} the smallest separation after 10 layers is "
                                        f"{sep:.3f} < 0.3: the crossing lies higher")
    lower = beta - 0.01
    raise Wrong(f"at beta = {lower:g} the smallest separation is already {min_separation(lower):.3f} >= 0.3: "
                "the crossing lies lower; keep bisecting until the bracket is narrower than 0.01")


# ----------------------------------------------------------------------------- 02.6
def critical_beta(X=None):
    """``1 / (2 s_max)``, s_max the largest eigenvalue of the data covariance (1/n)."""
    if X is None:
        X, _ = _toy()
    Xc = X - X.mean(axis=1, keepdims=True)  # (d, n)
    return 1.0 / (2.0 * np.linalg.eigvalsh(Xc @ Xc.T / X.shape[1])[-1])


@exercise("02.6", "The first split of soft k-means", kind="proof", difficulty=3, minutes=30,
          objective="Linearize the soft k-means update around the merged state and predict the critical "
                    "beta at which the centers first split (deterministic annealing)",
          checks="beta_c for the toy data to 4 significant digits (the checker computes 1/(2 s_max), s_max "
                 "the largest eigenvalue of the covariance with 1/n; the variants with 1/(n-1), without the 2, "
                 "or with the smallest eigenvalue differ by more than 4 %)")
def _c026(answer):
    X, _ = _toy()
    n = X.shape[1]
    want = critical_beta()
    eig = np.linalg.eigvalsh(np.cov(X, bias=True))
    expect_value(answer, want, what="beta_c",
                 wrong=[(2 * want, "off by a factor 2: where does the 2 of 2 x.u_j come from?"),
                        (want * (n - 1) / n, "the update averages over the n points: which normalization of the "
                                             "covariance appears?"),
                        (1 / (2 * eig[0]), "the state becomes unstable as soon as *one* direction grows: which "
                                           "eigenvalue is that?")],
                 hint="write c_j = mu + u_j (mu the data mean, u_j a small displacement) and expand r_ij and the "
                      "update to first order in u: the differences between the u_j are multiplied by a matrix; "
                      "the merged state is unstable once that matrix has an eigenvalue above 1")
    return (f"right: beta_c = {want:.4f}. On the toy data soft_kmeans (1000 steps) keeps all centers on "
            "the mean at 0.95 beta_c and splits them at 1.05 beta_c")


# ----------------------------------------------------------------------------- 02.7
def _call(f, X, C):
    out = call_answer(f, X.copy(), C.copy())
    return as_array(out, C.shape, "the new centers, an array of the shape of C")


@exercise("02.7", "One spherical k-means step, by hand", kind="code", difficulty=2, minutes=20,
          objective="Write Dhillon and Modha's update (normalize, assign by cosine, normalized member mean) "
                    "with the project's policies for ties, empty clusters and zero member sums",
          checks="your step(X, C) against spherical_kmeans(X, C, 1) (atol 1e-12) on random data with random "
                 "lengths, a tie between equal centers, an empty cluster and antipodal members")
def _c027(answer):
    expect(callable(answer), "answer = a function step(X, C) -> C_new (d, k)")
    rng = np.random.default_rng(7)
    X = rng.normal(size=(3, 40)) * rng.uniform(0.2, 5.0, 40)  # (3, 40): random directions and lengths
    C = rng.normal(size=(3, 4))
    cases = [
        ("random data with random lengths", X, C),
        ("the same points with other lengths", X * rng.uniform(0.1, 10.0, 40), C),
        ("two equal centers (a tie)", np.array([[1.0, 0.8, 0.6], [0.0, 0.6, 0.8]]), np.array([[1.0, 1.0], [0.0, 0.0]])),
        ("a center no point is nearest to", np.array([[1.0, 0.9, 0.7], [0.1, 0.4, -0.7]]),
         np.array([[2.0, -1.0], [0.0, 0.5]])),
        ("antipodal members x and -x", np.array([[1.0, -1.0], [0.0, 0.0]]), np.array([[2.0], [0.0]])),
    ]
    hints = {
        "random data with random lengths": "compare your centers with spherical_kmeans(X, C, 1).centers[1]",
        "the same points with other lengths": "the lengths of the points must not matter: normalize them first",
        "two equal centers (a tie)": "ties go to the lowest index (np.argmax does that)",
        "a center no point is nearest to": "an empty cluster keeps its (normalized) center",
        "antipodal members x and -x": "a zero member sum has no direction: its center becomes the zero vector",
    }
    for name, Xc, Cc in cases:
        want = spherical_kmeans(Xc, Cc, 1).centers[1]  # (d, k)
        got = _call(answer, Xc, Cc)
        expect(np.allclose(got, want, rtol=0, atol=1e-12), f"wrong on {name}: {hints[name]}")
    return "right: normalize, assign by the largest cosine, normalize the member mean (or keep, or 0)"


# ----------------------------------------------------------------------------- 02.8
exercise("02.8", "A cluster whose members cancel", kind="explore", difficulty=2, minutes=15,
         objective="Recognize an ill-conditioned case: a direction computed from a sum that is zero in exact "
                   "arithmetic is the direction of its rounding error")(None)


# ============================================================================= self-checks (quiz), one per section
# Each sits right after the section it checks; the notebook prints nothing that gives its answer before it.

# ----------------------------------------------------------------------------- 02.9 (after section 1)
QUIZ_X, QUIZ_C = np.array([[0.6], [0.8]]), np.array([[1.0], [0.0]])   # 02.9's point and center, (2, 1) each


def quiz_dot_score():
    """Block 1's dot score of the point QUIZ_X against the center QUIZ_C, computed by the library."""
    from ..core.attention import attention_scores
    params, emb = dot_product_weights(2, 1)
    return float(attention_scores(emb.embed_points(QUIZ_X), emb.embed_centers(QUIZ_C), params["Q1"], params["K1"],
                                  score="dot")[0, 0])


@exercise("02.9", "Self-check: a dot score by hand", kind="quiz", difficulty=1, minutes=2,
          objective="compute block 1's dot score 2 x.c - ||c||^2 and tell it from the Euclidean score",
          checks="block 1's dot score of x = (0.6, 0.8) against c = (1, 0), to 4 significant digits")
def _c(answer):
    want = quiz_dot_score()
    x, c = QUIZ_X[:, 0], QUIZ_C[:, 0]
    expect_value(answer, want, what="the dot score",
                 wrong=[(-np.sum((x - c) ** 2), "that is -||x - c||^2, the Euclidean score; the dot score differs from "
                                               "it by a term that is the same for every center"),
                        (2 * x @ c, "the key also carries ||c||^2 in its norm row, and the query reads -1 into it"),
                        (x @ c - c @ c, "the query is [2x; -1]: look at the factor in front of x.c")],
                 hint="not the score: write the query Q1 xbar and the key K1 cbar and take their dot product (section 1)")
    return "right: 2 x.c - ||c||^2 = ||x||^2 - ||x - c||^2"


# ----------------------------------------------------------------------------- 02.10 (after section 3)
@exercise("02.10", "Self-check: the shape of W1", kind="quiz", difficulty=1, minutes=2,
          objective="count the hidden units a ReQU block needs to write ||c||^2 exactly, and the rows of a token",
          checks="the shape of W1 for d = 5, k = 4 (dot_product_weights; exact: integers)")
def _c(answer):
    want = dot_product_weights(5, 4)[0]["W1"].shape            # (2d, d_emb)
    got = as_array(answer, (2,), "the shape (rows, columns) as a pair of integers")
    expect(np.all(got == np.round(got)), "a shape holds integers")
    got = tuple(int(v) for v in got)
    if got == want[::-1]:
        raise Wrong("rows and columns swapped: W1 acts on a token z, as W1 z")
    if got[1] == want[1] and got[0] == 5:
        raise Wrong("one ReQU unit per coordinate gives max(c_p, 0)^2 only: what about negative coordinates?")
    if got[0] == want[0] and got[1] != want[1]:
        raise Wrong("the hidden units are right; count the rows of a token: x, norm, one, y and flag (section 1)")
    expect(got == want, "not the shape: W1 maps a token (d_emb rows) to the hidden units (section 3)")
    return "right: 2d hidden units (ReQU(c) + ReQU(-c) = c^2 per coordinate), d_emb = d + k + 3 columns"


# ----------------------------------------------------------------------------- 02.11 (after section 6)
QUIZ_BETA = np.log(3.0)                                              # 02.11's beta
QUIZ_CENTERS = np.array([[0.0, 2.0], [0.0, 0.0]])                    # (2, 2): the centers (0, 0) and (2, 0)


def quiz_responsibility():
    """The responsibility of the point (0, 0) for the center (0, 0), by soft_kmeans (one step; the data are the
    two center points, and a point's responsibilities do not depend on the other points)."""
    return float(soft_kmeans(QUIZ_CENTERS.copy(), QUIZ_CENTERS, 1, QUIZ_BETA).assignments[0, 0])  # (k, n) -> r of point 0, center 0


@exercise("02.11", "Self-check: one responsibility", kind="quiz", difficulty=1, minutes=2,
          objective="compute a soft k-means responsibility, block 1's attention weight at a finite beta",
          checks="r for the point (0, 0), centers (0, 0) and (2, 0), beta = ln 3, to 4 significant digits")
def _c(answer):
    want = quiz_responsibility()
    expect_value(answer, want, what="the responsibility",
                 wrong=[(1 - want, "that is the responsibility of the far center: which one is nearer?"),
                        (1 / (1 + np.exp(-QUIZ_BETA * 2.0)), "the score is -beta times the squared distance"),
                        (1.0, "at a finite beta the far center keeps a nonzero weight")],
                 hint="not the responsibility: r_1 = exp(-beta d_1) / (exp(-beta d_1) + exp(-beta d_2)), d the "
                      "squared distances")
    return "right: 1 / (1 + 3^-4) = 81/82"
