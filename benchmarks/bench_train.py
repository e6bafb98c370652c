"""Seconds per training step at the paper's setting, and where the time goes.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_train.py [--reps 10] [--embedding onehot|none]
                                                       [--dtype float32] [--no-tune-malloc]

Prints the mean wall time of one optimisation step (batch 32, n = 512, d = 32,
k = 10: sample the tasks, forward + backward through the layer with autograd,
Adam), the validation evaluation amortised over 50 steps, the extrapolated
time of 10,000 steps, and a breakdown: task sampling, the forward pass of each
attention block (block 2, the n x n self-attention over the points, dominates),
the backward pass and the Adam update.

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

from kmt_ref.attention import attention
from kmt_ref.learning import (
    Adam, CONFIGS, tune_malloc, batch_loss, embed_batch, init_params, lloyd_batch, model_layer, sample_tasks,
    validation_score,
)


def _time(f, reps):
    f()
    t = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t) / reps


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
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

    t_step = _time(full_step, args.reps)
    t_sample = _time(lambda: sample_tasks(rng, cfg.batch, cfg.n, cfg.d, cfg.k), args.reps)
    t_fwd = _time(lambda: batch_loss(params, X, C0, cfg, rng), args.reps)
    t_grad = _time(lambda: grad_fn(params, X, C0, cfg, rng), args.reps)
    g = grad_fn(params, X, C0, cfg, rng)[1]
    t_adam = _time(lambda: Adam(params, cfg.lr).step(params, g), args.reps)
    Xv, Cv = sample_tasks(np.random.default_rng(1), cfg.n_val, cfg.n, cfg.d, cfg.k)
    l1 = lloyd_batch(Xv, Cv, 1)[:, 1]
    t_val = _time(lambda: validation_score(params, Xv, Cv, l1, cfg.embedding, cfg.dtype), 1)

    # forward time of each attention block on the paper's tokens
    Xbar, Cbar = embed_batch(X, C0, cfg.embedding)
    layer = model_layer(cfg.d_emb, cfg.dropout)
    blocks = {b.name: b for sub in layer for b in sub.blocks}
    streams = {"1": (Xbar, Cbar), "2": (Xbar, Xbar), "3": (Cbar, Xbar), "4": (Cbar, Cbar)}
    t_blocks = {}
    for name, blk in blocks.items():
        Z, Zk = streams[name]
        t_blocks[name] = _time(lambda: attention(
            Z, Zk, params["Q" + name], params["K" + name], params["V" + name], score=blk.score,
            normalizer=blk.normalizer, gamma=blk.gamma, scale=blk.scale, bQ=params["bQ" + name],
            bK=params["bK" + name], bV=params["bV" + name], dropout=blk.dropout, rng=rng), args.reps)

    per_step = t_step + t_val / cfg.eval_every
    print(f"seconds per training step:         {t_step:.3f}")
    print(f"  + validation (320 tasks) / 50:   {t_val / cfg.eval_every:.3f}   ({t_val:.2f} s per evaluation)")
    print(f"  = {per_step:.3f} s/step -> 10,000 steps: {per_step * 10_000 / 60:.1f} min "
          f"(target 45 min = 0.27 s/step)")
    print("where the time goes (one step):")
    print(f"  task sampling                    {t_sample:.3f}")
    print(f"  forward (layer + loss)           {t_fwd:.3f}")
    for name in sorted(t_blocks):
        kind = {"1": "points -> centers", "2": "points -> points, n x n", "3": "centers -> points",
                "4": "centers -> centers"}[name]
        print(f"    block {name} ({kind:<24}) {t_blocks[name]:.3f}")
    print(f"  backward (value_and_grad - fwd)  {t_grad - t_fwd:.3f}")
    print(f"  Adam update                      {t_adam:.3f}")


if __name__ == "__main__":
    main()
