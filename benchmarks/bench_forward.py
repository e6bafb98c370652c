"""Forward-pass benchmark: Lloyd and the k-means transformer against minimal NumPy steps, at 1 and default BLAS threads.

    python benchmarks/bench_forward.py [--n 100000 --d 16 --k 16 --layers 10 --repeat 7 --threads 1,default]
                                       [--save FILE.csv]

Prints, measured in this one run (the machines are shared and noisy, so only
ratios against a baseline measured alongside mean anything):

- time: the median over ``--repeat`` alternating runs (CPU time of this
  process, and wall time) of each contender, as a ratio to a floor, at each
  BLAS thread count of ``--threads`` (``default``: the BLAS's own; each thread
  count is measured in a process of its own, see below). The floors:
  :func:`minimal_lloyd`, Lloyd as a NumPy user writes it (one n x k score
  matrix ``||c||^2 - 2 X^T C``, argmin, ``bincount`` means; no checks, no
  trace, no objective), and for the finite-gamma circuit also
  :func:`minimal_soft_step`, one soft k-means step as a NumPy user writes it
  (the scores, exp, normalised over the centers, the weighted means).
  Contenders: the package's ``lloyd`` (target <= 1.2x the Lloyd floor), the
  gamma = inf ``kmeans_transformer`` (target <= 2x), each also with its
  trace's objective read (both compute it when it is first read:
  ``kmt_ref.trace.DeferredObjective``), and the authors'
  finite-gamma circuit (gamma = 1e4, identity resets, linear block 3:
  ``center_update="linear"``; target <= 2x too, not met: docs/PERFORMANCE.md,
  "What is left"; the targets: ``kmt_ref.bench_reports.FORWARD_TARGETS``);
- memory: peak traced allocation (tracemalloc) of each, in units of n (d + k)
  float64s, at three values of n: it must stay flat (target <= 4; no n x n and
  no n x k x d arrays).

At more than one thread the CPU time counts the time of every thread; the wall
time is what a user waits. Each thread count runs in a fresh process (this script
with ``--threads`` set to it and the BLAS limited by threadpoolctl from the start):
after a call on several threads OpenBLAS's workers keep spinning for a while, and in
one process their CPU time fell on whatever ran next at one thread (measured: the
one-thread Lloyd floor took 15.7 ms CPU per iteration for 7.8 ms wall, which made
every ratio to it at one thread look twice as good as it is).

The BLAS kernel is the one threadpoolctl reports (its ``architecture``); OpenBLAS picks it for the
CPU, and ``OPENBLAS_CORETYPE=Haswell`` (or ``SkylakeX``, ...) set before the run chooses another
that the CPU can run, so that one machine times several kernels.

``--save FILE.csv`` appends the results to a CSV, one row per (run, thread
setting, contender), with the machine (CPU model, BLAS and its kernel, NumPy), the
run's UTC start (the same in every row of the run) and the 1-minute load average
when each thread setting's process started; the memory figures go in the rows of the
last setting, the scaling ones in rows of their own (columns and format:
:mod:`kmt_ref.bench_reports`, whose ``forward_table`` makes the table of
docs/PERFORMANCE.md from the runs committed in kmt_ref/datasets/bench_forward.csv).
Each setting's process appends its own rows to the same file.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import subprocess
import sys
import time
import tracemalloc

import numpy as np

from kmt_ref import kmeans_transformer, lloyd
from kmt_ref.bench_reports import FORWARD_COLUMNS, FORWARD_TARGETS, MEMORY_SCALING, append_rows, environment

try:
    from threadpoolctl import threadpool_info, threadpool_limits
except ImportError:  # installed with scikit-learn; without it only the thread count set by the environment is measured
    threadpool_info = threadpool_limits = None


def minimal_lloyd(X, C, n_iter):
    """The floor: Lloyd's algorithm as a NumPy user writes it (centers only, empty clusters kept)."""
    k = C.shape[1]
    for _ in range(n_iter):
        scores = np.sum(C * C, axis=0) - 2.0 * (X.T @ C)  # (n, k): ||c||^2 - 2 x.c
        labels = np.argmin(scores, axis=1)
        counts = np.bincount(labels, minlength=k)
        sums = np.stack([np.bincount(labels, weights=row, minlength=k) for row in X])  # (d, k)
        C = np.where(counts > 0, sums / np.maximum(counts, 1), C)
    return C


def minimal_soft_step(X, C, n_iter, gamma):
    """The finite-gamma floor: soft k-means as a NumPy user writes it (the authors' circuit computes these steps).

    Responsibilities ``softmax_j(-gamma ||x_i - c_j||^2)`` (``||x||^2`` dropped:
    softmax is shift invariant per point), then each center the mean of the
    points weighted by them; a center with total weight 0 is kept.
    """
    for _ in range(n_iter):
        S = -gamma * (np.sum(C * C, axis=0) - 2.0 * (X.T @ C))  # (n, k)
        S -= np.max(S, axis=1, keepdims=True)
        W = np.exp(S)
        W /= np.sum(W, axis=1, keepdims=True)  # (n, k) responsibilities
        mass = np.sum(W, axis=0)  # (k,)
        C = np.where(mass > 0, (X @ W) / np.where(mass > 0, mass, 1.0), C)
    return C


def thread_setting(threads):
    """A context that runs the BLAS with ``threads`` threads ("default": its own number, as set by the environment)."""
    if threads == "default" or threadpool_limits is None:
        return contextlib.nullcontext()
    return threadpool_limits(int(threads), user_api="blas")


def blas_threads():
    """The BLAS's thread count now (None if threadpoolctl is not installed)."""
    if threadpool_info is None:
        return None
    return max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"), default=None)


FLOORS = ("minimal Lloyd", "minimal soft step, 1e4")


def timings(funcs, repeat, settings):
    """Median CPU and wall seconds of each function at each thread setting, and the medians of the ratios
    to the floors measured in the same round: ``{(setting, name): (cpu, wall, {floor: (cpu ratio, wall ratio)})}``.

    Each round runs every setting in turn, and in it every function in turn, so that a change of the
    machine's load falls on all of them alike.
    """
    cpu = {(t, name): [] for t in settings for name in funcs}
    wall = {(t, name): [] for t in settings for name in funcs}
    for _ in range(repeat):
        for t in settings:
            with thread_setting(t):
                for name, func in funcs.items():
                    c, w = time.process_time(), time.perf_counter()
                    func()
                    cpu[t, name].append(time.process_time() - c)
                    wall[t, name].append(time.perf_counter() - w)
    out = {}
    for (t, name), cs in cpu.items():
        ratios = {}
        for floor in FLOORS:
            rc = np.array(cs) / np.array(cpu[t, floor])
            rw = np.array(wall[t, name]) / np.array(wall[t, floor])
            ratios[floor] = (float(np.median(rc)), float(np.median(rw)))
        out[t, name] = (float(np.median(cs)), float(np.median(wall[t, name])), ratios)
    return out


def peak_bytes(func):
    tracemalloc.start()
    func()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--layers", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", default="1,default",
                    help="BLAS thread counts, comma-separated, each measured in a process of its own; 'default' is "
                         "the BLAS's own (a count needs threadpoolctl; without it only 'default' is measured)")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory measurements")
    ap.add_argument("--save", metavar="FILE.csv",
                    help="append the results to this CSV (created with its header if new), one row per "
                         "(run, thread setting, contender)")
    ap.add_argument("--run-date", help=argparse.SUPPRESS)  # the run's UTC start, passed to each setting's process
    a = ap.parse_args(argv)
    run_date = a.run_date or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
    env = environment(threadpool_info() if threadpool_info is not None else (), run_date)  # load: at the start
    settings = a.threads.split(",") if threadpool_limits is not None else ["default"]
    if threadpool_limits is None and a.threads != "default":
        print(f"--threads={a.threads!r} needs threadpoolctl, which is not installed: measuring the BLAS's "
              "default thread count only (set OPENBLAS_NUM_THREADS to choose it)")
    if len(settings) > 1:  # one process per thread count (module docstring); the memory figures once, at the end
        for i, setting in enumerate(settings):
            sys.stdout.flush()
            subprocess.run([sys.executable, __file__, "--n", str(a.n), "--d", str(a.d), "--k", str(a.k),
                            "--layers", str(a.layers), "--repeat", str(a.repeat), "--seed", str(a.seed),
                            "--threads", setting, "--run-date", run_date]
                           + (["--save", a.save] if a.save else [])
                           + (["--no-memory"] if i < len(settings) - 1 else []), check=True)
        return
    limit = thread_setting(settings[0])  # threadpoolctl limits at once: the checks below already run at this count
    print(f"seed={a.seed} n={a.n} d={a.d} k={a.k} layers={a.layers} repeat={a.repeat} threads={settings[0]}")
    print(f"machine: {env['cpu']} ({env['cpus']} CPUs), BLAS {env['blas']}, kernel {env['blas_kernel']}, "
          f"NumPy {env['numpy']}; load average (1 min) {env['load1']}; run {run_date}")
    rng = np.random.default_rng(a.seed)
    X = rng.uniform(0, 1, (a.d, a.n))
    C0 = X[:, rng.choice(a.n, a.k, replace=False)]

    ref = lloyd(X, C0, a.layers)
    trf = kmeans_transformer(X, C0, a.layers)
    assert np.array_equal(ref.labels, trf.labels), "transformer labels differ from Lloyd's"
    assert np.array_equal(ref.centers, trf.centers), "transformer centers differ from Lloyd's"
    assert np.array_equal(ref.objective, trf.objective), "transformer objective differs from Lloyd's"
    print(f"check: labels, centers and objective bit-identical at all {a.layers} layers (lloyd, transformer); the floor's "
          f"final centers differ from lloyd's by {np.abs(ref.centers[-1] - minimal_lloyd(X, C0, a.layers)).max():.1e}"
          " (it drops ||x||^2 from its scores, which can move a near tie)")
    soft = kmeans_transformer(X, C0, a.layers, gamma=1e4, center_update="linear").centers[-1]
    print(f"check: the soft-step floor's final centers differ from the authors' circuit's by "
          f"{np.abs(soft - minimal_soft_step(X, C0, a.layers, 1e4)).max():.1e}")

    funcs = {
        "minimal Lloyd": lambda: minimal_lloyd(X, C0, a.layers),
        "minimal soft step, 1e4": lambda: minimal_soft_step(X, C0, a.layers, 1e4),
        "lloyd": lambda: lloyd(X, C0, a.layers),
        "lloyd, objective read": lambda: lloyd(X, C0, a.layers).objective,
        "transformer, gamma = inf": lambda: kmeans_transformer(X, C0, a.layers),
        "transformer, gamma = inf, objective read": lambda: kmeans_transformer(X, C0, a.layers).objective,
        "authors' circuit, 1e4": lambda: kmeans_transformer(X, C0, a.layers, gamma=1e4, center_update="linear"),
    }
    targets = FORWARD_TARGETS  # ratios to the Lloyd floor
    counts = {}
    for setting in settings:
        with thread_setting(setting):
            counts[setting] = blas_threads()
    t = timings(funcs, a.repeat, settings)
    print("time: medians over the rounds; ratios are medians of the per-round ratios to each floor")
    for setting in settings:
        floor_cpu, floor_wall, _ = t[setting, "minimal Lloyd"]
        soft_cpu, soft_wall, _ = t[setting, "minimal soft step, 1e4"]
        print(f"BLAS threads: {counts[setting]} ({setting}); floors: minimal Lloyd "
              f"{floor_cpu / a.layers * 1e3:.1f} ms CPU "
              f"per iteration ({floor_wall / a.layers * 1e3:.1f} ms wall), minimal soft step "
              f"{soft_cpu / a.layers * 1e3:.1f} ms CPU ({soft_wall / a.layers * 1e3:.1f} ms wall)")
        for name in funcs:
            c, w, r = t[setting, name]
            target = f"(target <= {targets[name]}x the Lloyd floor)" if name in targets else ""
            line = (f"  {name:40s} {c * 1e3:8.1f} ms CPU  x Lloyd floor: CPU {r['minimal Lloyd'][0]:5.2f}x "
                    f"wall {r['minimal Lloyd'][1]:5.2f}x")
            if "1e4" in name:
                line += (f"   x soft-step floor: CPU {r['minimal soft step, 1e4'][0]:5.2f}x "
                         f"wall {r['minimal soft step, 1e4'][1]:5.2f}x")
            print(f"{line}  {target}")

    peaks, scaling = {}, []
    if not a.no_memory:
        unit = 8 * (a.d + a.k)
        for name, func in funcs.items():
            peaks[name] = peak_bytes(func) / (unit * a.n)
            print(f"memory {name:40s} peak {peaks[name]:5.2f} x n (d+k) floats")
        for n in (a.n // 4, a.n // 2, a.n):
            Xs = X[:, :n]
            scaling.append((n, peak_bytes(lambda: kmeans_transformer(Xs, C0, 2)) / (unit * n)))
            print(f"memory scaling n={n:>7}: transformer peak / (8 n (d+k)) = {scaling[-1][1]:5.2f}"
                  f"   (one n x n matrix would be {8 * n * n / 1e9:.1f} GB)")
    if a.save:
        sizes = {"n": a.n, "d": a.d, "k": a.k, "layers": a.layers, "repeat": a.repeat}
        rows = []
        for setting in settings:
            for name in funcs:
                c, w, r = t[setting, name]
                rows.append({**env, **sizes, "setting": setting, "blas_threads": counts[setting], "contender": name,
                             "cpu_ms": f"{c * 1e3:.3f}", "wall_ms": f"{w * 1e3:.3f}",
                             "cpu_x_lloyd_floor": f"{r['minimal Lloyd'][0]:.4f}",
                             "wall_x_lloyd_floor": f"{r['minimal Lloyd'][1]:.4f}",
                             "cpu_x_soft_floor": f"{r['minimal soft step, 1e4'][0]:.4f}",
                             "wall_x_soft_floor": f"{r['minimal soft step, 1e4'][1]:.4f}",
                             "peak": f"{peaks[name]:.4f}" if name in peaks else None})
            for n, peak in scaling:
                rows.append({**env, **sizes, "n": n, "layers": 2, "repeat": None, "setting": setting,
                             "blas_threads": counts[setting], "contender": MEMORY_SCALING, "peak": f"{peak:.4f}"})
        append_rows(a.save, FORWARD_COLUMNS, rows)
        print(f"saved {len(rows)} rows to {a.save}")

if __name__ == "__main__":
    main()
