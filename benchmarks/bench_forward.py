"""Forward-pass benchmark: Lloyd and the k-means transformer against a minimal NumPy Lloyd.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_forward.py [--n 100000 --d 16 --k 16 --layers 10 --repeat 7]

Prints, measured in this one run (the machines are shared and noisy, so only
ratios against a baseline measured alongside mean anything):

- time: the median over ``--repeat`` alternating runs (CPU time of this
  process, and wall time) of each contender, as a ratio to the floor, a
  minimal NumPy Lloyd (:func:`minimal_lloyd`: one n x k score matrix
  ``||c||^2 - 2 X^T C``, argmin, ``bincount`` means; no checks, no trace, no
  objective). Contenders: the package's ``lloyd`` (target <= 1.2x), the
  gamma = inf ``kmeans_transformer`` (target <= 2x) and the authors' finite-gamma
  circuit (gamma = 1e4, identity resets, linear block 3: ``center_update="linear"``);
- memory: peak traced allocation (tracemalloc) of each, in units of n (d + k)
  float64s, at three values of n: it must stay flat (target <= 4; no n x n and
  no n x k x d arrays).

Run with one BLAS thread on a shared machine: a threaded BLAS waiting for a
busy core makes every matrix product erratic.
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from kmt_ref import kmeans_transformer, lloyd


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


def timings(funcs, repeat):
    """Median CPU and wall seconds of each function, the functions run in turn ``repeat`` times."""
    cpu = {name: [] for name in funcs}
    wall = {name: [] for name in funcs}
    for _ in range(repeat):
        for name, func in funcs.items():
            c, w = time.process_time(), time.perf_counter()
            func()
            cpu[name].append(time.process_time() - c)
            wall[name].append(time.perf_counter() - w)
    return {name: (float(np.median(cpu[name])), float(np.median(wall[name]))) for name in funcs}


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
    a = ap.parse_args(argv)
    print(f"seed={a.seed} n={a.n} d={a.d} k={a.k} layers={a.layers} repeat={a.repeat}")
    rng = np.random.default_rng(a.seed)
    X = rng.uniform(0, 1, (a.d, a.n))
    C0 = X[:, rng.choice(a.n, a.k, replace=False)]

    ref = lloyd(X, C0, a.layers)
    trf = kmeans_transformer(X, C0, a.layers)
    assert np.array_equal(ref.labels, trf.labels), "transformer labels differ from Lloyd's"
    assert np.array_equal(ref.centers, trf.centers), "transformer centers differ from Lloyd's"
    print(f"check: labels and centers bit-identical at all {a.layers} layers (lloyd, transformer); the floor's "
          f"final centers differ from lloyd's by {np.abs(ref.centers[-1] - minimal_lloyd(X, C0, a.layers)).max():.1e}"
          " (it drops ||x||^2 from its scores, which can move a near tie)")

    funcs = {
        "minimal Lloyd": lambda: minimal_lloyd(X, C0, a.layers),
        "lloyd": lambda: lloyd(X, C0, a.layers),
        "transformer, gamma = inf": lambda: kmeans_transformer(X, C0, a.layers),
        "authors' circuit, 1e4": lambda: kmeans_transformer(X, C0, a.layers, gamma=1e4, center_update="linear"),
    }
    targets = {"lloyd": 1.2, "transformer, gamma = inf": 2.0, "authors' circuit, 1e4": 2.0}
    t = timings(funcs, a.repeat)
    floor_cpu, floor_wall = t["minimal Lloyd"]
    print(f"floor: minimal Lloyd {floor_cpu / a.layers * 1e3:.1f} ms CPU per iteration "
          f"({floor_wall / a.layers * 1e3:.1f} ms wall)")
    for name, (c, w) in t.items():
        target = f"(target <= {targets[name]}x)" if name in targets else ""
        print(f"time   {name:26s} {c * 1e3:8.1f} ms CPU  {c / floor_cpu:5.2f}x   wall {w / floor_wall:5.2f}x  {target}")

    unit = 8 * (a.d + a.k)
    for name, func in funcs.items():
        print(f"memory {name:26s} peak {peak_bytes(func) / (unit * a.n):5.2f} x n (d+k) floats")
    for n in (a.n // 4, a.n // 2, a.n):
        Xs = X[:, :n]
        peak = peak_bytes(lambda: kmeans_transformer(Xs, C0, 2))
        print(f"memory scaling n={n:>7}: transformer peak / (8 n (d+k)) = {peak / (unit * n):5.2f}"
              f"   (one n x n matrix would be {8 * n * n / 1e9:.1f} GB)")


if __name__ == "__main__":
    main()
