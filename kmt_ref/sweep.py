"""``python -m kmt_ref sweep``: the authors' gamma sweep, re-run in NumPy (float64).

The authors' ``klic_parameter_sweep.py`` (``rithram/kmeans-trf``) runs Lloyd's
algorithm and their hand-set transformer ``CModel(osa=True, ldp=True)`` for 10
steps on every cell of a grid and publishes ``results/klic_parameter_sweep.csv``
(30,000 rows). This module re-runs that protocol and writes a CSV with exactly
their columns, so the two tables can be compared cell by cell.

The grid (theirs, :data:`PAPER_GRID`)
-------------------------------------
dimensions d = 1..10; clusters k = 5, 10, ..., 50; points
``np.logspace(2, 6, 10, dtype=int)`` = 100, 278, ..., 1,000,000; scale 1..10;
gamma in {1, 10, 100}: 10,000 data cells, three rows (one per gamma) each.
``--grid small`` (:data:`SMALL_GRID`) is a subset of the same values.

One data cell (k, d, points, scale)
-----------------------------------
- data: k means uniform in [0, 1]^d, ``points // k`` draws from N(mean, 0.01 I)
  around each (so n = k * (points // k); the column ``Points`` keeps the
  nominal value, as theirs), min-max scaled per dimension, multiplied by
  ``scale``, shuffled; the initial centers are the first k points
  (:func:`kmt_ref.data.gaussian_blobs`, then the scale);
- seed: ``numpy.random.default_rng([k, d, points, scale])`` (:func:`cell_rng`).
  Theirs is torch's global stream, whose draws cannot be reproduced without
  torch (not a dependency), so the cells hold other draws of the same law;
- Lloyd: :func:`kmt_ref.lloyd`, 10 iterations;
- the transformer, per gamma: ``kmeans_transformer(X, C0, 10, gamma=g,
  center_update="linear", gamma_reset=inf)`` -- identity reset blocks and the
  normalised dot-product (linear) center update, i.e. their ``CModel(osa=True,
  ldp=True)``;
- ``Loss = log J(transformer's C_10) - log J(Lloyd's C_10)`` with
  ``J(C) = sum_i min_j ||x_i - c_j||^2``; ``Iteration`` is -1 as in theirs.

Empty clusters: the cells written NaN
-------------------------------------
Their CSV has an empty Loss (NaN) in 148 rows: 49 data cells at all three
gammas, and one more at gamma = 100 only. The first kind is Lloyd's: their
``lloyds.py`` takes ``torch.mean`` over a cluster's members, which is NaN for
an empty cluster, and the NaN center makes the final objective NaN at every
gamma. The second is the transformer's linear update dividing 0 by 0 when a
cluster's weights all underflow. We write NaN (an empty field, as pandas
does) in exactly these two cases: if Lloyd leaves a cluster empty in any of
its 10 assignment steps (kmt_ref's Lloyd would keep the old center; we
follow theirs), and, per gamma, if the transformer raises
:class:`kmt_ref.EmptyClusterError`. The command reports how many of each.

Resuming
--------
Rows are appended one data cell at a time and flushed, ordered by points
(smallest first), then clusters, dimensions, scale. Re-running the same
command skips every (Clusters, Dimensions, Points, Scale, Gamma) already in
``--out`` (default ``sweep.csv`` in the current folder); a line cut short by an
interruption is dropped and recomputed. A file there that is not a sweep CSV
is refused, never overwritten. The cells are seeded by their values, so a
``--grid small`` file can be resumed as a ``--grid paper`` run (the authors'
grid): its rows are that grid's rows of the same cells.

Comparing with their table
--------------------------
``--compare klic_parameter_sweep.csv`` (their ``results/`` file) prints, per
gamma, ours against theirs on the same cells, paired by cell
(:func:`compare`): a cell counts when both files hold it and neither Loss is
NaN; the standard error is that of the mean of the per-cell differences.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

import numpy as np

from .algorithms.lloyd import kmeans_transformer, lloyd
from .blas import blas_limit, describe_blas_threads, resolve_blas_threads
from .core.tokens import EmptyClusterError
from .data import gaussian_blobs
from .progress import Progress
from .output_paths import not_read_by, replace_atomically
from .validation import check_count, check_output_file

__all__ = ["COLUMNS", "PAPER_GRID", "SMALL_GRID", "GRIDS", "N_STEPS", "AUTHORS_PUBLISHED", "cell_rng",
           "cell_data", "cell_losses", "grid_cells", "read_sweep", "run_sweep", "summarize", "compare",
           "DEFAULT_OUT", "LARGE_CELL_POINTS", "register"]

#: the header of their CSV, in their order
COLUMNS = ("Clusters", "Iteration", "Dimensions", "Gamma", "Points", "Loss", "Scale")

#: their grid (klic_parameter_sweep.py)
PAPER_GRID = {
    "clusters": tuple(range(5, 55, 5)),
    "dimensions": tuple(range(1, 11)),
    "points": tuple(int(p) for p in np.logspace(2, 6, 10, dtype=int)),  # 100, 278, ..., 1000000
    "scale": tuple(range(1, 11)),
    "gamma": (1, 10, 100),
}

#: a subset of their values: 4 x 4 x 4 x 4 = 256 data cells (768 rows)
SMALL_GRID = {
    "clusters": (5, 20, 35, 50),
    "dimensions": (1, 4, 7, 10),
    "points": (100, 278, 774, 2154),
    "scale": (1, 4, 7, 10),
    "gamma": (1, 10, 100),
}

GRIDS = {"small": SMALL_GRID, "paper": PAPER_GRID}

#: where ``python -m kmt_ref sweep`` writes (or resumes) without ``--out``: the current folder
DEFAULT_OUT = "sweep.csv"

#: Lloyd iterations = transformer layers
N_STEPS = 10

#: cells with at least this many points run at the BLAS's own thread count unless ``blas_threads`` is given; the
#: smaller ones under one thread (:func:`kmt_ref.blas.blas_limit`). Measured (docs/PERFORMANCE.md, "BLAS threads"):
#: on a quiet machine two threads took 0.83-0.87x the wall time of one from 16,681 points up, 1.11x at 2,154
LARGE_CELL_POINTS = 10_000

#: their results/klic_parameter_sweep.csv (rithram/kmeans-trf), per gamma over all 10,000 cells:
#: (mean Loss over the non-NaN rows, median, NaN rows)
AUTHORS_PUBLISHED = {1: (0.993, 0.303, 49), 10: (0.267, 0.0, 49), 100: (0.031, -0.0, 50)}


def cell_rng(k, d, points, scale):
    """The generator of one data cell: ``numpy.random.default_rng([k, d, points, scale])``."""
    return np.random.default_rng([int(k), int(d), int(points), int(scale)])


def cell_data(k, d, points, scale):
    """The data of one cell (module docstring): X (d, k * (points // k)) and C0 (d, k)."""
    X, C0, _ = gaussian_blobs(k, d, points // k, std=0.1, rng=cell_rng(k, d, points, scale))
    return scale * X, scale * C0


def _lloyd_empties(labels, k):
    """Whether any of Lloyd's assignment steps (rows of ``labels``, (T, n)) leaves a cluster empty."""
    return any(np.bincount(row, minlength=k).min() == 0 for row in labels)


def cell_losses(k, d, points, scale, gammas=(1, 10, 100), n_steps=N_STEPS):
    """Loss of one data cell at each gamma, and why a Loss is NaN.

    Returns
    -------
    dict of gamma -> (float, str or None)
        ``(Loss, None)``, or ``(nan, "lloyd")`` if Lloyd empties a cluster,
        ``(nan, "transformer")`` if the transformer's linear update does.
    """
    X, C0 = cell_data(k, d, points, scale)
    ref = lloyd(X, C0, n_steps)
    if _lloyd_empties(ref.labels, k):
        return {g: (math.nan, "lloyd") for g in gammas}
    out = {}
    for g in gammas:
        try:
            tr = kmeans_transformer(X, C0, n_steps, gamma=g, center_update="linear", gamma_reset=np.inf)
        except EmptyClusterError:
            out[g] = (math.nan, "transformer")
            continue
        out[g] = (float(tr.log_objective[-1] - ref.log_objective[-1]), None)
    return out


def grid_cells(grid, max_points=None):
    """The data cells (k, d, points, scale) of a grid, cheapest points first."""
    return [(k, d, p, s) for p in grid["points"] if max_points is None or p <= max_points
            for k in grid["clusters"] for d in grid["dimensions"] for s in grid["scale"]]


def _row_key(row):
    return (row["Clusters"], row["Dimensions"], row["Points"], row["Scale"], row["Gamma"])


def _integer(text):
    """``"10"`` or ``"10.0"`` as 10; anything else (``"1.5"``, ``"inf"``, ``"nan"``) a ValueError."""
    value = float(text)
    if not value.is_integer():
        raise ValueError(text)
    return int(value)


def read_sweep(path):
    """The rows of a sweep CSV (ours or theirs) as dicts of ints and a float ``Loss`` (NaN if empty).

    Raises
    ------
    ValueError
        The file is not UTF-8 text, its header is not :data:`COLUMNS`, or a
        complete line is not a row (seven fields; integers except ``Loss``).
    """
    return _read_sweep_lines(path)[0]


def _read_sweep_lines(path):
    """(:func:`read_sweep`'s rows, the file's lines as it split them); the resume keeps exactly these lines."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            lines = f.read().splitlines(keepends=True)
    except UnicodeDecodeError:
        raise ValueError(f"{str(path)!r} is not a sweep CSV (not even UTF-8 text)") from None
    if not lines or lines[0].strip() != ",".join(COLUMNS):
        raise ValueError(f"{str(path)!r} is not a sweep CSV: its first line should be {','.join(COLUMNS)!r}")
    complete = lines if lines[-1].endswith("\n") else lines[:-1]  # cut short by an interruption: recomputed on resume
    rows = []
    for no, line in enumerate(csv.reader(complete[1:]), start=2):
        try:
            if len(line) != len(COLUMNS):
                raise ValueError
            row = {c: _integer(v) for c, v in zip(COLUMNS, line) if c != "Loss"}
            row["Loss"] = float(line[COLUMNS.index("Loss")] or "nan")
        except ValueError:
            raise ValueError(f"{str(path)!r} line {no} is not a sweep row: {','.join(line)!r}") from None
        rows.append(row)
    return rows, lines


#: ``sweep --out``: an existing sweep CSV is resumed; nothing else is written over
SWEEP_FILE = ("the sweep resumes a sweep CSV and writes over no other file", not_read_by(read_sweep, "sweep CSV"))


def _format(value):
    return "" if isinstance(value, float) and math.isnan(value) else repr(value)


def summarize(rows, gammas=None):
    """Per gamma: rows, mean and median Loss over the non-NaN rows, NaN rows.

    Returns
    -------
    dict of gamma -> dict with keys ``rows``, ``mean``, ``median``, ``nan``
    """
    gammas = sorted({r["Gamma"] for r in rows}) if gammas is None else gammas
    out = {}
    for g in gammas:
        loss = np.array([r["Loss"] for r in rows if r["Gamma"] == g], dtype=float)
        ok = loss[~np.isnan(loss)]
        out[g] = {"rows": loss.size, "mean": float(np.mean(ok)) if ok.size else math.nan,
                  "median": float(np.median(ok)) if ok.size else math.nan, "nan": int(loss.size - ok.size)}
    return out


def _by_cell(rows, what):
    table = {_row_key(r): r["Loss"] for r in rows}
    if len(table) != len(rows):
        raise ValueError(f"{what} holds a (Clusters, Dimensions, Points, Scale, Gamma) cell more than once")
    return table


def compare(ours, theirs, gammas=None):
    """Ours against theirs per gamma, on the same cells, paired by cell.

    Parameters
    ----------
    ours, theirs : list of dict
        Rows of two sweep CSVs (:func:`read_sweep`), each cell at most once.
    gammas : sequence of int, optional
        Default: every gamma in ``ours``.

    Returns
    -------
    dict of gamma -> dict
        ``cells``: the cells of ``ours`` that ``theirs`` also holds and where
        neither Loss is NaN; ``ours``, ``theirs``: the mean Loss of each over
        those cells; ``diff``: the mean of ours - theirs cell by cell (the
        difference of those two means); ``se``: its standard error (NaN below
        2 cells);
        ``nan_ours``, ``nan_theirs``: cells held by both that were dropped
        because that side is NaN (a cell NaN on both sides counts in both);
        ``missing``: cells of ``ours`` that ``theirs`` lacks.

    Notes
    -----
    With D_c = Loss_ours(c) - Loss_theirs(c) over the m common cells,
    ``diff`` = mean(D) and ``se`` = std(D, ddof=1) / sqrt(m). Pairing takes
    out the spread of Loss between cells, which the difference of two unpaired
    means would count as noise; what is left is the spread between two draws
    of the same cell (NumPy's here, torch's there) and float64 against their
    float32. On the committed small grid at gamma = 1 the paired standard
    error is 0.019, the unpaired one 0.156.
    """
    ours, theirs = _by_cell(ours, "ours"), _by_cell(theirs, "theirs")
    gammas = sorted({key[-1] for key in ours}) if gammas is None else gammas
    out = {}
    for g in gammas:
        keys = [key for key in ours if key[-1] == g]
        both = [key for key in keys if key in theirs]
        a = np.array([ours[key] for key in both], dtype=float)
        b = np.array([theirs[key] for key in both], dtype=float)
        ok = ~np.isnan(a) & ~np.isnan(b)
        diff = a[ok] - b[ok]
        m = int(ok.sum())
        out[g] = {"cells": m, "ours": float(a[ok].mean()) if m else math.nan,
                  "theirs": float(b[ok].mean()) if m else math.nan,
                  "diff": float(diff.mean()) if m else math.nan,
                  "se": float(diff.std(ddof=1) / math.sqrt(m)) if m > 1 else math.nan,
                  "nan_ours": int(np.isnan(a).sum()), "nan_theirs": int(np.isnan(b).sum()),
                  "missing": len(keys) - len(both)}
    return out


def run_sweep(out, grid="small", max_points=None, progress=None, log=print, blas_threads=None):
    """Run (or resume) the sweep into the CSV ``out``; return the summary of its rows and the NaN causes.

    Parameters
    ----------
    out : str or Path
        The CSV. If it exists it must be a sweep CSV; its rows are kept and
        the cells it holds are skipped.
    grid : {"small", "paper"} or dict
        :data:`SMALL_GRID`, :data:`PAPER_GRID`, or a dict with their keys.
    max_points : int, optional
        Only the cells with ``points <= max_points``.
    progress : file-like, optional
        Where the progress line goes (None: no progress display).
    log : callable
    blas_threads : int >= 1, optional
        BLAS threads of every cell. By default the cells below
        :data:`LARGE_CELL_POINTS` points run on one thread
        (:func:`kmt_ref.blas.blas_limit`: unless ``OPENBLAS_NUM_THREADS`` or
        another of :data:`kmt_ref.blas.USER_VARIABLES` is set) and the larger
        ones at the BLAS's own count, whose large products its threads share.
        Lloyd does not depend on it; the finite-gamma transformer's products
        can round differently with the thread count: on the small grid 88 of
        the 768 Loss values (cells of 774 and 2,154 points) differ between one
        and two threads, by at most 1.5e-13 (OpenBLAS, SkylakeX kernel).

    Returns
    -------
    summary : dict
        :func:`summarize` of every row now in ``out``.
    causes : dict
        ``{"lloyd": rows, "transformer": rows}`` written NaN in this run.
    """
    grid = GRIDS[grid] if isinstance(grid, str) else grid
    out = Path(out)
    if out.exists():
        rows, lines = _read_sweep_lines(out)
        done = {_row_key(r) for r in rows}
        if not lines[-1].endswith("\n"):  # drop the line read_sweep counts as cut short; write the header again
            replace_atomically(out, ",".join(COLUMNS) + "\n" + "".join(lines[1:-1]))  # (it may be the one cut)
    else:
        done = set()
        out.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(out, ",".join(COLUMNS) + "\n")
    todo = []
    for cell in grid_cells(grid, max_points):
        gammas = [g for g in grid["gamma"] if (*cell, g) not in done]
        if gammas:
            todo.append((cell, gammas))
    n_rows = len(grid_cells(grid, max_points)) * len(grid["gamma"])
    log(f"sweep: {n_rows - sum(len(g) for _, g in todo)} of {n_rows} rows already in {out}; "
        f"{len(todo)} data cells to run")
    bar = (Progress("sweep", "cells", [p * k for (k, _, p, _), _ in todo], progress)  # cost grows about as n * k
           if progress is not None and todo else None)
    causes = {"lloyd": 0, "transformer": 0}
    limit = blas_limit(blas_threads, "blas_threads")
    is_small = [blas_threads is not None or p < LARGE_CELL_POINTS for (_, _, p, _), _ in todo]
    with out.open("a", encoding="utf-8", newline="") as f:
        with limit:  # the small cells (first in a grid of increasing points): many small products
            _run_cells([c for c, small in zip(todo, is_small) if small], f, causes, bar)
        _run_cells([c for c, small in zip(todo, is_small) if not small], f, causes, bar)
    return summarize(read_sweep(out)), causes


def _run_cells(cells, f, causes, bar):
    """Compute the cells, append their rows to the open CSV ``f`` (flushed after each) and count the NaN causes."""
    for (k, d, p, s), gammas in cells:
        losses = cell_losses(k, d, p, s, gammas)
        lines = []
        for g in gammas:
            loss, why = losses[g]
            if why:
                causes[why] += 1
            lines.append(",".join(_format(v) for v in (k, -1, d, g, p, loss, s)) + "\n")
        f.write("".join(lines))
        f.flush()
        if bar:
            bar.step()


def _sweep_command(args):
    """``python -m kmt_ref sweep``: check --out (and any rows in it), --max-points and --compare, then run."""
    out = check_output_file(args.out, "--out", ".csv", SWEEP_FILE)  # resumed if it is a sweep CSV, else refused
    if args.max_points is not None:
        check_count(args.max_points, "--max-points", minimum=1)
    limit = resolve_blas_threads(args.blas_threads, "--blas-threads")
    theirs = None
    if args.compare is not None:
        if not Path(args.compare).is_file():
            raise ValueError(f"--compare={args.compare!r} is not a file; "
                             "give their results/klic_parameter_sweep.csv")
        theirs = read_sweep(args.compare)
        _by_cell(theirs, f"--compare={args.compare!r}")  # compare() would refuse it only after the run
        if out.exists():
            _by_cell(read_sweep(out), f"--out={args.out!r}")
    threads = describe_blas_threads(args.blas_threads, "--blas-threads")
    if args.blas_threads is None and limit is not None:
        threads += f" (cells under {LARGE_CELL_POINTS:,} points; the larger ones: the BLAS's own thread count)"
    print(f"# {threads}", flush=True)
    summary, causes = run_sweep(out, args.grid, args.max_points, progress=sys.stderr, blas_threads=args.blas_threads)
    print(f"{'gamma':>6} {'rows':>6} {'mean Loss':>10} {'median':>10} {'NaN':>5}   "
          "(all rows in the file; theirs over their 10,000 cells: mean, median, NaN)")
    for g, st in summary.items():
        published = AUTHORS_PUBLISHED.get(g)
        published = f"   theirs: {published[0]:.3f}, {published[1]:.3f}, {published[2]}" if published else ""
        print(f"{g:>6} {st['rows']:>6} {st['mean']:>10.4f} {st['median']:>10.4f} {st['nan']:>5}{published}")
    print(f"NaN rows written in this run: {causes['lloyd']} where Lloyd emptied a cluster, "
          f"{causes['transformer']} where the transformer's linear update did; wrote {out}")
    if theirs is not None:
        _print_comparison(compare(read_sweep(out), theirs), args.compare)
    return 0


def _print_comparison(table, theirs_path):
    print(f"\npaired by cell with {theirs_path}: the cells both files hold, minus those NaN on either side")
    print(f"{'gamma':>6} {'cells':>6} {'ours':>8} {'theirs':>8} {'ours-theirs':>12} {'SE':>7} {'/SE':>6}"
          f" {'NaN ours':>9} {'NaN theirs':>11} {'not in theirs':>14}")
    for g, c in table.items():
        ratio = c["diff"] / c["se"] if c["se"] > 0 else math.nan
        print(f"{g:>6} {c['cells']:>6} {c['ours']:>8.4f} {c['theirs']:>8.4f} {c['diff']:>12.4f} {c['se']:>7.4f}"
              f" {ratio:>6.2f} {c['nan_ours']:>9} {c['nan_theirs']:>11} {c['missing']:>14}")


def _grid_text(name, grid):
    """A grid for ``sweep --help``: one line per dimension, with its values."""
    lines = [f"  {name} ({len(grid_cells(grid)):,} data cells{', the default' if name == 'small' else ''}):"]
    return "\n".join(lines + [f"    {key:<11}{', '.join(str(v) for v in values)}" for key, values in grid.items()])


def register(sub):
    """Add the ``sweep`` command to the ``python -m kmt_ref`` parser."""
    p = sub.add_parser(
        "sweep", help="the authors' gamma sweep (klic_parameter_sweep.py) as a CSV",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Re-run the authors' gamma sweep (klic_parameter_sweep.py) into a CSV with their columns.",
        epilog="grids: each combination of clusters, dimensions, points and scale is a data cell, "
               "one row per gamma\n"
               + "\n".join(_grid_text(name, GRIDS[name]) for name in ("small", "paper")))
    p.add_argument("--grid", choices=sorted(GRIDS), default="small",
                   help="small: 256 data cells of their values; paper: their 10,000 "
                        "(30,000 rows; resumable) (default: small)")
    p.add_argument("--out", default=DEFAULT_OUT,
                   help="the CSV to write (a name ending in .csv), or to resume if it is a sweep CSV; any other file is refused "
                        f"(default: {DEFAULT_OUT} in the current folder)")
    p.add_argument("--max-points", type=int, default=None,
                   help="only cells with at most this many points (the large n take most of the time)")
    p.add_argument("--compare", default=None, metavar="THEIRS_CSV",
                   help="their results/klic_parameter_sweep.csv (rithram/kmeans-trf): print ours against "
                        "theirs per gamma, paired by cell, on the cells neither leaves NaN")
    p.add_argument("--blas-threads", dest="blas_threads", type=int, default=None, metavar="N",
                   help=f"BLAS threads of every cell, >= 1 (default: one for the cells under {LARGE_CELL_POINTS:,} "
                        "points, whose many small products lose time waking a second thread, and the BLAS's own "
                        "count for the larger ones, which two threads shorten on a quiet machine; on a busy one, "
                        "--blas-threads 1 is faster for those too. An OPENBLAS_NUM_THREADS or OMP_NUM_THREADS set "
                        "in the environment is kept for every cell)")
    p.set_defaults(func=_sweep_command)
