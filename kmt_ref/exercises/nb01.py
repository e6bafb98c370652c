"""Exercises of notebook 01: Theorem 2.1, Lloyd's algorithm as a four-block transformer layer.

Each checker computes the right answer with kmt_ref itself on small inputs (a
few milliseconds each, the bisection of 01.7 about 0.2 s once, then cached).
Answers that are functions are called on several inputs, among them ones the
notebook never shows, so that a function fitted to one example fails.

The premises the exercises rest on, as measured (tests/exercises/test_nb01.py
re-measures them):

- 01.2: with the averaging hardmax in block 1, X = [[0, 1, 2]], C0 = [[0, 2]],
  the middle point writes y = (1/2, 1/2); block 3 scores it -1/2 < 0, so it is
  in neither mean: the centers stay [[0, 2]] (Lloyd: [[0.5, 2]]).
- 01.4: without the flag in K3 a center's own token scores 0, tied with its
  members: c' = (sum of members + c) / (|M| + 1). The transformer then differs
  from Lloyd on both examples of the notebook (toy: labels at layer 2, centers by
  0.075; empty-cluster example: populated centers by 0.025 after layer 1).
- 01.5: center_update="linear" gives Lloyd's means at any *gamma_update* (block 3
  has no temperature) but not at a finite block-1 gamma (max |dC| = 0.32 on the
  toy example at gamma = 10): it is then the y-weighted mean of the soft y.
- 01.7: on the toy example the labels of 4 layers differ from Lloyd's exactly for
  gamma below gamma* = 599.68 (one interval; a scan of 3,000 values up to 1e6
  finds no other), far below 745 / (smallest gap) = 5.9e6.
- 01.8: a column of Y is exactly one-hot after the first layer iff gamma times
  every gap to the nearest squared distance exceeds 745.1332 (exp underflows to
  0); 3,900 of the 10,000 points of validation_data() at gamma = 1e4.
"""
from __future__ import annotations

import functools

import numpy as np

from ..algorithms.lloyd import kmeans_transformer, lloyd, lloyd_layer, lloyd_weights
from ..core.attention import attention, layer_forward
from ..core.tokens import projector, run_layers, with_block
from ..data import toy_data, validation_data
from ._registry import (Wrong, as_array, as_float, as_int, call_answer, exercise, expect, expect_value,
                        multiple_choice)

__all__ = []

NB = "01"

# ----------------------------------------------------------------------------- shared inputs
#: the empty-cluster example of the notebook's section 7: center 2 attracts no point
X_EMPTY = np.array([[0.0, 0.1, 0.2, 1.0, 1.1, 1.2],
                    [0.0, 0.1, 0.0, 1.0, 0.9, 1.0]])
C0_EMPTY = np.array([[0.0, 1.0, 5.0],
                     [0.0, 1.0, 5.0]])
#: the tie of exercise 01.2: the point x = 1 is halfway between the centers 0 and 2
X_TIE, C0_TIE = np.array([[0.0, 1.0, 2.0]]), np.array([[0.0, 2.0]])


def _cases():
    """(name, X, C) inputs for the function-valued answers: the notebook's two examples and an unseen 3-d one."""
    X, C0 = toy_data(19)
    rng = np.random.default_rng(2024)
    X3 = rng.uniform(size=(3, 30))  # (3, 30)
    return [("the toy example", X, C0), ("the empty-cluster example", X_EMPTY, C0_EMPTY),
            ("a 3-d example with k = 4", X3, X3[:, :4].copy())]


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


def _labels_differ(X, C0, ref, gamma):
    return not np.array_equal(kmeans_transformer(X, C0, ref.labels.shape[0], gamma=gamma).labels, ref.labels)


@functools.lru_cache(maxsize=1)
def gamma_star():
    """The largest gamma at which 4 layers' labels differ from Lloyd's on the toy example.

    Bisection in log(gamma) on [1, 1e4] (labels differ at 1, match at 1e4), to a
    relative width of 1e-9. That the set where they differ is one interval is
    checked in tests/exercises/test_nb01.py (a scan up to 1e6).
    """
    X, C0 = toy_data(19)
    ref = lloyd(X, C0, 4)
    lo, hi = 1.0, 1e4
    while hi / lo > 1 + 1e-9:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if _labels_differ(X, C0, ref, mid) else (lo, mid)
    return lo


# ----------------------------------------------------------------------------- 01.1
@exercise("01.1", "The tokens before and after one layer", kind="code", difficulty=1, minutes=10,
          objective="write the point and center tokens of Theorem 2.1 and say what one layer leaves in them",
          checks="a function (X, C) -> (Xbar', Cbar') equals layer_forward's output on three inputs "
                 "(y and flag rows exactly, centers to 1e-12 in float64; float32 gets a hint about the dtype)",
          forbid=(layer_forward, run_layers, kmeans_transformer))
def _c(answer):
    for name, X, C in _cases():
        d, n = X.shape
        k = C.shape[1]
        params, emb = lloyd_weights(d, k)
        Xb, Cb = layer_forward(params, emb.embed_points(X), emb.embed_centers(C), lloyd_layer())
        out = call_answer(answer, X, C)
        expect(isinstance(out, (tuple, list)) and len(out) == 2,
               f"on {name}: return a pair (Xbar', Cbar'), got {type(out).__name__}")
        Xa = as_array(out[0], (emb.d_emb, n), f"Xbar' on {name} (rows: x, y, flag)")
        Ca = as_array(out[1], (emb.d_emb, k), f"Cbar' on {name} (rows: x, y, flag)")
        expect(np.array_equal(Xa[emb.rows("x")], X), f"on {name}: the x rows of the points must still hold X")
        expect(np.array_equal(Xa[emb.rows("flag")], Xb[emb.rows("flag")]) and
               np.array_equal(Ca[emb.rows("flag")], Cb[emb.rows("flag")]),
               f"on {name}: the flag row is wrong: which tokens carry the flag, and does a layer change it?")
        expect(np.array_equal(Xa[emb.rows("y")], Xb[emb.rows("y")]),
               f"on {name}: the y rows of the points are not what blocks 1 and 2 leave there (section 4)")
        expect(np.array_equal(Ca[emb.rows("y")], Cb[emb.rows("y")]),
               f"on {name}: the y rows of the centers are wrong: does the decoder change them?")
        # means of unit-scale points, summed in any order: rounding ~1e-16, so 1e-12 is generous
        expect_value(np.asarray(out[1])[emb.rows("x")], Cb[emb.rows("x")], atol=1e-12,
                     what=f"the centers on {name}",
                     hint=f"on {name}: the centers after one layer are wrong (which Lloyd step does a layer do?)")
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
exercise("01.3", "Why the reset blocks are exact", kind="proof", difficulty=2, minutes=20,
         objective="prove that blocks 2 and 4 are identity attention at gamma = inf and that the residual "
                   "sum (c - c) + mu is exactly mu")(None)


# ----------------------------------------------------------------------------- 01.4
@exercise("01.4", "Remove the flag row", kind="code", difficulty=2, minutes=15,
          objective="explain how the flag token keeps an empty cluster's center, and what block 3 does without it",
          checks="a function (X, C) -> C' (computed without the transformer) equals one flagless layer "
                 "(K3 = P_Y) on three inputs, to 1e-12")
def _c(answer):
    for name, X, C in _cases():
        d, k = C.shape
        params, emb = _flagless_params(d, k)
        want = run_layers(X, params, lloyd_layer(), emb, C, 1).centers[1]  # (d, k)
        got = as_array(call_answer(answer, X, C), (d, k), f"C' on {name}, shape (d, k)")
        if np.allclose(got, lloyd(X, C, 1).centers[1], atol=1e-12):
            raise Wrong(f"on {name} you return Lloyd's means, which the flagless layer does not produce; "
                        "without the flag, what does a center score against its own token?")
        # means of unit-scale points: rounding ~1e-16, 1e-12 forgives any summation order
        expect(np.allclose(got, want, rtol=0, atol=1e-12),
               f"on {name} the centers differ from the flagless layer's: which keys tie at block 3's maximum?")
    return "right: without the flag a center's own token ties with its members, c' = (sum + c) / (|M| + 1)"


# ----------------------------------------------------------------------------- 01.5
@exercise("01.5", "The authors' linear center update at finite gamma", kind="code", difficulty=2, minutes=15,
          objective="predict what the layer computes at finite gamma: soft assignments and weighted means",
          checks="a function (X, C, gamma) -> C' equals one layer with center_update='linear' at "
                 "gamma = 1, 10, 100 on the toy example and 1e3 on validation_data(), to 1e-10")
def _c(answer):
    X, C0 = toy_data(19)
    Xv, Cv = validation_data()
    for name, XX, CC, g in [("the toy example", X, C0, 1.0), ("the toy example", X, C0, 10.0),
                            ("the toy example", X, C0, 100.0), ("validation_data()", Xv, Cv, 1e3)]:
        want = _linear_centers(XX, CC, g)  # (d, k)
        got = as_array(call_answer(answer, XX, CC, g), CC.shape, f"C' on {name} at gamma = {g:g}, shape (d, k)")
        if np.allclose(got, lloyd(XX, CC, 1).centers[1], atol=1e-10) and not np.allclose(want, got, atol=1e-10):
            raise Wrong(f"on {name} at gamma = {g:g} you return Lloyd's means; at finite gamma, "
                        "what does block 1 write into y?")
        # one-step soft means of unit-scale data: measured differences <= 6e-15 against the library
        expect(np.allclose(got, want, rtol=0, atol=1e-10),
               f"on {name} at gamma = {g:g} your centers differ from the layer's "
               "(whose weights sum to 1: each point's over the centers, or each center's over the points?)")
    return "right: block 1 writes softmax weights, and the linear block 3 takes the y-weighted mean"


# ----------------------------------------------------------------------------- 01.6
@exercise("01.6", "The reset block at finite gamma", kind="code", difficulty=2, minutes=15,
          objective="explain block 2's role (subtract the old y) and why it must be the exact identity",
          checks="a function (X, Y, gamma_reset) -> what block 2 writes into the y rows, (k, n), equals "
                 "the library's attention at gamma_reset = 1 and 50 for one-hot and soft Y, to 1e-12")
def _c(answer):
    X, C0 = toy_data(19)
    labels = lloyd(X, C0, 1).labels[0]
    Y_hot = np.eye(3)[:, labels]  # (k, n) Y^(1)
    Y_soft = np.random.default_rng(7).dirichlet(np.ones(3), size=X.shape[1]).T  # (k, n), columns sum to 1
    for what, Y in (("one-hot Y", Y_hot), ("a soft Y", Y_soft)):
        for g in (1.0, 50.0):
            want = _reset_y(X, Y, g)  # (k, n)
            got = as_array(call_answer(answer, X, Y.copy(), g), Y.shape, "block 2's y rows, shape (k, n)")
            if np.allclose(got, -Y, atol=1e-12):
                raise Wrong(f"with {what} at gamma_reset = {g:g} you return -Y, block 2 at gamma = inf; "
                            "at finite gamma each point attends to its neighbours too")
            expect(not np.allclose(got, -want, atol=1e-12), "check the sign: V2 = -P_Y")
            # sums of n = 24 products of weights in [0, 1]: rounding ~1e-16, measured differences <= 4e-16
            expect(np.allclose(got, want, rtol=0, atol=1e-12),
                   f"with {what} at gamma_reset = {g:g} your output differs from block 2's "
                   "(which axis of the score matrix are the keys, and which one is normalized?)")
    return "right: at finite gamma block 2 subtracts a blend of the neighbours' y, not y_i itself"


# ----------------------------------------------------------------------------- 01.7
#: relative tolerance on gamma*: a bisection to three significant digits passes
GAMMA_RTOL = 5e-3


@exercise("01.7", "The largest gamma at which the labels differ", kind="code", difficulty=3, minutes=20,
          objective="find by bisection where finite gamma stops changing the labels, and compare it with "
                    "the one-hot bound 745/gap",
          checks="gamma* of the toy example (4 layers), relative tolerance 5e-3")
def _c(answer):
    g = as_float(answer, "gamma*, a number")
    expect(g > 0, f"gamma is positive, got {g!r}")
    star = gamma_star()
    if abs(g - star) <= GAMMA_RTOL * star:
        return f"right: the labels of 4 layers match Lloyd's for every gamma above about {g:.4g}"
    if g > 10 * star:
        raise Wrong("far too large: the labels match Lloyd's at gammas much smaller than yours; "
                    "if you used 745/gap: that bound is sufficient for exactness, not necessary")
    if g < star:
        raise Wrong("the labels still differ at some gamma above yours: keep bisecting upward")
    raise Wrong("at your gamma (and somewhat below it) the labels already match Lloyd's: look lower")


# ----------------------------------------------------------------------------- 01.8
@exercise("01.8", "Count the exactly one-hot columns by hand", kind="code", difficulty=2, minutes=15,
          objective="predict when a column of float64 softmax weights is exactly one-hot (gamma * gap > 745.133, i.e. 1075 ln 2, "
                    "for every other center)",
          checks="a function (X, C, gamma) -> the number of exactly one-hot columns of Y after layer 1 "
                 "equals kmeans_transformer's one_hot[0] on validation_data() and the toy example, five gammas "
                 "(exact: integer counts)")
def _c(answer):
    X, C0 = toy_data(19)
    Xv, Cv = validation_data()
    for name, XX, CC, g in [("validation_data()", Xv, Cv, 1e4), ("validation_data()", Xv, Cv, 1e5),
                            ("validation_data()", Xv, Cv, 3e3), ("the toy example", X, C0, 1e3),
                            ("the toy example", X, C0, 1e4)]:
        want = int(kmeans_transformer(XX, CC, 1, gamma=g).one_hot[0])
        got = as_int(call_answer(answer, XX, CC, g), "a count (an int)")
        if got != want:
            more = "more" if got > want else "fewer"
            raise Wrong(f"on {name} at gamma = {g:g} you count {more} columns than the layer has: "
                        "when is exp(-gamma * gap) exactly 0 in float64?")
    return "right: a column is exactly one-hot when every other weight underflows, gamma * gap > 745.133 (1075 ln 2)"


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
