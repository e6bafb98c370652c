"""Matrices as pictures: weight heatmaps with their embedding blocks named, attention matrices.

Arrays in, a matplotlib figure out (tokens as columns, SPEC §1); each function
draws on the given ``ax`` (or a new figure) and returns the figure, never
calling ``show()``. Re-exported by :mod:`kmt_ref.viz.plotting`:

- :func:`embedding_blocks` — the named row blocks of an ``Embedding``;
- :func:`plot_matrix` — a heatmap with labelled row/column blocks, e.g. a
  d_emb x d_emb weight with its ``x``/``y``/``flag`` blocks;
- :func:`plot_attention` — one attention matrix ``sigma(S)`` (keys x queries);
- :func:`plot_layer_attention` — the attention matrices of every block of
  one layer (a :class:`kmt_ref.core.attention.LayerRecord`'s ``weights``);
- :func:`plot_weights` — a grid of named weight matrices (the twelve Q, K, V).
"""
from __future__ import annotations

import numpy as np
import matplotlib.pyplot as plt
from matplotlib.colors import TwoSlopeNorm
from matplotlib.ticker import MaxNLocator

from ..validation import check_2d
from .canvas import _new_ax

__all__ = ["BLOCK_ROLES", "embedding_blocks", "plot_matrix", "plot_attention", "plot_layer_attention", "plot_weights"]


def embedding_blocks(emb):
    """``[(name, slice), ...]`` for the row blocks of an :class:`~kmt_ref.core.tokens.Embedding`.

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
                   cmap="viridis", colorbar=True, vmax=1.0, label_columns=False):
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
        Sequential, from 0 to ``vmax``.
    colorbar : bool
        Draw a colorbar beside ``ax`` (default), so a weight such as 1/8 can
        be read.
    vmax : float or None
        Top of the colour scale: 1 (default, every weight's largest possible
        value) or None for the matrix's own largest weight, so that small
        weights (block 3's 1/|M_j|) are not drawn nearly black.
    label_columns : bool
        Write under each query its largest weight (``1/8`` for a hardmax
        average over 8 keys), for a few queries whose weights differ.

    Returns
    -------
    matplotlib.figure.Figure
    """
    W = check_2d(W, "W")
    fig, ax = _new_ax(ax, (3.5, 3.5))
    top = float(W.max()) if vmax is None else vmax
    im = ax.imshow(W, cmap=cmap, vmin=0.0, vmax=top if top > 0 else 1.0, interpolation="nearest", aspect="auto")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if key_blocks:
        _block_ticks(ax, key_blocks, "y")
    if label_columns:
        ax.set_xticks(range(W.shape[1]))
        ax.set_xticklabels([f"{j}\nmax {_weight_text(w)}" for j, w in enumerate(W.max(axis=0))], fontsize=8)
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


def _weight_text(w):
    """A weight as text: ``1/s`` when it is one (a hardmax average over s keys), else 3 significant digits."""
    if w > 0 and abs(1 / w - round(1 / w)) < 1e-9:
        return "1" if round(1 / w) == 1 else f"1/{round(1 / w)}"
    return f"{w:.3g}"


def plot_layer_attention(weights, axes=None, roles=None, n_points=None, scale="each"):
    """The attention matrix of every block of one layer, side by side.

    Parameters
    ----------
    weights : dict of str -> ndarray, shape (r_b, q_b)
        ``LayerRecord.weights`` of :func:`kmt_ref.core.attention.layer_forward`
        (``record=True``): block name -> ``sigma(S)``.
    axes : sequence of matplotlib Axes, optional
        One per block. Without them the figure uses the constrained layout
        (do not call ``tight_layout`` on it: the colorbars span the axes).
    roles : dict of str -> (query label, key label, title), optional
        Default :data:`BLOCK_ROLES` (the Theorem 2.1 blocks).
    n_points : int, optional
        If given, a block whose keys number more than ``n_points`` gets key
        blocks ``points | centers`` (block 3 with the empty-cluster extension).
    scale : {"each", "shared"}
        ``"each"`` (default): every block its own colour scale, from 0 to its
        largest weight, with its own colorbar and the top in its title (a
        center of 8 members gives each weight 1/8, black on a [0, 1] scale);
        ``"shared"``: one colorbar on [0, 1]. A block with at most 10 queries
        whose weights stay below 1 also writes under each query its largest
        weight (``1/8`` for a hardmax average over 8 members).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if scale not in ("each", "shared"):
        raise ValueError(f"scale={scale!r} should be 'each' or 'shared'")
    roles = BLOCK_ROLES if roles is None else roles
    names = sorted(weights)
    if axes is None:
        width = 3.6 if scale == "each" else 3.2
        fig, axes = plt.subplots(1, len(names), figsize=(width * len(names) + 0.6, 3.3), layout="constrained")
        axes = np.atleast_1d(axes)
    fig = axes[0].figure
    for ax, name in zip(axes, names):
        W = weights[name]
        q_label, k_label, title = roles.get(name, ("query", "key", f"block {name}"))
        key_blocks = None
        if n_points is not None and W.shape[0] > n_points:
            key_blocks = [("points", slice(0, n_points)), ("centers", slice(n_points, W.shape[0]))]
        if scale == "each":
            title = f"{title}\ncolour scale 0 to {float(W.max()):.3g}"
        plot_attention(W, ax=ax, title=title, key_blocks=key_blocks, query_label=q_label, key_label=k_label,
                       colorbar=scale == "each", vmax=None if scale == "each" else 1.0,
                       label_columns=W.shape[1] <= 10 and W.max(axis=0).min() < 1)
    used = list(axes[:len(names)])
    if scale == "shared":
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
