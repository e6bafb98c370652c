"""BLAS threads in the loops of small products: the BLAS's default thread count against one thread.

Usage::

    python benchmarks/bench_threads.py [--reps 5] [--load] [--tasks 32] [--only train,evaluate,sweep]

For each workload, in one process, alternating (the order swapped every round,
so that both settings see the same load), it runs the workload with the BLAS at
the thread count it started with ("default") and limited to one thread
(``kmt_ref.blas.blas_limit(1)``, what ``train``, ``evaluate`` and ``sweep``
use), and prints the medians of CPU time (of the whole process: at two threads
it counts both) and wall time at one thread, and the medians of the per-round
ratios default / one thread. Between two runs it sleeps ``--gap`` seconds
(outside the timing): OpenBLAS's workers keep spinning for a while after a
threaded call, and their CPU time would otherwise fall on the next run.

Workloads:

- ``train``: one optimisation step at the paper's setting (batch 32, n = 512,
  d = 32, k = 10, float32, dropout 0.01: sample the tasks, forward + backward,
  Adam), as ``benchmarks/bench_train.py`` times it;
- ``evaluate``: ``kmt_ref.learning.evaluate`` of the committed paper model on
  ``--tasks`` tasks at n = 512 and on ``--tasks-large`` tasks at n = 2048 (T = 20,
  the model and Lloyd);
- ``sweep``: ``kmt_ref.sweep.cell_losses`` of a few cells of the paper's grid
  (Lloyd and the transformer at gamma 1, 10, 100, 10 steps each), from 100 to
  129,154 points.

``--load`` starts a busy loop on one core in a background process (a Python
``while time.time() < end``, ending by itself after ``--load-seconds`` and
killed when the benchmark ends) to reproduce a machine that is doing something
else. The header names the BLAS and its kernel (threadpoolctl), the CPU, the
kernel and the load average.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import subprocess
import sys
import time

import numpy as np
from autograd import value_and_grad
from threadpoolctl import threadpool_info

from kmt_ref.blas import blas_limit
from kmt_ref.learning import Adam, CONFIGS, batch_loss, evaluate, init_params, load_checkpoint, sample_tasks, tune_malloc
from kmt_ref.learning.checkpoint import MODELS_DIR
from kmt_ref.sweep import cell_losses

#: (k, d, points, scale) cells of the paper's grid, small to large
SWEEP_CELLS = ((5, 1, 100, 1), (20, 4, 774, 4), (50, 10, 2154, 10), (50, 10, 16681, 10), (50, 10, 46415, 10),
               (50, 10, 129154, 10))


def blas_info():
    """The BLAS libraries loaded, as threadpoolctl reports them."""
    return [{key: m.get(key) for key in ("internal_api", "version", "architecture", "threading_layer", "num_threads")}
            for m in threadpool_info() if m["user_api"] == "blas"]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        return platform.processor() or "?"


def load_text():
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


@contextlib.contextmanager
def busy_core(seconds):
    """A background process spinning on one core for at most ``seconds``; killed on exit."""
    code = f"import time\nend = time.time() + {float(seconds)}\nwhile time.time() < end:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(1.0)  # let it start
        yield proc
    finally:
        proc.kill()
        proc.wait()


def workloads(args):
    """name -> f(threads): one run of the workload with the BLAS at ``threads`` (None: its default)."""
    out = {}
    only = set(args.only.split(","))
    if "train" in only:
        cfg = CONFIGS["paper"]
        rng = np.random.default_rng(0)
        state = {"params": init_params(cfg.d_emb, rng, cfg.dtype)}
        adam = Adam(state["params"], cfg.lr)
        grad_fn = value_and_grad(batch_loss)

        def step(threads):
            with blas_limit(threads) if threads else contextlib.nullcontext():
                X, C0 = sample_tasks(rng, cfg.batch, cfg.n, cfg.d, cfg.k)
                _, g = grad_fn(state["params"], X.astype(cfg.dtype), C0.astype(cfg.dtype), cfg, rng)
                state["params"] = adam.step(state["params"], g)

        out[f"train: 1 step (batch {cfg.batch}, n {cfg.n}, d {cfg.d}, k {cfg.k})"] = step
    if "evaluate" in only:
        ck = load_checkpoint(MODELS_DIR / "paper.npz")
        for n, tasks in ((512, args.tasks), (2048, args.tasks_large)):
            def ev(threads, n=n, tasks=tasks):
                with blas_limit(threads) if threads else contextlib.nullcontext():
                    evaluate(ck.params, ck.config.embedding, n_tasks=tasks, n=n, blas_threads=threads or BLAS_DEFAULT)
            out[f"evaluate: {tasks} tasks, n {n}, T 20"] = ev
    if "sweep" in only:
        for k, d, p, s in SWEEP_CELLS:
            def cell(threads, k=k, d=d, p=p, s=s):
                with blas_limit(threads) if threads else contextlib.nullcontext():
                    cell_losses(k, d, p, s)
            out[f"sweep cell k {k}, d {d}, points {p}"] = cell
    return out


def measure(f, threads):
    c, w = time.process_time(), time.perf_counter()
    f(threads)
    return time.process_time() - c, time.perf_counter() - w


def run(args):
    tasks = workloads(args)
    width = max(len(name) for name in tasks)
    print(f"{'workload':<{width}}  {'1 thread: CPU s':>15} {'wall s':>8}   {'default / 1 thread: CPU':>23} {'wall':>6}",
          flush=True)
    for name, f in tasks.items():
        f(None), time.sleep(args.gap), f(1), time.sleep(args.gap)  # warm-up at both settings
        one, ratios = [], []
        for r in range(args.reps):
            order = (None, 1) if r % 2 == 0 else (1, None)
            got = {}
            for threads in order:
                got[threads] = measure(f, threads)
                time.sleep(args.gap)
            one.append(got[1])
            ratios.append((got[None][0] / got[1][0], got[None][1] / got[1][1]))
        one, ratios = np.median(one, axis=0), np.median(ratios, axis=0)
        print(f"{name:<{width}}  {one[0]:15.3f} {one[1]:8.3f}   {ratios[0]:23.2f} {ratios[1]:6.2f}", flush=True)


#: the BLAS's thread count when the process started (what "default" runs at)
BLAS_DEFAULT = None


def main(argv=None):
    global BLAS_DEFAULT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5, help="alternating rounds per workload (default 5)")
    ap.add_argument("--tasks", type=int, default=32, help="evaluation tasks at n = 512 (default 32)")
    ap.add_argument("--tasks-large", dest="tasks_large", type=int, default=4,
                    help="evaluation tasks at n = 2048 (default 4)")
    ap.add_argument("--only", default="train,evaluate,sweep", help="comma-separated workloads (default: all)")
    ap.add_argument("--gap", type=float, default=0.5, help="seconds of sleep between two runs (default 0.5)")
    ap.add_argument("--load", action="store_true", help="a busy loop on one core in the background")
    ap.add_argument("--load-seconds", dest="load_seconds", type=float, default=1800,
                    help="the busy loop ends by itself after this many seconds (default 1800)")
    args = ap.parse_args(argv)
    tuned = tune_malloc()
    info = blas_info()
    BLAS_DEFAULT = max((m["num_threads"] for m in info), default=1)
    env = {v: os.environ[v] for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS") if v in os.environ}
    print(f"# {datetime.datetime.now().isoformat(timespec='seconds')}; {os.cpu_count()} CPUs ({cpu_model()}); "
          f"Linux {platform.release()}; Python {platform.python_version()}, NumPy {np.__version__}")
    for m in info:
        print(f"# BLAS: {m['internal_api']} {m['version']}, kernel {m['architecture']}, {m['threading_layer']}, "
              f"default {m['num_threads']} threads")
    print(f"# environment {env or 'sets no thread count'}; malloc tuned {tuned}; {args.reps} alternating rounds, "
          f"medians; background busy loop: {'on one core' if args.load else 'none'}")
    print(f"# load average at start: {load_text()}", flush=True)
    with busy_core(args.load_seconds) if args.load else contextlib.nullcontext():
        run(args)
        print(f"# load average at end: {load_text()}")


if __name__ == "__main__":
    main()
