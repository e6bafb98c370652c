"""The benchmark tables of docs/PERFORMANCE.md, computed from the committed benchmark results, and their format.

``benchmarks/bench_forward.py --save FILE`` and ``benchmarks/bench_train.py --save FILE`` append their
measurements to a CSV (:func:`append_rows`, columns :data:`FORWARD_COLUMNS` and :data:`TRAIN_COLUMNS`);
the runs committed in ``kmt_ref/datasets/bench_forward.csv`` and ``kmt_ref/datasets/bench_train.csv``
are what the tables show, nothing is re-run:

- ``forward`` (:func:`forward_table`): per contender of the forward benchmark and per BLAS kernel
  (OpenBLAS picks one for the CPU; ``OPENBLAS_CORETYPE`` chooses another), the range over the
  committed runs of its time as a ratio to the floors, at one BLAS thread and at the BLAS's default
  count, its target, its peak memory, and a caption naming the machine, the dates, the number of runs
  of each kernel and the load average;
- ``train`` (:func:`train_table`): the seconds of one training step at the authors' main setting (their expts.md) and where
  they go, as ranges over the committed runs.

:data:`BENCH_REPORTS` maps each name to its function (the names of the ``<!-- report NAME -->`` markers
of docs/PERFORMANCE.md). A results file that is not what the benchmarks write (another header, a
missing or unparsable value, an unknown contender, a run without one of its thread settings, runs of
different sizes) is a ``ValueError`` naming the file and the line: a table is never made from part of
a file. Only the standard library and NumPy are imported.
"""
from __future__ import annotations

import csv
import datetime
import os
from pathlib import Path

import numpy as np

__all__ = ["BENCH_REPORTS", "FORWARD_CSV", "TRAIN_CSV", "FORWARD_COLUMNS", "TRAIN_COLUMNS", "FORWARD_CONTENDERS",
           "FORWARD_TARGETS", "MEMORY_TARGET", "MEMORY_SCALING", "environment", "append_rows", "forward_table", "train_table"]

DATASETS = Path(__file__).parent / "datasets"
FORWARD_CSV = DATASETS / "bench_forward.csv"
TRAIN_CSV = DATASETS / "bench_train.csv"

#: the machine and the moment, first in every row: ``date`` is the UTC start of the run, to the millisecond
#: (the same in all the rows of one run, which is how rows are grouped into runs: two runs a second apart
#: must not share it), ``load1`` the 1-minute load average when the
#: process that measured the row started
ENVIRONMENT = ("date", "cpu", "cpus", "blas", "blas_kernel", "numpy", "load1")

#: one row per (run, thread setting, contender); ``setting`` is "1" or "default", ``blas_threads`` the count it
#: ran at; times are the medians over the rounds of one call (``layers`` iterations), in ms; ratios are the
#: medians of the per-round ratios to each floor; ``peak`` is tracemalloc's peak in units of n (d + k) float64s,
#: empty where not measured
FORWARD_COLUMNS = ENVIRONMENT + ("setting", "blas_threads", "n", "d", "k", "layers", "repeat", "contender",
                                 "cpu_ms", "wall_ms", "cpu_x_lloyd_floor", "wall_x_lloyd_floor",
                                 "cpu_x_soft_floor", "wall_x_soft_floor", "peak")

#: the forward benchmark's contenders, as it names them, and as the table does
FORWARD_CONTENDERS = {
    "minimal Lloyd": "minimal NumPy Lloyd (the floor)",
    "minimal soft step, 1e4": "minimal soft step at γ = 1e4 (the second floor)",
    "lloyd": "`kmt_ref.lloyd` (the trace; its objective computed when first read)",
    "lloyd, objective read": "`kmt_ref.lloyd(...).objective` (the objective of every step read)",
    "transformer, gamma = inf": "`kmeans_transformer`, γ = ∞",
    "transformer, gamma = inf, objective read": "`kmeans_transformer(...).objective`, γ = ∞",
    "authors' circuit, 1e4": "authors' circuit, γ = 1e4 (`center_update=\"linear\"`)",
}
LLOYD_FLOOR, SOFT_FLOOR, CIRCUIT = "minimal Lloyd", "minimal soft step, 1e4", "authors' circuit, 1e4"

#: the targets, as ratios to the Lloyd floor (the benchmark prints them too)
FORWARD_TARGETS = {"lloyd": 1.2, "lloyd, objective read": 1.2, "transformer, gamma = inf": 2.0,
                   "transformer, gamma = inf, objective read": 2.0, CIRCUIT: 2.0}

#: the memory target, in units of n (d + k) float64s: flat in n, no n x n and no n x k x d arrays
MEMORY_TARGET = 4

#: the contender of the rows that measure only memory: the transformer (2 layers) at n / 4, n / 2 and n
MEMORY_SCALING = "transformer, gamma = inf, memory only"

SETTINGS = ("1", "default")

#: one row per run of the training benchmark: the authors' main setting (their expts.md), then CPU seconds (medians over ``reps``)
TRAIN_COLUMNS = ENVIRONMENT + ("blas_threads", "batch", "n", "d", "k", "dtype", "embedding", "malloc_tuned", "reps",
                               "step_s", "plain_s", "hand_over_plain", "hand_over_plain_pairs", "validation_s",
                               "n_val", "eval_every", "per_step_s", "sample_s", "grad_s", "forward_s", "adam_s")


# --------------------------------------------------------------------------
# Writing (the benchmarks)
# --------------------------------------------------------------------------
def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown"


def environment(blas_info=(), date=None):
    """The ENVIRONMENT columns of a row: ``blas_info`` is threadpoolctl's ``threadpool_info()`` (its "blas"
    entries give the library, its version and its kernel, "architecture"); ``date`` the run's UTC start
    (default: now)."""
    blas = [p for p in blas_info if p.get("user_api") == "blas"]
    return {"date": date or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
            "cpu": _cpu_model(), "cpus": os.cpu_count(),
            "blas": " + ".join(sorted({f"{p.get('internal_api', '?')} {p.get('version', '?')}" for p in blas})) or "?",
            "blas_kernel": " + ".join(sorted({str(p.get("architecture") or "?") for p in blas})) or "?",
            "numpy": np.__version__, "load1": f"{os.getloadavg()[0]:.2f}"}


def append_rows(path, columns, rows):
    """Append ``rows`` (dicts) to the CSV ``path``, writing the header if the file is new or empty.

    An existing file with another header is a ``ValueError``: rows are never appended under columns that
    are not theirs.
    """
    path = Path(path)
    new = not path.exists() or path.stat().st_size == 0
    if not new:
        with open(path, newline="") as f:
            header = next(csv.reader(f), None)
        if tuple(header or ()) != tuple(columns):
            raise ValueError(f"{path}: its header {header} is not {list(columns)}; save to another file")
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        if new:
            w.writeheader()
        for row in rows:
            w.writerow({c: ("" if row.get(c) is None else row[c]) for c in columns})


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------
def _read(path, columns):
    """The rows of a results file as (line number, dict), after checking its header."""
    path = Path(path)
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: empty, no header")
        if tuple(header) != tuple(columns):
            raise ValueError(f"{path}: header {header} is not {list(columns)}")
        rows = []
        for line, values in enumerate(reader, start=2):
            if len(values) != len(columns):
                raise ValueError(f"{path}:{line}: {len(values)} values for {len(columns)} columns")
            rows.append((line, dict(zip(columns, values))))
    if not rows:
        raise ValueError(f"{path}: no rows")
    return path, rows


def _number(path, line, row, column, kind=float, optional=False):
    value = row[column]
    if value == "" and optional:
        return None
    try:
        x = kind(value)
    except ValueError:
        raise ValueError(f"{path}:{line}: {column}={value!r} is not a {kind.__name__}") from None
    if not np.isfinite(x) or x < 0:
        raise ValueError(f"{path}:{line}: {column}={value!r} is not a finite number >= 0")
    return x


def _span(values, digits=2, unit=""):
    """``lo–hi`` of ``values`` (one number if they round alike)."""
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return f"{lo}{unit}" if lo == hi else f"{lo}–{hi}{unit}"


def _runs(count):
    return "one run" if count == 1 else f"{count} runs"


def _dates(rows):
    return ", ".join(sorted({r["date"][:10] for r in rows}))


def _machine(rows):
    """'CPU (N CPUs), BLAS (kernel K), NumPy V', each value listing every one that occurs."""
    def each(column):
        return " / ".join(sorted({str(r[column]) for r in rows}))
    return (f"{each('cpu')} ({each('cpus')} CPUs), {each('blas')} ({each('blas_kernel')} kernel), "
            f"NumPy {each('numpy')}")


def _same(path, timed, columns):
    """The one value of each of ``columns`` over ``timed`` rows (runs of other sizes do not go in one table)."""
    out = {}
    for c in columns:
        values = {r[c] for _, r in timed}
        if len(values) != 1:
            raise ValueError(f"{path}: the runs differ in {c} ({sorted(values)}); one table shows one setting")
        out[c] = int(next(iter(values)))
    return out


def _forward_runs(path):
    """``(path, {date: {(setting, contender): row}}, sizes, memory rows)`` of a forward results file, checked
    (each run on one BLAS kernel, ``blas_kernel``)."""
    path, rows = _read(path, FORWARD_COLUMNS)
    runs, memory, timed = {}, [], []
    for line, r in rows:
        for c in ("n", "d", "k", "layers", "blas_threads", "cpus"):
            r[c] = _number(path, line, r, c, int)
        r["load1"] = _number(path, line, r, "load1")
        r["peak"] = _number(path, line, r, "peak", optional=True)
        if r["setting"] not in SETTINGS:
            raise ValueError(f"{path}:{line}: setting={r['setting']!r} is not one of {SETTINGS}")
        if r["contender"] == MEMORY_SCALING:
            if r["peak"] is None:
                raise ValueError(f"{path}:{line}: a memory row without its peak")
            memory.append(r)
            continue
        if r["contender"] not in FORWARD_CONTENDERS:
            raise ValueError(f"{path}:{line}: contender={r['contender']!r} is not one of {list(FORWARD_CONTENDERS)}")
        r["repeat"] = _number(path, line, r, "repeat", int)
        for c in ("cpu_ms", "wall_ms", "cpu_x_lloyd_floor", "wall_x_lloyd_floor", "cpu_x_soft_floor",
                  "wall_x_soft_floor"):
            r[c] = _number(path, line, r, c)
        run = runs.setdefault(r["date"], {})
        if (r["setting"], r["contender"]) in run:
            raise ValueError(f"{path}:{line}: a second row for run {r['date']}, setting {r['setting']}, "
                             f"{r['contender']}")
        run[r["setting"], r["contender"]] = r
        timed.append((line, r))
    for date, run in runs.items():
        missing = [f"{s}/{c}" for s in SETTINGS for c in FORWARD_CONTENDERS if (s, c) not in run]
        if missing:
            raise ValueError(f"{path}: run {date} has no rows for {', '.join(missing)}")
        kernels = sorted({r["blas_kernel"] for r in run.values()})
        if len(kernels) != 1:
            raise ValueError(f"{path}: run {date} ran on the BLAS kernels {kernels}; a run is on one kernel")
    sizes = _same(path, timed, ("n", "d", "k", "layers", "repeat"))
    return path, runs, sizes, memory


def _target_cell(name, rows):
    """'≤ 1.2×: **met**' from the ratios to the Lloyd floor (CPU and wall) of every run and thread setting."""
    target = FORWARD_TARGETS.get(name)
    if target is None:
        return ""
    met = [max(r["cpu_x_lloyd_floor"], r["wall_x_lloyd_floor"]) <= target for r in rows]
    verdict = ("**met**" if all(met) else "**not met**" if not any(met)
               else f"met in {sum(met)} of {len(met)} (run, thread count) measurements")
    return f"≤ {target:g}×: {verdict}"


def _kernel(run):
    return next(iter(run.values()))["blas_kernel"]


def forward_table(path=FORWARD_CSV):
    """The forward-pass table of docs/PERFORMANCE.md from ``path`` (default: the committed runs), a row per
    contender and BLAS kernel."""
    path, runs, sizes, memory = _forward_runs(path)
    rows = [r for run in runs.values() for r in run.values()]
    threads = {s: _span([r["blas_threads"] for r in rows if r["setting"] == s], 0) for s in SETTINGS}
    layers = sizes["layers"]
    kernels = sorted({_kernel(run) for run in runs.values()})
    by_kernel = {kernel: [run for run in runs.values() if _kernel(run) == kernel] for kernel in kernels}

    def cell(name, setting, kernel):
        rs = [run[setting, name] for run in by_kernel[kernel]]
        if name == LLOYD_FLOOR:
            return (f"CPU {_span([r['cpu_ms'] / layers for r in rs], 1)}; wall "
                    f"{_span([r['wall_ms'] / layers for r in rs], 1)} ms per iteration")
        text = (f"CPU {_span([r['cpu_x_lloyd_floor'] for r in rs], unit='×')}; "
                f"wall {_span([r['wall_x_lloyd_floor'] for r in rs], unit='×')}")
        if name == CIRCUIT:
            text += (f"; **× the soft-step floor: CPU {_span([r['cpu_x_soft_floor'] for r in rs], unit='×')}; "
                     f"wall {_span([r['wall_x_soft_floor'] for r in rs], unit='×')}**")
        return text

    def peak(name, kernel):
        dates = {r["date"] for run in by_kernel[kernel] for r in run.values()}
        values = [r["peak"] for r in rows if r["contender"] == name and r["peak"] is not None and r["date"] in dates]
        text = _span(values, 1) if values else "not measured"
        scaling = [r for r in memory if r["date"] in dates]
        if name == "transformer, gamma = inf" and scaling:
            ns = sorted({r["n"] for r in scaling})
            text += (f"; {_span([r['peak'] for r in scaling], 1)} at n = {', '.join(f'{n:,}' for n in ns)} "
                     f"({_span([r['layers'] for r in scaling], 0)} layers)")
        return text

    lines = [f"| what | BLAS kernel | 1 BLAS thread | {threads['default']} BLAS threads (the default) | target, "
             f"as a ratio to the Lloyd floor | peak memory, × n(d+k) floats (target ≤ {MEMORY_TARGET}) |",
             "|---|---|---|---|---|---|"]
    for name, label in FORWARD_CONTENDERS.items():
        for kernel in kernels:
            target = _target_cell(name, [run[s, name] for run in by_kernel[kernel] for s in SETTINGS])
            lines.append(f"| {label} | {kernel} | {cell(name, '1', kernel)} | {cell(name, 'default', kernel)} | "
                         f"{target} | {peak(name, kernel)} |")
    loads = [r["load1"] for r in rows]
    each = "; ".join(f"{kernel}: {_runs(len(rs))}, load {_span([r['load1'] for run in rs for r in run.values()])}"
                     for kernel, rs in by_kernel.items())
    lines += ["", f"{_runs(len(runs))} of `python benchmarks/bench_forward.py --repeat {sizes['repeat']}` "
              f"(n = {sizes['n']:,}, d = {sizes['d']}, k = {sizes['k']}, {layers} layers; each thread count in a "
              f"process of its own), {_dates(rows)} (UTC), on {_machine(rows)}; the 1-minute load average when "
              f"each measurement started: {_span(loads)} (the machine is shared: other jobs ran alongside); "
              f"per kernel ({each}). Ratios are the range over the runs of each run's median per-round ratio; "
              f"peak memory from tracemalloc."]
    return "\n".join(lines)


def _train_runs(path):
    path, rows = _read(path, TRAIN_COLUMNS)
    for line, r in rows:
        for c in ("cpus", "blas_threads", "batch", "n", "d", "k", "reps", "n_val", "eval_every"):
            r[c] = _number(path, line, r, c, int)
        for c in ("load1", "step_s", "plain_s", "hand_over_plain", "hand_over_plain_pairs", "validation_s",
                  "per_step_s", "sample_s", "grad_s", "forward_s", "adam_s"):
            r[c] = _number(path, line, r, c)
        if r["malloc_tuned"] not in ("True", "False"):
            raise ValueError(f"{path}:{line}: malloc_tuned={r['malloc_tuned']!r} is not True or False")
    _same(path, rows, ("batch", "n", "d", "k", "n_val", "eval_every", "reps"))
    for c in ("dtype", "embedding", "malloc_tuned"):
        if len({r[c] for _, r in rows}) != 1:
            raise ValueError(f"{path}: the runs differ in {c}; one table shows one setting")
    return path, [r for _, r in rows]


def train_table(path=TRAIN_CSV):
    """The training-step table of docs/PERFORMANCE.md from ``path`` (default: the committed runs)."""
    path, rows = _train_runs(path)
    r0 = rows[0]

    def ms(column):  # whole ms, or tenths below 10 ms
        values = [1e3 * r[column] for r in rows]
        return _span(values, 0 if max(values) >= 10 else 1, " ms")

    steps = 10_000
    lines = ["| what | CPU time (or ratio), range over the runs |", "|---|---|",
             f"| a training step, hand-derived VJP (`kmt_ref/core/gradients.py`) | {ms('step_s')} |",
             f"| the same step with `kmt_ref.core.blocks.HAND_VJP = False` (autograd through the plain path) | "
             f"{ms('plain_s')} |",
             f"| hand VJP / plain path | {_span([r['hand_over_plain'] for r in rows], unit='×')} (ratio of the "
             f"medians); {_span([r['hand_over_plain_pairs'] for r in rows], unit='×')} (median of the per-pair "
             f"ratios) |",
             f"| validation ({r0['n_val']} tasks every {r0['eval_every']} steps), per evaluation; per step | "
             f"{_span([r['validation_s'] for r in rows], 2, ' s')}; "
             f"{_span([1e3 * r['validation_s'] / r['eval_every'] for r in rows], 0, ' ms')} |",
             f"| a step with validation; {steps:,} steps | {ms('per_step_s')}; "
             f"{_span([r['per_step_s'] * steps / 60 for r in rows], 0, ' min')} |",
             f"| where a step goes: task sampling | {ms('sample_s')} |",
             f"| forward + backward (`value_and_grad`) | {ms('grad_s')} |",
             f"| (the forward alone, untraced, as validation runs it) | {ms('forward_s')} |",
             f"| Adam update | {ms('adam_s')} |"]
    tuned = "tuned" if r0["malloc_tuned"] == "True" else "not tuned"
    lines += ["", f"{_runs(len(rows))} of `OPENBLAS_NUM_THREADS=1 python benchmarks/bench_train.py --reps {r0['reps']}` "
              f"(batch {r0['batch']}, n = {r0['n']}, d = {r0['d']}, k = {r0['k']}, {r0['dtype']}, embedding "
              f"{r0['embedding']}, malloc {tuned}; BLAS threads: {_span([r['blas_threads'] for r in rows], 0)}), "
              f"{_dates(rows)} (UTC), on {_machine(rows)}; the 1-minute load average when each run started: "
              f"{_span([r['load1'] for r in rows])} (the machine is shared: other jobs ran alongside)."]
    return "\n".join(lines)


#: name -> the function that makes the table (for kmt_ref.reports.REPORTS)
BENCH_REPORTS = {"forward": forward_table, "train": train_table}
