"""Seconds per training step at the paper's setting, and where the time goes.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_train.py [--reps 7] [--embedding onehot|none]
                                                            [--dtype float32] [--no-tune-malloc]

Prints the CPU time of one optimisation step (batch 32, n = 512, d = 32,
k = 10: sample the tasks, forward + backward through the layer, Adam) with the
hand-derived VJP of :mod:`kmt_ref.core.gradients` and, alternating with it in
the same run, with autograd differentiating the plain path
(``kmt_ref.core.blocks.HAND_VJP = False``), as a ratio; then the
validation evaluation amortised over 50 steps, the extrapolated time of
10,000 steps, and a breakdown: task sampling, forward + backward, the Adam
update (and the untraced forward pass, which validation runs).

It applies :func:`kmt_ref.learning.training.tune_malloc` first, as ``python -m kmt_ref
train`` does; run it once more with ``--no-tune-malloc`` to see the effect of
glibc returning every large temporary to the OS (page faults on each new
(32, 512, 512) array).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
from autograd import value_and_grad

import kmt_ref.core.blocks as blocks_module
from kmt_ref.learning import Adam, CONFIGS, tune_malloc, batch_loss, init_params, lloyd_batch, sample_tasks, validation_score


def _time(f, reps):
    """Median CPU seconds of ``reps`` calls (after one warm-up call)."""
    f()
    ts = []
    for _ in range(reps):
        t = time.process_time()
        f()
        ts.append(time.process_time() - t)
    return float(np.median(ts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--embedding", choices=["onehot", "none"], default="onehot")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--no-tune-malloc", action="store_true",
                    help="leave glibc's malloc as it is (to measure what kmt_ref.learning.training.tune_malloc saves)")
    args = ap.parse_args(argv)
    tuned = False if args.no_tune_malloc else tune_malloc()
    cfg = CONFIGS["paper"]
    cfg = type(cfg)(**{**cfg.__dict__, "embedding": args.embedding, "dtype": args.dtype})
    rng = np.random.default_rng(0)
    params = init_params(cfg.d_emb, rng, cfg.dtype)
    X, C0 = sample_tasks(rng, cfg.batch, cfg.n, cfg.d, cfg.k)
    X, C0 = X.astype(cfg.dtype), C0.astype(cfg.dtype)
    grad_fn = value_and_grad(batch_loss)
    adam = Adam(params, cfg.lr)
    env = {v: os.environ.get(v) for v in ("MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS",
                                          "OPENBLAS_NUM_THREADS")}
    print(f"# paper setting: batch {cfg.batch}, n {cfg.n}, d {cfg.d}, k {cfg.k}, d_emb {cfg.d_emb}, "
          f"embedding {cfg.embedding}, {cfg.dtype}, dropout {cfg.dropout}; malloc tuned {tuned}; environment {env}")

    state = {"params": params}

    def full_step():
        Xs, Cs = sample_tasks(rng, cfg.batch, cfg.n, cfg.d, cfg.k)
        loss, g = grad_fn(state["params"], Xs.astype(cfg.dtype), Cs.astype(cfg.dtype), cfg, rng)
        state["params"] = adam.step(state["params"], g)

    def plain_step():  # autograd through the plain path, operation by operation
        blocks_module.HAND_VJP = False
        try:
            full_step()
        finally:
            blocks_module.HAND_VJP = True

    hand, plain = [], []
    full_step(), plain_step()
    for _ in range(args.reps):  # alternating, so that both see the same load
        hand.append(_time(full_step, 1))
        plain.append(_time(plain_step, 1))
    t_step, t_plain = float(np.median(hand)), float(np.median(plain))
    t_sample = _time(lambda: sample_tasks(rng, cfg.batch, cfg.n, cfg.d, cfg.k), args.reps)
    t_fwd = _time(lambda: batch_loss(params, X, C0, cfg, rng), args.reps)
    t_grad = _time(lambda: grad_fn(params, X, C0, cfg, rng), args.reps)
    g = grad_fn(params, X, C0, cfg, rng)[1]
    t_adam = _time(lambda: Adam(params, cfg.lr).step(params, g), args.reps)
    Xv, Cv = sample_tasks(np.random.default_rng(1), cfg.n_val, cfg.n, cfg.d, cfg.k)
    l1 = lloyd_batch(Xv, Cv, 1)[:, 1]
    t_val = _time(lambda: validation_score(params, Xv, Cv, l1, cfg.embedding, cfg.dtype), 1)

    per_step = t_step + t_val / cfg.eval_every
    print(f"CPU seconds per training step:     {t_step:.3f}   (medians of {args.reps} alternating runs)")
    print(f"  autograd through the plain path: {t_plain:.3f}   hand VJP / plain = {t_step / t_plain:.2f}")
    print(f"  + validation (320 tasks) / 50:   {t_val / cfg.eval_every:.3f}   ({t_val:.2f} s per evaluation)")
    print(f"  = {per_step:.3f} s/step -> 10,000 steps: {per_step * 10_000 / 60:.1f} min")
    print("where the time goes (one step):")
    print(f"  task sampling                    {t_sample:.3f}")
    print(f"  forward + backward (value_and_grad) {t_grad:.3f}")
    print(f"  (the forward alone, not traced: the plain path, as validation runs it: {t_fwd:.3f})")
    print(f"  Adam update                      {t_adam:.3f}")


if __name__ == "__main__":
    main()
