"""``python -m kmt_ref demo``: the numerical validation of Theorem 2.1 of the authors' notebook, on their data.

The authors' ``numerical_validation.ipynb`` (the paper's Figure 3, by their
``expts.md``) runs Lloyd's algorithm and their circuit for 10 layers at
gamma = 1e4 (``niters = 10``, ``itemp = 10000``). The demo runs Lloyd's
algorithm (:func:`kmt_ref.lloyd`) and the k-means transformer
(:func:`kmt_ref.kmeans_transformer`) at gamma = 1e4 and gamma = inf for 10
layers, prints a per-layer table and writes the six-panel figure (log
objectives in A and their difference in D; Lloyd's centers and assignments
in B and C, the transformer's in E and F) to ``demo_output/fig1_validation.png`` in the
current folder (:data:`DEMO_OUTDIR`; ``--outdir`` chooses another folder,
``--no-figure`` none), and prints the file's full path. The repository's own
``figures/fig1_validation.png`` is drawn by ``python -m kmt_ref figures``.

What is compared with the authors
---------------------------------
- **Data**: by default the authors' own draw (:func:`kmt_ref.data.paper_validation_data`:
  their ``numerical_validation.ipynb``, seed 5487, d = 2, n = 10,000, k = 5).
  ``--data seeded`` runs the project's NumPy draw of the same recipe instead
  (:func:`kmt_ref.data.validation_data`, ``--seed``).
- **Circuit**: by default the one the authors validated, ``CModel(osa=True, ldp=True)``:
  identity reset blocks 2 and 4 and the linear (normalised dot-product) center
  update, i.e. ``kmeans_transformer(..., center_update="linear", gamma_reset=inf)``.
  On their draw it prints their numbers: log objective 6.442 -> 4.593, and
  5.469 at t = 2 (Lloyd: 5.472).
- **The project's extension**, printed beside it: the flag circuit (the
  default of :func:`kmt_ref.kmeans_transformer`: Euclidean block 3 whose keys
  carry a type flag, so that an empty cluster keeps its center exactly at
  gamma = inf). At finite gamma it leaks about ``exp(-gamma)`` of each
  center's weight to its own token; the demo prints the measured difference
  from the authors' circuit (on their draw at gamma = 1e4: at most 0.006 in log J).

What "exactly one-hot" means (float64)
--------------------------------------
Column i of the assignment block Y counts as exactly one-hot when it equals a
standard basis vector bit for bit: one entry is exactly 1.0, all others exactly
0.0 (:attr:`kmt_ref.ClusteringTrace.one_hot`). At gamma = inf (hardmax) every
column is (block 1 writes a basis vector). At finite gamma block 1 is a softmax,
``y_ij = E_ij / sum_l E_il`` with ``E_ij = exp(-gamma gap_ij)``,
``gap_ij = D_ij - min_l D_il`` and ``D_ij = ||x_i - c_j||^2``. Column i is
exactly one-hot if and only if ``E_ij`` underflows to 0.0 for every center
but one nearest, i.e. ``gamma gap_ij >= 1075 ln 2`` (about 745.133) for all
of them: then the column sum is exactly 1 and the nearest entry exactly 1.0.
Below that point float64 ``exp`` returns a positive, possibly subnormal,
number, which the division by a sum below 2 leaves positive. (A normalised
weight can also be 0.0 without an underflow of ``exp``: a subnormal ``E_ij``
divided by a sum of 2 or more, as beside two tied nearest centers, rounds to
0.0; but such a column has no entry 1.0.) The residual update stores the new
weights exactly (the reset block is summed first: ``(y_old - y_old) + y_new``,
see :func:`kmt_ref.lloyd_layer`), so the count after layer t is the number of
points whose every non-nearest center is at least ``745.133 / gamma`` farther
(in squared distance) than the nearest one.

The authors' "9,921 of 10,000" (float32)
----------------------------------------
Their notebook computes in float32 and counts a point as discrete when
``Y.astype(int)`` has a 1 in it, i.e. when its largest weight rounds to exactly
1.0 in float32 (the others may be small but positive): that happens when the
other weights sum to at most 2**-24, i.e. ``gamma * gap > 16.6``. The demo
recomputes block 1's softmax in float32 from the centers of the last layer and
prints that count (:func:`float32_max_weight_one`: 9,921 on their draw, the
authors' number) and the stricter exactly-one-hot count
(:func:`float32_one_hot`: float32 ``exp`` underflows at ``-103.97``).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .algorithms.lloyd import kmeans_transformer, lloyd
from .core.normalizers import softmax
from .data import VALIDATION_SEED, paper_validation_data, validation_data
from .trace import argmax_columns, assign
from .validation import check_choice, check_count, check_gamma, check_output_dir

__all__ = ["validation_runs", "load_validation_data", "one_hot_count", "float32_one_hot",
           "float32_max_weight_one", "run_demo", "DemoResult", "register", "DEMO_GAMMAS", "CIRCUITS",
           "DATA_CHOICES", "DEMO_OUTDIR"]

#: the inverse temperatures of the demo: 1e4, the authors' notebook's (``itemp = 10000``), and inf, the exact limit
DEMO_GAMMAS = (1e4, np.inf)

#: the data the demo can run on: the authors' draw (default) or the project's seeded NumPy draw
DATA_CHOICES = ("paper", "seeded")

#: circuit name -> (keyword arguments of :func:`kmt_ref.kmeans_transformer`, label). "authors" is the
#: circuit of the authors' validation (CModel(osa=True, ldp=True)); "flag" is the project's extension.
CIRCUITS = {
    "authors": ({"center_update": "linear", "gamma_reset": np.inf},
                "the authors' circuit: identity resets, linear center update (their CModel(osa=True, ldp=True))"),
    "flag": ({"center_update": "euclidean", "gamma_reset": np.inf},
             "the project's extension: flag token, Euclidean center update (keeps empty clusters at gamma=inf)"),
}


def load_validation_data(data="paper", seed=VALIDATION_SEED):
    """The demo's data: ``(X, C0, description)``.

    Parameters
    ----------
    data : {"paper", "seeded"}
        ``"paper"``: the authors' draw (:func:`kmt_ref.data.paper_validation_data`);
        ``"seeded"``: the project's NumPy draw of the same recipe
        (:func:`kmt_ref.data.validation_data` with ``seed``).
    seed : int
        Used by ``"seeded"`` only.
    """
    data = check_choice(data, "data", DATA_CHOICES)
    if data == "paper":
        X, C0 = paper_validation_data()
        return X, C0, ("the authors' validation draw (their numerical_validation.ipynb, torch seed 5487; "
                       "kmt_ref.data.paper_validation_data())")
    seed = check_count(seed, "seed")
    X, C0 = validation_data(seed)
    return X, C0, f"the project's seeded draw of the same recipe (kmt_ref.data.validation_data(seed={seed}))"


def validation_runs(data="paper", seed=VALIDATION_SEED, n_layers=10, gammas=DEMO_GAMMAS,
                    circuits=tuple(CIRCUITS)):
    """Lloyd and the k-means transformer circuits on the validation data.

    Parameters
    ----------
    data : {"paper", "seeded"}
        See :func:`load_validation_data`.
    seed : int
        Data seed of ``data="seeded"``.
    n_layers : int
        T, the number of Lloyd iterations = transformer layers.
    gammas : sequence of float
        Inverse temperatures of the transformer (block 1, and block 3 of the
        Euclidean center update; the reset blocks 2 and 4 run at their exact
        limit, as in the authors' validation).
    circuits : sequence of str
        Names in :data:`CIRCUITS` (default: both, the authors' first).

    Returns
    -------
    X : ndarray, shape (2, 10000)
    C0 : ndarray, shape (2, 5)
    lloyd_trace : ClusteringTrace
    transformer_traces : dict of (str, float) -> ClusteringTrace
        Keyed by (circuit name, gamma).
    """
    X, C0, _ = load_validation_data(data, seed)
    return (X, C0) + _runs(X, C0, n_layers, gammas, circuits)


def _runs(X, C0, n_layers, gammas, circuits):
    """Lloyd's trace and the transformer traces keyed by (circuit, gamma)."""
    ref = lloyd(X, C0, n_layers)
    runs = {(c, float(g)): kmeans_transformer(X, C0, n_layers, gamma=g, **CIRCUITS[c][0])
            for c in circuits for g in gammas}
    return ref, runs


def one_hot_count(W, axis=0):
    """How many slices of W along ``axis`` are exactly a standard basis vector.

    Parameters
    ----------
    W : ndarray, shape (k, n)
        Assignment weights, one column per point (``axis=0``).

    Returns
    -------
    int
        Columns with one entry exactly 1.0 and all others exactly 0.0 (counted by
        :func:`kmt_ref.trace.argmax_columns`, as the trace's ``one_hot`` is).
    """
    W = np.moveaxis(np.asarray(W), axis, 0)
    return argmax_columns(W.reshape(W.shape[0], -1), count_one_hot=True)[1]


def _float32_block1(X, C, gamma):
    """Block 1's weights ``softmax_gamma(-D)`` (k, n) with ``D_ij = ||x_i - c_j||^2`` cast to float32 first."""
    _, D = assign(X, C)  # (k, n)
    return softmax((-D).astype(np.float32), gamma=gamma, axis=0)


def float32_one_hot(X, C, gamma):
    """Exactly one-hot block-1 weights if the softmax were computed in float32.

    Parameters
    ----------
    X : ndarray, shape (d, n)
    C : ndarray, shape (d, k)
        The centers block 1 attends to.
    gamma : float

    Returns
    -------
    int
        Columns of ``softmax_gamma(-D)`` (``D_ij = ||x_i - c_j||^2``, cast to
        float32 before the softmax) that are exactly one-hot: points with
        ``gamma * gap > 103.97`` (float32 ``exp`` underflow), where ``gap`` is
        the distance to the second-nearest minus the nearest center.
    """
    return one_hot_count(_float32_block1(X, C, gamma))


def float32_max_weight_one(X, C, gamma):
    """The authors' discreteness count: block-1 weights whose largest entry is exactly 1.0 in float32.

    Parameters
    ----------
    X : ndarray, shape (d, n)
    C : ndarray, shape (d, k)
        The centers block 1 attends to.
    gamma : float

    Returns
    -------
    int
        Columns of ``softmax_gamma(-D)`` (``D`` cast to float32 before the
        softmax) whose largest weight is 1.0: what the authors' notebook counts
        with ``Y.astype(int) == 1`` ("discrete assignment for 9921/10000
        points"). The largest weight is ``1 / (1 + s)``, ``s`` the sum of the
        other ``exp`` terms, which is 1.0 in float32 iff ``s <= 2**-24``
        (about ``gamma * gap > 16.6``); the other weights need not be 0.
    """
    return int(np.sum(_float32_block1(X, C, gamma).max(axis=0) == 1))


@dataclass
class DemoResult:
    """What :func:`run_demo` computed (for tests and notebooks).

    Attributes
    ----------
    data : str
        ``"paper"`` or ``"seeded"``.
    seed : int or None
        The data seed (``None`` for the authors' draw).
    X : ndarray, shape (2, n); C0 : ndarray, shape (2, k)
    lloyd : ClusteringTrace
    transformers : dict of (str, float) -> ClusteringTrace
        Keyed by (circuit name in :data:`CIRCUITS`, gamma).
    rows : list of dict
        One per step t = 0..T: ``layer``, ``lloyd`` (log objective) and, per
        run key r, ``("log_objective", r)``, ``("max_center_diff", r)``,
        ``("one_hot", r)`` and ``("labels_differ", r)`` (None at t = 0).
    float32_one_hot, float32_max_weight_one : dict of (str, float) -> int
        Finite gammas: block 1's float32 counts at the last layer
        (:func:`float32_one_hot`, :func:`float32_max_weight_one`).
    flag_minus_authors : dict of float -> float
        Per gamma: ``max_t |log J_flag(t) - log J_authors(t)|``.
    figure : Path or None
    seconds : float
    """

    data: str
    seed: object
    X: np.ndarray
    C0: np.ndarray
    lloyd: object
    transformers: dict
    rows: list = field(default_factory=list)
    float32_one_hot: dict = field(default_factory=dict)
    float32_max_weight_one: dict = field(default_factory=dict)
    flag_minus_authors: dict = field(default_factory=dict)
    figure: Path = None
    seconds: float = 0.0


def _gamma_name(g):
    return "inf" if np.isinf(g) else f"{g:g}"


def _table_rows(ref, runs):
    rows = []
    for t in range(ref.n_steps + 1):
        row = {"layer": t, "lloyd": float(ref.log_objective[t])}
        for r, tr in runs.items():
            row[("log_objective", r)] = float(tr.log_objective[t])
            row[("max_center_diff", r)] = float(np.max(np.abs(tr.centers[t] - ref.centers[t])))
            row[("one_hot", r)] = int(tr.one_hot[t - 1]) if t else None
            row[("labels_differ", r)] = int(np.sum(tr.labels[t - 1] != ref.labels[t - 1])) if t else None
        rows.append(row)
    return rows


def format_table(rows, keys, n, authors=None):
    """The per-layer table as text (one line per step).

    ``keys`` are the run keys (circuit, gamma) to show; if ``authors`` maps a
    gamma to the authors' run key, each run also shows its log J minus the
    authors' circuit's (the flag circuit's measured difference).
    """
    head = f"{'layer':>5} {'Lloyd':>7}"
    sub = f"{'':>5} {'log J':>7}"
    for r in keys:
        extra = authors is not None and r[1] in authors and authors[r[1]] != r
        width = 40 + (10 if extra else 0)
        head += f" | {'gamma=' + _gamma_name(r[1]):^{width}}"
        sub += f" | {'log J':>7}" + (f" {'- authors':>9}" if extra else "")
        sub += f" {'max|dC|':>9} {'one-hot':>11} {'labels!=':>8}"
    lines = [head, sub]
    for row in rows:
        line = f"{row['layer']:>5} {row['lloyd']:>7.3f}"
        for r in keys:
            oh, diff = row[("one_hot", r)], row[("labels_differ", r)]
            oh = "-" if oh is None else f"{oh}/{n}"
            diff = "-" if diff is None else str(diff)
            line += f" | {row[('log_objective', r)]:>7.3f}"
            if authors is not None and r[1] in authors and authors[r[1]] != r:
                line += f" {row[('log_objective', r)] - row[('log_objective', authors[r[1]])]:>+9.1e}"
            line += f" {row[('max_center_diff', r)]:>9.2e} {oh:>11} {diff:>8}"
        lines.append(line)
    return "\n".join(lines)


#: the file name of figure 1 in ``run_demo``'s ``outdir``
FIGURE_NAME = "fig1_validation.png"

#: where the demo writes its figure by default: a folder of its own in the current folder, so that
#: running it never touches a committed file (``python -m kmt_ref figures`` draws ``figures/``)
DEMO_OUTDIR = "demo_output"


def run_demo(data="paper", seed=VALIDATION_SEED, n_layers=10, gammas=DEMO_GAMMAS, outdir=DEMO_OUTDIR,
             figure=True, out=None, figure_name=FIGURE_NAME):
    """Reproduce the authors' numerical validation of Theorem 2.1 (``numerical_validation.ipynb``), print the tables.

    Parameters
    ----------
    data : {"paper", "seeded"}
        The authors' draw (default) or the project's seeded draw
        (:func:`load_validation_data`).
    seed : int
        Seed of ``data="seeded"`` (ignored for the authors' draw).
    n_layers : int
        T layers / Lloyd iterations (the authors' notebook: ``niters = 10``).
    gammas : sequence of float
        Transformer inverse temperatures (the authors' notebook: ``itemp = 10000``; inf is the exact limit).
        The figure shows the first one.
    outdir : str or Path
        Where the figure (``figure_name``) is written (default :data:`DEMO_OUTDIR`,
        relative to the current folder; created if missing), the one file written there;
        an existing file of that name is replaced only if it is a PNG image
        (checked before the work, :func:`kmt_ref.validation.check_output_dir`).
    figure : bool
        Write the figure.
    out : file-like, optional
        Where the report goes (default ``sys.stdout``).
    figure_name : str
        File name of the figure in ``outdir`` (default ``fig1_validation.png``).

    Returns
    -------
    DemoResult

    Notes
    -----
    Two tables: the authors' circuit, then the flag circuit (the project's
    extension) with its log J minus the authors'. Columns: ``log J`` = natural
    log of ``sum_i min_j ||x_i - c_j^{(t)}||^2`` (the metric the authors' notebook plots),
    3 decimals; ``max|dC|`` = largest absolute difference between the
    transformer's and Lloyd's centers after layer t; ``one-hot`` = exactly
    one-hot columns of Y after layer t, float64 (module docstring);
    ``labels!=`` = points whose label (lowest argmax of y_i) differs from
    Lloyd's assignment in that step.
    """
    data = check_choice(data, "data", DATA_CHOICES)
    seed = check_count(seed, "seed")
    n_layers = check_count(n_layers, "n_layers")
    gammas = tuple(float(check_gamma(g, "gamma", allow_zero=False)) for g in gammas)
    if not gammas:
        raise ValueError(f"gammas={gammas!r} should name at least one inverse temperature")
    if figure:
        check_output_dir(outdir, "outdir", [figure_name])
    out = out or sys.stdout
    t0 = time.perf_counter()
    X, C0, description = load_validation_data(data, seed)
    ref, runs = _runs(X, C0, n_layers, gammas, tuple(CIRCUITS))
    d, n = X.shape
    k = C0.shape[1]
    rows = _table_rows(ref, runs)
    result = DemoResult(data=data, seed=seed if data == "seeded" else None, X=X, C0=C0, lloyd=ref,
                        transformers=runs, rows=rows)
    authors = {g: ("authors", g) for g in gammas}
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p("kmt_ref demo: the k-means transformer (Theorem 2.1) vs Lloyd's algorithm")
    p(f"data: {description}")
    p(f"      d={d}, n={n}, k={k} (5 x 2,000 points, std 0.1, min-max scaled, shuffled; "
      f"initial centers = first {k} points)")
    p(f"{n_layers} layers = {n_layers} Lloyd iterations; gamma = block 1 (and Euclidean block 3) inverse "
      "temperature, reset blocks 2 and 4 at their exact limit")
    for name, (_, label) in CIRCUITS.items():
        p("")
        p(f"{label}:")
        keys = [(name, g) for g in gammas]
        p(format_table(rows, keys, n, authors=authors if name != "authors" else None))
    p("")
    for r, tr in runs.items():
        gap = float(np.max(np.abs(tr.log_objective - ref.log_objective)))
        labels = int(np.sum(tr.labels != ref.labels))
        p(f"{r[0]:>7} circuit, gamma={_gamma_name(r[1])}: max |log J - log J_Lloyd| = {gap:.2e}; "
          f"labels equal to Lloyd's in {tr.labels.size - labels}/{tr.labels.size} (layer, point) pairs")
        if np.isfinite(r[1]) and n_layers:
            result.float32_one_hot[r] = float32_one_hot(X, tr.centers[-2], r[1])
            result.float32_max_weight_one[r] = float32_max_weight_one(X, tr.centers[-2], r[1])
    for g in gammas:
        diff = float(np.max(np.abs(runs[("flag", g)].log_objective - runs[("authors", g)].log_objective)))
        result.flag_minus_authors[g] = diff
        p(f"flag circuit (the project's extension) minus the authors' circuit, gamma={_gamma_name(g)}: "
          f"max |difference in log J| = {diff:.1e}")
    p("")
    p("'one-hot' counts columns y_i that are exactly a basis vector e_j in float64 (one entry 1.0,")
    p("the others 0.0): a column is one-hot exactly when exp(-gamma*gap) underflows to 0.0 for every")
    p("center but the nearest, i.e. gamma*gap > 1075 ln 2 = 745.1332 (gap = squared distance to that center minus")
    p("to the nearest).")
    p("At gamma=inf (hardmax) every column is one-hot.")
    for r, c in result.float32_max_weight_one.items():
        p(f"{r[0]} circuit, gamma={_gamma_name(r[1])}, block 1 at the last layer recomputed in float32 "
          "(the authors' dtype):")
        p(f"  largest weight exactly 1.0 (the authors' count, Y.astype(int) == 1): {c}/{n}; "
          f"exactly one-hot: {result.float32_one_hot[r]}/{n}")
    if data == "paper":
        p("The authors' notebook on this draw: log J 6.44, 5.78, 5.47, 4.96, 4.69, 4.61, 4.59, ...;")
        p("'discrete assignment for 9921/10000 points'.")
    else:
        p("The authors' numbers (6.44 -> 4.59; 9921/10000) are for their draw: run the demo without "
          "--data seeded.")
    if figure:
        from .viz.plotting import (
            write_validation_figure,  # pictures live in kmt_ref.viz, imported on demand
        )

        g = gammas[0]
        result.figure = write_validation_figure(
            Path(outdir) / figure_name, X, ref, runs[("authors", g)],
            transformer_label=f"authors' circuit, γ={_gamma_name(g)}",
            extension=runs[("flag", g)], extension_label=f"flag circuit (project's extension), γ={_gamma_name(g)}",
            data_label=("the authors' draw (numerical_validation.ipynb, seed 5487)" if data == "paper"
                        else f"the project's seeded draw (validation_data(seed={seed}))"))
        p(f"\nwrote figure 1 to {result.figure.resolve()}")
    result.seconds = time.perf_counter() - t0
    p(f"data={data}" + (f", seed={seed}" if data == "seeded" else "") + f"; finished in {result.seconds:.1f} s")
    return result


def _demo_command(args):
    """``python -m kmt_ref demo``: check the arguments and the output folder, then run."""
    check_choice(args.data, "--data", DATA_CHOICES)
    check_count(args.seed, "--seed")
    check_count(args.n_layers, "--n-layers")
    if not args.no_figure:
        check_output_dir(args.outdir, "--outdir", [FIGURE_NAME])  # run_demo's check would name "outdir"
    run_demo(args.data, args.seed, args.n_layers, outdir=args.outdir, figure=not args.no_figure)
    return 0


def register(sub):
    """Add the ``demo`` command to the ``python -m kmt_ref`` parser."""
    p = sub.add_parser("demo", help="the numerical validation of the authors' numerical_validation.ipynb, on "
                                    "their data: transformer vs Lloyd")
    p.add_argument("--data", default="paper", choices=DATA_CHOICES,
                   help="paper: the authors' validation draw (default); seeded: the project's NumPy draw (--seed)")
    p.add_argument("--seed", type=int, default=VALIDATION_SEED,
                   help="data seed of --data seeded, >= 0 (default: 0)")
    p.add_argument("--n-layers", type=int, default=10, help="layers = Lloyd iterations, >= 0 (default: 10)")
    p.add_argument("--outdir", default=DEMO_OUTDIR,
                   help=f"where fig1_validation.png goes (default: {DEMO_OUTDIR}, in the current folder), the one "
                        "file written there; an existing file of that name is replaced only if it is a PNG image")
    p.add_argument("--no-figure", action="store_true", help="print the table only")
    p.set_defaults(func=_demo_command)
