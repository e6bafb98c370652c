"""The circuits' knobs as sliders: one drawing per parameter value, shown as small multiples and behind a slider.

Each ``plot_*`` function below draws what one value of one knob does (arrays in,
a figure out, optional ``axes``, never ``show()``). The notebooks
call it twice, with the same function: :func:`small_multiples` draws it at a
few values side by side (a still figure, always stored in the executed
notebook), and :func:`parameter_sliders` puts it behind ``ipywidgets`` sliders
(``ipywidgets.interactive``, what ``interact`` displays), which a live kernel
redraws and a headless run merely builds.

- :func:`plot_block1_gamma` — Theorem 2.1 at a finite γ of block 1: the soft
  assignment matrix, the leak into non-members, the log-objective gap to Lloyd;
- :func:`plot_soft_beta` — soft k-means at β: soft assignments, centers and
  responsibilities, beside the hard limit (Lloyd's centers);
- :func:`plot_trimming` and :func:`plot_robust_support` — which points block 3
  of the trimmed (normmax) and the robust (sparsemax) circuits lets into a
  center's mean, and where the centers go; :func:`plot_sparse_supports` draws
  both.
"""
from __future__ import annotations

import numpy as np
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .. import (kmeans_transformer, lloyd, robust_kmeans_transformer, soft_kmeans_transformer,
                trimmed_kmeans_transformer)
from ..validation import check_2d, check_count, check_gamma
from .canvas import _color, blend_colors
from .matrices import plot_attention

__all__ = ["plot_block1_gamma", "plot_soft_beta", "plot_trimming", "plot_robust_support", "plot_sparse_supports",
           "small_multiples", "parameter_sliders"]

#: the smallest leak drawn on the log scale of :func:`plot_block1_gamma` (a smaller one, or 0, is drawn there)
LEAK_FLOOR = 1e-20


def _axes(axes, count, size):
    """``count`` axes: the given ones, or a new column of them."""
    if axes is None:
        fig, axes = plt.subplots(count, 1, figsize=(size[0], size[1] * count), layout="constrained", squeeze=False)
        return fig, list(axes[:, 0])
    axes = list(np.ravel(axes))
    if len(axes) != count:
        raise ValueError(f"axes must hold {count} matplotlib Axes, got {len(axes)}")
    return axes[0].figure, axes


def _data(X, C0):
    X, C0 = check_2d(X, "X"), check_2d(C0, "C0")
    if X.shape[0] != 2 or C0.shape[0] != 2:
        raise ValueError(f"X and C0 must be 2-D data (2 rows) to be drawn in the plane, got X shape={X.shape}, "
                         f"C0 shape={C0.shape}")
    return X, C0


def _outliers(is_out, n):
    """``is_out`` as a boolean mask of shape (n,), or None."""
    if is_out is None:
        return None
    mask = np.asarray(is_out)
    if mask.dtype != bool:
        raise TypeError(f"is_out must be a boolean mask over the points, got dtype {mask.dtype} ({is_out!r:.60})")
    if mask.shape != (n,):
        raise ValueError(f"is_out must have shape (n,)=({n},), one entry per point, got shape={mask.shape}")
    return mask


def _label(value):
    return "inf" if np.isinf(value) else f"{value:g}"


# --------------------------------------------------------------------------
# Notebook 01: gamma of block 1
# --------------------------------------------------------------------------
def plot_block1_gamma(X, C0, gamma, n_layers=4, axes=None):
    """Theorem 2.1 with block 1 at ``gamma``: soft assignments, their leak, and the objective against Lloyd's.

    Parameters
    ----------
    X : array_like, shape (2, n); C0 : array_like, shape (2, k)
    gamma : float
        Block 1's inverse temperature (``inf``: the exact limit);
        ``kmeans_transformer(X, C0, n_layers, gamma)`` is run.
    n_layers : int
    axes : three matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        (1) block 1's attention in layer 1, ``y_ij = softmax_j(-gamma ||x_i - c_j||^2)``
        (centers x points, points grouped by Lloyd's first assignment, so that
        Lloyd's is block diagonal); (2) per point, the leak: the weight
        ``sum_{j != l_i} y_ij`` on the centers other than Lloyd's choice ``l_i``
        (log scale; a leak below 1e-20, or exactly 0, is drawn at 1e-20); (3) the gap
        ``log J(transformer) - log J(Lloyd)`` after each layer.
    """
    X, C0 = _data(X, C0)
    n_layers = check_count(n_layers, "n_layers", minimum=1)
    fig, (ax_w, ax_leak, ax_gap) = _axes(axes, 3, (3.4, 2.3))
    ref = lloyd(X, C0, n_layers)
    tr = kmeans_transformer(X, C0, n_layers, gamma, record=True)
    first = ref.labels[0]
    order = np.argsort(first, kind="stable")
    W = np.asarray(tr.layers[0].weights["1"])  # (k, n)
    plot_attention(W[:, order], ax=ax_w, title=f"gamma = {_label(gamma)}: block 1, layer 1",
                   query_label="points, by Lloyd's cluster", key_label="centers")
    member = np.zeros_like(W, dtype=bool)
    member[first, np.arange(W.shape[1])] = True
    leak = np.where(member, 0.0, W).sum(axis=0)[order]  # (n,) the weight on non-members, summed exactly
    ax_leak.bar(np.arange(leak.size), np.maximum(leak, LEAK_FLOOR), width=1.0, color=blend_colors(W[:, order]))
    ax_leak.set_yscale("log")
    ax_leak.set_ylim(LEAK_FLOOR / 3, 3.0)
    ax_leak.set_xlim(-0.5, leak.size - 0.5)
    ax_leak.set_xlabel("points, by Lloyd's cluster", fontsize=8)
    ax_leak.set_ylabel("weight on non-members", fontsize=8)
    ax_leak.set_title(f"leak: max {leak.max():.1e}, mean {leak.mean():.1e}", fontsize=9)
    # what the bars' colours mean: y_i's mix of the centers' colours (a one-hot y_i: its center's colour)
    ax_leak.legend(handles=[Patch(color=_color(j), label=f"{j}") for j in range(W.shape[0])], ncol=W.shape[0],
                   title="bar colour: y_i's mix of centers", fontsize=8, title_fontsize=8, loc="upper center",
                   bbox_to_anchor=(0.5, -0.27), frameon=False, handlelength=1.0, handletextpad=0.3,
                   columnspacing=0.8)
    gap = tr.log_objective - ref.log_objective  # (T+1,)
    ax_gap.plot(np.arange(gap.size), gap, "o-", color="C1", ms=4)
    ax_gap.axhline(0.0, color="0.5", lw=0.8)
    ax_gap.set_xlabel("layer t", fontsize=8)
    ax_gap.set_ylabel("log J - log J(Lloyd)", fontsize=8)
    ax_gap.set_title(f"objective gap after {n_layers} layers: {gap[-1]:+.1e}", fontsize=9)
    ax_gap.grid(alpha=0.3)
    return fig


# --------------------------------------------------------------------------
# Notebook 02: beta of soft k-means
# --------------------------------------------------------------------------
def plot_soft_beta(X, C0, beta, n_layers=10, axes=None):
    """Soft k-means (the transformer with block 1 at ``beta``) after ``n_layers`` layers, beside the hard limit.

    Parameters
    ----------
    X : array_like, shape (2, n); C0 : array_like, shape (2, k)
    beta : float
        ``0 < beta``; ``inf`` draws the hard limit itself (Theorem 2.1 at
        gamma = inf, which is Lloyd's algorithm).
    n_layers : int
    axes : two matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        (1) the points coloured by the mixture of their clusters' colours with
        weights ``r_ij`` (the last layer's), the path of every center (filled
        dots) and Lloyd's centers after ``n_layers`` steps (hollow circles: the
        hard limit); (2) block 1's attention in the last layer, the
        responsibilities ``r_ij``, points grouped by Lloyd's last cluster.
    """
    X, C0 = _data(X, C0)
    beta = check_gamma(beta, "beta", allow_zero=False)
    n_layers = check_count(n_layers, "n_layers", minimum=1)
    fig, (ax_pts, ax_w) = _axes(axes, 2, (3.4, 3.2))
    ref = lloyd(X, C0, n_layers)
    if np.isinf(beta):
        tr = kmeans_transformer(X, C0, n_layers, record=True)
    else:
        tr = soft_kmeans_transformer(X, C0, n_layers, beta, record=True)
    R = np.asarray(tr.layers[-1].weights["1"])  # (k, n)
    ax_pts.scatter(X[0], X[1], s=18, c=blend_colors(R), edgecolors="k", linewidths=0.3, zorder=1)
    k = C0.shape[1]
    for j in range(k):
        ax_pts.plot(tr.centers[:, 0, j], tr.centers[:, 1, j], "-", color=_color(j), lw=1.2, zorder=2)
    ax_pts.scatter(tr.centers[-1, 0], tr.centers[-1, 1], s=55, c=[_color(j) for j in range(k)], edgecolors="k",
                   zorder=3)
    ax_pts.scatter(ref.centers[-1, 0], ref.centers[-1, 1], s=170, facecolors="none",
                   edgecolors=[_color(j) for j in range(k)], linewidths=1.6, zorder=4)
    dist = np.abs(tr.centers[-1] - ref.centers[-1]).max()
    ax_pts.set_title(f"beta = {_label(beta)}: max |c - c_Lloyd| = {dist:.1e}", fontsize=9)
    ax_pts.set_aspect("equal")
    ax_pts.legend(handles=[Line2D([], [], ls="", marker="o", mfc="0.5", mec="k", ms=7, label="soft k-means"),
                           Line2D([], [], ls="", marker="o", mfc="none", mec="0.3", mew=1.6, ms=11,
                                  label="Lloyd (hard limit)")], fontsize=7, loc="best", framealpha=0.8)
    order = np.argsort(ref.labels[-1], kind="stable")
    plot_attention(R[:, order], ax=ax_w, title=f"responsibilities r_ij (layer {n_layers})",
                   query_label="points, by Lloyd's cluster", key_label="centers")
    return fig


# --------------------------------------------------------------------------
# Notebook 03: the trimming level and the robust support
# --------------------------------------------------------------------------
def _support_panel(X, tr, ref, ax, title, is_out):
    """Points block 3 used in the last layer (coloured) or gave weight 0 (grey crosses); centers; Lloyd's."""
    n, k = X.shape[1], tr.centers.shape[2]
    W = np.asarray(tr.layers[-1].weights["3"])[:n]  # (n, k): the points' weights in each center's mean
    used = W.max(axis=1) > 0  # (n,)
    lab = tr.labels[-1]
    colors = np.array([_color(j) for j in range(k)])
    ax.scatter(X[0, used], X[1, used], s=16, c=colors[lab[used]], linewidths=0, zorder=1)
    ax.scatter(X[0, ~used], X[1, ~used], s=18, marker="x", c="0.45", linewidths=0.9, zorder=1)
    if is_out is not None:
        ax.scatter(X[0, is_out], X[1, is_out], s=90, marker="s", facecolors="none", edgecolors="k", linewidths=0.8,
                   zorder=2)
    for j in range(k):
        ax.plot(tr.centers[:, 0, j], tr.centers[:, 1, j], "-", color=_color(j), lw=1.2, zorder=3)
    ax.scatter(tr.centers[-1, 0], tr.centers[-1, 1], s=60, marker="^", c=list(colors), edgecolors="k", zorder=4)
    ax.scatter(ref.centers[-1, 0], ref.centers[-1, 1], s=150, facecolors="none", edgecolors=list(colors),
               linewidths=1.5, zorder=5)
    text = f"{title}\nin a mean: {int(used.sum())}/{n} points"
    if is_out is not None:
        text += f" ({int(used[is_out].sum())}/{int(is_out.sum())} outliers)"
        # the frame holds the inliers and every center; outliers beyond it are counted in the title
        box = np.concatenate([X[:, ~is_out], tr.centers.transpose(1, 0, 2).reshape(2, -1),
                              ref.centers.transpose(1, 0, 2).reshape(2, -1)], axis=1)
        lo, hi = box.min(axis=1), box.max(axis=1)
        pad = 0.08 * np.max(hi - lo)
        ax.set_xlim(lo[0] - pad, hi[0] + pad)
        ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_title(text, fontsize=8.5)
    ax.set_aspect("equal", adjustable="box")
    return used


def _support_legend(ax, is_out):
    handles = [Line2D([], [], ls="", marker="o", mfc="0.4", mec="none", ms=5, label="in a center's mean"),
               Line2D([], [], ls="", marker="x", mec="0.45", ms=6, label="weight 0 in every mean"),
               Line2D([], [], ls="", marker="^", mfc="0.6", mec="k", ms=7, label="center, last layer"),
               Line2D([], [], ls="", marker="o", mfc="none", mec="0.3", mew=1.5, ms=10, label="Lloyd's center")]
    if is_out is not None:
        handles.append(Line2D([], [], ls="", marker="s", mfc="none", mec="k", ms=8, label="outlier"))
    ax.legend(handles=handles, fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=2,
              frameon=False)


def _support_figure(X, C0, n_layers, is_out, ax, legend, transformer, level, title):
    """One sparse variant's support panel: ``transformer(X, C0, n_layers, level, record=True)`` beside Lloyd."""
    X, C0 = _data(X, C0)
    n_layers = check_count(n_layers, "n_layers", minimum=1)
    is_out = _outliers(is_out, X.shape[1])
    fig, (ax,) = _axes(ax, 1, (3.4, 3.4))
    tr = transformer(X, C0, n_layers, level, record=True)
    _support_panel(X, tr, lloyd(X, C0, n_layers), ax, title.format(level), is_out)
    if legend:
        _support_legend(ax, is_out)
    return fig


def plot_trimming(X, C0, gamma2, n_layers=5, is_out=None, ax=None, legend=True):
    """Trimmed k-means (block 3 with alpha = inf normmax, **(open)**) at ``gamma2``: who is trimmed, where centers go.

    Parameters
    ----------
    X : array_like, shape (2, n); C0 : array_like, shape (2, k)
    gamma2 : float
        ``0 <= gamma2 < inf``: the trimming level (0: none, Lloyd).
    n_layers : int
    is_out : ndarray of bool, shape (n,), optional
        Points to ring as outliers.
    ax : matplotlib Axes, optional
    legend : bool
        A legend below the axes.

    Returns
    -------
    matplotlib.figure.Figure
        The points with weight > 0 in some center's mean in the last layer
        (block 3's attention, ``trace.layers[-1].weights["3"]``) in their
        cluster's colour, the others as grey crosses; the center paths and last
        centers (triangles), Lloyd's last centers (hollow circles). With
        ``is_out`` the frame holds the other points and every center (an
        outlier beyond it is counted in the title) and the outliers are ringed.
    """
    return _support_figure(X, C0, n_layers, is_out, ax, legend, trimmed_kmeans_transformer, gamma2,
                           "trimmed (normmax), gamma2 = {:g}")


def plot_robust_support(X, C0, gamma, n_layers=5, is_out=None, ax=None, legend=True):
    """Robust k-means (block 3 with sparsemax, the authors' rule) at ``gamma``: its support and its centers.

    As :func:`plot_trimming`, for :func:`kmt_ref.robust_kmeans_transformer`
    (``0 <= gamma < inf``; the member score ``-gamma ||x_i - c_j||^2 / sqrt(d)``).
    """
    return _support_figure(X, C0, n_layers, is_out, ax, legend, robust_kmeans_transformer, gamma,
                           "robust (sparsemax), gamma = {:g}")


def plot_sparse_supports(X, C0, gamma2, gamma, n_layers=5, is_out=None, axes=None):
    """:func:`plot_trimming` at ``gamma2`` above :func:`plot_robust_support` at ``gamma`` (two axes)."""
    fig, (ax_t, ax_r) = _axes(axes, 2, (3.4, 3.4))
    plot_trimming(X, C0, gamma2, n_layers, is_out, ax=ax_t, legend=False)
    plot_robust_support(X, C0, gamma, n_layers, is_out, ax=ax_r)
    return fig


# --------------------------------------------------------------------------
# Small multiples and sliders: the same drawing function
# --------------------------------------------------------------------------
def small_multiples(draw, values, rows=1, panel_size=(3.2, 3.0), title=None, **fixed):
    """``draw(value, axes=column, **fixed)`` for each value, one column each: the still twin of a slider.

    Parameters
    ----------
    draw : callable
        One of the ``plot_*`` functions, with the parameter bound except the
        one that varies, e.g. ``lambda g, axes: plot_block1_gamma(X, C0, g, axes=axes)``.
    values : sequence
        One column per value.
    rows : int
        Axes per column (what ``draw`` takes as ``axes``).
    panel_size : (float, float)
        Inches per axes.
    title : str, optional
    **fixed
        Passed to ``draw``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"values must be a sequence of parameter values, got {values!r}") from None
    if not values:
        raise ValueError("values must hold at least one parameter value, got none")
    rows = check_count(rows, "rows", minimum=1)
    fig, axes = plt.subplots(rows, len(values), figsize=(panel_size[0] * len(values), panel_size[1] * rows),
                             squeeze=False, layout="constrained")
    for col, value in enumerate(values):
        draw(value, axes=axes[:, col] if rows > 1 else axes[0, col], **fixed)
    if title:
        fig.suptitle(title)
    return fig


def parameter_sliders(draw, sliders, **fixed):
    """``draw`` behind one ``ipywidgets.SelectionSlider`` per parameter (``ipywidgets.interactive``).

    Parameters
    ----------
    draw : callable
        Called as ``draw(**{name: value, ...}, **fixed)``; returns a figure.
    sliders : dict of str -> sequence of float
        Parameter name -> the values its slider offers; the slider starts at the
        middle one.
    **fixed
        Passed to ``draw``.

    Returns
    -------
    ipywidgets.interactive
        The widget (a notebook displays it as a cell's last expression). Each
        change of a slider redraws the figure in its output area (the figure is
        displayed there and closed, so none is left open). A headless kernel
        (nbclient, the test suite) builds the widget and draws the first
        figure; no one moves the slider, so nothing waits.
    """
    import ipywidgets as widgets
    from IPython.display import display

    if not sliders:
        raise ValueError("sliders must name at least one parameter and its values, got none")
    controls = {}
    for name, values in sliders.items():
        values = list(values)
        if not values:
            raise ValueError(f"sliders[{name!r}] must hold at least one value, got none")
        controls[name] = widgets.SelectionSlider(options=[(_label(v), v) for v in values],
                                                 value=values[len(values) // 2], description=name,
                                                 continuous_update=False)

    def show(**chosen):
        fig = draw(**chosen, **fixed)
        display(fig)
        plt.close(fig)

    return widgets.interactive(show, **controls)
