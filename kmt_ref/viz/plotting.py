"""Plotting helpers: arrays in, a matplotlib figure out (an optional ``ax``; never ``show()``).

Every function takes plain arrays (tokens as columns, SPEC §1), draws on the
given ``ax`` (or on a new figure) and returns the figure. None of them calls
``show()``; scripts select the Agg backend (:mod:`kmt_ref.viz.registry`).

General building blocks, reusable by any construction. Here, what a clustering
run looks like:

- :func:`plot_log_objective` — log k-means objective per step, several curves;
- :func:`plot_center_trajectories` — data, initial centers (circles) and the
  path of every center (triangles): panels B and E of :func:`plot_validation`;
- :func:`plot_assignments` — points coloured by cluster: panels C and F;
- :func:`plot_validation` — the six-panel numerical-validation figure
  (SPEC §7, figure 1), and :func:`write_validation_figure`, which writes it
  for ``python -m kmt_ref demo`` and :func:`kmt_ref.viz.lloyd_figures.fig1_validation`.

Importable from here as well (one import for every primitive): the heatmaps of
:mod:`kmt_ref.viz.matrices` (:func:`plot_matrix`, :func:`plot_attention`,
:func:`plot_layer_attention`, :func:`plot_weights`, :func:`embedding_blocks`,
:data:`BLOCK_ROLES`) and, from :mod:`kmt_ref.viz.canvas`, the cluster colours
:data:`CLUSTER_COLORS`, their blend by weights :func:`blend_colors`, and
:func:`save_png`, which writes a figure to a PNG byte for byte reproducibly.
"""
from __future__ import annotations

import numpy as np
import matplotlib
import matplotlib.pyplot as plt

from ..validation import check_2d, check_center_path, check_labels
from .canvas import CLUSTER_COLORS, _color, _new_ax, blend_colors, drawn_values, save_png
from .matrices import (BLOCK_ROLES, embedding_blocks, plot_attention, plot_layer_attention, plot_matrix,
                       plot_weights)

__all__ = [
    "CLUSTER_COLORS",
    "blend_colors",
    "BLOCK_ROLES",
    "embedding_blocks",
    "plot_log_objective",
    "plot_center_trajectories",
    "plot_assignments",
    "plot_matrix",
    "plot_attention",
    "plot_layer_attention",
    "plot_weights",
    "plot_validation",
    "write_validation_figure",
    "save_png",
    "drawn_values",
]


# --------------------------------------------------------------------------
# Clustering runs
# --------------------------------------------------------------------------
def plot_log_objective(curves, ax=None, title="k-means objective", styles=None):
    """Log k-means objective per step, one curve per algorithm.

    Parameters
    ----------
    curves : dict of str -> ndarray, shape (T+1,)
        Label -> ``log(sum_i min_j ||x_i - c_j^{(t)}||^2)`` for t = 0..T
        (e.g. ``trace.log_objective``).
    ax : matplotlib Axes, optional
    title : str
    styles : dict of str -> dict, optional
        Extra ``ax.plot`` keyword arguments per label.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _new_ax(ax)
    styles = styles or {}
    markers = "osD^v<>"
    for i, (label, values) in enumerate(curves.items()):
        values = np.asarray(values, dtype=float)
        kw = {"marker": markers[i % len(markers)], "markersize": 4, "label": label}
        kw.update(styles.get(label, {}))
        ax.plot(np.arange(values.size), values, **kw)
    ax.set_xlabel("step t (iteration / layer)")
    ax.set_ylabel("log objective")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def _point_size(n):
    """Marker area of n data points: readable dots for a few hundred points, fine ones for thousands."""
    return 18 if n <= 300 else 6 if n <= 2000 else 2


def _label_axes(ax):
    ax.set_xlabel("x, coordinate 1")
    ax.set_ylabel("x, coordinate 2")


def plot_center_trajectories(X, centers, ax=None, title="center trajectories", point_color="0.6", legend=True):
    """Data points and the path of every center over the steps (2-D data).

    Parameters
    ----------
    X : ndarray, shape (2, n)
        Points as columns (only the first two rows are drawn if d > 2).
    centers : ndarray, shape (T+1, 2, k)
        ``centers[t]`` after step t; ``centers[0]`` are drawn as circles, the
        later ones as triangles joined by a line, one colour per center.
    ax : matplotlib Axes, optional
    title : str
    point_color : color of the data points
    legend : bool
        Explain the markers (circle: initial center; triangle: the center
        after each step; line: its path).

    Returns
    -------
    matplotlib.figure.Figure
    """
    X = check_2d(X, "X")
    centers = check_center_path(centers, "centers")
    fig, ax = _new_ax(ax, (4.0, 4.0))
    ax.scatter(X[0], X[1], s=_point_size(X.shape[1]), c=point_color, linewidths=0, rasterized=True)
    for j in range(centers.shape[2]):
        path = centers[:, :2, j]  # (T+1, 2)
        ax.plot(path[:, 0], path[:, 1], "-", color=_color(j), lw=1)
        ax.plot(path[0, 0], path[0, 1], "o", color=_color(j), mec="k", ms=8)
        if len(path) > 1:
            ax.plot(path[1:, 0], path[1:, 1], "^", color=_color(j), mec="k", ms=6)
    ax.set_aspect("equal")
    ax.set_title(title)
    _label_axes(ax)
    if legend:
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], ls="", marker="o", ms=7, mfc="w", mec="k", label="initial center"),
                   Line2D([], [], ls="-", marker="^", ms=6, mfc="w", mec="k", color="k", lw=1,
                          label=f"center after each step (1..{len(centers) - 1})")]
        ax.legend(handles=handles, fontsize=7, loc="best")
    return fig


def plot_assignments(X, labels, centers=None, ax=None, title="assignments"):
    """Points coloured by their cluster (2-D data).

    Parameters
    ----------
    X : ndarray, shape (2, n)
    labels : ndarray of int, shape (n,)
    centers : ndarray, shape (2, k), optional
        Drawn as black-edged triangles in their cluster's colour; each point
        takes the colour of its cluster.
    ax : matplotlib Axes, optional
    title : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    X = check_2d(X, "X")
    labels = check_labels(labels, X.shape[1], "labels")
    fig, ax = _new_ax(ax, (4.0, 4.0))
    colors = np.array([_color(j) for j in range(int(labels.max()) + 1)])
    ax.scatter(X[0], X[1], s=_point_size(X.shape[1]), c=colors[labels], linewidths=0, rasterized=True)
    if centers is not None:
        centers = check_2d(centers, "centers")
        for j in range(centers.shape[1]):
            ax.plot(centers[0, j], centers[1, j], "^", color=_color(j), mec="k", ms=8)
    ax.set_aspect("equal")
    ax.set_title(title)
    _label_axes(ax)
    return fig


# --------------------------------------------------------------------------
# The numerical-validation figure (the layout of the authors' numerical_validation.ipynb)
# --------------------------------------------------------------------------
def plot_validation(X, lloyd_trace, transformer_trace, transformer_label="transformer", fig=None,
                    extension=None, extension_label="extension", data_label=None):
    """Six panels: log objectives (A) and their difference (D); Lloyd (B, C) above the k-means transformer (E, F).

    Parameters
    ----------
    X : ndarray, shape (2, n)
    lloyd_trace, transformer_trace : ClusteringTrace
        With ``centers`` (T+1, 2, k), ``labels`` (T, n), ``objective`` (T+1,).
    transformer_label : str
        Name of the transformer run (e.g. ``"authors' circuit, gamma=10000"``).
    fig : matplotlib Figure, optional
    extension : ClusteringTrace, optional
        A second transformer run drawn dashed in panel D only, with its largest
        log-objective difference from ``transformer_trace`` written in the panel
        (the demo: the flag circuit, the project's extension).
    extension_label : str
    data_label : str, optional
        Whose data it is: the figure's title.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    The panels: (A) log objective per step of both runs, (D) their
    difference, transformer - Lloyd (and extension - Lloyd), per step, so
    that the match is read off directly rather than from two overlapping
    curves; (B, E) evolution of the centers (initial: circles, later:
    triangles), (C, F) final assignments. The 2 x 3 layout follows the
    figure of the authors' ``numerical_validation.ipynb`` (a Lloyd row above
    a transformer row: objective, "Centers' Trajectory", "Final
    Assignments"), except panels A and D: theirs show each run's objective
    alone.
    """
    fig = fig or plt.figure(figsize=(12, 7.6))
    axes = fig.subplots(2, 3)
    runs = [("Lloyd", lloyd_trace), (transformer_label, transformer_trace)]
    short = transformer_label.split(",")[0]
    lloyd_log = np.asarray(lloyd_trace.log_objective, dtype=float)
    curves = {"Lloyd": lloyd_log, transformer_label: transformer_trace.log_objective}
    styles = {"Lloyd": {"lw": 2.5, "zorder": 3}, transformer_label: {"ls": "--", "zorder": 4}}
    if extension is not None:
        head, _, tail = extension_label.partition(",")
        ext_name = head if tail and transformer_label.endswith(tail) else extension_label  # same gamma: once
        curves[ext_name] = extension.log_objective
        styles[ext_name] = {"ls": ":", "lw": 1.2, "zorder": 5, "color": "k", "marker": "x"}
    plot_log_objective(curves, ax=axes[0, 0], title="A  log objective: Lloyd and the transformer", styles=styles)
    axes[0, 0].legend(fontsize=8, loc="upper right")  # the curves fall from the upper left
    ax = axes[1, 0]
    diffs = {f"{short} - Lloyd": np.asarray(transformer_trace.log_objective, dtype=float) - lloyd_log}
    # the differences of panel D: what panel A's overlapping curves cannot show
    styles = {f"{short} - Lloyd": {"lw": 2.0, "color": "C1"}}
    if extension is not None:
        ext = np.asarray(extension.log_objective, dtype=float)
        diffs["extension - Lloyd"] = ext - lloyd_log  # named in full in panel A's legend
        styles["extension - Lloyd"] = {"ls": "--", "lw": 1.2, "zorder": 4, "color": "k", "marker": "x"}
    plot_log_objective(diffs, ax=ax, title="D  difference in log objective", styles=styles)
    ax.axhline(0.0, color="0.5", lw=0.8, zorder=1)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_ylabel("log J(run) - log J(Lloyd)")
    if extension is not None:
        diff = np.max(np.abs(ext - np.asarray(transformer_trace.log_objective, dtype=float)))
        ax.text(0.97, 0.45, f"max |extension - {short}|\n= {diff:.1e} in log J",
                transform=ax.transAxes, ha="right", va="center", fontsize=8,
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "0.7"})
    for row, (name, tr) in enumerate(runs):
        _, b, c = "ABC" if row == 0 else "DEF"
        plot_center_trajectories(X, tr.centers, ax=axes[row, 1], title=f"{b}  centers: {name}")
        plot_assignments(X, tr.labels[-1], tr.centers[-1], ax=axes[row, 2],
                         title=f"{c}  assignments after {tr.n_steps} steps")
    if data_label:
        fig.suptitle(f"Numerical validation of Theorem 2.1 on {data_label}", fontsize=12)
    fig.tight_layout()
    return fig


def write_validation_figure(path, X, lloyd_trace, transformer_trace, transformer_label="transformer",
                            extension=None, extension_label="extension", data_label=None):
    """Draw :func:`plot_validation` with the Agg backend and write it to ``path`` (:func:`save_png`).

    The figure part of ``python -m kmt_ref demo`` (:func:`kmt_ref.demo.run_demo`
    calls it) and of :func:`kmt_ref.viz.lloyd_figures.fig1_validation`: the
    same runs give the same bytes.

    Parameters
    ----------
    path : str or Path
        Output PNG; its folder is created if missing.
    X, lloyd_trace, transformer_trace, transformer_label, extension, extension_label, data_label
        As in :func:`plot_validation`.

    Returns
    -------
    Path
    """
    matplotlib.use("Agg")  # a file, never a window
    return save_png(plot_validation(X, lloyd_trace, transformer_trace, transformer_label=transformer_label,
                                    extension=extension, extension_label=extension_label,
                                    data_label=data_label), path)
