"""The self-checks of notebook 02 (02.9 to 02.11), one right after the section it checks.

Imported at the end of :mod:`kmt_ref.exercises.nb02`, so that they register after its exercises.
"""
from __future__ import annotations

import numpy as np

from ..algorithms.dot_product import dot_product_weights
from ..algorithms.soft import soft_kmeans
from ._registry import Wrong, as_array, exercise, expect, expect_value

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
