"""Exercises of notebook 05: the leaner transformer with binary codes (the follow-up, arXiv 2610.09760).

Each checker computes the right answer with kmt_ref itself on small inputs
(benchmarks/bench_checkers.py times every check). Answers that are functions are
called on inputs the notebook never shows (other k, other ties, other data and
gamma), so that a function fitted to the notebook's example fails; while they run,
the functions an exercise forbids raise (see
:func:`kmt_ref.exercises._registry.call_answer`).
The premises, as measured (tests/exercises/test_nb05.py re-measures them):

- 05.1: ``binary_codes(k)`` has ``max(1, ceil(log2 k))`` rows: one row at
  k = 1 (the follow-up has none), p rows at k = 2^p, p + 1 at 2^p + 1.
- 05.2: against center j's query, block 3 scores a non-member point at most -1
  with binary codes (some code differs in one bit) and exactly -2 with one-hot
  codes; for k = 10, 15 of the 45 pairs of binary codes are one bit apart.
- 05.3: with scalar codes 0, 1, ..., k-1 in one row (``d_emb = d + 1``) and the
  averaging hardmax in block 1, a point tied between centers j and l writes y =
  (j + l) / 2. On the notebook's tie (x = 0 between centers -1, code 0, and 1,
  code 2) that is 1, the code of center 1: the point joins cluster 1, whose
  center moves to (0 + 10 + 11) / 3 = 7. Between adjacent codes it writes a
  half, no code, and drops out of every mean but an empty cluster's. Binary
  codes write (0, 1/2) on the notebook's tie: the point drops out
  ([[-2, 10.5, 2]]); Lloyd gives [[-1, 10.5, 2]].
- 05.4: with block 3 at gamma and block 1 exact, the largest center error after
  one layer is larger with binary codes than with one-hot codes (no flag): by
  1.007e4 on the toy example at gamma = 10 (errors 1.24e-4 and 1.24e-8), of the
  order of exp(10) = 2.2e4 (a non-member at code distance 1 against 2); by 268.7,
  1390 and 8066 on the checker's gaussian-blob draws at gamma = 6, 8 and 9.
- 05.5: with kmt_ref's shift delta = 1/4 at k = 8 (m = 3), the highest score of
  another center's token against center j's query is -((1 - delta)^2 + 2
  delta^2) = -11/16, above the other points' -1 and below the own token's
  -3/16: the order the proof needs (own token above every other center) uses
  delta < 1/2, the own token above the points uses m delta^2 < 1.
"""
from __future__ import annotations

import numpy as np

from ..algorithms.binary import (
    CodeEmbedding,
    binary_codes,
    binary_layer,
    binary_transformer,
    binary_weights,
    code_length,
    code_shift,
)
from ..algorithms.lloyd import kmeans_transformer, lloyd, lloyd_layer, lloyd_weights
from ..core.attention import layer_forward
from ..core.blocks import attention, attention_scores
from ..core.exact.layer import fast_layer_forward
from ..core.gradients import softmax_attention
from ..core.tokens import prepare, run_layers, with_block
from ..data import gaussian_blobs, toy_data
from ._registry import (Wrong, as_array, as_float, as_int, call_answer, exercise, expect,
                        expect_value, multiple_choice)

__all__ = []

#: the tie of exercise 05.3 in the notebook: x = 0 is halfway between the centers -1 (index 0) and 1 (index 2)
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


def _onehot_centers(X, C0, gamma, gamma_update):
    """One layer of Theorem 2.1 without the flag (block 3 over the points, K3 = P_Y), as the follow-up compares it."""
    Xf, Cf, _, frame = prepare(X, C0, 1)
    params, emb = lloyd_weights(X.shape[0], C0.shape[1], "linear")  # the layout [x; y] of the authors' cnst_model.py
    layer = with_block(lloyd_layer(frame.gamma(gamma), np.inf, "euclidean", gamma_update), "3", keys="X")
    return run_layers(Xf, params, layer, emb, Cf, 1, frame=frame).centers[1]


def leak_ratio(X, C0, gamma):
    """Largest center error after one layer (block 3 at ``gamma``, block 1 exact), binary over one-hot (no flag)."""
    ref = lloyd(X, C0, 1).centers[1]
    eb = np.max(np.abs(binary_transformer(X, C0, 1, gamma_update=gamma, empty="nearest_code").centers[1] - ref))
    eo = np.max(np.abs(_onehot_centers(X, C0, np.inf, gamma) - ref))
    return eb / eo


def _leak_variants(X, C0, gamma):
    """Ratios a plausible slip computes instead of :func:`leak_ratio`, each with its hint."""
    ref = lloyd(X, C0, 1).centers[1]

    def err(C):
        return np.max(np.abs(C - ref))

    eb = err(binary_transformer(X, C0, 1, gamma_update=gamma, empty="nearest_code").centers[1])
    eo = err(_onehot_centers(X, C0, np.inf, gamma))
    return [
        (eo / eb, "this looks like one-hot / binary: the exercise asks for binary / one-hot"),
        (err(binary_transformer(X, C0, 1, gamma_update=gamma).centers[1]) / eo,
         "that binary circuit is kmt_ref's default (empty='keep', the shifted codes of section 4): the exercise "
         "asks for the follow-up's, empty='nearest_code'"),
        (eb / err(kmeans_transformer(X, C0, 1, gamma_update=gamma).centers[1]),
         "that one-hot circuit has the flag row (kmeans_transformer): the exercise compares with one-hot codes "
         "without it (plain_onehot_transformer)"),
        (err(binary_transformer(X, C0, 1, gamma, empty="nearest_code").centers[1])
         / err(_onehot_centers(X, C0, gamma, gamma)),
         "that puts gamma in block 1 too: keep block 1 exact (gamma = inf) and set gamma_update only"),
    ]


# ----------------------------------------------------------------------------- 05.1
#: the k of 05.1's check: k = 1, powers of two and their neighbours, and a few drawn with a fixed seed
CODE_KS = (1, *sorted({2 ** p + s for p in range(1, 11) for s in (-1, 0, 1)} - {1}),
           *(int(k) for k in np.random.default_rng(5).integers(6, 5000, size=4)))


def _is_power_of_two(k):
    return k & (k - 1) == 0


@exercise("05.1", "The code matrix B_k", kind="code", difficulty=1, minutes=10,
          objective="build the follow-up's binary codes: column j is j in binary, least significant bit first",
          checks="a function k -> B_k equals binary_codes(k) for k = 1, the powers of two from 2 to 1024 and "
                 "their neighbours, and four k drawn below 5000 (shape and entries; exact: 0/1 entries)",
          forbid=(binary_codes, code_length, CodeEmbedding.embed_centers))
def _c1(answer):
    for k in CODE_KS:
        want = binary_codes(k)
        m = want.shape[0]
        got = as_array(call_answer(answer, k), (None, None), f"B_{k}")
        if got.shape == (k, m) and k != m:
            raise Wrong(f"B_{k} has shape {got.shape}: the codes are its columns, shape (m, k) = ({m}, {k})")
        expect(got.shape[1] == k, f"B_{k} should have one column per center (k = {k}), got shape {got.shape}")
        if got.shape[0] != m:
            rows = got.shape[0]
            if k == 1:
                raise Wrong(f"B_1 has {rows} rows: the follow-up writes k = 1 with no row, kmt_ref keeps one "
                            "(section 1)")  # rows != 1 here
            has = f"B_{k} has {rows} row{'s' * (rows != 1)}"
            if rows == m + 1 and _is_power_of_two(k):
                raise Wrong(f"{has}: {m} bit{'s' * (m != 1)} already write{'s' * (m == 1)} the numbers "
                            f"0 ... {k - 1} (k = {k} is a power of two)")
            raise Wrong(f"{has}: how many bits does it take to write the numbers 0 ... {k - 1}?")
        if not np.array_equal(got, want):
            if np.array_equal(got[::-1], want):
                raise Wrong(f"B_{k}: the rows are in the wrong order: the first row is the least significant bit")
            if not np.all((got == 0) | (got == 1)):
                raise Wrong(f"B_{k} has entries other than 0 and 1: each entry is one bit")
            raise Wrong(f"B_{k} differs from the follow-up's codes: column j should hold the bits of j "
                        "(j counted from 0)")
    return "B_k is right: k distinct columns in ceil(log2 k) rows (one row at k = 1)"


# ----------------------------------------------------------------------------- 05.2
def nearest_code_pairs(B):
    """The number of pairs {j, l}, j < l, of columns of B at the smallest squared distance between two columns."""
    D = ((B[:, :, None] - B[:, None, :]) ** 2).sum(axis=0)  # (k, k) squared code distances
    upper = D[np.triu_indices(B.shape[1], 1)]
    return int(np.sum(upper == upper.min()))


@exercise("05.2", "Why ceil(log2 k) rows suffice for the decoder", kind="concept", difficulty=2, minutes=15,
          objective="see that block 3 needs distinct codes with a margin, not orthogonal ones",
          checks="the pair (number of center pairs at the smallest code distance for k = 10: binary codes, "
                 "one-hot codes) (exact: integers)",
          parts=("binary codes: the pairs at the smallest distance", "one-hot codes: the pairs at the smallest distance"))
def _c2(answer, part):
    expect((isinstance(answer, (tuple, list)) or getattr(answer, "ndim", 0) == 1) and len(answer) == 2,
           "answer = (binary, onehot), two counts")
    got = as_int(answer[part - 1], "a count of pairs (an integer)")
    want = nearest_code_pairs(binary_codes(10)) if part == 1 else nearest_code_pairs(np.eye(10))
    expect(got >= 0, "that is a score, not a count: how many pairs of centers sit at the smallest distance?")
    expect(got != 2 * want, "count each pair {j, l} once (j < l), not as (j, l) and (l, j)")
    if part == 1:
        expect(got != 9, "consecutive numbers can differ in several bits (3 = 011, 4 = 100); compare the codes "
                         "bit by bit")
        expect(got == want, "which pairs of the codes of 0 ... 9 differ in exactly one bit? Count them from "
                            "B = binary_codes(10)")
        return f"right: {want} of the 45 pairs are one bit apart (margin 1)"
    expect(got == want, "every two distinct one-hot codes are at the same distance: how many pairs {j, l} with "
                        "j < l are there among 10 centers?")
    return f"right: all {want} pairs are two apart (margin 2); any margin > 0 is enough at gamma = inf"


# ----------------------------------------------------------------------------- 05.3
def _tie_cases():
    """(name, X, C0) for 05.3: the notebook's tie and ties it does not show, an empty cluster, untied data."""
    rng = np.random.default_rng(53)
    X2 = rng.uniform(size=(2, 30))  # (2, 30): no ties; center 2, far away, attracts no point
    C2 = np.hstack([X2[:, :2], [[5.0], [5.0]], X2[:, 2:3]])  # (2, 4)
    X3 = rng.uniform(size=(3, 40))  # (3, 40)
    return [
        ("the notebook's tie", X_TIE, C0_TIE),
        ("a tie between centers 0 and 1 (X = [[0, 2, -3, 5, 6]], C0 = [[1, 3, 5.5]])",
         np.array([[0.0, 2.0, -3.0, 5.0, 6.0]]), np.array([[1.0, 3.0, 5.5]])),
        ("a tie between centers 1 and 3 of five",
         np.array([[-11.0, -9.0, 1.0, 5.0, 9.0, 11.0, 99.0, 101.0, 49.0]]), np.array([[-10.0, 0.0, 100.0, 10.0, 50.0]])),
        ("a point tied between four centers in 2-d",
         np.array([[0.0, 0.0, 4.0, 4.0, 2.0, 8.0], [0.0, 4.0, 0.0, 4.0, 2.0, 8.0]]),
         np.array([[0.0, 4.0, 4.0, 0.0], [0.0, 0.0, 4.0, 4.0]])),
        ("2-d data with an empty cluster (k = 4)", X2, C2),
        ("3-d data without ties (k = 5)", X3, X3[:, :5].copy()),
    ]


@exercise("05.3", "What a tie does to a code", kind="code", difficulty=2, minutes=15,
          objective="see that an averaged code is no code for binary codes, but can be one for scalar codes",
          checks="a function (X, C0) -> the centers after one layer of the scalar-code circuit with the averaging "
                 "hardmax (computed without the transformer) equals layer_forward's on six inputs: the notebook's "
                 "tie, three other ties, an empty cluster, untied 3-d data (to 1e-12)",
          forbid=(layer_forward, fast_layer_forward, attention, run_layers, binary_transformer, attention_scores,
                  softmax_attention.fun))  # .fun: the function inside the autograd primitive
def _c3(answer):
    for name, X, C0 in _tie_cases():
        want = scalar_code_centers(X, C0)  # (d, k)
        wrong = [(scalar_code_centers(X, C0, tie="lowest"),
                  f"on {name}: that gives a tied point the lowest tied code (Lloyd's rule); the averaging "
                  "hardmax gives it the mean of the tied codes"),
                 (lloyd(X, C0, 1).centers[1], f"on {name}: these are Lloyd's centers: with the averaging "
                                              "hardmax a tied point writes the mean of the tied codes into y, and "
                                              "an empty cluster takes the points whose y is nearest to its code"),
                 (binary_transformer(X, C0, 1, tie="average", empty="nearest_code").centers[1],
                  f"on {name}: these are the binary codes' centers; the exercise asks for scalar codes 0, ..., "
                  "k-1 in one row")]
        got = call_answer(answer, X.copy(), C0.copy())  # as it is: expect_value reads its shape and dtype
        # means of a few points of unit scale (or integers up to 101): rounding ~1e-14 at most
        expect_value(got, want, atol=1e-12, what=f"the centers on {name} (shape (d, k))",
                     wrong=[(w, h) for w, h in wrong if not np.allclose(w, want, rtol=0, atol=1e-12)],
                     hint=f"on {name}: not the centers of one scalar-code layer: which points score block 3's "
                          "maximum against center j's code j, when the tied points carry the mean of their codes?")
    return "right: a tied point writes the mean of its codes; with scalar codes that can be another center's code"


# ----------------------------------------------------------------------------- 05.4
def _leak_cases():
    """(name, X, C0, gamma) for 05.4: the notebook's toy example and three draws it does not show."""
    X, C0 = toy_data(19)
    out = [("the toy example at gamma = 10", X, C0, 10.0)]
    for k, d, n_per, seed, gamma in ((4, 3, 20, 1, 6.0), (6, 2, 10, 3, 8.0), (8, 2, 10, 4, 9.0)):
        Xg, Cg = gaussian_blobs(k, d, n_per, rng=seed)[:2]
        out.append((f"gaussian blobs (k = {k}, d = {d}) at gamma = {gamma:g}", Xg, Cg, gamma))
    return out


@exercise("05.4", "The leak at finite gamma", kind="code", difficulty=2, minutes=15,
          objective="measure how much more a binary decoder leaks than a one-hot one at the same gamma",
          checks="a function (X, C0, gamma) -> the ratio of the largest center errors after one layer (binary / "
                 "one-hot without the flag, block 3 at gamma, block 1 exact) on the toy example at gamma = 10 and "
                 "three gaussian-blob draws at gamma = 6, 8, 9 (relative tolerance 1e-6)")
def _c4(answer):
    for name, X, C0, gamma in _leak_cases():
        want = leak_ratio(X, C0, gamma)
        got = as_float(call_answer(answer, X.copy(), C0.copy(), gamma), f"the ratio on {name} (a number)")
        expect(got > 0, f"on {name}: errors are positive, so the ratio is too")
        expect_value(got, want, rtol=1e-6, what=f"the ratio on {name}", wrong=_leak_variants(X, C0, gamma),
                     hint=f"on {name}: compare max |C - C_Lloyd| after one layer, both circuits with gamma_update="
                          "gamma and block 1 exact")
    X, C0 = toy_data(19)
    return f"right: {leak_ratio(X, C0, 10.0):.4g} on the toy example at gamma = 10, of the order of exp(10) = " \
           f"{np.exp(10):.3g}"


# ----------------------------------------------------------------------------- 05.5
PROOF_K = 8  # 05.5's number of clusters: m = 3 code rows, delta = code_shift(3) = 1/4


def other_center_score():
    """The highest block-3 score of another center's token against center j's query, over j and l != j, for
    k = PROOF_K in kmt_ref's binary circuit with the shift (the scores of center tokens do not depend on the data)."""
    X, C0 = gaussian_blobs(PROOF_K, 2, 5, rng=0)[:2]
    S = binary_transformer(X, C0, 1, record=True).layers[0].scores["3"]  # (n + k, k): keys = points, then centers
    S_centers = S[X.shape[1]:]  # (k, k): key l, query j
    return float(np.max(S_centers[~np.eye(PROOF_K, dtype=bool)]))


@exercise("05.5", "The shift that keeps empty clusters, proved", kind="proof", difficulty=3, minutes=20,
          objective="prove the order of block 3's scores in kmt_ref's in-budget extension (open)",
          checks="a pair (a choice among four statements: which ordering of block 3's scores needs delta < 1/2; "
                 "the highest score of another center's token against center j's query for k = 8, to 4 "
                 "significant digits)",
          parts=("which ordering needs delta < 1/2", "another center's highest score at k = 8"))
def _c5(answer, part):
    expect(isinstance(answer, (tuple, list)) and len(answer) == 2,
           "answer = (letter, score): the letter of the ordering, then a number")
    if part == 1:
        multiple_choice(answer[0], "c", {
            "a": "members against the other points: the shift is in the point's code and in the query, so it "
                 "cancels; no condition on delta",
            "b": "the own token against the other points: -m delta^2 against at most -1, a condition on "
                 "m delta^2, not on delta alone",
            "d": "exact comparisons come from delta being a power of two, whatever its size",
        })
        return "right: a differing bit costs at least (1 - delta)^2, an equal one delta^2: more only for delta < 1/2"
    want = other_center_score()
    m, delta = code_length(PROOF_K), code_shift(code_length(PROOF_K))
    expect_value(answer[1], want, what="the score", wrong=[
        (-m * delta ** 2, "that is center j's own token (-m delta^2); another center's token differs in at least "
                          "one bit"),
        (-1.0, "that is a point of another cluster: its code carries the shift, as the query does; a center's token "
               "b_l does not"),
        (-(1 - delta) ** 2, "each of the m - 1 equal bits costs delta^2 too"),
        (-((1 + delta) ** 2 + (m - 1) * delta ** 2),
         "that bit goes from 1 in b_j to 0 in b_l; the other direction costs less"),
        (-want, "scores are minus squared distances"),
    ], hint=f"not the highest: write -||b_l - b_j - delta 1||^2 bit by bit for m = {m}, delta = 1/4, "
            "and take the l that differs from j in one bit")
    return "right: -((1 - delta)^2 + (m - 1) delta^2), above the other points' -1, below the own token's -m delta^2"


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
