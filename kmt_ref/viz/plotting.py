"""Plotting helpers: arrays in, a matplotlib figure out (STYLE §11).

Every function takes plain arrays (tokens as columns, SPEC §1), draws on the
given ``ax`` (or on a new figure) and returns the figure. None of them calls
``show()``; scripts select the Agg backend (:mod:`kmt_ref.viz.registry`).

General building blocks, reusable by any construction:

- :func:`plot_log_objective` — log k-means objective per step, several curves;
- :func:`plot_center_trajectories` — data, initial centers (circles) and the
  path of every center (triangles), as in the paper's panels B and E;
- :func:`plot_assignments` — points coloured by cluster (panels C and F);
- :func:`plot_matrix` — a heatmap with labelled row/column blocks, e.g. a
  d_emb x d_emb weight with its ``x``/``y``/``flag`` blocks
  (:func:`embedding_blocks`);
- :func:`plot_attention` — one attention matrix ``sigma(S)`` (keys x queries);
- :func:`plot_layer_attention` — the attention matrices of every block of
  one layer (a :class:`kmt_ref.attention.LayerRecord`'s ``weights``);
- :func:`plot_weights` — a grid of named weight matrices (the twelve Q, K, V);
- :func:`plot_validation` — the six-panel numerical-validation figure
  (SPEC §7, figure 1), and :func:`write_validation_figure`, which writes it
  for ``python -m kmt_ref demo`` and :func:`kmt_ref.viz.lloyd_figures.fig1_validation`;
- :func:`save_png` — write a figure to a PNG byte for byte reproducibly.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import matplotlib
import matplotlib.pyplot as plt
from matplotlib.colors import TwoSlopeNorm
from matplotlib.ticker import MaxNLocator

from ..validation import check_2d, check_center_path, check_labels

__all__ = [
    "CLUSTER_COLORS",
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
]

#: one colour per cluster index (cycled for k > 10)
CLUSTER_COLORS = plt.get_cmap("tab10").colors


def _color(j):
    return CLUSTER_COLORS[j % len(CLUSTER_COLORS)]


def _new_ax(ax, figsize=(4.0, 3.5)):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def embedding_blocks(emb):
    """``[(name, slice), ...]`` for the row blocks of an :class:`~kmt_ref.constructions.Embedding`.

    Parameters
    ----------
    emb : Embedding

    Returns
    -------
    list of (str, slice)
        E.g. ``[("x", slice(0, 2)), ("y", slice(2, 5)), ("flag", slice(5, 6))]``,
        the form :func:`plot_matrix` takes as ``row_blocks`` / ``col_blocks``.
    """
    return [(name, emb.rows(name)) for name in emb.layout]


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


def plot_center_trajectories(X, centers, ax=None, title="center trajectories", point_color="0.8"):
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

    Returns
    -------
    matplotlib.figure.Figure
    """
    X = check_2d(X, "X")
    centers = check_center_path(centers, "centers")
    fig, ax = _new_ax(ax, (4.0, 4.0))
    ax.scatter(X[0], X[1], s=2, c=point_color, linewidths=0, rasterized=True)
    for j in range(centers.shape[2]):
        path = centers[:, :2, j]  # (T+1, 2)
        ax.plot(path[:, 0], path[:, 1], "-", color=_color(j), lw=1)
        ax.plot(path[0, 0], path[0, 1], "o", color=_color(j), mec="k", ms=8)
        if len(path) > 1:
            ax.plot(path[1:, 0], path[1:, 1], "^", color=_color(j), mec="k", ms=6)
    ax.set_aspect("equal")
    ax.set_title(title)
    return fig


def plot_assignments(X, labels, centers=None, ax=None, title="assignments"):
    """Points coloured by their cluster (2-D data).

    Parameters
    ----------
    X : ndarray, shape (2, n)
    labels : ndarray of int, shape (n,)
    centers : ndarray, shape (2, k), optional
        Drawn as black-edged triangles in their cluster's colour.
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
    ax.scatter(X[0], X[1], s=2, c=colors[labels], linewidths=0, rasterized=True)
    if centers is not None:
        centers = check_2d(centers, "centers")
        for j in range(centers.shape[1]):
            ax.plot(centers[0, j], centers[1, j], "^", color=_color(j), mec="k", ms=8)
    ax.set_aspect("equal")
    ax.set_title(title)
    return fig


# --------------------------------------------------------------------------
# Matrices
# --------------------------------------------------------------------------
def _block_ticks(ax, blocks, axis):
    """Separator lines and centred labels for row (axis="y") or column blocks."""
    centers, names = [], []
    for name, sl in blocks:
        start, stop = sl.start, sl.stop
        centers.append((start + stop - 1) / 2)
        names.append(name)
        if start > 0:
            line = ax.axhline if axis == "y" else ax.axvline
            line(start - 0.5, color="k", lw=1)
    if axis == "y":
        ax.set_yticks(centers, names)
    else:
        # neighbouring one-row blocks ("norm", "one") would collide side by side: turn them upright
        crowded = len(centers) > 1 and np.min(np.diff(centers)) < 1.5
        ax.set_xticks(centers, names, rotation=90 if crowded else 0)


def plot_matrix(M, ax=None, row_blocks=None, col_blocks="same", title=None, cmap="RdBu_r",
                vmax=None, annotate=None, colorbar=True):
    """Heatmap of a matrix with its row/column blocks separated and named.

    Parameters
    ----------
    M : ndarray, shape (r, c)
    ax : matplotlib Axes, optional
    row_blocks : list of (str, slice), optional
        Named row ranges, e.g. :func:`embedding_blocks` of an ``Embedding``;
        drawn as separator lines and tick labels. ``None``: index ticks.
    col_blocks : list of (str, slice), "same" or None
        ``"same"`` (default) uses ``row_blocks`` for a square matrix.
    title : str, optional
    cmap : str
        Diverging by default, centred at 0 (red > 0, blue < 0).
    vmax : float, optional
        Colour range ``[-vmax, vmax]``; default ``max |M|`` (1 if M = 0).
    annotate : bool, optional
        Write each non-zero value in its cell (default: when both sides <= 12).
    colorbar : bool
        Draw a colorbar beside ``ax`` (default). :func:`plot_weights` turns it
        off and draws one shared colorbar for its grid.

    Returns
    -------
    matplotlib.figure.Figure
    """
    M = check_2d(M, "M")
    fig, ax = _new_ax(ax, (3.5, 3.5))
    if vmax is None:
        vmax = float(np.max(np.abs(M))) or 1.0
    im = ax.imshow(M, cmap=cmap, norm=TwoSlopeNorm(0.0, -vmax, vmax), interpolation="nearest")
    if col_blocks == "same":
        col_blocks = row_blocks if M.shape[0] == M.shape[1] else None
    if row_blocks:
        _block_ticks(ax, row_blocks, "y")
    if col_blocks:
        _block_ticks(ax, col_blocks, "x")
    if annotate is None:
        annotate = max(M.shape) <= 12
    if annotate:
        for (i, j), v in np.ndenumerate(M):
            if v != 0:
                ax.text(j, i, f"{v:g}", ha="center", va="center", fontsize=7,
                        color="w" if abs(v) > 0.6 * vmax else "k")
    if title:
        ax.set_title(title)
    if colorbar:
        fig.colorbar(im, ax=ax, fraction=0.046)
    return fig


def plot_attention(W, ax=None, title=None, key_blocks=None, query_label="query", key_label="key",
                   cmap="viridis", colorbar=True):
    """One attention matrix ``sigma(S)``: keys down the rows, queries along the columns.

    Parameters
    ----------
    W : ndarray, shape (r, q)
        Column i holds query i's weights over the r keys (each column sums to 1,
        SPEC §2).
    ax : matplotlib Axes, optional
    title : str, optional
    key_blocks : list of (str, slice), optional
        Named key ranges (e.g. ``[("points", slice(0, n)), ("centers", slice(n, n+k))]``
        for block 3's keys ``[Xbar', Cbar]``).
    query_label, key_label : str
    cmap : str
        Sequential, range [0, 1].
    colorbar : bool
        Draw a colorbar beside ``ax`` (default), so a weight such as 1/8 can
        be read; :func:`plot_layer_attention` draws one shared colorbar instead.

    Returns
    -------
    matplotlib.figure.Figure
    """
    W = check_2d(W, "W")
    fig, ax = _new_ax(ax, (3.5, 3.5))
    im = ax.imshow(W, cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest", aspect="auto")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if key_blocks:
        _block_ticks(ax, key_blocks, "y")
    ax.set_xlabel(f"{query_label} ({W.shape[1]})")
    ax.set_ylabel(f"{key_label} ({W.shape[0]})")
    if title:
        ax.set_title(title, fontsize=9)
    if colorbar:
        fig.colorbar(im, ax=ax, fraction=0.046)
    return fig


#: what each block of Theorem 2.1 attends with (queries -> keys), SPEC §3
BLOCK_ROLES = {
    "1": ("points", "centers", "1: assign (points -> centers)"),
    "2": ("points", "points", "2: reset y (points -> points)"),
    "3": ("centers", "points | centers", "3: update (centers -> points)"),
    "4": ("centers", "centers", "4: reset c (centers -> centers)"),
}


def plot_layer_attention(weights, axes=None, roles=None, n_points=None):
    """The attention matrix of every block of one layer, side by side.

    Parameters
    ----------
    weights : dict of str -> ndarray, shape (r_b, q_b)
        ``LayerRecord.weights`` of :func:`kmt_ref.attention.layer_forward`
        (``record=True``): block name -> ``sigma(S)``.
    axes : sequence of matplotlib Axes, optional
        One per block. Without them the figure uses the constrained layout
        (do not call ``tight_layout`` on it: the shared colorbar spans the axes).
    roles : dict of str -> (query label, key label, title), optional
        Default :data:`BLOCK_ROLES` (the Theorem 2.1 blocks).
    n_points : int, optional
        If given, a block whose keys number more than ``n_points`` gets key
        blocks ``points | centers`` (block 3 with the empty-cluster extension).

    Returns
    -------
    matplotlib.figure.Figure
        With one colorbar on ``[0, 1]`` shared by the blocks.
    """
    roles = BLOCK_ROLES if roles is None else roles
    names = sorted(weights)
    if axes is None:
        fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names) + 0.6, 3.2), layout="constrained")
        axes = np.atleast_1d(axes)
    fig = axes[0].figure
    for ax, name in zip(axes, names):
        W = weights[name]
        q_label, k_label, title = roles.get(name, ("query", "key", f"block {name}"))
        key_blocks = None
        if n_points is not None and W.shape[0] > n_points:
            key_blocks = [("points", slice(0, n_points)), ("centers", slice(n_points, W.shape[0]))]
        plot_attention(W, ax=ax, title=title, key_blocks=key_blocks, query_label=q_label, key_label=k_label,
                       colorbar=False)
    used = list(axes[:len(names)])
    fig.colorbar(used[0].images[-1], ax=used, fraction=0.02, pad=0.02, label="attention weight")
    return fig


def plot_weights(params, emb, names=None, axes=None, ncols=3):
    """A grid of weight matrices with the embedding's blocks labelled.

    Parameters
    ----------
    params : dict of str -> ndarray, shape (d_emb, d_emb)
    emb : Embedding
        Gives the row/column blocks (:func:`embedding_blocks`).
    names : sequence of str, optional
        Which entries, in order (default: ``Q1 K1 V1 ... Q4 K4 V4``), one row of
        the grid per ``ncols`` names.
    axes : array of matplotlib Axes, optional
        Without them the figure uses the constrained layout (no ``tight_layout``).
    ncols : int

    Returns
    -------
    matplotlib.figure.Figure
        With one colorbar shared by the whole grid: ``[-v, v]`` with
        ``v = max(1, max |entry|)`` (Theorem 2.1's weights: ``[-1, 1]``).
    """
    if names is None:
        names = [f"{m}{b}" for b in "1234" for m in "QKV"]
    if axes is None:
        nrows = -(-len(names) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols + 0.6, 2.6 * nrows), layout="constrained")
    axes = np.ravel(axes)
    blocks = embedding_blocks(emb)
    # one scale for the grid: [-1, 1], widened if an entry is larger (Theorem 2.2's Q holds 2)
    vmax = max([1.0] + [float(np.max(np.abs(params[name]))) for name in names])
    for ax, name in zip(axes, names):
        plot_matrix(params[name], ax=ax, row_blocks=blocks, title=name, vmax=vmax, colorbar=False)
    used = list(axes[:len(names)])
    used[0].figure.colorbar(used[0].images[-1], ax=used, fraction=0.02, pad=0.02, label="weight (shared scale)")
    return axes[0].figure


# --------------------------------------------------------------------------
# The paper's numerical-validation figure
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
    The paper's numerical-validation figure: (A) log objective per step of
    both runs, (D) their difference, transformer - Lloyd (and extension -
    Lloyd), per step, so that the match is read off directly rather than from
    two overlapping curves; (B, E) evolution of the centers (initial:
    circles, later: triangles), (C, F) final assignments.
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


# --------------------------------------------------------------------------
# Writing figures
# --------------------------------------------------------------------------
def save_png(fig, path, dpi=110):
    """Write ``fig`` to the PNG ``path`` (folder created) without a software stamp, then close it.

    Without the ``Software`` metadata (matplotlib's version) the same figure
    gives the same bytes, so ``figures/`` only changes when a picture does.

    Returns
    -------
    Path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, metadata={"Software": None})
    plt.close(fig)
    return path
