"""The tasks and reference values of notebook 04's checkers (:mod:`kmt_ref.exercises.nb04`).

Each checker draws its own tasks from the small configuration's distribution, with seeds the notebook does not
use; the reference values are computed once per session and kept in a private dict (no ``lru_cache``: a
function of a checkers' module is forbidden while a student's function runs, and the dict is emptied then).
"""
from __future__ import annotations

import numpy as np

from ._registry import REGISTRY, call_answer

#: the dimensions of 04.1 and 04.8, one part each
EX_DIMS = (4, 8)
#: restarts of 04.1: the columns k r .. k r + k - 1 of a shuffled task, r = 0 .. 7 (r = 0 is C0)
EX_STARTS = 8
#: Lloyd iterations and layer applications of the evaluation
EX_STEPS = 20
#: a task counts as "stuck" (04.1, 04.5) when another start ends lower by more than this (log objective)
STUCK = 1e-6
#: tolerances: log objectives of the soft layer (float32 runs pass), Lloyd's float64 gaps, one-step losses
SOFT_ATOL, GAP_ATOL, LOSS_RTOL, GAMMA_RTOL = 1e-5, 1e-9, 1e-5, 1e-6

#: the checkers' task sets: (seed, count, n, d, k); none is the notebook's (seed EVAL_SEED, 32 tasks, n = 64)
GAP_CASES = {d: ((4101, 12, 64, d, 3), (4102, 8, 40, d, 4)) for d in EX_DIMS}                      # 04.1
SOFT_CASES = (((4301, 8, 48, 5, 4), 2.5), ((4301, 8, 48, 5, 4), 4.0), ((4302, 8, 64, 8, 3), 100.0))  # 04.3
LOSS_CASES = (((4401, 8, 50, 6, 4), 2.0, 10.0), ((4401, 8, 50, 6, 4), 5.0, 3.0),
              ((4402, 8, 64, 8, 3), 3.0, 10.0))                                                      # 04.4
SPLIT_CASES = (((4501, 16, 64, 8, 3), 3.0), ((4502, 10, 48, 6, 4), 4.0))                            # 04.5
GAIN_CASES = {d: (((4801, 16, 64, d, 3), 3.0), ((4802, 8, 48, d, 4), 5.0)) for d in EX_DIMS}        # 04.8
#: 04.6: random parameter sets (seed, d, k), then the committed models
PARAM_CASES = ((4601, 5, 3), (4602, 12, 4))

#: reference values, computed once per session (a private dict: nothing here is an lru_cache a student could call)
_CACHE: dict = {}
#: the output of the function checked last, per (exercise, input): reused by the exercise's later parts
_LAST: dict = {}


def _cached(key, compute):
    if key not in _CACHE:
        _CACHE[key] = compute()
    return _CACHE[key]


def _describe(case):
    seed, count, n, d, k = case
    return f"{count} fresh tasks at d = {d}, k = {k}, n = {n}"


def _tasks(case):
    """X (count, d, n), C0 (count, d, k): tasks of the small configuration's distribution."""
    from ..learning import sample_tasks

    seed, count, n, d, k = case
    return _cached(("tasks", case), lambda: sample_tasks(np.random.default_rng(seed), count, n, d, k))


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {key: _copy(v) for key, v in value.items()}
    return value


def _answer_on(fn, id, part, key, *args):
    """The student's ``fn(*args)`` (through :func:`call_answer`, on copies). Within one run of an exercise's parts
    (part 1, 2, ... in turn, with the same function), the later parts reuse what the earlier ones computed; the
    last part forgets it, so a later check runs the function again."""
    hit = _LAST.get((id, key))
    if part == 1 or hit is None or hit[0] is not fn:
        hit = (fn, call_answer(fn, *map(_copy, args)))
    if part < REGISTRY[id].n_parts:
        _LAST[(id, key)] = hit
    else:
        _LAST.pop((id, key), None)
    return hit[1]


def soft_lloyd_params(d, k, s):
    """Theorem 2.1's hand-set weights in the trainable model's layout, Q and K times s, no bias."""
    from ..algorithms.lloyd import lloyd_weights

    W, _ = lloyd_weights(d, k, "linear")
    params = {}
    for name, M in W.items():
        params[name] = s * M if name[0] in "QK" else M
        params["b" + name] = np.zeros(d + k)
    return params


def _lloyd_ends(case):
    """Lloyd's log objective per task after 20 iterations from each of the 8 starts, (count, 8); column 0: C0."""
    from ..learning import lloyd_batch

    def compute():
        X, _ = _tasks(case)
        k = case[4]
        return np.stack([np.log(lloyd_batch(X, X[:, :, k * r:k * (r + 1)], EX_STEPS)[:, -1])
                         for r in range(EX_STARTS)], axis=1)

    return _cached(("ends", case), compute)


def _gaps(case):
    ends = _lloyd_ends(case)
    return ends[:, 0] - ends.min(axis=1)  # (count,)


def _soft_ends(case, s, steps=EX_STEPS, qk=None, v=1.0):
    """log J per task after ``steps`` applications of the s layer (float64), (count,). ``qk`` replaces the factor
    of Q and K, ``v`` scales V (the wrong variants of 04.3)."""
    from ..learning import run_model

    def compute():
        X, C0 = _tasks(case)
        params = soft_lloyd_params(case[3], case[4], s if qk is None else qk)
        params = {name: v * M if name[0] == "V" else M for name, M in params.items()}
        obj, _ = run_model(params, X, C0, steps, dtype="float64")
        return np.log(obj[:, -1])

    return _cached(("soft", case, s, steps, qk, v), compute)


def _soft_gain(case, s):
    return _soft_ends(case, s) - _lloyd_ends(case)[:, 0]  # (count,)


def _after_one_step(case, s):
    from ..learning import run_model

    def compute():
        X, C0 = _tasks(case)
        return run_model(soft_lloyd_params(case[3], case[4], s), X, C0, 1, dtype="float64")[1][1]

    return _cached(("C1", case, s), compute)  # (count, d, k)


def _loss(X, C, lam, axis=-2, per_point=False):
    """The smoothed loss per task (softmax over the centers, axis -2), written out; the wrong variants normalize
    over the points (axis -1) or average over the points."""
    D = np.sum((X[:, :, None, :] - C[:, :, :, None]) ** 2, axis=1)  # (B, k, n)
    E = np.exp(-lam * (D - D.min(axis=axis, keepdims=True)))
    L = np.sum(E / E.sum(axis=axis, keepdims=True) * D, axis=(-2, -1))
    return L / X.shape[-1] if per_point else L
