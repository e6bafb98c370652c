"""Forward-pass benchmark: the gamma = inf k-means transformer against Lloyd.

    python benchmarks/bench_forward.py [--n 100000 --d 16 --k 16 --layers 10 --repeat 5]

Prints, measured in this one run (the machines are shared and noisy, so only
ratios against a baseline measured alongside mean anything):

- time: best of ``--repeat`` runs of ``kmeans_transformer`` (gamma = inf) over
  the best of the same number of runs of the package's vectorized ``lloyd``,
  on the same data; target ratio <= 1.5;
- memory: peak traced allocation (tracemalloc) of each, and the transformer's
  peak divided by n (d + k) float64s at three values of n: it must stay flat
  (O(n (d + k)), no n x n and no n x k x d arrays).
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from kmt_ref import kmeans_transformer, lloyd


def best_time(func, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return min(times)


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
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    print(f"seed={a.seed} n={a.n} d={a.d} k={a.k} layers={a.layers} repeat={a.repeat}")
    rng = np.random.default_rng(a.seed)
    X = rng.uniform(0, 1, (a.d, a.n))
    C0 = X[:, rng.choice(a.n, a.k, replace=False)]

    ref = lloyd(X, C0, a.layers)
    trf = kmeans_transformer(X, C0, a.layers)
    assert np.array_equal(ref.labels, trf.labels), "transformer labels differ from Lloyd's"
    print(f"check: labels equal at all {a.layers} layers; max |center diff| = "
          f"{np.abs(ref.centers - trf.centers).max():.2e}")

    t_lloyd = best_time(lambda: lloyd(X, C0, a.layers), a.repeat)
    t_trf = best_time(lambda: kmeans_transformer(X, C0, a.layers), a.repeat)
    print(f"time   lloyd       {t_lloyd * 1e3:8.1f} ms  (baseline, {t_lloyd / a.layers * 1e3:.1f} ms/iteration)")
    print(f"time   transformer {t_trf * 1e3:8.1f} ms  ratio {t_trf / t_lloyd:.2f}x  (target <= 1.5x)")

    m_lloyd = peak_bytes(lambda: lloyd(X, C0, a.layers))
    m_trf = peak_bytes(lambda: kmeans_transformer(X, C0, a.layers))
    print(f"memory lloyd       {m_lloyd / 1e6:8.1f} MB peak")
    print(f"memory transformer {m_trf / 1e6:8.1f} MB peak  ratio {m_trf / m_lloyd:.2f}x")
    unit = 8 * (a.d + a.k)
    for n in (a.n // 4, a.n // 2, a.n):
        Xs = X[:, :n]
        peak = peak_bytes(lambda: kmeans_transformer(Xs, C0, 2))
        print(f"memory scaling n={n:>7}: peak / (8 n (d+k)) = {peak / (unit * n):5.2f}"
              f"   (one n x n matrix would be {8 * n * n / 1e9:.1f} GB)")


if __name__ == "__main__":
    main()
