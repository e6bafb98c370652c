"""Cost of one-hot against binary codes as k grows (the follow-up, Park et al., arXiv 2610.09760).

    python benchmarks/bench_binary.py [--d 32 --n 1024 --k 6 10 25 32 64 100 250 500 1000 --repeat 7]
                                      [--out kmt_ref/datasets/binary_cost.csv]

For each k and each embedding, measured in this one run (the machine is shared and noisy, so
only the ratios binary / one-hot, measured side by side, mean anything):

- parameters of the trainable model, 12 (d_emb^2 + d_emb), d_emb = d + k or d + ceil(log2 k);
- forward time of the trainable model (one application of the layer, float32, one task of n
  points, random weights: the cost does not depend on their values), best of ``--repeat`` runs,
  one-hot and binary interleaved;
- peak traced allocation (tracemalloc) of that forward;
- forward time of the exact gamma = inf circuit (one layer, float64): Theorem 2.1 with its flag
  against the binary circuit, best of ``--repeat``; both are checked to give the same centers.

The follow-up's Table 1 (d = 32, n = 1024, 32 tasks at once, one laptop GPU) reports at k = 1000 a
forward pass of 193.07 ms (one-hot) against 15.90 ms (binary), 12.14x, a backward pass 9.54x faster and
69.3% less memory, and binary slower at k = 6 (0.88x); this prints the CPU ratio beside theirs.

BLAS runs on one thread unless OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS) is set: on two shared cores a
second BLAS thread made single forwards 2-3x slower or faster at random (measured: one-hot at k = 1000,
5.8 s on one thread, 1.3 s on two, binary 0.56 s and 1.0 s), which no ratio survives.
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads its BLAS

import argparse  # noqa: E402
import csv  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from kmt_ref import binary_transformer, kmeans_transformer  # noqa: E402
from kmt_ref.learning.model import d_emb_of, init_params, model_step  # noqa: E402
from kmt_ref.learning.tasks import sample_tasks  # noqa: E402

from bench_forward import peak_bytes  # noqa: E402  (the same tracemalloc measure; this folder is on sys.path)

GPU_RATIO = 193.0 / 15.9  # the follow-up's one-hot / binary forward time at k = 1000 (its Table 1)


def best_time(func, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, nargs="+", default=[6, 10, 25, 32, 64, 100, 250, 500, 1000])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write the rows as CSV (the cost figure reads them)")
    a = ap.parse_args(argv)
    if min(a.k) < 1 or max(a.k) > a.n:
        raise SystemExit(f"error: --k must lie in 1..--n={a.n}, got {a.k}")
    print(f"seed={a.seed} d={a.d} n={a.n} repeat={a.repeat} OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    head = (f"{'k':>5} {'d_emb 1h/bin':>13} {'params 1h':>10} {'params bin':>10} {'saved':>6} "
            f"{'model 1h ms':>11} {'bin ms':>8} {'ratio':>6} {'peak 1h MB':>10} {'bin MB':>7} "
            f"{'circuit 1h ms':>13} {'bin ms':>7}")
    print(head)
    print("-" * len(head))
    rows = []
    for k in a.k:
        rng = np.random.default_rng([a.seed, k])
        X, C = sample_tasks(rng, 1, a.n, a.d, k)  # (1, d, n), (1, d, k) float32
        X64, C64 = X[0].astype(np.float64), C[0].astype(np.float64)
        res, fwd, circuit = {}, {}, {"onehot": kmeans_transformer, "binary": binary_transformer}
        for emb in ("onehot", "binary"):
            de = d_emb_of(a.d, k, emb)
            params = init_params(de, rng)
            fwd[emb] = (lambda p, e: lambda: model_step(p, X, C, e))(params, emb)
            fwd[emb]()  # warm up
            res[emb] = dict(embedding=emb, k=k, d=a.d, n=a.n, d_emb=de, params=12 * (de * de + de),
                            model_s=np.inf, model_peak_mb=peak_bytes(fwd[emb]) / 2 ** 20, circuit_s=np.inf)
        for _ in range(a.repeat):  # interleaved, so that a change of the machine's load hits both alike
            for emb in ("onehot", "binary"):
                res[emb]["model_s"] = min(res[emb]["model_s"], best_time(fwd[emb], 1))
                res[emb]["circuit_s"] = min(res[emb]["circuit_s"],
                                            best_time(lambda: circuit[emb](X64, C64, 1), 1))
        rows += [res["onehot"], res["binary"]]
        same = np.array_equal(kmeans_transformer(X64, C64, 1).centers, binary_transformer(X64, C64, 1).centers)
        assert same, f"k={k}: the binary circuit's centers differ from the one-hot circuit's"
        o, b = res["onehot"], res["binary"]
        print(f"{k:>5} {o['d_emb']:>6}/{b['d_emb']:<6} {o['params']:>10} {b['params']:>10} "
              f"{1 - b['params'] / o['params']:>6.1%} {1e3 * o['model_s']:>11.1f} {1e3 * b['model_s']:>8.1f} "
              f"{o['model_s'] / b['model_s']:>6.1f} {o['model_peak_mb']:>10.1f} {b['model_peak_mb']:>7.1f} "
              f"{1e3 * o['circuit_s']:>13.1f} {1e3 * b['circuit_s']:>7.1f}", flush=True)
    last = [r for r in rows if r["k"] == max(a.k)]
    ratio = last[0]["model_s"] / last[1]["model_s"]
    print(f"# k={max(a.k)}: one-hot / binary forward time {ratio:.1f}x on this CPU; the follow-up's GPU at "
          f"k=1000: 193 / 15.9 ms = {GPU_RATIO:.1f}x")
    print("# exact circuits: the same centers at every k (checked)")
    if a.out:
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            for r in rows:
                w.writerow({key: (f"{v:.6g}" if isinstance(v, float) else v) for key, v in r.items()})
        print(f"# wrote {a.out}")


if __name__ == "__main__":
    main()
