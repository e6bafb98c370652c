"""Exercises of notebook 04: learning the algorithm (the tasks, the loss, a soft Lloyd, learned weights, small d).

Every checked answer is recomputed here with kmt_ref itself, once per session
(:func:`_starts`, :func:`_soft`, :func:`_one_step_loss`, cached; under a
second each), from the same seeded tasks the notebook uses: :func:`ex_tasks`,
32 tasks of the small configuration's distribution (n = 64, k = 3, seed :data:`kmt_ref.learning.EVAL_SEED`) at
d = 4 and d = 8. The soft layers run in float64 here; the notebook's float32
runs agree to 1e-7 (measured: largest per-task difference 8.5e-8 over the
six scales and both d; the one-step losses of 04.4 to 2.5e-6, relative
1.7e-7), so the tolerance of the precision policy (4 significant digits, at
least 5e-5 on these values) is far above the float32 noise and below the
differences a wrong answer makes (0.01 or more, measured on the wrong answers
of tests/exercises/wrong_nb04.py). The exercises call the scale factor of Q
and K "s" (alpha is the normmax exponent of the course, lambda the loss's
inverse temperature).
"""
from __future__ import annotations

import functools

import numpy as np

from ._registry import Wrong, as_array, as_int, exercise, expect, expect_value, multiple_choice

#: the exercises' tasks: (count, n, k) of the small configuration's distribution, at these d
EX_COUNT, EX_N, EX_K, EX_DIMS = 32, 64, 3, (4, 8)
#: restarts of exercise 04.1: the columns 3r .. 3r+2 of a shuffled task, r = 0 .. 7 (r = 0 is C0)
EX_STARTS = 8
#: the scale factors of exercises 04.3 and 04.4
EX_SCALES = (1, 2, 3, 5, 10, 100)
#: a task counts as "stuck" (04.5) when another start ends lower by more than this (log objective)
STUCK = 1e-6


def ex_tasks(d):
    """The 32 tasks of the exercises at dimension d: X (32, d, 64), C0 (32, d, 3)."""
    from ..learning import EVAL_SEED, sample_tasks

    return sample_tasks(np.random.default_rng(EVAL_SEED), EX_COUNT, EX_N, d, EX_K)


def soft_lloyd_params(d, k, s):
    """Theorem 2.1's hand-set weights in the trainable model's layout, Q and K times s, no bias."""
    from ..algorithms.lloyd import lloyd_weights

    W, _ = lloyd_weights(d, k, "linear")
    params = {}
    for name, M in W.items():
        params[name] = s * M if name[0] in "QK" else M
        params["b" + name] = np.zeros(d + k)
    return params


@functools.lru_cache(maxsize=None)
def _starts(d):
    """Lloyd's log objective per task after 20 iterations from each of the 8 starts, (32, 8); column 0 is from C0."""
    from ..learning import lloyd_batch

    X, _ = ex_tasks(d)
    return np.stack([np.log(lloyd_batch(X, X[:, :, EX_K * r:EX_K * (r + 1)], 20)[:, -1])
                     for r in range(EX_STARTS)], axis=1)  # (32, 8)


@functools.lru_cache(maxsize=None)
def _soft(d, s):
    """The s-scaled hand-set layer's log objective per task: t = 0 and after 20 steps, (2, 32)."""
    from ..learning import run_model

    X, C0 = ex_tasks(d)
    obj, _ = run_model(soft_lloyd_params(d, EX_K, s), X, C0, 20, dtype="float64")  # (32, 21)
    return np.log(obj[:, [0, -1]].T)


def _gap(d):
    starts = _starts(d)
    return starts[:, 0] - starts.min(axis=1)  # (32,)


def _soft_gain(d, s=3):
    return _soft(d, s)[1] - _starts(d)[:, 0]  # (32,)


# ----------------------------------------------------------------------------- 04.1
@exercise("04.1", "How often is Lloyd stuck?", kind="code", difficulty=2, minutes=10,
          objective="read the task distribution through Lloyd's local minima: how much a better start would gain, "
                    "at d = 4 and at d = 8",
          checks="the mean over the 32 tasks of log J(Lloyd from C0) - min over 8 starts, at d = 4 and d = 8, "
                 "recomputed with lloyd_batch (to 4 significant digits)")
def _c041(answer):
    a = as_array(answer, (2,), "an array of 2 mean gaps (d = 4, d = 8)")
    want = np.array([_gap(d).mean() for d in EX_DIMS])
    stuck = np.array([(_gap(d) > STUCK).mean() for d in EX_DIMS])
    expect(np.all(a >= 0), "a gap is never negative: the 8 starts include C0 itself (r = 0)")
    expect(np.all(a > 0), "a gap of 0 everywhere: did you compare each start with itself? Take the minimum "
                          "over the 8 starts of each task, then subtract it from the r = 0 value")
    expect_value(a, want, what="the two mean gaps",
                 wrong=[(stuck, "that is the share of tasks where another start ends lower; the exercise asks for "
                                "the mean gap in log objective"),
                        (want[::-1], "right numbers, wrong order: d = 4 first, then d = 8")],
                 hint="not the mean gaps: per task take log J after 20 iterations from each of the 8 starts (natural "
                      "log of the objective, the last column of lloyd_batch), subtract the minimum from the r = 0 "
                      "value, then average")
    return (f"right: Lloyd from a random start leaves {want[0]:.4g} (d = 4) and {want[1]:.4g} (d = 8) on the table, "
            f"in {stuck[0]:.0%} and {stuck[1]:.0%} of the tasks; this is the prize a better algorithm can win")


# ----------------------------------------------------------------------------- 04.2
exercise("04.2", "The loss is an upper bound", kind="proof", difficulty=2, minutes=15,
         objective="prove that the smoothed loss bounds the k-means objective within n log(k)/lambda, and say "
                   "which points make the gap")(None)


# ----------------------------------------------------------------------------- 04.3
@exercise("04.3", "A soft Lloyd: scale Q and K by s", kind="code", difficulty=2, minutes=15,
          objective="put the hand-set weights into the trainable model and see that a finite temperature "
                    "(s^2) can end below Lloyd, while s -> infinity is Lloyd",
          checks="mean final log objective of the s-scaled hand-set layer (Q, K only) on the 32 tasks at d = 8, "
                 "for s = 1, 2, 3, 5, 10, 100, recomputed in float64 (to 4 significant digits)")
def _c043(answer):
    a = as_array(answer, (len(EX_SCALES),), f"an array of {len(EX_SCALES)} mean log objectives (s = 1 ... 100)")
    want = np.array([_soft(8, s)[1].mean() for s in EX_SCALES])
    lloyd_mean, start_mean = _starts(8)[:, 0].mean(), _soft(8, 1)[0].mean()
    if np.any(a > 10):
        raise Wrong("some entries are huge (log objective > 10): did you scale V too? The values V writes must stay "
                    "as they are (V1 writes e_j, V3 the mean of the members, V4 removes the old center)")
    if np.allclose(a, lloyd_mean, atol=1e-3):
        raise Wrong("every s gives Lloyd's result: is s applied? Scale the Q and K of all four blocks")
    expect_value(a, want, what="the six mean log objectives",
                 hint="Q1, K1, ..., Q4, K4 times s, V1 ... V4 as lloyd_weights(8, 3, 'linear') gives them, every "
                      "bias (bQ1 ... bV4) zero, run_model(params, X, C0, 20) on TASKS[8], mean of "
                      "log(objective[:, -1]); at s = 100 the result should be Lloyd's to within 0.001")
    best = EX_SCALES[int(np.argmin(want))]
    above = [str(s) for s, v in zip(EX_SCALES, want) if v > start_mean]
    return (f"right: s = {best} ends lowest, {lloyd_mean - want.min():.3f} below Lloyd ({lloyd_mean:.3f}); "
            f"s = {' and '.join(above)} end above the start ({start_mean:.3f}); s = 100 is Lloyd")


# ----------------------------------------------------------------------------- 04.4
@functools.lru_cache(maxsize=None)
def _one_step_loss(s):
    """Mean over TASKS[8] of the training loss (lambda = 10) after one application of the s layer (float64)."""
    from ..learning import run_model, soft_kmeans_loss

    X, C0 = ex_tasks(8)
    _, centers = run_model(soft_lloyd_params(8, EX_K, s), X, C0, 1, dtype="float64")  # (2, 32, 8, 3)
    return float(soft_kmeans_loss(X, centers[1], 10.0).mean())


@exercise("04.4", "Trained on one step, judged on twenty", kind="code", difficulty=2, minutes=10,
          objective="see that the training loss (one application of the layer) and the evaluation (20 re-embedded "
                    "steps) need not prefer the same layer",
          checks="mean training loss (lambda = 10) after one application of the s layers of 04.3 on the 32 "
                 "tasks at d = 8, recomputed in float64 (to 4 significant digits)")
def _c044(answer):
    from ..learning import soft_kmeans_loss

    a = as_array(answer, (len(EX_SCALES),), f"an array of {len(EX_SCALES)} mean losses (s = 1 ... 100)")
    want = np.array([_one_step_loss(s) for s in EX_SCALES])
    X, C0 = ex_tasks(8)
    if np.allclose(a, soft_kmeans_loss(X, C0, 10.0).mean(), rtol=1e-3):
        raise Wrong("that is the loss at the start C0 for every s: apply the layer once first "
                    "(run_model(params, X, C0, 1) returns the centers after one step in centers[1])")
    if np.all(a < 5):
        raise Wrong("these look like log objectives: the exercise asks for the training loss itself, "
                    "soft_kmeans_loss(X, C1, 10.0), averaged over the tasks")
    expect_value(a, want, what="the six mean losses",
                 hint="for each s, C1 = run_model(params, X, C0, 1)[1][1] (centers after one step, shape "
                      "(32, 8, 3)), then soft_kmeans_loss(X, C1, 10.0).mean() on TASKS[8] (lambda = 10, the "
                      "training value)")
    best = EX_SCALES[int(np.argmin(want))]
    return (f"right: after one step the loss prefers s = {best} ({want.min():.2f}); s = 3, the best after "
            f"20 steps (04.3), has a one-step loss of {want[EX_SCALES.index(3)]:.2f}")


# ----------------------------------------------------------------------------- 04.5
@exercise("04.5", "Where does the soft layer win?", kind="code", difficulty=2, minutes=10,
          objective="locate a gain over Lloyd: on the tasks where Lloyd is stuck in a worse local minimum",
          checks="mean of log J(soft, s = 3; 04.3) - log J(Lloyd) over the stuck tasks and over the others "
                 "at d = 8, recomputed (to 4 significant digits)")
def _c045(answer):
    a = as_array(answer, (2,), "an array of 2 mean differences (stuck tasks, other tasks)")
    g, stuck = _soft_gain(8), _gap(8) > STUCK
    want = np.array([g[stuck].mean(), g[~stuck].mean()])
    expect_value(a, want, what="the two mean differences",
                 wrong=[(-want, "sign: the difference is log J(soft) - log J(Lloyd), negative where the soft layer "
                                "ends lower"),
                        (want[::-1], "order: the stuck tasks first, then the others"),
                        ([g.mean(), g.mean()], "both entries are the mean over all 32 tasks: split them with the "
                                               "stuck mask of 04.1 (gap > 1e-6)")],
                 hint="stuck = (gap of 04.1 at d = 8) > 1e-6; difference per task = log J after 20 steps of the "
                      "s = 3 layer minus Lloyd's from C0; average it over the stuck tasks and over the others")
    return (f"right: {want[0]:+.4g} on the {stuck.sum()} stuck tasks, {want[1]:+.4g} on the other "
            f"{(~stuck).sum()}: the whole gain is where Lloyd is stuck")


# ----------------------------------------------------------------------------- 04.6
@functools.lru_cache(maxsize=1)
def _learned_scales():
    """(s_b^2 for blocks b = 1, 2 of the committed paper model (2,), its d_emb): s_b^2 the mean diagonal of the
    data block of Q_b^T K_b."""
    from ..learning import MODELS_DIR, load_checkpoint
    p = load_checkpoint(MODELS_DIR / "paper.npz", d=32, k=10).params
    diag = np.array([np.mean(np.diag((p["Q" + b].T @ p["K" + b])[:32, :32])) for b in "12"])
    return diag, p["Q1"].shape[0]


def learned_gammas():
    """The inverse temperatures gamma_b = s_b^2 / sqrt(d_emb) equivalent to blocks 1 and 2 of the paper model, (2,)."""
    diag, d_emb = _learned_scales()
    return diag / np.sqrt(d_emb)


@exercise("04.6", "The learned temperature", kind="code", difficulty=1, minutes=5,
          objective="read a learned weight matrix as a hand-set one at a finite temperature",
          checks="the inverse temperature gamma_b = s_b^2 / sqrt(d_emb) equivalent to blocks b = 1, 2 of the "
                 "committed paper model (s_b^2 the mean diagonal of the data block of Q_b^T K_b), to 4 "
                 "significant digits")
def _c046(answer):
    a = as_array(answer, (2,), "an array of 2 equivalent gammas (block 1, block 2)")
    (diag, d_emb), want = _learned_scales(), learned_gammas()
    expect_value(a, want, what="the two equivalent gammas",
                 wrong=[(np.sqrt(diag), "that is the equivalent scale s of Q and K, not the inverse temperature "
                                        "of the score: how does the trained model scale its Euclidean scores?"),
                        (diag, "that is s^2, the scale of the bilinear part; the trained model divides its "
                               "scores by something before the softmax"),
                        (diag / d_emb, "the trained model divides its scores by sqrt(d_emb), not by d_emb")],
                 hint="M = Q_b.T @ K_b (42 x 42) of paper.params; s_b^2 = the mean of the diagonal of its data block "
                      "M[:32, :32]; the model's score is -||Q z - K z'||^2 / sqrt(d_emb)")
    return (f"right: the learned blocks 1 and 2 act like gamma = {want[0]:.4g} and {want[1]:.4g}: a finite "
            "temperature, not the hardmax limit of Theorem 2.1")


# ----------------------------------------------------------------------------- 04.7
exercise("04.7", "The d-only ablation", kind="concept", difficulty=2, minutes=10,
         objective="explain from the layer equations why the layer needs the one-hot scratch rows to do Lloyd's "
                   "assignment step")(None)


# ----------------------------------------------------------------------------- 04.8
@exercise("04.8", "Small d: a smaller prize", kind="explore", difficulty=3, minutes=15,
          objective="explain with measurements why a quick training run gains less over Lloyd at d = 4 than at "
                    "d = 8: the prize for beating Lloyd, whether a winning layer exists, and what the run collects",
          checks="mean of log J(soft, s = 3) - log J(Lloyd) on the 32 tasks at d = 4 and d = 8, recomputed "
                 "(to 4 significant digits); the conclusion is graded by reading")
def _c048(answer):
    a = as_array(answer, (2,), "an array of 2 mean differences (d = 4, d = 8)")
    want = np.array([_soft_gain(d).mean() for d in EX_DIMS])
    expect_value(a, want, what="the two mean differences",
                 wrong=[(want[::-1], "order: d = 4 first, then d = 8"),
                        (-want, "sign: log J(soft) - log J(Lloyd), negative where the soft layer ends lower")],
                 hint="the s = 3 layer of 04.3 built for d = 4 (lloyd_weights(4, 3, 'linear')), run on TASKS[4] "
                      "for 20 steps; per task log J minus Lloyd's from C0; mean over the 32 tasks; then the same "
                      "at d = 8")
    return (f"right: the soft layer gains {-want[0]:.4g} at d = 4 and {-want[1]:.4g} at d = 8; now write down "
            "what that says about the d = 4 run")


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
