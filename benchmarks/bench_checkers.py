"""How long a student waits for an exercise checker given a right answer, at the BLAS's default thread count and at one.

    python benchmarks/bench_checkers.py [--repeat 3] [--only 01.7,03.2]

A student runs ``check(id, answer)`` in a notebook cell and waits for its verdict. For every checked
exercise of notebooks 01-05 this times ``check(id, answer, quiet=True)`` with the right answer the test
suite checks it with (``RIGHT`` and ``RIGHT_VALUES`` in ``tests/exercises/test_nb0N.py``, ``RIGHT`` in
``test_quizzes.py``; the slowest are notebook 04's, which run the trained model and Lloyd on fresh tasks,
and the bisections of 01.7, 03.2 and 03.5). The first call of each is timed apart ("first"): it also fills
what a checker keeps for the rest of the session (01.7's reference bisections, for example). Then
``--repeat`` rounds, in one process; in each round the BLAS runs at the thread count it started with
("default") and at one thread (``kmt_ref.blas.blas_limit(1)``), the order swapped every round, and the
baseline is timed first.

The baseline: :func:`kmt_ref.lloyd` on the data of ``benchmarks/bench_forward.py`` at its defaults (n =
100,000 uniform points in d = 16, k = 16 of them as the initial centers, seed 0), 10 iterations, at one
BLAS thread. The machines are shared and noisy, so the figures are wall times as ratios to the baseline of
the same round (the median over the rounds); seconds are printed beside them for orientation. A check is
over its goal (:data:`GOALS`, per notebook; docs/PERFORMANCE.md states them) if its first call or its
median at either thread count exceeds it; it is marked, and the last line lists the checks over their goal.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info

from kmt_ref import lloyd
from kmt_ref.blas import blas_limit
from kmt_ref.exercises import EXERCISES, check

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ("01", "02", "03", "04", "05")
#: the goals per notebook, in baselines (docs/PERFORMANCE.md, "Exercise checkers", says what they are in seconds)
GOALS = {"01": 18.0, "02": 18.0, "03": 18.0, "04": 45.0, "05": 18.0}
#: (n, d, k, iterations) of the baseline
BASELINE_SHAPE = (100_000, 16, 16, 10)


def right_answers(notebooks=NOTEBOOKS):
    """({exercise id: the right answer the test suite checks it with}, [checked ids with none there]).

    The answers are ``RIGHT`` and ``RIGHT_VALUES`` of tests/exercises/test_nb0N.py and ``RIGHT`` of
    tests/exercises/test_quizzes.py; a checked exercise with no answer there is listed, not timed.
    """
    answers = {}
    for name in [f"test_nb{nb}" for nb in notebooks] + ["test_quizzes"]:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "tests" / "exercises" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        answers.update(module.RIGHT)
        answers.update(getattr(module, "RIGHT_VALUES", {}))
    checked = sorted((i for i, ex in EXERCISES.items() if ex.checked and i[:2] in notebooks),
                     key=lambda i: (i[:2], int(i[3:])))
    return {i: answers[i] for i in checked if i in answers}, [i for i in checked if i not in answers]


def baseline():
    """The baseline workload: lloyd on BASELINE_SHAPE, on the data bench_forward.py draws at its defaults."""
    n, d, k, iterations = BASELINE_SHAPE
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (d, n))
    C0 = X[:, rng.choice(n, k, replace=False)]
    return lambda: lloyd(X, C0, iterations).centers


def wall(func):
    t0 = time.perf_counter()
    func()
    return time.perf_counter() - t0


def timed_check(id, answer):
    def run():
        if not check(id, answer, quiet=True):
            raise SystemExit(f"error: the right answer to {id} failed its check")
    return run


def blas_text():
    return ", ".join(f"{m['internal_api']} {m.get('version')} ({m.get('architecture')}, {m['num_threads']} threads)"
                     for m in threadpool_info() if m["user_api"] == "blas")


def plural(count, word):
    return f"{count} {word}" + ("" if count == 1 else "s")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="rounds of timing after the first call (default 3)")
    ap.add_argument("--only", default=None, help="comma-separated exercise ids, e.g. 01.7,03.2 (default: all)")
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {a.repeat}")
    if a.only is not None:
        wanted = [i.strip() for i in a.only.split(",") if i.strip()]
        if not wanted:
            ap.error(f"--only names no exercise: {a.only!r}")
    answers, untimed = right_answers()
    if a.only is not None:
        unknown = [i for i in wanted if i not in answers]
        if unknown:
            ap.error(f"--only names no timed exercise: {unknown} (timed: {', '.join(answers)})")
        answers = {i: answers[i] for i in dict.fromkeys(wanted)}
    base = baseline()
    with blas_limit(1):
        base()  # warm up
    print(f"# {sys.version.split()[0]}, NumPy {np.__version__}, BLAS {blas_text()}; load {os.getloadavg()[0]:.2f}; "
          f"baseline: lloyd n, d, k, iterations = {BASELINE_SHAPE}, one thread")
    first = {}
    for id, answer in answers.items():  # the first call of each: what a student meets in a new session
        with blas_limit(1):
            b = wall(base)
        first[id] = (wall(timed_check(id, answer)), b)
    ratios = {id: {"default": [], "one": []} for id in answers}
    seconds = {id: {"default": [], "one": []} for id in answers}
    for r in range(a.repeat):
        with blas_limit(1):
            b = wall(base)
        for setting in (("default", "one") if r % 2 == 0 else ("one", "default")):
            for id, answer in answers.items():
                if setting == "one":
                    with blas_limit(1):
                        t = wall(timed_check(id, answer))
                else:
                    t = wall(timed_check(id, answer))
                ratios[id][setting].append(t / b)
                seconds[id][setting].append(t)
    head = f"{'exercise':<9} {'goal':>5} {'first':>14} {'default threads':>18} {'one thread':>18}"
    print(head + "\n" + "-" * len(head))
    over = []
    for id in answers:
        f_ratio = first[id][0] / first[id][1]
        cells = [f"{f_ratio:6.2f} ({first[id][0]:5.2f} s)"]
        worst = f_ratio
        for setting in ("default", "one"):
            m = statistics.median(ratios[id][setting])
            worst = max(worst, m)
            cells.append(f"{m:6.2f} ({statistics.median(seconds[id][setting]):5.2f} s)")
        goal = GOALS[id[:2]]
        mark = "  over the goal" if worst > goal else ""
        if mark:
            over.append(id)
        print(f"{id:<9} {goal:>5g} {cells[0]:>14} {cells[1]:>18} {cells[2]:>18}{mark}")
    print(f"# {plural(len(answers), 'check')}, {plural(a.repeat, 'round')}; ratios to the baseline of the same round "
          "(median), seconds beside them")
    if untimed and a.only is None:
        print(f"# not timed (no right answer in the tests): {', '.join(untimed)}")
    print("# every check within its goal" if not over else f"# over its goal: {', '.join(over)}")


if __name__ == "__main__":
    main()
