"""Exercises of notebook 02: Theorem 2.2 (the norm trick, the ReQU norm, the empty-cluster key),
soft k-means (beta) and spherical k-means.

Every code exercise asks for a function; its checker calls it (:func:`call_answer`) on inputs
the notebook does not show (other data, other dimensions, ties, duplicated and empty centers)
and compares it with what kmt_ref computes, outside that call (benchmarks/bench_checkers.py
times every check). The function gets copies of its inputs (02.3's a copy of the layout), so
changing them changes nothing in the check; what it returns is compared with expect_value in the
dtype it has.

The premises the exercises rest on, as measured (tests/exercises/test_nb02.py re-measures them):

- 02.1: on the notebook's example (Lloyd's converged centers of the toy data) the broken key
  K1 = P_X moves 8 of the 24 points (indices 4, 8, 10, 11, 16, 21, 22, 23), each to a center of
  larger ||c_j||^2; on centers of equal norm it moves none. On every input of the checker the
  largest and second-largest distinct scores of each point differ by more than 8e-4, with both
  keys, so rounding decides no label.
- 02.2: with a norm row that still holds 4, Theorem 2.2's FFN leaves 4 + ||c||^2 = 11.78 in it for
  c = (0.3, -1.2, 2.5); one ReQU unit per coordinate would leave 10.34.
- 02.3: one ReQU unit per coordinate writes ||c||^2 for c >= 0 (a sum of d rounded squares),
  for d = 1, 2, 3, 5; on c = (-0.5, 1) it writes 1, not 1.25.
- 02.4: with block 3's flag offset a, a center scores its members 1, its own token 1 - a, the
  other points 0 and the other center tokens -a. On the notebook's empty-cluster example a = 1.5
  moves the empty center to the data mean (0.4187, 0.4519); a = 0 adds the own token to each
  member mean; a = 1 averages all points and the own token; a < 0 keeps every center.
- 02.5: on each of the checker's four data sets the smallest center distance after 10 soft
  k-means steps crosses its threshold once in the given bracket (a grid of 400 betas); on the
  notebook's data (threshold 0.3, bracket [5, 10]) at beta* = 7.5042.
- 02.6: beta_c = 1 / (2 s_max), s_max the largest eigenvalue of the covariance with 1/n:
  3.460 on the toy data, where soft k-means (1000 steps) keeps every center on the mean at
  0.95 beta_c and splits them at 1.05 beta_c.
- 02.7: each of the checker's five inputs turns on one policy of spherical_kmeans (the lengths of
  the points, a tie between equal centers, an empty cluster, antipodal members): a step without
  that policy fails on it.
- 02.8: for three unit vectors at 0, 120 and 240 degrees the float member sum is below 1e-15 but not 0,
  spherical_kmeans returns a unit vector, and it does not turn with the data: rotated by 0.1, 0.3 and
  1.0 rad, its turn misses the rotation by more than 5 degrees at one of them at least.
"""
from __future__ import annotations

import copy

import numpy as np

from ..algorithms.dot_product import dot_product_layer, dot_product_transformer, dot_product_weights
from ..algorithms.lloyd import lloyd
from ..algorithms.soft import soft_kmeans
from ..algorithms.spherical import spherical_kmeans, spherical_kmeans_transformer
from ..core.attention import attention, fast_layer_forward, layer_forward, requ
from ..core.blocks import attention_scores
from ..core.gradients import softmax_attention
from ..core.tokens import projector, run_layers
from ..data import gaussian_blobs, toy_data
from ._registry import Wrong, as_array, as_float, call_answer, exercise, expect, expect_value, multiple_choice

__all__ = ["SEPARATION_THRESHOLD", "SOFT_LAYERS", "min_separation", "separation_beta", "critical_beta",
           "requ_norm_row"]

#: the functions that run Theorem 2.2's circuit (a student's function that is to compute a layer's result
#: without the transformer may call none of them)
CIRCUIT = (layer_forward, fast_layer_forward, attention, run_layers, dot_product_transformer)
#: the blocks' kernels, which compute a block's scores or its attention (.fun: the function inside the primitive)
KERNELS = (attention_scores, softmax_attention.fun)


def _toy():
    return toy_data()  # the notebook's X (2, 24) and C0 (2, 3): seed 19


# ----------------------------------------------------------------------------- 02.1
def _moved_cases():
    """(name, X, C): the notebook's example and four it does not show."""
    X, C0 = _toy()
    X3, C3 = toy_data(3)
    Xb, Cb0, _ = gaussian_blobs(4, 3, 8, rng=4)  # (3, 32), k = 4
    Cb = lloyd(Xb, Cb0, 6).centers[-1]  # (3, 4)
    Cb = Cb[:, [0, 1, 1, 2, 3]]  # (3, 5): center 2 duplicates center 1
    angles = np.array([0.3, 1.4, 2.6])
    return [("the notebook's example (Lloyd's converged centers)", X, lloyd(X, C0, 5).centers[-1]),
            ("the toy data at its initial centers", X, C0),
            ("another 2-d data set at its converged centers", X3, lloyd(X3, C3, 5).centers[-1]),
            ("3-d data with k = 5, centers 1 and 2 equal", Xb, Cb),
            ("centers of equal norm", X, 0.6 * np.vstack([np.cos(angles), np.sin(angles)]))]


def _norm_row_dropped(X=None, C=None):
    """Indices of the points whose block-1 label changes when K1 loses its norm row (K1 = P_X),
    by the circuit: one layer of Theorem 2.2 with the right and with the broken key (the notebook's
    example by default)."""
    if X is None:
        X, C = _moved_cases()[0][1:]
    params, emb = dot_product_weights(X.shape[0], C.shape[1])
    Xbar, Cbar = emb.embed_points(X), emb.embed_centers(C)
    labels = [np.argmax(layer_forward(p, Xbar, Cbar, dot_product_layer())[0][emb.rows("y")], axis=0)
              for p in (params, dict(params, K1=projector(emb, "x")))]  # (n,) each
    return np.flatnonzero(labels[0] != labels[1])


def _as_index_set(answer, n, where=""):
    if isinstance(answer, tuple) and len(answer) == 1 and isinstance(answer[0], np.ndarray):
        answer = answer[0]  # what np.nonzero returns for a 1-D mask
    try:
        raw = np.asarray(answer) if isinstance(answer, (list, tuple, np.ndarray)) else None
    except ValueError:  # a ragged list: as_array below gives the hint
        raw = None
    if raw is not None and raw.dtype == bool:  # a boolean mask over the points: the same set, another form
        expect(raw.shape == (n,), f"{where}a boolean mask over the points has shape ({n},), got {raw.shape}")
        return set(np.flatnonzero(raw).tolist())
    idx = as_array(answer, (None,), f"{where}a 1-D array (or list) of point indices, or a boolean mask over the points")
    expect(np.all(idx == np.round(idx)), f"{where}point indices are integers")
    idx = idx.astype(int)
    expect(np.all((idx >= 0) & (idx < n)), f"{where}point indices run from 0 to {n - 1}")
    expect(np.unique(idx).size == idx.size, f"{where}each point index should appear once")
    return set(idx.tolist())


@exercise("02.1", "What the key's norm row is for", kind="code", difficulty=2, minutes=15,
          objective="Tell which term of -||x - c||^2 the circuit must carry (||c_j||^2) and which it may drop "
                    "(||x_i||^2), by breaking the key and measuring what changes",
          checks="a function (X, C) -> the points whose block-1 label changes when K1 = P_X, as indices or as a "
                 "boolean mask, equals the circuit's on five inputs (the notebook's example, other data, d = 3 "
                 "with two equal centers, centers of equal norm; exact: integer labels)")
def _c021(answer):
    moved = []
    for name, X, C in _moved_cases():
        want = set(_norm_row_dropped(X, C).tolist())
        got = _as_index_set(call_answer(answer, X.copy(), C.copy()), X.shape[1], f"on {name}: ")
        if got != want and not want:
            raise Wrong(f"on {name} no label changes: 2 x.c and 2 x.c - ||c||^2 differ by the same ||c||^2 for "
                        "every center there. Compare the two labels of each point")
        expect(got or not want, f"on {name}: the score 2 x.c is not 2 x.c - ||c||^2 plus a constant per point: "
                                "the ||c_j||^2 differ between centers, so some labels can change. Compare the "
                                "labels, point by point")
        expect(not got - want, f"on {name}: {len(got - want)} of your points keep their label with the broken key "
                               "(ties go to the lowest index with either key)")
        expect(not want - got, f"on {name}: {len(want - got)} more point(s) change their label: compare all "
                               f"{X.shape[1]}")
        moved.append(len(want))
    return (f"right: on the notebook's example {moved[0]} of 24 points move, each to a center of larger "
            "||c_j||^2, and on centers of equal norm none; ||x_i||^2 may be dropped, ||c_j||^2 may not")


# ----------------------------------------------------------------------------- 02.2
#: 02.2 (2): a center with negative coordinates, and what its norm row holds before the FFN (block 4 not run)
REQU_CENTER, STALE_NORM = np.array([0.3, -1.2, 2.5]), 4.0


def requ_norm_row(c=REQU_CENTER, stale=STALE_NORM):
    """What Theorem 2.2's FFN, z + W2 ReQU(W1 z), leaves in the norm row of center c's token when that row holds
    ``stale`` (kmt_ref's weights for d = len(c))."""
    params, emb = dot_product_weights(c.size, 1)
    Z = emb.embed_centers(np.asarray(c, dtype=float)[:, None])  # (d_emb, 1)
    Z[emb.rows("norm")] = stale
    return float((Z + params["W2"] @ requ(params["W1"] @ Z))[emb.rows("norm")][0, 0])


@exercise("02.2", "Proof: why the norm trick and the ReQU norm are exact", kind="proof", difficulty=2, minutes=20,
          objective="Prove that the dot score 2 x.c - ||c||^2 selects what -||x - c||^2 selects under any "
                    "shift-invariant normalizer, and that two ReQU units per coordinate give ||c||^2 exactly",
          checks="a choice among four scores (which gives block 1 the Euclidean score's weights at every gamma), and "
                 "what the FFN leaves in a norm row that still holds 4, for c = (0.3, -1.2, 2.5), to 4 significant "
                 "digits (the proof is graded by reading)",
          parts=("the score with the Euclidean weights", "the norm row after the FFN"))
def _c022(answer, part):
    expect(isinstance(answer, (tuple, list)) and len(answer) == 2,
           "answer = (letter, value): the letter of the score, then the number in the norm row")
    if part == 1:
        multiple_choice(answer[0], "c", {
            "a": "2 x.c differs from -||x - c||^2 by ||x||^2 + ||c||^2, and ||c_j||^2 changes from key to key: "
                 "a shift must be the same for every key of a query",
            "b": "a factor is not a shift: the doubled scores at gamma are the scores at 2 gamma, so the argmax "
                 "agrees, but softmax's weights at a given gamma do not",
            "d": "ReQU(c_p) = c_p^2 only for c_p >= 0: for a center with a negative coordinate the difference from "
                 "the Euclidean score depends on the key",
        })
        return "right: the added -||x_i||^2 terms are the same for every key j, a shift that sigma ignores"
    want = requ_norm_row()
    c, stale = REQU_CENTER, STALE_NORM
    expect_value(answer[1], want, what="the norm row", wrong=[
        (float(c @ c), "that is ||c||^2, what the FFN adds: the block is a residual, z + W2 ReQU(W1 z), so what the "
                       "row holds stays"),
        (stale + float(np.sum(np.maximum(c, 0) ** 2)), "ReQU(z) = max(z, 0)^2 drops a negative coordinate: the unit "
                                                       "ReQU(-c_p) carries it"),
        (float(np.sum(np.maximum(c, 0) ** 2)), "ReQU(z) = max(z, 0)^2: which unit carries a negative coordinate? And "
                                               "the block is a residual: what the row holds stays"),
        (stale + float(c.sum() ** 2), "each unit squares one coordinate and W2 adds the squares: not the square of "
                                      "the sum"),
        (stale + float(np.abs(c).sum()), "ReQU squares its positive part"),
    ], hint="not that: write the hidden vector W1 z = [c; -c], apply ReQU, let W2 add into the norm row, and add the "
            "residual z")
    return f"right: {stale:g} + ||c||^2 = {want:g}; block 4 clears the row, so in the circuit it holds ||c||^2"


# ----------------------------------------------------------------------------- 02.3
FFN_SIZES = ((2, 3), (1, 1), (3, 2), (5, 4))  # (d, k) of the embeddings 02.3's function gets


def _ffn_centers(d, k):
    """Non-negative centers (d, k) for 02.3: random, with a zero coordinate, with a zero center, tiny."""
    rng = np.random.default_rng(10 * d + k)
    tests = [rng.uniform(0, 3, (d, k)), rng.uniform(0, 1e-3, (d, k))]
    special = rng.uniform(0, 2, (d, k))
    special[0, 0] = 0.0
    special[:, -1] = 0.0
    return tests + [special]


@exercise("02.3", "A ReQU block with d units for non-negative data", kind="code", difficulty=2, minutes=15,
          objective="Build a feed-forward block by hand and know what its activation can and cannot compute",
          checks="a function emb -> (W1 (h, d_emb), W2 (d_emb, h)), h <= d, for the embeddings of d, k = (2, 3), "
                 "(1, 1), (3, 2), (5, 4): z + W2 ReQU(W1 z) on center tokens with a cleared norm row and "
                 "non-negative c writes ||c||^2 (rtol 1e-13: a sum of d rounded squares) and leaves every other row "
                 "exactly as it was",
          forbid=(dot_product_weights,))
def _c023(answer):
    for d, k in FFN_SIZES:
        _, emb = dot_product_weights(d, k)
        where = f"for d = {d}, k = {k}: "
        # everything the check needs, taken from its own layout before the student's function sees a copy of it
        d_emb, norm = emb.d_emb, emb.rows("norm")
        tokens = [(C, emb.embed_centers(C)) for C in _ffn_centers(d, k)]  # (d, k), (d_emb, k)
        W1, W2, dtype = _ffn_weights(call_answer(answer, copy.deepcopy(emb)), d_emb, where)
        h = W1.shape[0]
        expect(h <= d, f"{where}W1 has {h} hidden units; Theorem 2.2's FFN uses 2d = {2 * d}: use at most d = {d}")
        others = np.ones(d_emb, bool)
        others[norm] = False
        for C, tokens_C in tokens:
            Z = tokens_C.astype(dtype)  # (d_emb, k), in the weights' precision
            Z[norm] = 0.0  # what block 4 leaves
            res = Z + W2 @ requ(W1 @ Z)  # (d_emb, k)
            expect(np.array_equal(res[others], Z[others]), f"{where}your block changes rows other than `norm`: "
                                                           "W2 may only write into the norm row")
            expect_value(res[norm][0], np.sum(C * C, axis=0), rtol=1e-13,
                         what=f"{where}what your block writes into the norm row",
                         hint=f"{where}for the centers {C.round(3).T.tolist()} your block writes "
                              f"{res[norm][0].round(4).tolist()} into the norm row, not ||c_j||^2 (a ReQU unit "
                              "squares one linear function of the token: which functions, of which rows, do you "
                              "need?)")
    _, emb = dot_product_weights(2, 3)
    c = np.array([[-0.5, 1.0, 2.0], [1.0, 0.0, 1.0]])  # (d, k): the first center has a negative coordinate
    Z, norm = emb.embed_centers(c), emb.rows("norm")
    Z[norm] = 0.0
    W1, W2, _ = _ffn_weights(call_answer(answer, copy.deepcopy(emb)), emb.d_emb, "for d = 2, k = 3: ")
    neg = float((Z + W2 @ requ(W1 @ Z))[norm][0, 0])
    return (f"right. On c = (-0.5, 1) it writes {neg:g} instead of ||c||^2 = 1.25: ReQU(z) = 0 for z < 0, "
            "hence the second unit -c_p per coordinate in Theorem 2.2")


def _ffn_weights(out, d_emb, where):
    """(W1 (h, d_emb), W2 (d_emb, h), the dtype the block computes in) from what 02.3's function returns."""
    expect(isinstance(out, (tuple, list)) and len(out) == 2, f"{where}return the pair (W1, W2)")
    W1 = as_array(out[0], (None, d_emb), f"{where}W1")
    h = W1.shape[0]
    expect(h >= 1, f"{where}W1 needs at least one hidden unit (one row)")
    W2 = as_array(out[1], (d_emb, h), f"{where}W2")
    # weights of a lower float precision make the block compute in it (a float32 block gets the dtype hint)
    dtype = np.result_type(*[np.asarray(w).dtype if np.asarray(w).dtype.kind == "f" else np.float64 for w in out])
    return W1.astype(dtype), W2.astype(dtype), dtype


# ----------------------------------------------------------------------------- 02.4
EMPTY_CENTER = (3.0, 3.0)  # the notebook's far fourth center (no point is nearer to it)


def _offset_centers(X, C, a):
    """The centers (d, k) after one layer of Theorem 2.2 with K3's flag offset -a (the circuit)."""
    params, emb = dot_product_weights(*C.shape)
    params = {name: W.copy() for name, W in params.items()}
    params["K3"][emb.rows("y"), emb.rows("flag")] = -a
    return run_layers(X, params, dot_product_layer(), emb, C, 1).centers[1]  # (d, k)


def _empty_center_after_one_layer(offset):
    """The notebook's empty center (center 3 of the toy data with EMPTY_CENTER added) after one layer."""
    X, C0 = _toy()
    return _offset_centers(X, np.column_stack([C0, EMPTY_CENTER]), offset)[:, 3]  # (2,)


def _offset_cases():
    """(name, X, C, a): the notebook's example at four offsets, and 3-d data with two empty clusters at three."""
    X, C0 = _toy()
    C0e = np.column_stack([C0, EMPTY_CENTER])  # (2, 4)
    Xb, Cb0, _ = gaussian_blobs(2, 3, 10, rng=8)  # (3, 20)
    Cb = np.column_stack([lloyd(Xb, Cb0, 4).centers[-1], [2.0, 2.0, 2.0], [-1.0, 0.5, 3.0]])  # (3, 4): 2 and 3 empty
    return ([("the empty-cluster example", X, C0e, a) for a in (1.5, 0.25, 0.0, 1.0)]
            + [("3-d data with two empty clusters", Xb, Cb, a) for a in (2.0, 0.5, -0.5)])


@exercise("02.4", "Moving the empty-cluster offset", kind="code", difficulty=2, minutes=15,
          objective="Read off from block 3's scores (members 1, own token 1 - a, others 0 or -a) which keys "
                    "an empty cluster's center averages, and for which offsets a the circuit keeps it",
          checks="a function (X, C, a) -> the centers after one layer with K3's flag offset -a, computed without "
                 "the transformer, equals the circuit's (run with kmt_ref) to 1e-12, at a = 1.5, 0.25, 0, 1 on the "
                 "notebook's empty-cluster example and a = 2, 0.5, -0.5 on 3-d data with two empty clusters",
          forbid=CIRCUIT + KERNELS)
def _c024(answer):
    for name, X, C, a in _offset_cases():
        want = _offset_centers(X, C, a)  # (d, k)
        out = call_answer(answer, X.copy(), C.copy(), a)
        # means of at most n + 1 unit-scale vectors: rounding ~1e-15
        expect_value(out, want, atol=1e-12, what=f"the centers on {name} at a = {a:g}",
                     wrong=[(lloyd(X, C, 1).centers[1],
                             f"on {name} at a = {a:g} you return Lloyd's step with 'keep'; at this offset compare "
                             "the own token's score 1 - a with the members' 1 and the other points' 0")],
                     hint=f"on {name} at a = {a:g} your centers differ from the layer's: list the scores of every "
                          "key for each center (members, other points, its own token, the other center tokens): "
                          "which keys tie for the maximum?")
    return ("right: each center averages the keys that reach its largest score (members 1, its own token 1 - a, "
            "other points 0, other center tokens -a), ties included")


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


def separation_beta(threshold=SEPARATION_THRESHOLD, lo=5.0, hi=10.0, tol=1e-9, X=None, C0=None):
    """The beta in [lo, hi] at which min_separation crosses ``threshold``, by bisection (toy data by default).

    Measured on the toy data: min_separation(beta) is increasing on [5, 12] (701 grid points), below
    0.3 for every beta < 7.50 and above it for every beta in (7.51, 1000] (400 log-spaced points from
    0.01); the crossing is beta* = 7.5042 (min_separation(5) = 0.006, (10) = 0.549).
    """
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if min_separation(mid, X, C0) >= threshold else (mid, hi)
    return hi


def _separation_cases():
    """(name, X, C0, threshold, lo, hi): the notebook's question and three others, each with one crossing."""
    X, C0 = _toy()
    X3, C3 = toy_data(3)
    Xa, Ca, _ = gaussian_blobs(3, 3, 10, rng=1)  # (3, 30), k = 3
    Xb, Cb, _ = gaussian_blobs(2, 3, 9, rng=3)  # (3, 18), k = 2
    return [("the notebook's toy data", X, C0, 0.3, 5.0, 10.0), ("another 2-d data set", X3, C3, 0.5, 3.0, 10.0),
            ("3-d data with k = 3", Xa, Ca, 0.4, 3.0, 10.0), ("3-d data with k = 2", Xb, Cb, 0.6, 1.0, 10.0)]


_SEPARATION_BETAS: dict = {}  # case name -> the checker's bisection (a private cache: no lru_cache to forbid)


def _separation_beta_of(name, X, C0, threshold, lo, hi):
    if name not in _SEPARATION_BETAS:
        _SEPARATION_BETAS[name] = separation_beta(threshold, lo, hi, X=X, C0=C0)
    return _SEPARATION_BETAS[name]


@exercise("02.5", "When do the soft clusters come apart? (bisection)", kind="code", difficulty=2, minutes=20,
          objective="Turn a visual statement ('the clusters stay apart') into a measured, well-defined "
                    "quantity and find it by bisection to a stated tolerance",
          checks="a function (X, C0, threshold, lo, hi) -> the beta in [lo, hi] at which the smallest center "
                 "distance after 10 soft k-means layers crosses threshold, within 0.01 of the checker's own "
                 "bisection (to 1e-9) on soft_kmeans (which equals the transformer to 1e-10 in the centers), on "
                 "the notebook's question and three other data sets (2-d and 3-d, k = 2 and 3)")
def _c025(answer):
    found = []
    for name, X, C0, threshold, lo, hi in _separation_cases():
        want = _separation_beta_of(name, X, C0, threshold, lo, hi)
        beta = as_float(call_answer(answer, X.copy(), C0.copy(), threshold, lo, hi), f"beta on {name}, a number")
        where = f"on {name} (threshold {threshold:g}, bracket [{lo:g}, {hi:g}])"
        if abs(beta - want) <= 0.01:  # a bracket of width 0.02 around the crossing
            found.append(want)
            continue
        expect(lo <= beta <= hi, f"{where}: your beta = {beta:g} lies outside the bracket")
        sep = min_separation(beta, X, C0)
        expect(sep >= threshold, f"{where}: at beta = {beta:g} the smallest separation after 10 layers is "
                                 f"{sep:.3f} < {threshold:g}: the crossing lies higher")
        lower = max(lo, beta - 0.01)
        raise Wrong(f"{where}: at beta = {lower:g} the smallest separation is already "
                    f"{min_separation(lower, X, C0):.3f} >= {threshold:g}: the crossing lies lower; keep bisecting "
                    "until the bracket is narrower than 0.01")
    return (f"right on every data set: on the notebook's the crossing is at beta* = {found[0]:.4f} (to 1e-9). "
            "Below it two centers are closer than 0.3 after 10 layers; at beta = 10 they are already 0.55 apart")


# ----------------------------------------------------------------------------- 02.6
def critical_beta(X=None):
    """``1 / (2 s_max)``, s_max the largest eigenvalue of the data covariance (1/n) (toy data by default)."""
    if X is None:
        X, _ = _toy()
    Xc = X - X.mean(axis=1, keepdims=True)  # (d, n)
    return 1.0 / (2.0 * np.linalg.eigvalsh(Xc @ Xc.T / X.shape[1])[-1])


def _critical_cases():
    """(name, X): the toy data, another 2-d set, and two 3-d sets (one stretched along a coordinate)."""
    X, _ = _toy()
    X3, _ = toy_data(3)
    Xa, _, _ = gaussian_blobs(3, 3, 10, rng=1)  # (3, 30)
    rng = np.random.default_rng(26)
    Xs = rng.normal(size=(3, 50)) * np.array([[0.4], [1.5], [0.7]]) + 2.0  # (3, 50), not centered
    return [("the toy data", X), ("another 2-d data set", X3), ("3-d data with k = 3 clusters", Xa),
            ("3-d data stretched along its second coordinate", Xs)]


@exercise("02.6", "The first split of soft k-means", kind="proof", difficulty=3, minutes=30,
          objective="Linearize the soft k-means update around the merged state and predict the critical "
                    "beta at which the centers first split (deterministic annealing)",
          checks="a function X -> beta_c, on the toy data and three other data sets (2-d and 3-d, one not "
                 "centered), to a relative 1e-10 of 1/(2 s_max), s_max the largest eigenvalue of the covariance "
                 "with 1/n; the variants with 1/(n-1), without the 2, with the smallest eigenvalue, with the trace "
                 "or without centering get their own hints")
def _c026(answer):
    for name, X in _critical_cases():
        n = X.shape[1]
        want = critical_beta(X)
        eig = np.linalg.eigvalsh(np.cov(X, bias=True))  # (d,) ascending
        raw = np.linalg.eigvalsh(X @ X.T / n)[-1]  # the second moment, not centered
        got = call_answer(answer, X.copy())
        expect_value(got, want, what=f"beta_c on {name}", rtol=1e-10,
                     wrong=[(2 * want, "off by a factor 2: where does the 2 of 2 x.u_j come from?"),
                            (want * (n - 1) / n, "the update averages over the n points: which normalization of "
                                                 "the covariance appears?"),
                            (1 / (2 * eig[0]), "the state becomes unstable as soon as *one* direction grows: "
                                               "which eigenvalue is that?"),
                            (1 / (2 * eig.sum()), "the trace adds up every direction's variance; the merged state "
                                                  "becomes unstable along one direction: which?"),
                            (1 / (2 * raw), "the merged state sits at the data mean: the matrix is the covariance "
                                            "of x_i - mu, not the second moment of x_i")],
                     hint=f"not beta_c on {name}: write c_j = mu + u_j (mu the data mean, u_j a small "
                          "displacement) and expand r_ij and the update to first order in u: the differences "
                          "between the u_j are multiplied by a matrix; the merged state is unstable once that "
                          "matrix has an eigenvalue above 1")
    return (f"right: beta_c = {critical_beta():.4f} on the toy data. There soft_kmeans (1000 steps) keeps all "
            "centers on the mean at 0.95 beta_c and splits them at 1.05 beta_c")


# ----------------------------------------------------------------------------- 02.7
def _spherical_cases():
    """(name, X, C, hint): spherical k-means inputs the notebook does not show."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(3, 40)) * rng.uniform(0.2, 5.0, 40)  # (3, 40): random directions and lengths
    C = rng.normal(size=(3, 4))
    return [
        ("random data with random lengths", X, C,
         "assign by the largest cosine, then set each center to its normalized member mean"),
        ("the same points with other lengths", X * rng.uniform(0.1, 10.0, 40), C,
         "the lengths of the points must not matter: normalize them first"),
        ("two equal centers (a tie)", np.array([[1.0, 0.8, 0.6], [0.0, 0.6, 0.8]]), np.array([[1.0, 1.0], [0.0, 0.0]]),
         "ties go to the lowest index (np.argmax does that)"),
        ("a center no point is nearest to", np.array([[1.0, 0.9, 0.7], [0.1, 0.4, -0.7]]),
         np.array([[2.0, -1.0], [0.0, 0.5]]), "an empty cluster keeps its (normalized) center"),
        ("antipodal members x and -x", np.array([[1.0, -1.0], [0.0, 0.0]]), np.array([[2.0], [0.0]]),
         "a zero member sum has no direction: its center becomes the zero vector"),
    ]


@exercise("02.7", "One spherical k-means step, by hand", kind="code", difficulty=2, minutes=20,
          objective="Write Dhillon and Modha's update (normalize, assign by cosine, normalized member mean) "
                    "with the project's policies for ties, empty clusters and zero member sums",
          checks="a function step(X, C) -> the new centers equals spherical_kmeans(X, C, 1)'s (atol 1e-12) on 3-d "
                 "data with random lengths, a tie between equal centers, an empty cluster and antipodal members",
          forbid=(spherical_kmeans, spherical_kmeans_transformer) + CIRCUIT[:4] + KERNELS)
def _c027(answer):
    expect(callable(answer), "answer = a function step(X, C) -> C_new (d, k)")
    for name, X, C, hint in _spherical_cases():
        want = spherical_kmeans(X, C, 1).centers[1]  # (d, k)
        expect_value(call_answer(answer, X.copy(), C.copy()), want, atol=1e-12, what=f"the new centers on {name}",
                     hint=f"wrong on {name}: {hint}")
    return "right: normalize, assign by the largest cosine, normalize the member mean (or keep, or 0)"


# ----------------------------------------------------------------------------- 02.8
@exercise("02.8", "A cluster whose members cancel", kind="explore", difficulty=2, minutes=15,
          objective="Recognize an ill-conditioned case: a direction computed from a sum that is zero in exact "
                    "arithmetic is the direction of its rounding error",
          checks="a choice among four statements about what spherical_kmeans returns for three unit vectors at "
                 "120 degrees (the explanation is graded by reading)")
def _c028(answer):
    multiple_choice(answer, "d", {
        "a": "the zero-vector policy applies when the float sum is exactly 0: print the float sum of the three "
             "vectors and the length of the center",
        "b": "the old center is kept for a cluster without members; this one has three, and their float sum is "
             "not exactly 0: print the center's angle",
        "c": "rotate the three points by 0.1, 0.3 and 1.0 and print the center's angle each time: does it turn by "
             "that much?",
    })
    return ("right: the center is the normalized rounding error of the member sum, a unit vector that carries no "
            "information about the data")


# the self-checks, registered after the exercises above
from .nb02_quizzes import QUIZ_BETA, QUIZ_C, QUIZ_CENTERS, QUIZ_X, quiz_dot_score, quiz_responsibility  # noqa: E402,F401
