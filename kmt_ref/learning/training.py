r"""The training loop of the learning experiment (SPEC §6 "Optimiser"): Adam on the smoothed loss, validated every 50 steps.

:func:`train` draws a fresh batch of 32 tasks per step, takes the gradient of
:func:`~kmt_ref.learning.loss.batch_loss` with autograd and applies
:class:`~kmt_ref.learning.optim.Adam` (lr 0.01); every 50 steps it computes the
validation score (objective after one layer / objective after one Lloyd step,
on 320 fixed tasks, :func:`validation_tasks`, :func:`validation_score`) and lets
:class:`~kmt_ref.learning.optim.Plateau` halve the learning rate on a plateau;
10,000 steps in all (these values: the authors' ``expts.md`` and ``expt-run.sh``,
:data:`kmt_ref.learning.config.SOURCES`). Checkpoints
(:mod:`kmt_ref.learning.checkpoint`) make a run resumable, bit for bit
(``tests/learning/test_checkpoint.py::test_checkpoint_round_trip_and_resume_is_exact``).

**Validation runs without dropout** (:func:`validation_score` calls
:func:`~kmt_ref.learning.evaluation.run_model` with its default
``dropout=0``); dropout acts in training steps only. The authors' validation
keeps it on: their ``train.py`` calls ``model.eval()`` before validating, but
``kmt.scaled_dot_prod`` applies ``F.dropout(attn, p=dropout_p)``, whose
``training`` argument defaults to ``True``, so ``eval()`` does not switch it
off. Their validation scores (and the plateau schedule they drive, and their
choice of the best checkpoint) therefore carry dropout noise that the
project's do not; the project's evaluation likewise runs without dropout
(:mod:`kmt_ref.learning.evaluation`, whose ``dropout`` option measures theirs).

Speed note: on Linux with glibc, large temporary arrays are returned to the OS
after every operation; setting ``MALLOC_MMAP_MAX_=0
MALLOC_TRIM_THRESHOLD_=100000000000`` in the environment keeps them in the heap
and makes a training step faster (``benchmarks/bench_train.py --no-tune-malloc`` measures the
difference). :func:`tune_malloc`
does the same from inside the process; ``python -m kmt_ref train`` calls it.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as onp
from autograd import value_and_grad

from ..blas import blas_limit
from ..progress import format_duration
from ..validation import check_count
from .checkpoint import HISTORY_KEYS, Checkpoint, CheckpointError, load_checkpoint, save_checkpoint
from .config import TrainConfig
from .evaluation import run_model
from .loss import batch_loss, lloyd_batch
from .model import init_params
from .optim import Adam, Plateau
from .tasks import sample_tasks

__all__ = ["TrainingDiverged", "validation_tasks", "validation_score", "train", "tune_malloc"]


class TrainingDiverged(FloatingPointError):
    """The training loss became NaN or infinite."""


def validation_tasks(config, seed):
    """The fixed validation tasks of a run and Lloyd's objective after one step.

    Drawn from ``default_rng([seed, 1])`` (the training stream is
    ``default_rng([seed, 0])``), so they never overlap the training tasks'
    random numbers.
    """
    rng = onp.random.default_rng([seed, 1])
    X, C0 = sample_tasks(rng, config.n_val, config.n, config.d, config.k, config.family, config.scale)
    lloyd1 = lloyd_batch(X, C0, 1)[:, 1]
    return X, C0, lloyd1


def validation_score(params, X, C0, lloyd1, embedding="onehot", dtype="float32"):
    """Mean over tasks of (objective after one layer) / (objective after one Lloyd step), without dropout."""
    obj, _ = run_model(params, X, C0, 1, embedding, dtype)
    return float(onp.mean(obj[:, 1] / lloyd1))


def train(config=None, seed=0, out=None, resume=None, log=print, blas_threads=None):
    r"""Train the one-layer transformer (SPEC §6).

    Parameters
    ----------
    config : TrainConfig, optional
        Default: ``TrainConfig()``, the authors' main setting (their ``expts.md`` and
        ``expt-run.sh``; :data:`kmt_ref.learning.config.SOURCES`).
    seed : int
        Seeds the initial weights, the training tasks, dropout
        (``default_rng([seed, 0])``) and the validation tasks (``[seed, 1]``).
    out : str or Path, optional
        Checkpoint file, rewritten atomically every ``checkpoint_every`` steps
        and at the end; the best validation score so far goes to
        ``<out stem>_best.npz``.
    resume : str or Path, optional
        Continue from this checkpoint: weights, Adam moments, schedule,
        random-generator state, history and seed are restored; ``config``
        must have the checkpoint's d, k and embedding (``config.steps`` may
        extend the run).
    log : callable
        Receives one progress line per evaluation.
    blas_threads : int >= 1, optional
        BLAS threads of the training loop (:func:`kmt_ref.blas.blas_limit`;
        default: one, unless ``OPENBLAS_NUM_THREADS`` or another of
        :data:`kmt_ref.blas.USER_VARIABLES` is set, whose count then stands).
        Measured once, not tested: in float32 (the committed models'
        arithmetic) a 6-step run at n = 512, d = 32, k = 10 gave the same
        weights bit for bit at one and two threads (OpenBLAS, SkylakeX
        kernel); in float64 they differed by 1e-14 relative.

    Returns
    -------
    Checkpoint
        The final parameters, configuration, seed, step and history.

    Raises
    ------
    TrainingDiverged
        The loss became NaN or infinite; the message names the step and the
        last good checkpoint.
    """
    config = (config or TrainConfig()).validate()
    check_count(seed, "seed")
    limit = blas_limit(blas_threads, "blas_threads")
    adam_state = None
    if resume is not None:
        prev, adam_state = load_checkpoint(resume, d=config.d, k=config.k, with_adam=True)
        if prev.config.embedding != config.embedding:
            raise CheckpointError(
                f"checkpoint {str(resume)!r} has embedding={prev.config.embedding!r}, "
                f"but embedding={config.embedding!r} was requested"
            )
        if config.steps < prev.step:
            raise ValueError(f"steps={config.steps} should be >= the checkpoint's step {prev.step} to resume")
        seed = prev.seed
    dtype = config.dtype
    rng = onp.random.default_rng([seed, 0])
    if resume is None:
        params = init_params(config.d_emb, rng, dtype)
        step0, history, sched, lr, best = 0, {key: [] for key in HISTORY_KEYS}, Plateau(config.lr_decay, config.patience), config.lr, math.inf
    else:
        params = {key: v.astype(dtype) for key, v in prev.params.items()}
        step0 = prev.step
        history = {key: list(v) for key, v in prev.history.items()}
        st = prev.state
        rng.bit_generator.state = st["rng"]
        sched = Plateau(config.lr_decay, config.patience)
        sched.best, sched.bad = st["sched_best"], st["sched_bad"]
        lr, best = st["lr"], st["best"]
    adam = Adam(params, lr)
    if adam_state is not None:
        adam.m, adam.v = adam_state
        adam.t = prev.state["adam_t"]
    Xv, Cv, lloyd1 = validation_tasks(config, seed)
    Xv, Cv = Xv.astype(dtype), Cv.astype(dtype)
    grad_fn = value_and_grad(batch_loss)
    out = Path(out) if out is not None else None
    best_path = out.with_name(out.stem + "_best.npz") if out is not None else None
    last_good = str(resume) if resume is not None else None
    elapsed0 = history["elapsed"][-1] if history["elapsed"] else 0.0
    t_start = time.perf_counter() - elapsed0
    losses = []

    def snapshot(step):
        state = {"rng": rng.bit_generator.state, "sched_best": sched.best, "sched_bad": sched.bad,
                 "lr": adam.lr, "best": best, "adam_t": adam.t}
        return Checkpoint(params=params, config=config, seed=seed, step=step,
                          history={key: onp.array(v, dtype=float) for key, v in history.items()}, state=state)

    with limit:  # thousands of small products per step (docs/PERFORMANCE.md, "BLAS threads")
        for step in range(step0, config.steps + 1):
            if step % config.eval_every == 0 or step == config.steps:
                if not (history["step"] and history["step"][-1] == step):
                    val = validation_score(params, Xv, Cv, lloyd1, config.embedding, dtype)
                    if step > 0:
                        adam.lr = sched.step(val, adam.lr)
                    elapsed = time.perf_counter() - t_start
                    losses_done = bool(losses)
                    mean_loss = float(onp.mean(losses)) if losses else float("nan")
                    losses = []
                    for key, v in zip(HISTORY_KEYS, (step, mean_loss, val, adam.lr, elapsed)):
                        history[key].append(v)
                    done = step - step0
                    eta = (elapsed - elapsed0) / done * (config.steps - step) if done else float("nan")
                    loss_txt = f"{mean_loss:10.4f}" if losses_done else f"{'-':>10}"
                    log(f"step {step:>6}/{config.steps}  loss {loss_txt}  val {val:.4f}  "
                        f"lr {adam.lr:.3g}  elapsed {format_duration(elapsed)}  eta {format_duration(eta)}")
                    if out is not None and val < best and step > 0:
                        best = val
                        save_checkpoint(best_path, snapshot(step))
            if out is not None and step > step0 and (step % config.checkpoint_every == 0 or step == config.steps):
                save_checkpoint(out, snapshot(step), adam)
                last_good = str(out)
            if step == config.steps:
                break
            X, C0 = sample_tasks(rng, config.batch, config.n, config.d, config.k, config.family, config.scale)
            loss, grads = grad_fn(params, X.astype(dtype), C0.astype(dtype), config, rng)
            if not onp.isfinite(loss):
                raise TrainingDiverged(
                    f"training loss is {loss} at step {step + 1}; stopped. Last good checkpoint: "
                    f"{last_good or 'none written yet'}"
                )
            losses.append(float(loss))
            params = adam.step(params, grads)
    return snapshot(config.steps)


def tune_malloc():
    """Keep large temporaries in the heap (glibc only); return True if applied.

    Notes
    -----
    A training step allocates and frees many (B, n, n) arrays. By default glibc
    serves each from a fresh ``mmap`` and returns it to the OS when freed, and
    the page faults cost about 40% of a step. ``mallopt(M_MMAP_MAX, 0)`` and a
    large ``M_TRIM_THRESHOLD`` (what the environment variables
    ``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=...`` do at start-up) keep the
    memory in the process instead. Results are unchanged; only speed differs.
    Does nothing (returns False) where the C library is not glibc.
    """
    import ctypes
    import ctypes.util
    import sys

    name = ctypes.util.find_library("c")
    if not name or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's malloc.h
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, 2**31 - 1))
