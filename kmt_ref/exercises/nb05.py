"""Exercises of notebook 05: the leaner transformer with binary codes (the follow-up, arXiv 2610.09760).

Each checker computes the right answer with kmt_ref itself on small inputs (a
few milliseconds each). The premises, as measured (tests/exercises/test_nb05.py
re-measures them):

- 05.2: against center j's query, block 3 scores a non-member point at most -1
  with binary codes (some code differs in one bit) and exactly -2 with one-hot
  codes; for k = 10, 15 of the 45 pairs of binary codes are one bit apart.
- 05.3: with scalar codes 0, 1, 2 in one row (``d_emb = d + 1``) and the
  averaging hardmax in block 1, the point x = 0 tied between centers -1 (code
  0) and 1 (code 2) writes y = 1, the code of center 1: it joins cluster 1,
  whose center moves to (0 + 10 + 11) / 3 = 7. Binary codes write (0, 1/2),
  no code: the point drops out ([[-2, 10.5, 2]]); Lloyd gives [[-1, 10.5, 2]].
- 05.4: on the toy example (k = 3, m = 2) with block 3 at gamma = 10 and block 1
  exact, the largest center error after one layer is 1.24e-4 with binary codes
  against 1.24e-8 with one-hot codes: a ratio of about 1.0e4, of the order of
  exp(10) = 2.2e4 (a non-member at code distance 1 against 2).
"""
from __future__ import annotations

import numpy as np

from ..algorithms.binary import (
    binary_codes,
    binary_layer,
    binary_transformer,
    binary_weights,
    code_length,
)
from ..algorithms.lloyd import lloyd, lloyd_layer, lloyd_weights
from ..core.attention import layer_forward
from ..core.tokens import prepare, run_layers, with_block
from ..data import toy_data
from ._registry import (Wrong, as_array, as_float, as_int, call_answer, exercise, expect, expect_value,
                        multiple_choice)

__all__ = []

#: the tie of exercise 05.3: x = 0 is halfway between the centers -1 (index 0) and 1 (index 2)
X_TIE = np.array([[0.0, -2.0, 2.0, 10.0, 11.0]])
C0_TIE = np.array([[-1.0, 10.0, 1.0]])


def scalar_code_centers(X, C0, tie="average"):
    """One layer of the follow-up's circuit with scalar codes ``0, 1, ..., k-1`` in a single row."""
    k = C0.shape[1]
    params, _ = binary_weights(X.shape[0], 2, "nearest_code")  # m = 1: the projectors of a one-row slot
    Xbar = np.vstack([X, np.zeros((1, X.shape[1]))])  # (d + 1, n)
    Cbar = np.vstack([C0, np.arange(float(k))[None, :]])  # (d + 1, k)
    _, Cb = layer_forward(params, Xbar, Cbar, binary_layer(empty="nearest_code", tie=tie))
    return Cb[:-1]  # (d, k)


def leak_ratio(gamma=10.0):
    """Largest center error after one layer (block 3 at ``gamma``), binary over one-hot, on the toy example."""
    X, C0 = toy_data(19)
    ref = lloyd(X, C0, 1).centers[1]
    eb = np.max(np.abs(binary_transformer(X, C0, 1, gamma_update=gamma, empty="nearest_code").centers[1] - ref))
    Xf, Cf, _, frame = prepare(X, C0, 1)
    params, emb = lloyd_weights(2, 3, "linear")  # the layout [x; y] of the authors' cnst_model.py, K3 = P_Y, no flag
    layer = with_block(lloyd_layer(np.inf, np.inf, "euclidean", gamma), "3", keys="X")
    eo = np.max(np.abs(run_layers(Xf, params, layer, emb, Cf, 1, frame=frame).centers[1] - ref))
    return eb / eo


# ----------------------------------------------------------------------------- 05.1
@exercise("05.1", "The code matrix B_k", kind="code", difficulty=1, minutes=10,
          objective="build the follow-up's binary codes: column j is j in binary, least significant bit first",
          checks="a function k -> B_k equals binary_codes(k) for k = 2, 3, 6, 8, 10, 17, 100 "
                 "(shape and entries; exact: 0/1 entries)")
def _c1(answer):
    for k in (2, 3, 6, 8, 10, 17, 100):
        want = binary_codes(k)
        got = as_array(call_answer(answer, k), (None, None), f"B_{k}")
        expect(got.shape[1] == k, f"B_{k} should have one column per center (k = {k}), got shape {got.shape}")
        expect(got.shape[0] == want.shape[0],
               f"B_{k} has {got.shape[0]} rows: how many bits does it take to write the numbers 0 ... {k - 1}?")
        if not np.array_equal(got, want):
            if np.array_equal(got[::-1], want):
                raise Wrong(f"B_{k}: the rows are in the wrong order: the first row is the least significant bit")
            raise Wrong(f"B_{k} differs from the follow-up's codes: column j should hold the bits of j "
                        "(j counted from 0)")
    return "B_k is right: k distinct columns in ceil(log2 k) rows"


# ----------------------------------------------------------------------------- 05.2
def nearest_code_pairs(B):
    """The number of pairs {j, l}, j < l, of columns of B at the smallest squared distance between two columns."""
    D = ((B[:, :, None] - B[:, None, :]) ** 2).sum(axis=0)  # (k, k) squared code distances
    upper = D[np.triu_indices(B.shape[1], 1)]
    return int(np.sum(upper == upper.min()))


@exercise("05.2", "Why ceil(log2 k) rows suffice for the decoder", kind="concept", difficulty=2, minutes=15,
          objective="see that block 3 needs distinct codes with a margin, not orthogonal ones",
          checks="the pair (number of center pairs at the smallest code distance for k = 10: binary codes, "
                 "one-hot codes) (exact: integers)")
def _c2(answer):
    expect((isinstance(answer, (tuple, list)) or getattr(answer, "ndim", 0) == 1) and len(answer) == 2,
           "answer = (binary, onehot), two counts")
    a = [as_int(v, "a count of pairs") for v in answer]
    want = (nearest_code_pairs(binary_codes(10)), nearest_code_pairs(np.eye(10)))
    expect(a[1] == want[1], "one-hot: every two distinct one-hot codes are at the same distance; how many "
                            "pairs {j, l} with j < l are there among 10 centers?" if a[1] != 2 * want[1] else
                            "one-hot: count each pair {j, l} once (j < l), not as (j, l) and (l, j)")
    expect(a[0] != 2 * want[0], "binary: count each pair {j, l} once (j < l), not as (j, l) and (l, j)")
    expect(a[0] != 9, "binary: consecutive numbers can differ in several bits (3 = 011, 4 = 100); compare the "
                      "codes bit by bit")
    expect(a[0] == want[0], "binary: which pairs of the codes of 0 ... 9 differ in exactly one bit? Count them "
                            "from B = binary_codes(10)")
    return (f"right: {want[0]} of the 45 pairs are one bit apart with binary codes (margin 1), all 45 two apart "
            "with one-hot codes (margin 2); any margin > 0 is enough at gamma = inf")


# ----------------------------------------------------------------------------- 05.3
@exercise("05.3", "What a tie does to a code", kind="code", difficulty=2, minutes=15,
          objective="see that an averaged code is no code for binary codes, but can be one for scalar codes",
          checks="the centers after one layer of the scalar-code circuit with the averaging hardmax on the tie "
                 "example equal kmt_ref's (to 4 significant digits)")
def _c3(answer):
    want = scalar_code_centers(X_TIE, C0_TIE)
    got = as_array(answer, (1, 3), "the centers (1, 3)")
    if np.allclose(got, lloyd(X_TIE, C0_TIE, 1).centers[1], rtol=0, atol=1e-12):
        raise Wrong("these are Lloyd's centers: with the averaging hardmax the tied point writes the mean of "
                    "two codes into y; which center has that code?")
    if np.allclose(got, binary_transformer(X_TIE, C0_TIE, 1, tie="average", empty="nearest_code").centers[1],
                   rtol=0, atol=1e-12):
        raise Wrong("these are the binary codes' centers; the exercise asks for scalar codes 0, 1, 2 in one row")
    expect_value(got, want, what="the centers",
                 hint="run one layer (layer_forward) with the scalar-code tokens and the averaging hardmax in block 1")
    return "right: (0 + 2) / 2 = 1 is the code of center 1, so the tied point joins the far cluster"


# ----------------------------------------------------------------------------- 05.4
@exercise("05.4", "The leak at finite gamma", kind="code", difficulty=2, minutes=15,
          objective="measure how much more a binary decoder leaks than a one-hot one at the same gamma",
          checks="the ratio of the largest center errors after one layer (binary / one-hot, block 3 at gamma = 10, "
                 "toy example) to 4 significant digits")
def _c4(answer):
    want = leak_ratio(10.0)
    got = as_float(answer, "a ratio (binary error / one-hot error)")
    expect(got > 0, "errors are positive: the ratio is too")
    expect_value(got, want, what="the ratio",
                 wrong=[(1 / want, "this looks like one-hot / binary: the exercise asks for binary / one-hot")],
                 hint=f"you have {got:.4g}: compare max |C - C_Lloyd| after one layer, both with gamma_update=10 "
                      "and block 1 exact, the one-hot circuit without the flag")
    return f"right: {want:.4g}, of the order of exp(10) = {np.exp(10):.3g}"


# ----------------------------------------------------------------------------- 05.5
exercise("05.5", "The shift that keeps empty clusters, proved", kind="proof", difficulty=3, minutes=20,
         objective="prove the order of block 3's scores in kmt_ref's in-budget extension (open)")(None)


# ============================================================================= self-checks (quiz), one per section
# Each sits right after the section it checks; the notebook prints nothing that gives its answer before it.

# ----------------------------------------------------------------------------- 05.6 (after section 2)
QUIZ_K = 33                                   # 05.6's number of clusters


@exercise("05.6", "Self-check: how many code rows", kind="quiz", difficulty=1, minutes=1,
          objective="count the rows m = ceil(log2 k) of a binary code",
          checks="the code length for k = 33 (code_length; exact: an integer)")
def _c(answer):
    want = code_length(QUIZ_K)
    got = as_int(answer, "a number of rows (an integer)")
    if got == want - 1:
        raise Wrong(f"{got} bits give 2^{got} distinct codes: enough for k = {QUIZ_K}?")
    if got == QUIZ_K:
        raise Wrong("that is the one-hot code's length; a binary code writes j in base 2")
    expect(got == want, "not the length: the smallest m with 2^m >= k (section 1)")
    return "right: m = ceil(log2 33) = 6"


# ----------------------------------------------------------------------------- 05.7 (after section 2)
QUIZ_CODES_K, QUIZ_MEMBER_OF, QUIZ_CENTER = 8, 3, 4   # 05.7: k = 8, a member of cluster 3, scored by center 4


def quiz_code_score():
    """Block 3's score -||b_4 - y||^2 of a member of cluster 3 (y = b_3) against center 4, k = 8 (the follow-up's circuit)."""
    B = binary_codes(QUIZ_CODES_K)            # (3, 8)
    diff = B[:, QUIZ_CENTER] - B[:, QUIZ_MEMBER_OF]
    return float(-(diff @ diff))


@exercise("05.7", "Self-check: a non-member's score", kind="quiz", difficulty=1, minutes=2,
          objective="read block 3's score -||b_j - y_i||^2 as minus the number of differing bits",
          checks="block 3's score of a member of cluster 3 against center 4 (k = 8, the follow-up's circuit; "
                 "exact: an integer)")
def _c(answer):
    want = quiz_code_score()
    got = as_float(answer, "a score (a number)")
    if got == -want:
        raise Wrong("scores are minus squared distances: members score 0, everything else less")
    if got == -2.0 and want != -2.0:
        raise Wrong("that is any non-member's score with one-hot codes; binary codes differ in some bits: write 3 "
                    "and 4 in binary")
    expect(got == want, "not the score: write 3 and 4 in binary (least significant bit first) and count the bits "
                        "that differ (section 2)")
    return "right: 3 = 110 and 4 = 001 (least significant bit first) differ in all three bits"


# ----------------------------------------------------------------------------- 05.8 (after section 6)
@exercise("05.8", "Self-check: the size of the leak", kind="quiz", difficulty=1, minutes=2,
          objective="predict a non-member's block-3 weight at finite gamma from its code distance",
          checks="a choice among four statements about the weight of a non-member one bit away, relative to a "
                 "member, at gamma = 10")
def _c(answer):
    multiple_choice(answer, "b", {
        "a": "that is a non-member two bits away, as every non-member is with one-hot codes",
        "c": "only the hardmax of gamma = inf gives exact zeros here (float64 softmax rounds a weight to 0 only "
             "when gamma times its score gap is about 745 or more)",
        "d": "that is the follow-up's scaling (Definition 2.2); kmt_ref's hand-set scores are not divided by "
             "sqrt(d_emb)",
    })
    return "right: a score gap of 1 at gamma = 10 is a factor e^-10 in the weight"
