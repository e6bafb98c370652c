"""Seconds per training step at the paper's setting, and where the time goes.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_train.py [--reps 7] [--embedding onehot|none]
                                                            [--dtype float32] [--no-tune-malloc]
                                                            [--save FILE.csv]

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

``--save FILE.csv`` appends the run's results to a CSV, one row per run, with the
machine (CPU model, BLAS and its kernel, NumPy), the UTC date and the 1-minute load
average at the start (columns: :mod:`kmt_ref.bench_reports`, whose ``train_table``
makes the table of docs/PERFORMANCE.md from the runs committed in
kmt_ref/datasets/bench_train.csv).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
from autograd import value_and_grad

try:
    from threadpoolctl import threadpool_info
except ImportError:  # installed with scikit-learn; without it the BLAS columns of --save say "?"
    threadpool_info = None

import kmt_ref.core.blocks as blocks_module
from kmt_ref.bench_reports import TRAIN_COLUMNS, append_rows, environment
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
    ap.add_argument("--save", metavar="FILE.csv",
                    help="append the results to this CSV (created with its header if new), one row per run")
    args = ap.parse_args(argv)
    blas_info = threadpool_info() if threadpool_info is not None else []
    machine = environment(blas_info)  # the load average at the start
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
    threads = max((p["num_threads"] for p in blas_info if p["user_api"] == "blas"), default=None)
    print(f"# machine: {machine['cpu']} ({machine['cpus']} CPUs), BLAS {machine['blas']}, kernel "
          f"{machine['blas_kernel']}, {threads} thread(s), NumPy {machine['numpy']}; load average (1 min) "
          f"{machine['load1']}")

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
    pairs = float(np.median(np.array(hand) / np.array(plain)))
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
    print(f"  autograd through the plain path: {t_plain:.3f}   hand VJP / plain = {t_step / t_plain:.2f} "
          f"(median of the per-pair ratios {pairs:.2f})")
    print(f"  + validation ({cfg.n_val} tasks) / {cfg.eval_every}:   {t_val / cfg.eval_every:.3f}   "
          f"({t_val:.2f} s per evaluation)")
    print(f"  = {per_step:.3f} s/step -> 10,000 steps: {per_step * 10_000 / 60:.1f} min")
    print("where the time goes (one step):")
    print(f"  task sampling                    {t_sample:.3f}")
    print(f"  forward + backward (value_and_grad) {t_grad:.3f}")
    print(f"  (the forward alone, not traced: the plain path, as validation runs it: {t_fwd:.3f})")
    print(f"  Adam update                      {t_adam:.3f}")
    if args.save:
        row = {**machine, "blas_threads": threads, "batch": cfg.batch, "n": cfg.n, "d": cfg.d, "k": cfg.k,
               "dtype": cfg.dtype, "embedding": cfg.embedding, "malloc_tuned": bool(tuned), "reps": args.reps,
               "hand_over_plain": f"{t_step / t_plain:.4f}", "hand_over_plain_pairs": f"{pairs:.4f}",
               "n_val": cfg.n_val, "eval_every": cfg.eval_every}
        row.update({key: f"{value:.5f}" for key, value in (
            ("step_s", t_step), ("plain_s", t_plain), ("validation_s", t_val), ("per_step_s", per_step),
            ("sample_s", t_sample), ("grad_s", t_grad), ("forward_s", t_fwd), ("adam_s", t_adam))})
        append_rows(args.save, TRAIN_COLUMNS, [row])
        print(f"saved a row to {args.save}")


if __name__ == "__main__":
    main()
