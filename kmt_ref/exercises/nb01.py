"""Exercises of notebook 01: Theorem 2.1, Lloyd's algorithm as a four-block transformer layer.

Each checker computes the right answer with kmt_ref itself, outside the student's
function (the reference bisections of 01.7 once per session, then kept in a dict;
benchmarks/bench_checkers.py times every check). The code exercises ask for a
function, which the checker calls on inputs the notebook never shows: other
dimensions, sizes and seeds, a point tied between two centers, a duplicate point, an
empty cluster. The library functions that would compute the answer (the layer, the
transformer, the attention the exercise is about) raise while the student's function
runs.

The premises the exercises rest on, as measured (tests/exercises/test_nb01.py
re-measures them):

- 01.1, 01.4: on the three inputs of :func:`_fresh_cases` one layer keeps the tie
  at the lowest index (as Lloyd's ``argmin``), and the empty cluster's center.
- 01.2: with the averaging hardmax in block 1, X = [[0, 1, 2]], C0 = [[0, 2]],
  the middle point writes y = (1/2, 1/2); block 3 scores it -1/2 < 0, so it is
  in neither mean: the centers stay [[0, 2]] (Lloyd: [[0.5, 2]]).
- 01.3: block 2 at gamma = inf writes -y_i into each of two duplicate points
  (checked on the duplicate of :func:`_fresh_cases`).
- 01.4: without the flag in K3 a center's own token scores 0, tied with its
  members: c' = (sum of members + c) / (|M| + 1). The transformer then differs
  from Lloyd on both examples of the notebook (toy: labels at layer 2, centers by
  0.075; empty-cluster example: populated centers by 0.025 after layer 1).
- 01.5: center_update="linear" gives Lloyd's means at any *gamma_update* (block 3
  has no temperature) but not at a finite block-1 gamma (max |dC| = 0.32 on the
  toy example at gamma = 10): it is then the y-weighted mean of the soft y.
- 01.7: on the toy example (4 layers) and on each example of :data:`BISECT_CASES`
  the labels differ from Lloyd's for every gamma of the bracket below one boundary
  gamma* and match above it (a scan up to 1e6 finds no other change): toy 599.68,
  the unseen examples 279.02 (3 layers) and 859.96 (4 layers). On the toy example
  gamma* is far below 1075 ln 2 / (smallest gap) = 5.9e6.
- 01.8: a column of Y is exactly one-hot after the first layer iff gamma times
  every gap to the nearest squared distance exceeds 1075 ln 2 = 745.1332 (exp
  underflows to 0); 3,900 of the 10,000 points of validation_data() at gamma = 1e4
  (3,901 with 745 in place of 1075 ln 2). The 1-d example of :data:`X_ONE_HOT`
  has columns at gamma * gap = 745.07 and 745.37, on either side of the threshold.
"""
from __future__ import annotations

import numpy as np

from ..algorithms.lloyd import kmeans_transformer, lloyd, lloyd_layer, lloyd_weights
from ..algorithms.soft import soft_kmeans
from ..core.attention import attention, layer_forward
from ..core.blocks import attention_scores
from ..core.exact.layer import _euclidean_softmax
from ..core.gradients import softmax_attention
from ..core.exact import fast_layer_forward
from ..core.normalizers import softmax
from ..core.tokens import projector, run_layers, with_block
from ..data import validation_data
from ._registry import (Wrong, as_array, as_float, as_int, call_answer, exercise, expect, expect_value,
                        multiple_choice)

__all__ = []

NB = "01"

#: what computes one layer, whichever way a student reaches it (the transformer calls the layer, the layer
#: calls the exact path or attention): forbidden wherever the student's function is to compute it itself
LAYER = (kmeans_transformer, run_layers, layer_forward, fast_layer_forward, attention, attention_scores,
         _euclidean_softmax, softmax_attention.fun, soft_kmeans)  # .fun: the function inside the autograd primitive

# ----------------------------------------------------------------------------- shared inputs
#: the empty-cluster example of the notebook's section 7: center 2 attracts no point
X_EMPTY = np.array([[0.0, 0.1, 0.2, 1.0, 1.1, 1.2],
                    [0.0, 0.1, 0.0, 1.0, 0.9, 1.0]])
C0_EMPTY = np.array([[0.0, 1.0, 5.0],
                     [0.0, 1.0, 5.0]])
#: the tie of exercise 01.2: the point x = 1 is halfway between the centers 0 and 2
X_TIE, C0_TIE = np.array([[0.0, 1.0, 2.0]]), np.array([[0.0, 2.0]])


def _fresh_cases():
    """(name, X, C) inputs for the function-valued answers, none of them shown in the notebook: a 3-d example
    with k = 4; a 1-d example with a point tied between two centers (squared distances 1 and 1, exactly) that
    is also duplicated; a 4-d example with a duplicate point and a center that attracts no point."""
    rng = np.random.default_rng(2024)
    X3 = rng.uniform(size=(3, 30))  # (3, 30)
    X1 = np.array([[0.0, 0.25, 1.0, 1.0, 2.0, 2.5, 4.0]])  # x = 1 is halfway between the centers 0 and 2
    C1 = np.array([[0.0, 2.0, 3.5]])
    X4 = np.random.default_rng(7).normal(size=(4, 17))
    X4[:, 5] = X4[:, 2]  # a duplicate point
    C4 = np.concatenate([X4[:, :4], np.full((4, 1), 10.0)], axis=1)  # center 4: far from every point
    return [("a 3-d example (n = 30, k = 4)", X3, X3[:, :4].copy()),
            ("a 1-d example with a tie and a duplicate point (n = 7, k = 3)", X1, C1),
            ("a 4-d example with a duplicate point and an empty cluster (n = 17, k = 5)", X4, C4)]


def _clustered(seed, d=3, k=4, per=8, spread=0.12):
    """k Gaussian clusters of ``per`` points around uniform centers in [0, 1]^d, shuffled; C0 = the first k points."""
    rng = np.random.default_rng(seed)
    X = np.repeat(rng.uniform(size=(d, k)), per, axis=1) + spread * rng.normal(size=(d, per * k))
    X = X[:, rng.permutation(per * k)]
    return X, X[:, :k].copy()


def _flagless_params(d, k):
    params, emb = lloyd_weights(d, k)
    params = dict(params)
    params["K3"] = projector(emb, "y")  # K3 = P_Y: the flag row removed
    return params, emb


def _linear_centers(X, C, gamma):
    return kmeans_transformer(X, C, 1, gamma=gamma, center_update="linear").centers[1]


def _reset_y(X, Y, gamma_reset):
    """What block 2 writes into the y rows, by the library's attention."""
    k = Y.shape[0]
    params, emb = lloyd_weights(X.shape[0], k)
    Xbar = emb.embed_points(X)
    Xbar[emb.rows("y")] = Y
    out = attention(Xbar, Xbar, params["Q2"], params["K2"], params["V2"], normalizer="softmax",
                    gamma=gamma_reset, self_attention=True)
    return out[emb.rows("y")]


def _is_low(arr):
    """True for an array of a float dtype narrower than float64 (float32, float16)."""
    dtype = getattr(arr, "dtype", None)
    return dtype is not None and dtype.kind == "f" and dtype.itemsize < 8


def _expect_float64(answer, want, what, hint):
    """For an answer that holds the right values to its own (float32) precision but is not float64: the
    policy's hint about the dtype (expect_value's); a float64 answer passes through."""
    if _is_low(answer):
        expect_value(answer, want, what=what, hint=hint, atol=1e-12)


# ----------------------------------------------------------------------------- 01.1
def _close(got, want, low):
    """Equal entry by entry; for an answer of a narrower float dtype, equal to that dtype's precision."""
    if low is None:
        return np.array_equal(got, want)
    return bool(np.all(np.abs(got - want) <= 8 * np.finfo(low).eps * max(1.0, float(np.max(np.abs(want))))))


def _expect_rows(got, want, low, what, hint):
    """Wrong(hint) unless the rows are right (see :func:`_close`); a float64 answer that is right only to float32
    precision gets a hint about the precision instead."""
    if _close(got, want, low):
        return
    if low is None and _close(got, want, np.dtype(np.float32)):
        raise Wrong(f"right method, but {what} agrees with the layer's only to float32 precision (about 7 digits): "
                    "compute in float64")
    raise Wrong(hint)


@exercise("01.1", "The tokens before and after one layer", kind="code", difficulty=1, minutes=10,
          objective="write the point and center tokens of Theorem 2.1 and say what one layer leaves in them",
          checks="a function (X, C) -> (Xbar', Cbar') equals layer_forward's output on three inputs the notebook "
                 "does not show (3-d; 1-d with a tie and a duplicate point; 4-d with an empty cluster): y and flag "
                 "rows exactly, centers to 1e-12 in float64 (float32 gets a hint about the dtype)",
          forbid=LAYER)
def _c(answer):
    for name, X, C in _fresh_cases():
        d, n = X.shape
        k = C.shape[1]
        params, emb = lloyd_weights(d, k)
        Xb, Cb = layer_forward(params, emb.embed_points(X), emb.embed_centers(C), lloyd_layer())
        out = call_answer(answer, X.copy(), C.copy())
        expect(isinstance(out, (tuple, list)) and len(out) == 2,
               f"on {name}: return a pair (Xbar', Cbar'), got {type(out).__name__}")
        Xa = as_array(out[0], (emb.d_emb, n), f"Xbar' on {name} (rows: x, y, flag)")
        Ca = as_array(out[1], (emb.d_emb, k), f"Cbar' on {name} (rows: x, y, flag)")
        # a float32 answer is compared to float32 precision here, and gets the dtype hint below
        lowX = out[0].dtype if _is_low(out[0]) else None
        lowC = out[1].dtype if _is_low(out[1]) else None
        x, y, flag = emb.rows("x"), emb.rows("y"), emb.rows("flag")
        _expect_rows(Xa[x], X, lowX, f"the x rows of Xbar' on {name}",
                     f"on {name}: the x rows of the points must still hold X")
        flag_hint = f"on {name}: the flag row is wrong: which tokens carry the flag, and does a layer change it?"
        _expect_rows(Xa[flag], Xb[flag], lowX, f"the flag row of Xbar' on {name}", flag_hint)
        _expect_rows(Ca[flag], Cb[flag], lowC, f"the flag row of Cbar' on {name}", flag_hint)
        _expect_rows(Xa[y], Xb[y], lowX, f"the y rows of Xbar' on {name}",
                     f"on {name}: the y rows of the points are not what blocks 1 and 2 leave there (section 4)")
        _expect_rows(Ca[y], Cb[y], lowC, f"the y rows of Cbar' on {name}",
                     f"on {name}: the y rows of the centers are wrong: does the decoder change them?")
        # means of unit-scale points, summed in any order: rounding ~1e-16, so 1e-12 is generous
        hint = f"on {name}: the centers after one layer are wrong (which Lloyd step does a layer do?)"
        expect_value(np.asarray(out[1])[x], Cb[x], atol=1e-12, what=f"the centers on {name}", hint=hint)
        _expect_float64(out[0], Xb, f"Xbar' on {name}", hint)
        _expect_float64(out[1], Cb, f"Cbar' on {name}", hint)
    return "right: one layer maps [X; 0; 0], [C; I; 1] to Lloyd's state [X; Y'; 0], [C'; I; 1]"


# ----------------------------------------------------------------------------- 01.2
def tie_layer():
    """One layer on the tie example with the averaging hardmax in block 1: (y of the middle point (2,),
    block 3's scores of the middle point's token against the two centers (2,), the centers (1, 2))."""
    params, emb = lloyd_weights(1, 2)
    layer = with_block(lloyd_layer(), "1", normalizer="hardmax_average")
    tr = run_layers(X_TIE, params, layer, emb, C0_TIE, 1, record=True)
    return tr.assignments[:, 1], tr.layers[0].scores["3"][1] + 0.0, tr.centers[1]


@exercise("01.2", "Why block 1 breaks ties by the lowest index", kind="concept", difficulty=2, minutes=10,
          objective="explain the hardmax tie rule of block 1 and the averaging hardmax of block 3",
          checks="a triple (the middle point's y (2,), block 3's scores of its token against the two centers "
                 "(2,), the centers after one layer (1, 2)) with hardmax_average in block 1 on the tie example, "
                 "each to 4 significant digits",
          parts=("the middle point's y", "block 3's scores of the middle point", "the centers after one layer"))
def _c(answer, part):
    expect(isinstance(answer, (tuple, list)) and len(answer) == 3,
           "answer = (y, scores, centers): the middle point's y, block 3's scores of its token, the new centers")
    y, scores, C = tie_layer()
    if part == 1:
        expect_value(answer[0], y, what="the middle point's y",
                     wrong=[([1.0, 0.0], "that is the lowest-index hardmax (Lloyd's rule); with the averaging "
                                         "hardmax, where does the tied point put its weight?")],
                     hint="not the y block 1 writes for the middle point: its scores against the two centers tie; "
                          "how does hardmax_average share the weight among tied keys?")
        return "right: the tied point shares its weight equally between the two centers"
    if part == 2:
        expect_value(answer[1], scores, what="block 3's scores of the middle point",
                     wrong=[([0.0, 0.0], "0 is a member's score (y = e_j); block 3 scores a token by "
                                         "-||e_j - y||^2: what is that for the y of part 1?")],
                     hint="not block 3's scores: block 3 scores the middle point's token against center j by "
                          "-||e_j - y||^2 (print tr.layers[0].scores['3'] with record=True)")
        return "right: block 3 scores the tied point below every member's 0"
    lloyd_c = lloyd(X_TIE, C0_TIE, 1).centers[1]
    expect_value(answer[2], C, what="the centers after one layer",
                 wrong=[(lloyd_c, "those are Lloyd's centers (ties to the lowest index): which keys reach "
                                  "block 3's maximum score for each center?"),
                        ([[1 / 3, 5 / 3]], "that counts the middle point half in each cluster (a weighted mean); "
                                           "block 3 at gamma = inf is a hardmax: which keys reach the maximum score?")],
                 hint="not the centers this layer produces: run it with with_block(lloyd_layer(), '1', normalizer=...)")
    return "right: the tied point is in neither mean, and the centers do not move"


# ----------------------------------------------------------------------------- 01.3
@exercise("01.3", "Why the reset blocks are exact", kind="proof", difficulty=2, minutes=20,
          objective="prove that blocks 2 and 4 are identity attention at gamma = inf and that the residual "
                    "sum (c - c) + mu is exactly mu",
          checks="a pair of floats (c, mu) with (c + mu) - c != mu in float64 (exact: evaluated in float64), and "
                 "a choice among four statements about block 2 and two duplicate points",
          parts=("a pair (c, mu) with (c + mu) - c != mu", "block 2 and two duplicate points (a letter)"))
def _c(answer, part):
    expect(isinstance(answer, (tuple, list)) and len(answer) == 2,
           "answer = ((c, mu), letter): your pair of floats and the letter of the statement about duplicates")
    if part == 1:
        pair = answer[0]
        expect(isinstance(pair, (tuple, list, np.ndarray)) and len(pair) == 2,
               f"the first entry of answer is a pair (c, mu) of two numbers, got {type(pair).__name__}")
        c, mu = as_float(pair[0], "c, a number"), as_float(pair[1], "mu, a number")
        expect((c + mu) - c != mu, "for your pair (c + mu) - c equals mu exactly, as it does whenever c + mu is "
                                   "exact in float64: pick two numbers whose sum has to be rounded")
        return f"right: (c + mu) - c = {(c + mu) - c!r}, while (c - c) + mu = {(c - c) + mu!r}"
    multiple_choice(answer[1], "b", {
        "a": "y^(0) = 0 for every point, and what block 1 writes depends on x_i and C alone: can two equal "
             "points carry different y?",
        "c": "that is the averaging hardmax; blocks 2 and 4 use the lowest-index hardmax (lloyd_layer()): "
             "one key gets all of a query's weight",
        "d": "W is not the identity then, but compare the output -Y W with -Y: which columns of Y does W mix?",
    })
    return "right: equal points carry equal codes, so the copy block 2 selects writes the same -y"


# ----------------------------------------------------------------------------- 01.4
@exercise("01.4", "Remove the flag row", kind="code", difficulty=2, minutes=15,
          objective="explain how the flag token keeps an empty cluster's center, and what block 3 does without it",
          checks="a function (X, C) -> C' equals one flagless layer (K3 = P_Y) on three inputs the notebook does "
                 "not show (3-d; 1-d with a tie and a duplicate point; 4-d with an empty cluster), to 1e-12",
          forbid=LAYER)
def _c(answer):
    for name, X, C in _fresh_cases():
        d, k = C.shape
        params, emb = _flagless_params(d, k)
        want = run_layers(X, params, lloyd_layer(), emb, C, 1).centers[1]  # (d, k)
        means = lloyd(X, C, 1).centers[1]
        got = call_answer(answer, X.copy(), C.copy())
        as_array(got, (d, k), f"C' on {name}, shape (d, k)")
        # means of unit-scale points: rounding ~1e-16, 1e-12 forgives any summation order
        expect_value(got, want, atol=1e-12, what=f"C' on {name}",
                     wrong=[(means, f"on {name} you return Lloyd's means, which the flagless layer does not "
                                    "produce; without the flag, what does a center score against its own token?")],
                     hint=f"on {name} the centers differ from the flagless layer's: which keys tie at block 3's "
                          "maximum?")
    return "right: without the flag a center's own token ties with its members, c' = (sum + c) / (|M| + 1)"


# ----------------------------------------------------------------------------- 01.5
def _soft_cases():
    """(name, X, C, gamma) for 01.5: the 3-d and the 1-d inputs of :func:`_fresh_cases`, and validation_data()."""
    (a, X3, C3), (b, X1, C1), _ = _fresh_cases()
    Xv, Cv = validation_data()
    return [(a, X3, C3, 1.0), (a, X3, C3, 30.0), (b, X1, C1, 3.0), ("validation_data()", Xv, Cv, 1e3)]


@exercise("01.5", "The authors' linear center update at finite gamma", kind="code", difficulty=2, minutes=15,
          objective="predict what the layer computes at finite gamma: soft assignments and weighted means",
          checks="a function (X, C, gamma) -> C' equals one layer with center_update='linear' on a 3-d input at "
                 "gamma = 1 and 30, a 1-d one with a tie at 3 and validation_data() at 1e3, to 1e-10 "
                 "(float32 gets a hint about the dtype)",
          forbid=LAYER)
def _c(answer):
    for name, X, C, g in _soft_cases():
        want = _linear_centers(X, C, g)  # (d, k)
        means = lloyd(X, C, 1).centers[1]
        got = call_answer(answer, X.copy(), C.copy(), g)
        as_array(got, C.shape, f"C' on {name} at gamma = {g:g}, shape (d, k)")
        # one-step soft means of unit-scale data: measured differences <= 6e-15 against the library
        expect_value(got, want, atol=1e-10, what=f"C' on {name} at gamma = {g:g}",
                     wrong=[(means, f"on {name} at gamma = {g:g} you return Lloyd's means; at finite gamma, "
                                    "what does block 1 write into y?")],
                     hint=f"on {name} at gamma = {g:g} your centers differ from the layer's (whose weights sum "
                          "to 1: each point's over the centers, or each center's over the points?)")
    return "right: block 1 writes softmax weights, and the linear block 3 takes the y-weighted mean"


# ----------------------------------------------------------------------------- 01.6
def _reset_cases():
    """(what, X, Y, gamma_reset) for 01.6: one-hot and soft Y on the 3-d input of :func:`_fresh_cases`, and a
    soft Y on its 4-d input with a duplicate point."""
    (_, X3, C3), _, (_, X4, C4) = _fresh_cases()
    hot = np.eye(4)[:, lloyd(X3, C3, 1).labels[0]]  # (4, 30) Y^(1)
    soft3 = np.random.default_rng(7).dirichlet(np.ones(4), size=X3.shape[1]).T  # (4, 30), columns sum to 1
    soft4 = np.random.default_rng(8).dirichlet(np.ones(5), size=X4.shape[1]).T  # (5, 17)
    return [("one-hot Y on a 3-d input", X3, hot, 1.0), ("one-hot Y on a 3-d input", X3, hot, 50.0),
            ("a soft Y on a 3-d input", X3, soft3, 1.0), ("a soft Y on a 3-d input", X3, soft3, 50.0),
            ("a soft Y on a 4-d input with a duplicate point", X4, soft4, 50.0)]


@exercise("01.6", "The reset block at finite gamma", kind="code", difficulty=2, minutes=15,
          objective="explain block 2's role (subtract the old y) and why it must be the exact identity",
          checks="a function (X, Y, gamma_reset) -> what block 2 writes into the y rows, (k, n), equals "
                 "the library's attention at gamma_reset = 1 and 50 for one-hot and soft Y on inputs the "
                 "notebook does not show (3-d, k = 4; 4-d with a duplicate point, k = 5), to 1e-12",
          forbid=LAYER)
def _c(answer):
    for what, X, Y, g in _reset_cases():
        want = _reset_y(X, Y, g)  # (k, n)
        got = call_answer(answer, X.copy(), Y.copy(), g)
        as_array(got, Y.shape, f"block 2's y rows for {what}, shape (k, n)")
        # sums of n <= 30 products of weights in [0, 1]: rounding ~1e-16, measured differences <= 4e-16
        expect_value(got, want, atol=1e-12, what=f"block 2's y rows for {what} at gamma_reset = {g:g}",
                     wrong=[(-Y, f"with {what} at gamma_reset = {g:g} you return -Y, block 2 at gamma = inf; "
                                 "at finite gamma each point attends to its neighbours too"),
                            (-want, "check the sign: V2 = -P_Y")],
                     hint=f"with {what} at gamma_reset = {g:g} your output differs from block 2's "
                          "(which axis of the score matrix are the keys, and which one is normalized?)")
    return "right: at finite gamma block 2 subtracts a blend of the neighbours' y, not y_i itself"


# ----------------------------------------------------------------------------- 01.7
#: relative tolerance on gamma*, the 5e-3 the exercise states
GAMMA_RTOL = 5e-3
#: (name, X, C0, n_layers, lo, hi): the examples 01.7's function is checked on, with a bracket (labels differ at
#: lo, match at hi); on each the labels differ below one gamma* of the bracket and match above it
BISECT_CASES = [("a 3-d example with k = 4 and 3 layers", *_clustered(3), 3, 1.0, 1e4),
                ("another 3-d example with k = 4 and 4 layers", *_clustered(7), 4, 10.0, 1e5)]
#: name -> gamma* of that example, by :func:`bisect_gamma` (computed once, outside the student's function)
_GAMMA_STARS = {}


def bisect_gamma(X, C0, n_layers, lo, hi, rel=1e-9):
    """The boundary in [lo, hi] between gammas at which the labels of ``n_layers`` layers differ from Lloyd's
    (at lo) and gammas at which they match (at hi): bisection in log(gamma) to a relative width ``rel``."""
    ref = lloyd(X, C0, n_layers).labels

    def differ(g):
        return not np.array_equal(kmeans_transformer(X, C0, n_layers, gamma=g).labels, ref)

    if not differ(lo) or differ(hi):
        raise ValueError(f"[{lo:g}, {hi:g}] is not a bracket: the labels should differ at lo and match at hi")
    while hi / lo > 1 + rel:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if differ(mid) else (lo, mid)
    return lo


def _gamma_star(case):
    name = case[0]
    if name not in _GAMMA_STARS:
        _GAMMA_STARS[name] = bisect_gamma(*case[1:])
    return _GAMMA_STARS[name]


@exercise("01.7", "The largest gamma at which the labels differ", kind="code", difficulty=3, minutes=20,
          objective="find by bisection where finite gamma stops changing the labels, and compare it with "
                    "the one-hot bound 1075 ln 2 / gap",
          checks="a function (X, C0, n_layers, lo, hi) -> gamma* equals the boundary on two 3-d examples the "
                 "notebook does not show (3 and 4 layers), relative tolerance 5e-3")
def _c(answer):
    for case in BISECT_CASES:
        name, X, C0, T, lo, hi = case
        star = _gamma_star(case)
        g = as_float(call_answer(answer, X.copy(), C0.copy(), T, lo, hi), f"gamma* on {name}, a number")
        expect(lo <= g <= hi, f"on {name} your gamma, {g:.4g}, is outside the bracket [{lo:g}, {hi:g}] it was given")
        if abs(g - star) <= GAMMA_RTOL * star:
            continue
        if g > 10 * star:
            raise Wrong(f"on {name} yours is far too large: the labels match Lloyd's at gammas much smaller; "
                        "if you used 1075 ln 2 / gap: that bound is sufficient for exactness, not necessary")
        if g < star:
            raise Wrong(f"on {name} the labels still differ at some gamma above yours: keep bisecting until the "
                        "bracket is narrow (a relative 5e-3)")
        raise Wrong(f"on {name} the labels already match at your gamma (and somewhat below it): look lower")
    return "right: your bisection finds where the labels stop differing from Lloyd's"


# ----------------------------------------------------------------------------- 01.8
#: 01.8's 1-d example: centers 0, 1 and 40 (center 40 attracts nobody); x = 0.5 is tied, 0.0 duplicated, and at
#: GAMMA_ONE_HOT the columns of x = 0.25 and 0.75 sit at gamma * gap = 745.07, those of 0.2499 at 745.37
X_ONE_HOT = np.array([[0.25, 0.2499, 0.5, 0.75, 0.0, 0.0, 1.0, 0.9]])
C_ONE_HOT = np.array([[0.0, 1.0, 40.0]])
GAMMA_ONE_HOT = 1490.14


def _one_hot_cases():
    """(name, X, C, gamma) for 01.8."""
    (a, X3, C3), _, _ = _fresh_cases()
    Xv, Cv = validation_data()
    return [("a 1-d example with a tie, a duplicate point and an empty cluster", X_ONE_HOT, C_ONE_HOT,
             GAMMA_ONE_HOT), (a, X3, C3, 1e4), (a, X3, C3, 3e4),
            ("validation_data()", Xv, Cv, 3e3), ("validation_data()", Xv, Cv, 1e5)]


@exercise("01.8", "Count the exactly one-hot columns by hand", kind="code", difficulty=2, minutes=15,
          objective="predict when a column of float64 softmax weights is exactly one-hot (gamma * gap > 1075 ln 2 "
                    "= 745.1332 for every other center)",
          checks="a function (X, C, gamma) -> the number of exactly one-hot columns of Y after layer 1 equals "
                 "kmeans_transformer's one_hot[0] on a 1-d example with columns on either side of the threshold, "
                 "a 3-d one and validation_data(), at five gammas (exact: integer counts)",
          forbid=LAYER + (softmax,))
def _c(answer):
    for name, X, C, g in _one_hot_cases():
        want = int(kmeans_transformer(X, C, 1, gamma=g).one_hot[0])
        got = as_int(call_answer(answer, X.copy(), C.copy(), g), "a count (an int)")
        if got != want:
            more = "more" if got > want else "fewer"
            raise Wrong(f"on {name} at gamma = {g:g} you count {more} columns than the layer has: "
                        "when is exp(-gamma * gap) exactly 0 in float64, and which weights must be 0?")
    return "right: a column is exactly one-hot when every other weight underflows, gamma * gap > 1075 ln 2"


# ============================================================================= self-checks (quiz), one per section
# Each sits right after the section it checks; the notebook prints nothing that gives its answer before it.

# ----------------------------------------------------------------------------- 01.9 (after section 2)
QUIZ_D, QUIZ_K = 5, 4   # 01.9's data dimension and number of clusters (the notebook prints d_emb only for d=2, k=3)


@exercise("01.9", "Self-check: the size of a token", kind="quiz", difficulty=1, minutes=1,
          objective="count the rows of Theorem 2.1's tokens in kmt_ref: data, one-hot and the flag",
          checks="d_emb for d = 5, k = 4 (lloyd_weights' embedding; exact: an integer)")
def _c(answer):
    want = lloyd_weights(QUIZ_D, QUIZ_K)[1].d_emb
    got = as_int(answer, "d_emb (an integer)")
    if got == QUIZ_D + QUIZ_K:
        raise Wrong("that is d + k, the tokens of the authors' code; which row of kmt_ref's tokens marks a "
                    "center token? (section 2)")
    expect(got == want, "count the rows of a token: the data block, the one-hot block, and what else? (section 2)")
    return "right: d data rows, k one-hot rows and the type flag"


# ----------------------------------------------------------------------------- 01.10 (after section 4)
@exercise("01.10", "Self-check: what the encoder leaves in y", kind="quiz", difficulty=1, minutes=2,
          objective="read the encoder's residual sum: block 1 writes the new one-hot code, block 2 removes the old one",
          checks="a choice among four statements about the y rows after blocks 1 and 2 of layer 2")
def _c(answer):
    multiple_choice(answer, "b", {
        "a": "the residual sum adds both blocks' outputs to the token that entered the layer: what does block 2 write?",
        "c": "that is what the two blocks write together; the layer adds it to the token that entered",
        "d": "block 1 writes the new assignment into the y rows: they change whenever the label does",
    })
    return "right: y + (e_j* - y) = e_j*: the old code is removed exactly, the new one written"


# ----------------------------------------------------------------------------- 01.11 (after section 7)
def flag_scaled_centers(flag_weight=np.sqrt(3.0)):
    """Section 7's example after one layer with K3's flag entry set to ``flag_weight`` (own token at -flag_weight^2)."""
    params, emb = lloyd_weights(2, 3)
    params = dict(params)
    K3 = params["K3"].copy()
    flag = emb.rows("flag")
    K3[flag, flag] = flag_weight
    params["K3"] = K3
    return run_layers(X_EMPTY, params, lloyd_layer(), emb, C0_EMPTY, 1).centers[1]  # (2, 3)


@exercise("01.11", "Self-check: a weaker flag", kind="quiz", difficulty=1, minutes=2,
          objective="predict from block 3's scores which keys an empty cluster's center averages",
          checks="a choice among four statements about the empty center of section 7 when its own token scores -3")
def _c(answer):
    multiple_choice(answer, "c", {
        "a": "the own token wins only if it scores above every point: compare -3 with the points' scores",
        "b": "the other center tokens score lower still: which keys reach the maximum score?",
        "d": "the averaging hardmax always has a maximal key, so block 3 always writes a mean",
    })
    return "right: every point ties at -2 above the own token's -3, so the center moves to the mean of all points"
