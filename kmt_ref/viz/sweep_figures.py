"""The authors' γ-sweep heatmaps, drawn from kmt_ref's re-run of their sweep (figure 2's companions).

The authors (``rithram/kmeans-trf``, ``param_sweep.ipynb``) draw four heatmaps
of their ``results/klic_parameter_sweep.csv``: ``results/Clusters_v_Scale.pdf``,
``Dimensions_v_Clusters.pdf``, ``Points_v_Clusters.pdf`` and
``Points_v_Dimensions.pdf``. Each is the mean Loss over a pair of grid axes
(a ``pandas.pivot_table`` of ``Loss`` with ``aggfunc='mean'``, so averaged
over every other axis), one panel per γ. This module draws the same four from
the committed :data:`SWEEP_774_CSV` (:mod:`kmt_ref.sweep`: NumPy draws, the
3,000 cells of their grid with n <= 774, 10 iterations):

- :func:`pair_table` -- the pure part: the axis values, and per γ the mean
  Loss, the rows averaged and the NaN rows left out of each cell;
- :func:`heatmap_figure` -- one figure of a pair, and one function per
  authors' PDF (:data:`HEATMAPS`), listed in
  :data:`kmt_ref.viz.registry.FIGURES` as ``fig2_heatmap_*.png``.

Their form, kept: the first axis of the pair on y (smallest value at the
bottom), the second on x; square cells, no annotations; one panel per γ in
the order 1, 10, 100, each titled by its γ; one colour scale for all panels,
0 to 3, the upper (white to dark red) half of ``seismic`` (seaborn's
``cmap='seismic', center=0, vmin=0, vmax=3``), so a mean below 0 draws as 0
and one above 3 as 3; ticks on every third value of x and every second of y
(their seaborn output, in all but the narrower last panel of their Points
figures); the label "Scaling" for ``Scale`` on x.

The project's choices (open): NaN Losses (a cluster emptied by Lloyd or by
the linear update; see :mod:`kmt_ref.sweep`) are left out, each cell being
the mean over its non-NaN rows (pandas' ``mean`` does the same), and the
figure says how many rows were left out; a cell with no non-NaN row would be
drawn grey (their ``fill_value=0`` draws it, and a pair absent from the CSV, as 0);
one colour bar beside the panels (theirs: on the last panel), its arrows
marking means beyond 0..3; the values of an axis that the CSV lacks of their
grid are listed beneath (this CSV holds 3 of their 10 Points, so its Points
panels have 3 rows, theirs 10); an axis of 3 or fewer values
(``Points`` here: 100, 278, 774) is labelled at every value; the means are
summed with :func:`math.fsum`, so they, and the PNG, do not depend on the
order of the rows or the CPU's summation kernel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap, Normalize

from .canvas import save_png

__all__ = ["SWEEP_774_CSV", "AXES", "HEATMAPS", "VMIN", "VMAX", "HEATMAP_CMAP", "PairTable", "pair_table",
           "read_rows", "heatmap_figure", "fig2_heatmap_clusters_v_scale", "fig2_heatmap_dimensions_v_clusters",
           "fig2_heatmap_points_v_clusters", "fig2_heatmap_points_v_dimensions"]

#: the committed sweep of the authors' grid with n <= 774 (3,000 cells), package data (``python -m kmt_ref sweep
#: --grid paper --max-points 774 --out kmt_ref/datasets/gamma_sweep_774.csv`` in a checkout)
SWEEP_774_CSV = Path(__file__).resolve().parents[1] / "datasets" / "gamma_sweep_774.csv"

#: the grid axes a heatmap can pair (columns of the sweep CSV other than Gamma, Iteration and Loss)
AXES = ("Clusters", "Dimensions", "Points", "Scale")

#: the authors' four heatmaps: their file in results/ -> (y axis, x axis)
HEATMAPS = {
    "Clusters_v_Scale.pdf": ("Clusters", "Scale"),
    "Dimensions_v_Clusters.pdf": ("Dimensions", "Clusters"),
    "Points_v_Clusters.pdf": ("Points", "Clusters"),
    "Points_v_Dimensions.pdf": ("Points", "Dimensions"),
}

#: their colour scale, shared by the panels
VMIN, VMAX = 0.0, 3.0

#: seaborn's ``seismic`` recentred at 0 for vmin = 0: the upper half of seismic, white to dark red, 256 colours
HEATMAP_CMAP = ListedColormap(plt.get_cmap("seismic")(np.linspace(0.5, 1.0, 256)), name="seismic_upper").with_extremes(
    bad="0.75")

#: the axis labels (theirs: the column name, "Scaling" for Scale)
_LABELS = {"Clusters": "Clusters (k)", "Dimensions": "Dimensions (d)", "Points": "Points (nominal n)",
           "Scale": "Scaling (data scale s)"}


@dataclass(frozen=True)
class PairTable:
    """The mean Loss over a pair of grid axes, per γ (:func:`pair_table`).

    Attributes
    ----------
    index, columns : str
        The pair: ``index`` on y (rows of the arrays), ``columns`` on x.
    index_values, column_values : tuple of int
        The values of each in the rows, ascending.
    gammas : tuple of int
    mean : ndarray, shape (len(gammas), len(index_values), len(column_values))
        Mean Loss over the non-NaN rows of each cell; NaN where there is none.
    count : ndarray of int, the shape of ``mean``
        Non-NaN rows averaged in each cell.
    nan : ndarray of int, the shape of ``mean``
        NaN rows left out of each cell.
    """

    index: str
    columns: str
    index_values: tuple
    column_values: tuple
    gammas: tuple
    mean: np.ndarray
    count: np.ndarray
    nan: np.ndarray


def _check_axis(value, name):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a column name (str), got {type(value).__name__} {value!r}")
    if value not in AXES:
        raise ValueError(f"{name}={value!r} is not a grid axis of the sweep CSV; choose one of {', '.join(AXES)}")


def pair_table(rows, index, columns, gammas=None):
    """The mean Loss of sweep ``rows`` per (``index``, ``columns``) value pair, per γ, averaged over the other axes.

    Parameters
    ----------
    rows : list of dict
        Sweep rows as :func:`kmt_ref.sweep.read_sweep` returns them.
    index, columns : str
        Two different names of :data:`AXES`: y and x of the heatmap.
    gammas : sequence of int, optional
        The γ panels, in order (default: every γ of the rows, ascending).

    Returns
    -------
    PairTable
        NaN Losses are left out of the means and counted in ``nan``.

    Raises
    ------
    ValueError
        ``rows`` is empty or not sweep rows, an axis is not in :data:`AXES`,
        the two are the same, or a γ of ``gammas`` has no row.
    TypeError
        An axis name is not a str.
    """
    _check_axis(index, "index")
    _check_axis(columns, "columns")
    if index == columns:
        raise ValueError(f"index and columns are both {index!r}; a heatmap pairs two different axes")
    rows = list(rows)
    if not rows:
        raise ValueError("rows is empty: no sweep row to average")
    needed = {index, columns, "Gamma", "Loss"}
    for no, r in enumerate(rows):
        if not isinstance(r, dict) or not needed <= r.keys():
            raise ValueError(f"rows[{no}] is not a sweep row (a dict with {', '.join(sorted(needed))}): {r!r}")
    present = sorted({r["Gamma"] for r in rows})
    gammas = tuple(present if gammas is None else gammas)
    absent = [g for g in gammas if g not in present]
    if absent or not gammas:
        raise ValueError(f"gammas={gammas!r}: no row has Gamma {absent or 'at all'} (the rows have {present})")
    iv = tuple(sorted({r[index] for r in rows}))
    cv = tuple(sorted({r[columns] for r in rows}))
    gi, ii, ci = ({v: j for j, v in enumerate(vals)} for vals in (gammas, iv, cv))
    losses = {}
    nan = np.zeros((len(gammas), len(iv), len(cv)), dtype=int)
    for r in rows:
        if r["Gamma"] not in gi:
            continue
        at = (gi[r["Gamma"]], ii[r[index]], ci[r[columns]])
        if math.isnan(r["Loss"]):
            nan[at] += 1
        else:
            losses.setdefault(at, []).append(r["Loss"])
    count = np.zeros_like(nan)
    mean = np.full(nan.shape, np.nan)
    for at, vals in losses.items():
        count[at] = len(vals)
        mean[at] = math.fsum(vals) / len(vals)
    return PairTable(index, columns, iv, cv, gammas, mean, count, nan)


def read_rows(csv=None):
    """The rows of a sweep CSV (default :data:`SWEEP_774_CSV`), with errors that name ``csv``.

    Raises
    ------
    ValueError
        The file does not exist or is not a sweep CSV.
    """
    from ..sweep import read_sweep

    path = Path(SWEEP_774_CSV if csv is None else csv)
    if not path.is_file():
        hint = "reinstall kmt_ref (package data)" if csv is None else "write it with python -m kmt_ref sweep"
        raise ValueError(f"csv={str(path)!r} does not exist or is not a file; {hint}")
    try:
        return read_sweep(path)
    except ValueError as exc:
        raise ValueError(f"csv={str(path)!r}: {exc}") from None


def _ticks(ax, which, values, step):
    """Ticks at the cell centres of every ``step``-th value (every value if there are 3 or fewer)."""
    step = 1 if len(values) <= 3 else step
    at = np.arange(0, len(values), step)
    getattr(ax, f"set_{which}ticks")(at + 0.5)
    getattr(ax, f"set_{which}ticklabels")([f"{values[j]:,}" for j in at])


def _grid_notes(rows, table):
    """What the rows lack of the authors' grid (:data:`kmt_ref.sweep.PAPER_GRID`), one phrase per axis."""
    from ..sweep import PAPER_GRID

    notes = []
    for axis in AXES:
        theirs = PAPER_GRID[axis.lower()]
        ours = sorted({r[axis] for r in rows})
        if ours != sorted(theirs):
            where = "on y" if axis == table.index else "on x" if axis == table.columns else "averaged over"
            notes.append(f"{axis} ({where}): {len(ours)} of the authors' {len(theirs)} values "
                         f"({', '.join(f'{v:,}' for v in ours)}; theirs {theirs[0]:,} to {theirs[-1]:,})")
    return notes


def _draw_panels(fig, table):
    """One heatmap per γ on a shared colour scale; returns the axes and the colour bar."""
    norm = Normalize(VMIN, VMAX)
    axes = fig.subplots(1, len(table.gammas), squeeze=False)[0]
    for ax, g, mean in zip(axes, table.gammas, table.mean):
        mesh = ax.pcolormesh(np.ma.masked_invalid(mean), cmap=HEATMAP_CMAP, norm=norm)
        ax.set_aspect("equal")
        _ticks(ax, "x", table.column_values, 3)
        _ticks(ax, "y", table.index_values, 2)
        ax.set_xlabel(_LABELS[table.columns])
        ax.set_title(f"γ = {g:g}", fontsize=11)
        ax.tick_params(length=2, labelsize=9)
    axes[0].set_ylabel(_LABELS[table.index])
    finite = table.mean[np.isfinite(table.mean)]
    below, above = bool((finite < VMIN).any()), bool((finite > VMAX).any())
    extend = {(False, False): "neither", (True, False): "min", (False, True): "max", (True, True): "both"}
    cbar = fig.colorbar(mesh, ax=list(axes), extend=extend[below, above], shrink=0.9, aspect=25)
    cbar.set_label("mean Loss =\nlog J(transformer) − log J(Lloyd)", fontsize=8.5)
    cbar.ax.tick_params(labelsize=8)
    return axes, cbar


def _texts(rows, table, csv):
    """The title (what the figure is) and the notes beneath it (NaN rows, values absent, the colour scale)."""
    from ..sweep import N_STEPS, PAPER_GRID

    others = " and ".join(a for a in AXES if a not in (table.index, table.columns))
    cells = len({tuple(r[a] for a in AXES) for r in rows})
    theirs = all(r[a] in PAPER_GRID[a.lower()] for r in rows for a in AXES)
    shown = f"kmt_ref/datasets/{csv.name}" if csv.resolve() == SWEEP_774_CSV.resolve() else csv.name
    pdf = f"{table.index}_v_{table.columns}.pdf"
    form = (f"the form of the authors' results/{pdf}" if pdf in HEATMAPS else "a pair the authors did not draw, in "
            "the form of their heatmaps")
    title = (f"Mean Loss per ({table.index}, {table.columns}), averaged over {others}: {form} "
             "(rithram/kmeans-trf, param_sweep.ipynb)\n"
             f"Ours: kmt_ref's re-run of their γ sweep ({shown}), NumPy draws, the {cells:,} cells "
             f"{'of their grid ' if theirs else ''}with n ≤ {max(r['Points'] for r in rows):,}, "
             f"{N_STEPS} iterations\nLoss = log J(transformer) − log J(Lloyd) after {N_STEPS} steps")
    left_out = [int(m.sum()) for m in table.nan]
    total = [int((c + m).sum()) for c, m in zip(table.count, table.nan)]
    if len(set(zip(left_out, total))) == 1:
        per_g = f"{left_out[0]} of {total[0]:,} rows at each γ"
    else:
        per_g = ", ".join(f"{m} of {t:,}" for m, t in zip(left_out, total)) + " rows at γ = " + ", ".join(
            f"{g:g}" for g in table.gammas)
    lo, hi = int(table.count.min()), int((table.count + table.nan).max())
    notes = [f"NaN Losses (an empty cluster) left out: {per_g}; each cell is the mean of its non-NaN rows "
             f"({lo} to {hi} rows a cell)"]
    absent = _grid_notes(rows, table)
    notes += ["not in this CSV: " + "; ".join(absent)] if absent else []
    notes += [f"one colour scale for the panels, {VMIN:g} to {VMAX:g} as theirs: a mean below {VMIN:g} draws "
              f"as {VMIN:g}, one above {VMAX:g} as {VMAX:g} (the colour bar's arrows)"]
    if (table.count == 0).any():
        notes += ["grey: a cell with no non-NaN row"]
    return title, "\n".join(notes)


def heatmap_figure(path, index, columns, csv=None):
    """Write the mean-Loss heatmap of the pair (``index`` on y, ``columns`` on x), one panel per γ.

    Parameters
    ----------
    path : str or Path
        Output PNG.
    index, columns : str
        Two names of :data:`AXES`.
    csv : str or Path, optional
        A CSV written by ``python -m kmt_ref sweep`` (default :data:`SWEEP_774_CSV`).

    Returns
    -------
    PairTable
        The table drawn (:func:`pair_table` of the CSV's rows).

    Raises
    ------
    ValueError, TypeError
        As :func:`pair_table` and :func:`read_rows`.
    """
    _check_axis(index, "index")
    _check_axis(columns, "columns")
    rows = read_rows(csv)
    table = pair_table(rows, index, columns)
    tall = len(table.index_values) / len(table.column_values)
    fig = plt.figure(figsize=(12.5, 2.7 + 3.6 * tall), layout="constrained")
    _draw_panels(fig, table)
    title, notes = _texts(rows, table, Path(SWEEP_774_CSV if csv is None else csv))
    fig.suptitle(title, fontsize=10)
    fig.supxlabel(notes, fontsize=8.5)
    save_png(fig, path)
    return table


def fig2_heatmap_clusters_v_scale(path, csv=None):
    """Their ``results/Clusters_v_Scale.pdf``: mean Loss per (Clusters on y, Scale on x) (:func:`heatmap_figure`)."""
    return heatmap_figure(path, *HEATMAPS["Clusters_v_Scale.pdf"], csv=csv)


def fig2_heatmap_dimensions_v_clusters(path, csv=None):
    """Their ``results/Dimensions_v_Clusters.pdf``: mean Loss per (Dimensions, Clusters) (:func:`heatmap_figure`)."""
    return heatmap_figure(path, *HEATMAPS["Dimensions_v_Clusters.pdf"], csv=csv)


def fig2_heatmap_points_v_clusters(path, csv=None):
    """Their ``results/Points_v_Clusters.pdf``: mean Loss per (Points, Clusters) (:func:`heatmap_figure`)."""
    return heatmap_figure(path, *HEATMAPS["Points_v_Clusters.pdf"], csv=csv)


def fig2_heatmap_points_v_dimensions(path, csv=None):
    """Their ``results/Points_v_Dimensions.pdf``: mean Loss per (Points, Dimensions) (:func:`heatmap_figure`)."""
    return heatmap_figure(path, *HEATMAPS["Points_v_Dimensions.pdf"], csv=csv)
