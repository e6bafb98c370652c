"""Exercises of notebook 04: learning the algorithm (the tasks, the loss, a soft Lloyd, learned weights, small d).

Every code exercise asks for a function. Its checker draws tasks of the small
configuration's distribution itself, with seeds, sizes and k the notebook never uses
(the notebook's exercises run on ``TASKS``: 32 tasks, n = 64, k = 3, seed
:data:`kmt_ref.learning.EVAL_SEED`), computes the right values with kmt_ref outside
the student's function (cached per session in a private dict;
benchmarks/bench_checkers.py times every check), and compares. Inputs are passed as
copies, so a function that writes into them changes nothing here.

The premises the checks rest on, as measured (tests/exercises/test_nb04.py
re-measures them):

- The soft layers run in float64 here; a student's ``run_model`` runs in
  float32 by default. On the checkers' tasks the two differ by at most 1.5e-7
  in a final log objective and by a relative 1.7e-7 in a one-step loss, far
  inside the tolerances (1e-5 absolute, 1e-5 relative) and far below what a
  wrong answer changes (0.01 or more).
- Every task set of 04.1, 04.5 and 04.8 has stuck tasks (gap > 1e-6) and
  tasks that are not; no gap lies between 1e-9 and 1e-4, so the stuck mask
  does not depend on rounding.
- 04.6: the committed models' weights are float32; the inverse temperatures
  computed in float32 and in float64 agree to a relative 5e-8 (tolerance 1e-6).
- 04.2: a point with squared distances (1, 1.2, 3) has L_lambda - J = 0.05385 at lambda = 5
  (soft_kmeans_loss), against the bound log(3)/5 = 0.2197; for k = 2, one point's lambda * gap is
  u / (1 + e^u) at u = lambda (d_2 - d_1), at most 0.2785 (u = 1.2785), so 100 points at lambda = 10
  reach 2.785 at most, 40 % of n log(2)/lambda = 6.931.
- On the notebook's tasks (what the model answers quote): the mean gap is
  0.1381 at d = 4 and 0.2030 at d = 8; the s = 3 layer ends 0.0517 (d = 4) and
  0.1024 (d = 8) below Lloyd, by 0.3695 on the stuck tasks at d = 8 and
  0.0021 above it on the others.

The exercises call the scale factor of Q and K "s" (alpha is the normmax
exponent of the course, lambda the loss's inverse temperature).
"""
from __future__ import annotations

import numpy as np

from ..learning.loss import batch_loss, soft_kmeans_loss
from ._registry import (Wrong, as_array, as_float, as_int, call_answer, exercise, expect, expect_value,
                        multiple_choice)

# the tasks and references of the checkers, read here by the checkers below and by the tests
from .nb04_tasks import (GAMMA_RTOL, GAP_ATOL, LOSS_RTOL, SOFT_ATOL, EX_DIMS, EX_STARTS, EX_STEPS, STUCK,
                         GAP_CASES, SOFT_CASES, LOSS_CASES, SPLIT_CASES, GAIN_CASES, PARAM_CASES, _CACHE,
                         _LAST, _cached, _describe, _tasks, _copy, _answer_on, soft_lloyd_params,
                         _lloyd_ends, _gaps, _soft_ends, _soft_gain, _after_one_step, _loss)


# ----------------------------------------------------------------------------- 04.1
@exercise("04.1", "How often is Lloyd stuck?", kind="code", difficulty=2, minutes=10,
          objective="read the task distribution through Lloyd's local minima: how much a better start would gain, "
                    "at d = 4 and at d = 8",
          checks="a function (X, C0) -> the gap of each task (log J after 20 Lloyd iterations from C0 minus the "
                 "smallest over the 8 starts X[:, :, k r : k (r + 1)]) equals kmt_ref's on fresh tasks (12 tasks "
                 "with k = 3, n = 64 and 8 with k = 4, n = 40, other seeds than the notebook's), to 1e-9",
          parts=("the gaps at d = 4", "the gaps at d = 8"))
def _c041(answer, part):
    d = EX_DIMS[part - 1]
    for case in GAP_CASES[d]:
        X, C0 = _tasks(case)
        name, ends = _describe(case), _lloyd_ends(case)
        want = ends[:, 0] - ends.min(axis=1)
        out = _answer_on(answer, "04.1", part, case, X, C0)
        got = as_array(out, (case[1],), f"the gaps on {name} (one per task)")
        expect(np.all(got >= -GAP_ATOL), f"on {name}: a gap is never negative, since the 8 starts include C0 "
                                         "itself (r = 0): take the minimum over all 8, then subtract it from C0's")
        expect(np.any(got > STUCK), f"on {name}: every gap is 0, yet some tasks here are stuck: did you compare "
                                    "each start with itself? The gap compares C0's run with the best of the 8")
        J = np.exp(ends)
        expect_value(out, want, atol=GAP_ATOL, what=f"the gaps on {name}",
                     wrong=[(J[:, 0] - J.min(axis=1), "those are gaps of the objective J; the exercise measures "
                                                      "them in log J (natural log)"),
                            (want / np.log(10.0), "those are gaps of log10 J; the exercise measures them in the "
                                                  "natural log")],
                     hint=_gap_hint(got, want, name))
    return f"right on fresh tasks at d = {d}, with k = 3 and k = 4"


def _gap_hint(got, want, name):
    """Which step of 04.1's gaps a wrong answer gets wrong, read off the tasks it gets wrong."""
    off = np.abs(got - want) > 20 * GAP_ATOL
    stuck = want > STUCK
    if np.any(off & ~stuck):
        return (f"not the gaps on {name}: on some tasks where C0's run ends lowest of the 8 your gap is not 0: do "
                "your 8 runs start from the exercise's columns, for this task's k, and run as many iterations?")
    if np.any(off & stuck & (got <= STUCK)):
        return (f"not the gaps on {name}: some tasks where another start ends below C0's run get gap 0: are all "
                "8 starts run, each on its own k columns of the task?")
    return (f"not the gaps on {name}: your gaps are 0 where they should be, and off where a start beats C0: "
            "compare the value each run ends at with the exercise's (after 20 iterations, in log J)")


# ----------------------------------------------------------------------------- 04.2
#: 04.2 (1): a point's squared distances to k = 3 centers, and lambda
GAP_DISTANCES, GAP_LAMBDA = np.array([1.0, 1.2, 3.0]), 5.0
#: 04.2 (2): the largest possible L_lambda - J for n points and k = 2 centers at lambda
MAX_GAP_N, MAX_GAP_LAMBDA = 100, 10.0


def point_gap(dist=GAP_DISTANCES, lam=GAP_LAMBDA):
    """L_lambda - J of one point (at the origin of R^k) whose squared distances to the k centers are ``dist``,
    by soft_kmeans_loss and batch_objective."""
    from ..learning import batch_objective
    X = np.zeros((1, dist.size, 1))
    C = np.diag(np.sqrt(dist))[None]  # (1, k, k): center j on axis j, at squared distance dist_j
    return float(soft_kmeans_loss(X, C, lam)[0] - batch_objective(X, C)[0])


def largest_gap(n=MAX_GAP_N, lam=MAX_GAP_LAMBDA):
    """The largest L_lambda - J over all data sets of n points and k = 2 centers: a point at u = lambda (d_2 - d_1)
    has lambda * gap = u / (1 + e^u), largest where u = 1 + e^-u, and there it equals u - 1; every point can sit at
    that u (on the level set of d_2 - d_1)."""
    u = 1.0
    for _ in range(200):  # a contraction (|derivative| = e^-u < 0.3)
        u = 1.0 + np.exp(-u)
    return n * (u - 1.0) / lam


@exercise("04.2", "The loss is an upper bound", kind="proof", difficulty=2, minutes=15,
          objective="prove that the smoothed loss bounds the k-means objective within n log(k)/lambda, and say "
                    "which points make the gap",
          checks="L_lambda - J of one point with squared distances (1, 1.2, 3) at lambda = 5, and the largest "
                 "possible L_lambda - J for n = 100 points and k = 2 centers at lambda = 10, each to 4 significant "
                 "digits (the proof is graded by reading)",
          parts=("the gap of one point", "the largest gap for n = 100, k = 2"))
def _c042(answer, part):
    expect(isinstance(answer, (tuple, list)) and len(answer) == 2,
           "answer = (gap of the point, largest gap): two numbers")
    if part == 1:
        d, lam = GAP_DISTANCES, GAP_LAMBDA
        p = np.exp(-lam * (d - d.min()))
        p /= p.sum()
        entropy = float(-np.sum(p * np.log(p)))
        q = np.exp(lam * (d - d.max()))
        q /= q.sum()
        expect_value(answer[0], point_gap(), what="the gap of the point", wrong=[
            (np.log(d.size) / lam, "that is the bound log(k)/lambda: it needs H(p) = log k, and this point's p is far "
                                   "from uniform"),
            (entropy / lam, "H(p)/lambda bounds the gap; the gap itself is sum_j p_j d_j - d_min"),
            (float(p @ d), "that is the point's share of L_lambda: subtract its share of J"),
            (float(-np.log(np.sum(np.exp(-lam * d))) / lam - d.min()),
             "that is the log-sum-exp soft minimum minus d_min, which lies below d_min: L_lambda weights the "
             "distances by p"),
            (float(d.mean() - d.min()), "the weights are p = softmax(-lambda d), not uniform"),
            (float(q @ d - d.min()), "the nearest center gets the largest weight: p_j is proportional to "
                                     "exp(-lambda d_j)"),
        ], hint="not that: compute p = softmax(-lambda d) and the point's shares of L_lambda and of J")
        return "right: sum_j p_j d_j - d_min, far below the bound log(3)/5 = 0.2197"
    n, lam = MAX_GAP_N, MAX_GAP_LAMBDA
    want = largest_gap()
    per = want * lam / n  # the largest lambda * gap of one point
    expect_value(answer[1], want, what="the largest gap", wrong=[
        (n * np.log(2) / lam, "that is the bound n log(k)/lambda; it needs H(p) = log 2, equal distances, where the "
                              "gap is 0: maximize one point's gap over the difference of its two distances"),
        (want / n, "that is one point's largest gap; every one of the n points can have it"),
        (per, "that is the largest lambda * gap of one point: divide by lambda and count the points"),
        (n * per, "divide by lambda: the gap of a point is (1/lambda) sum_j p_j u_j"),
        (n * (per + 1) / lam, "that is where the gap is largest, n u*/lambda with u* = lambda (d_2 - d_1); the "
                              "question asks for the gap there"),
    ], hint="not that: with u = lambda (d_2 - d_1) >= 0 one point's gap is (1/lambda) u e^-u / (1 + e^-u); "
            "maximize it over u, then sum over the points")
    return (f"right: {want:.4g}, {100 * want / (n * np.log(2) / lam):.0f} % of the bound n log(2)/lambda: a point "
            "with one competitor gains at most 0.2785/lambda")


# ----------------------------------------------------------------------------- 04.3
@exercise("04.3", "A soft Lloyd: scale Q and K by s", kind="code", difficulty=2, minutes=15,
          objective="put the hand-set weights into the trainable model and see that a finite temperature "
                    "(s^2) can end below Lloyd, while s -> infinity is Lloyd",
          checks="a function (X, C0, s) -> log J after 20 steps of the hand-set layer with Q and K times s, one "
                 "value per task, equals kmt_ref's (run_model in float64) on fresh tasks (d = 5, k = 4, n = 48 at "
                 "s = 2.5 and 4; d = 8, k = 3, n = 64 at s = 100), to 1e-5 (float32 runs pass)")
def _c043(answer):
    for case, s in SOFT_CASES:
        X, C0 = _tasks(case)
        name = f"{_describe(case)}, s = {s:g}"
        want = _soft_ends(case, s)
        out = call_answer(answer, _copy(X), _copy(C0), s)
        got = as_array(out, (case[1],), f"the final log objectives on {name} (one per task)")
        if np.any(got > 10):
            raise Wrong(f"on {name}: some values are huge (log J > 10): did you scale V too, or leave biases "
                        "that are not zero? What V writes must stay as it is (V1 writes e_j, V3 the mean of the "
                        "members, V4 removes the old center), with every bias zero")
        if s < 10 and np.allclose(got, _lloyd_ends(case)[:, 0], atol=1e-3):
            raise Wrong(f"on {name}: that is Lloyd's result: is s applied? Scale the Q and K of all four blocks")
        expect_value(out, want, atol=SOFT_ATOL, what=f"the final log objectives on {name}",
                     wrong=[(_soft_ends(case, s, qk=s * s), "Q and K are each scaled by s (the score, quadratic "
                                                            "in Q and K, then scales by s^2)"),
                            (_soft_ends(case, s, steps=0), "that is the start: apply the layer 20 times"),
                            (np.exp(want), "those are objectives J: the exercise asks for log J (natural log)")],
                     hint=f"not the final log objectives on {name}: compare your layer with Theorem 2.1's "
                          "hand-set one matrix by matrix (which ones s multiplies, what the biases hold), and count "
                          "the steps it runs")
    return "right: your function builds and runs the soft Lloyd layer on tasks it has not seen"


# ----------------------------------------------------------------------------- 04.4
@exercise("04.4", "Trained on one step, judged on twenty", kind="code", difficulty=2, minutes=15,
          objective="see that the training loss (one application of the layer) and the evaluation (20 re-embedded "
                    "steps) need not prefer the same layer",
          checks="a function (X, C0, s, lam) -> the smoothed loss of each task after one application of the "
                 "s layer of 04.3, written without the library's loss, equals kmt_ref's (float64) on fresh tasks "
                 "(d = 6, k = 4, n = 50 at (s, lam) = (2, 10) and (5, 3); d = 8, k = 3, n = 64 at (3, 10)), to a "
                 "relative 1e-5",
          forbid=(soft_kmeans_loss, batch_loss))
def _c044(answer):
    from ..learning import batch_objective

    for case, s, lam in LOSS_CASES:
        X, C0 = _tasks(case)
        name = f"{_describe(case)}, s = {s:g}, lam = {lam:g}"
        C1 = _after_one_step(case, s)
        want = soft_kmeans_loss(X, C1, lam)  # the library's loss, outside the student's function
        out = call_answer(answer, _copy(X), _copy(C0), s, lam)
        as_array(out, (case[1],), f"the one-step losses on {name} (one per task)")
        expect_value(out, want, rtol=LOSS_RTOL, what=f"the one-step losses on {name}",
                     wrong=[(_loss(X, C0, lam), "that is the loss at the start C0: the loss is taken after one "
                                                "application of the layer"),
                            (batch_objective(X, C1), "that is the hard objective J after one step; the loss weights "
                                                     "every center by softmax_j(-lam ||x_i - c_j||^2)"),
                            (np.log(want), "that is the log of the loss; the exercise asks for the loss itself"),
                            (_loss(X, C1, lam, axis=-1), "the softmax runs over the centers, for each point "
                                                         "(each point's weights sum to 1)"),
                            (_loss(X, C1, lam, per_point=True), "the loss sums over the points; it does not "
                                                                "average them"),
                            (_loss(X, C1, 10.0), "lam is an argument: use the lam the function is given")],
                     hint=f"not the one-step losses on {name}: check the centers the loss is taken at (after one "
                          "step of the s layer of 04.3) and the weights of each squared distance (section 3)")
    return "right: one step of the layer, and the training loss written out"


# ----------------------------------------------------------------------------- 04.5
@exercise("04.5", "Where does the soft layer win?", kind="code", difficulty=2, minutes=10,
          objective="locate a gain over Lloyd: on the tasks where Lloyd is stuck in a worse local minimum",
          checks="a function (X, C0, s) -> (mean of log J(s layer) - log J(Lloyd) over the stuck tasks, over the "
                 "others), 20 steps each, stuck = gap of 04.1 > 1e-6, equals kmt_ref's on fresh tasks (16 tasks at "
                 "d = 8, k = 3, n = 64, s = 3; 10 at d = 6, k = 4, n = 48, s = 4), to 1e-5 (float32 runs pass)",
          parts=("the mean over the stuck tasks", "the mean over the other tasks"))
def _c045(answer, part):
    for case, s in SPLIT_CASES:
        X, C0 = _tasks(case)
        name = f"{_describe(case)}, s = {s:g}"
        g, stuck = _soft_gain(case, s), _gaps(case) > STUCK
        want = np.array([g[stuck].mean(), g[~stuck].mean()])
        out = _answer_on(answer, "04.5", part, (case, s), X, C0, s)
        got = as_array(out, (2,), f"the pair (stuck tasks, other tasks) on {name}")
        i = part - 1
        expect_value(got[i], want[i], atol=SOFT_ATOL, what=f"the mean over the {('stuck', 'other')[i]} tasks "
                                                          f"on {name}",
                     wrong=[(-want[i], "sign: the difference is log J(soft) - log J(Lloyd), negative where the soft "
                                       "layer ends lower"),
                            (want[1 - i], "order: the stuck tasks first, then the others"),
                            (g.mean(), "that is the mean over all the tasks: split them with the stuck mask of 04.1 "
                                       "(gap > 1e-6)")],
                     hint=f"not the mean over the {('stuck', 'other')[i]} tasks on {name}: stuck = (gap of 04.1) > "
                          "1e-6; per task, log J after 20 steps of the s layer minus Lloyd's after 20 iterations "
                          "from C0; average it over the stuck tasks and over the others")
    return ("right: the gain is on the stuck tasks" if part == 1 else
            "right: where Lloyd is not stuck, the soft layer ends about where Lloyd does")


# ----------------------------------------------------------------------------- 04.6
def _param_cases():
    """(name, params, d): two random parameter sets (Q_b = K_b = a multiple of P_X plus noise, random biases),
    then the committed paper model and its d-only ablation."""
    from ..learning import MODELS_DIR, init_params, load_checkpoint

    def compute():
        out = []
        for seed, d, k in PARAM_CASES:
            rng = np.random.default_rng(seed)
            p = init_params(d + k, rng, dtype="float64")
            for b, scale in zip("1234", rng.uniform(1.0, 4.0, 4)):
                P = np.zeros((d + k, d + k))
                P[:d, :d] = scale * np.eye(d)
                p["Q" + b] = p["Q" + b] + P + 0.3 * rng.standard_normal((d + k, d + k))
                p["K" + b] = p["K" + b] + P + 0.3 * rng.standard_normal((d + k, d + k))
            out.append((f"a random parameter set with d = {d}, k = {k}", p, d))
        out.append(("the committed paper model (d = 32, k = 10)",
                    load_checkpoint(MODELS_DIR / "paper.npz", d=32, k=10).params, 32))
        out.append(("the committed d-only model (d = 32, no scratch rows)",
                    load_checkpoint(MODELS_DIR / "paper_d_only.npz", d=32, k=10).params, 32))
        return out

    return _cached("param cases", compute)


def _gammas(params, d, product=lambda Q, K: Q.T @ K, rows=None, norm=np.sqrt):
    """gamma_b = s_b^2 / sqrt(d_emb) for blocks 1, 2: s_b^2 the mean diagonal of the data block of Q_b^T K_b. The
    keywords give the wrong variants (another product, the whole diagonal, another normalization)."""
    d_emb = params["Q1"].shape[0]
    return np.array([np.mean(np.diag(product(np.asarray(params["Q" + b], float),
                                             np.asarray(params["K" + b], float)))[:d if rows is None else rows])
                     for b in "12"]) / norm(d_emb)


@exercise("04.6", "The learned temperature", kind="code", difficulty=2, minutes=10,
          objective="read a learned weight matrix as a hand-set one at a finite temperature",
          checks="a function (params, d) -> the inverse temperatures gamma_b = s_b^2 / sqrt(d_emb) of blocks "
                 "b = 1, 2 (s_b^2 the mean diagonal of the data block of Q_b^T K_b) equals kmt_ref's on two random "
                 "parameter sets (d = 5, k = 3 and d = 12, k = 4) and on the committed paper and d-only models, "
                 "to a relative 1e-6",
          parts=("gamma of block 1", "gamma of block 2"))
def _c046(answer, part):
    i = part - 1
    for name, params, d in _param_cases():
        want = _gammas(params, d)
        got = as_array(_answer_on(answer, "04.6", part, name, params, d), (2,),
                       f"the pair (gamma of block 1, gamma of block 2) on {name}")
        d_emb = params["Q1"].shape[0]
        diag = _gammas(params, d, norm=lambda n: 1.0)
        if i == 1 and np.isclose(got[1], want[0], rtol=GAMMA_RTOL) and not np.isclose(want[0], want[1], rtol=1e-3):
            raise Wrong(f"on {name}: that is block 1's gamma again: block 2 uses Q2 and K2")
        expect_value(got[i], want[i], rtol=GAMMA_RTOL, what=f"gamma of block {part} on {name}",
                     wrong=[(np.sqrt(diag[i]), "that is the equivalent scale s of Q and K, not the inverse "
                                               "temperature of the score: how does the trained model scale its "
                                               "Euclidean scores?"),
                            (diag[i], "that is s^2, the scale of the bilinear part; the trained model divides its "
                                      "scores by something before the softmax"),
                            (diag[i] / d_emb, "the trained model divides its scores by sqrt(d_emb), not by d_emb"),
                            (_gammas(params, d, rows=d_emb)[i], "the data block is the first d rows and columns; "
                                                                "the whole diagonal takes in the scratch rows too"),
                            (_gammas(params, d, product=lambda Q, K: Q @ K.T)[i],
                             "the bilinear part of the score is z'^T K^T Q z: its matrix is Q^T K, not Q K^T")],
                     hint=f"not gamma of block {part} on {name}: check the matrix s_b^2 is read from (the "
                          f"bilinear part of block {part}'s score, section 8), which of its entries are averaged, and "
                          "what the trained model divides its scores by")
    return f"right: block {part}'s inverse temperature, read off any parameter set"


# ----------------------------------------------------------------------------- 04.7
@exercise("04.7", "The d-only ablation", kind="concept", difficulty=2, minutes=10,
          objective="explain from the layer equations why the layer needs the one-hot scratch rows to do Lloyd's "
                    "assignment step",
          checks="a choice among four statements about what block 3 of the d-only layer can compute for a center "
                 "(the explanation is graded by reading)")
def _c047(answer):
    multiple_choice(answer, "b", {
        "a": "block 3's softmax runs over the points, for one center at a time: nothing in its scores compares "
             "c_j with the other centers, so it cannot tell whether another center is nearer to a point",
        "c": "blocks 1 and 2 write into the data rows, the only rows there are: a point moved onto its center has "
             "lost its own position, and block 3 then averages copies of c_j, not the members",
        "d": "without scratch rows Q3 and K3 act on the data rows: the scores depend on x_i and c_j, so the "
             "weights vary over the points",
    })
    return ("right: each center takes a kernel-weighted mean of the points near it, with no competition between "
            "the centers (a mean-shift step)")


# ----------------------------------------------------------------------------- 04.8
@exercise("04.8", "Small d: a smaller prize", kind="explore", difficulty=3, minutes=15,
          objective="explain with measurements why a quick training run gains less over Lloyd at d = 4 than at "
                    "d = 8: the prize for beating Lloyd, whether a winning layer exists, and what the run collects",
          checks="a function (X, C0, s) -> the mean over the tasks of log J(s layer) - log J(Lloyd from C0), 20 "
                 "steps each, equals kmt_ref's on fresh tasks at d = 4 and at d = 8 (16 tasks with k = 3, n = 64 "
                 "at s = 3; 8 with k = 4, n = 48 at s = 5), to 1e-5 (float32 runs pass); the conclusion is "
                 "graded by reading",
          parts=("the mean difference at d = 4", "the mean difference at d = 8"))
def _c048(answer, part):
    d = EX_DIMS[part - 1]
    for case, s in GAIN_CASES[d]:
        X, C0 = _tasks(case)
        name = f"{_describe(case)}, s = {s:g}"
        g = _soft_gain(case, s)
        out = _answer_on(answer, "04.8", part, (case, s), X, C0, s)
        expect(not isinstance(out, (list, tuple, np.ndarray)) or np.size(out) == 1,
               f"on {name}: return one number, the mean over the tasks, not one value per task")
        got = as_float(out, f"the mean difference on {name} (one number)")
        expect_value(got, g.mean(), atol=SOFT_ATOL, what=f"the mean difference on {name}",
                     wrong=[(-g.mean(), "sign: log J(soft) - log J(Lloyd), negative where the soft layer ends lower"),
                            (-_gaps(case).mean(), "that is (minus) the mean gap of 04.1, the prize of a better "
                                                  "start; the exercise measures what the s layer collects"),
                            ((_soft_ends(case, s) - _soft_ends(case, s, steps=0)).mean(),
                             "that compares the s layer with the start; compare it with Lloyd after 20 iterations "
                             "from the same C0")],
                     hint=f"not the mean difference on {name}: per task, log J after 20 steps of the s layer of "
                          "04.3 minus log J after 20 Lloyd iterations from C0; then the mean over the tasks")
    return f"right on fresh tasks at d = {d}"


# ============================================================================= self-checks (quiz), one per section
# Each sits right after the section it checks; the notebook prints nothing that gives its answer before it.

# ----------------------------------------------------------------------------- 04.9 (after section 2)
def quiz_n_params(d=8, k=3):
    """The trainable layer's parameter count at d, k (the small configuration's by default), from init_params."""
    from ..learning.model import init_params
    return int(sum(v.size for v in init_params(d + k, np.random.default_rng(0)).values()))


@exercise("04.9", "Self-check: parameters of the small layer", kind="quiz", difficulty=1, minutes=2,
          objective="count the trainable layer's parameters: twelve d_emb x d_emb matrices and their biases",
          checks="the parameter count at d = 8, k = 3 (init_params; exact: an integer)")
def _c(answer):
    want = quiz_n_params()
    got = as_int(answer, "a count (an integer)")
    d_emb = 8 + 3
    if got == 12 * d_emb ** 2:
        raise Wrong("every Q, K and V has a bias vector too (section 2: b_Q, b_K, b_V)")
    if got == 12 * (8 ** 2 + 8):
        raise Wrong("d_emb counts the one-hot rows too: the tokens are [X; Y] and [C; I_k]")
    expect(got == want, "not the count: how many matrices does one layer have, and of what size? (section 2)")
    return "right: 12 (d_emb^2 + d_emb) with d_emb = d + k = 11"


# ----------------------------------------------------------------------------- 04.10 (after section 3)
QUIZ_LAM = 10.0                                               # 04.10's lambda (the authors' l=10.0, their expts.md)
QUIZ_X, QUIZ_C = np.array([[[0.0]]]), np.array([[[0.0, 0.5]]])  # (B, d, n) = (1, 1, 1), (B, d, k) = (1, 1, 2)


def quiz_loss():
    """The smoothed loss of one point at 0 with centers 0 and 0.5 (squared distances 0 and 0.25), lambda = 10."""
    from ..learning.loss import soft_kmeans_loss
    return float(soft_kmeans_loss(QUIZ_X, QUIZ_C, QUIZ_LAM)[0])


@exercise("04.10", "Self-check: the loss of one point", kind="quiz", difficulty=1, minutes=2,
          objective="evaluate the smoothed upper bound by hand and see that it exceeds the k-means objective",
          checks="L for one point at squared distances 0 and 0.25 from two centers, lambda = 10, to 4 significant "
                 "digits")
def _c(answer):
    want = quiz_loss()
    w = np.exp(-QUIZ_LAM * 0.25)
    expect_value(answer, want, what="the loss",
                 wrong=[(0.0, "that is the k-means objective (the minimum); L averages the squared distances with "
                              "softmax weights"),
                        (0.125, "that is the plain mean of the distances (lambda = 0); the weights are "
                                "softmax(-lambda d)"),
                        (0.25 * w, "the weights are normalized: divide by their sum"),
                        (0.5 * np.exp(-QUIZ_LAM * 0.5) / (1 + np.exp(-QUIZ_LAM * 0.5)),
                         "the loss uses squared distances, in the weights and in the sum")],
                 hint="not the loss: L = sum_j softmax_j(-lambda d_j) d_j with d the squared distances (section 3)")
    return "right: 0.25 e^-2.5 / (1 + e^-2.5), a little above the objective 0"


# ----------------------------------------------------------------------------- 04.11 (after section 6)
@exercise("04.11", "Self-check: re-embedding", kind="quiz", difficulty=1, minutes=1,
          objective="say what the trained layer sees at each of the 20 evaluation steps",
          checks="a choice among four statements about the tokens of step t + 1")
def _c(answer):
    multiple_choice(answer, "d", {
        "a": "the evaluation does not feed the layer its own output: it rebuilds the tokens from the centers alone",
        "b": "the y rows are not carried from step to step",
        "c": "then every step would repeat the first one",
    })
    return "right: each step starts from [X; 0] and [C^(t); I_k], as Lloyd's iteration starts from C^(t) alone"
