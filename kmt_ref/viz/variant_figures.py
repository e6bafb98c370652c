"""Figures of the variants: soft k-means as beta sweeps (notebook 02), each variant on data with outliers (figure 4).

The algorithms are in :mod:`kmt_ref.algorithms`; this module only runs them on
built-in data and draws what they did.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from .. import (kmeans_transformer, lloyd, randomized_kmedoids_transformer, robust_kmeans_transformer,
                kmeans_objective, soft_kmeans_transformer, trimmed_kmeans_transformer)
from ..data import blobs_with_outliers, toy_data
from .plotting import CLUSTER_COLORS, blend_colors, plot_attention, plot_center_trajectories, save_png

__all__ = ["plot_soft_beta_sweep", "figure_soft_beta_sweep", "plot_listening", "run_all_variants",
           "plot_variants_outliers", "figure_variants_outliers"]


# --------------------------------------------------------------------------
# Soft k-means as beta sweeps
# --------------------------------------------------------------------------
def plot_soft_beta_sweep(X, C0, betas, n_layers=10, fig=None):
    """Soft k-means transformer for several beta: soft assignments and the block-1 attention matrix.

    Parameters
    ----------
    X : ndarray, shape (2, n)
        2-D data (points as columns).
    C0 : ndarray, shape (2, k)
        Initial centers.
    betas : sequence of float
        One column of panels per beta.
    n_layers : int
        Layers run before drawing.
    fig : matplotlib Figure, optional

    Returns
    -------
    matplotlib.figure.Figure
        Top row: each point coloured by the mixture of its cluster colours
        with weights r_ij, the center paths (circles: start, triangles: after
        each layer). Bottom row: block 1's attention matrix in the last layer,
        keys = centers (rows) x queries = points (columns): the
        responsibilities ``r_ij``; the points are ordered by the cluster
        Lloyd's algorithm gives them after ``n_layers`` steps, so the hard
        limit is block diagonal.
    """
    if fig is None:
        fig = plt.figure(figsize=(3.2 * len(betas), 6.4))
    axes = fig.subplots(2, len(betas), squeeze=False)
    order = np.argsort(lloyd(X, C0, n_layers).labels[-1], kind="stable")  # (n,) points grouped by cluster
    for col, beta in enumerate(betas):
        tr = soft_kmeans_transformer(X, C0, n_layers, beta, record=True)
        R = tr.layers[-1].weights["1"]  # (k, n) responsibilities = attention of block 1
        ax = axes[0, col]
        plot_center_trajectories(X, tr.centers, ax=ax, title=f"beta = {beta:g}", point_color="none", legend=False)
        ax.scatter(X[0], X[1], s=22, c=blend_colors(R), edgecolors="k", linewidths=0.3, zorder=0)
        plot_attention(R[:, order], ax=axes[1, col], title=f"block 1 attention = r_ij (layer {n_layers})",
                       query_label="points, grouped by Lloyd's cluster", key_label="centers")
    fig.suptitle("soft k-means transformer (finite gamma = beta in block 1, linear block 3)\n"
                 "top: circles, the initial centers; triangles, the centers after each layer; "
                 "each point coloured by its responsibilities", fontsize=11)
    fig.tight_layout()
    return fig


def figure_soft_beta_sweep(path, seed=19):
    """Write ``fig_soft_beta_sweep.png``: :func:`plot_soft_beta_sweep` on :func:`kmt_ref.data.toy_data`."""
    X, C0 = toy_data(seed)
    fig = plot_soft_beta_sweep(X, C0, betas=(1.0, 10.0, 100.0, 1000.0), n_layers=10)
    return save_png(fig, path, dpi=110)


# --------------------------------------------------------------------------
# Figure 4: the variants on data with outliers
# --------------------------------------------------------------------------
def plot_listening(X, W, C_before, C_after, ax=None, title=None, threshold=1e-12):
    """Which points each center listens to: lines from each query center to the keys with weight > 0.

    Parameters
    ----------
    X : ndarray, shape (2, n)
    W : ndarray, shape (n + k, k) or (n, k)
        Block 3's attention matrix (``trace.layers[t].weights["3"]``); only
        the first n rows (the points) are drawn.
    C_before, C_after : ndarray, shape (2, k)
        Centers entering the layer (circles: the queries, where the lines
        start; line width grows with the weight) and leaving it (triangles).
    ax : matplotlib Axes, optional
    title : str, optional
    threshold : float
        Weights at or below it are not drawn.

    Returns
    -------
    matplotlib.figure.Figure
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    W = np.asarray(W, dtype=float)[:n]
    if ax is None:
        fig, ax = plt.subplots(figsize=(4, 4))
    fig = ax.figure
    ax.scatter(X[0], X[1], s=8, c="0.75", linewidths=0)
    for j in range(W.shape[1]):
        col = CLUSTER_COLORS[j % len(CLUSTER_COLORS)]
        heard = np.flatnonzero(W[:, j] > threshold)
        w_max = W[heard, j].max() if heard.size else 1.0
        for i in heard:
            ax.plot([C_before[0, j], X[0, i]], [C_before[1, j], X[1, i]], "-", color=col,
                    lw=0.4 + 1.2 * W[i, j] / w_max, alpha=0.6)
        ax.scatter(X[0, heard], X[1, heard], s=14, color=col, linewidths=0)
        ax.plot(C_before[0, j], C_before[1, j], "o", mfc="none", mec=col, ms=8)
        ax.plot(C_after[0, j], C_after[1, j], "^", color=col, mec="k", ms=9)
    ax.set_aspect("equal")
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def run_all_variants(X, C0, n_layers, *, gamma2, gamma_robust, gamma_medoid, seed):
    """Lloyd and the three transformer variants on the same data (record=True), for pictures.

    Returns
    -------
    dict name -> ClusteringTrace (``"Lloyd"`` is the Theorem 2.1 transformer with ``record=True``).
    """
    return {
        "Lloyd": kmeans_transformer(X, C0, n_layers, record=True),
        f"trimmed (gamma2={gamma2:g})": trimmed_kmeans_transformer(X, C0, n_layers, gamma2, record=True),
        f"robust (gamma={gamma_robust:g})": robust_kmeans_transformer(X, C0, n_layers, gamma_robust, record=True),
        f"k-medoids (gamma={gamma_medoid:g})": randomized_kmedoids_transformer(
            X, C0, n_layers, gamma_medoid, np.random.default_rng(seed), record=True),
    }


def _on_border(X, box, inset=0.02):
    """Points of X (2, m) outside ``box = (lo, hi)`` moved onto its border, along the ray from the box's middle.

    A point inside stays where it is. The ray keeps the side and the
    direction in which the point lies (clipping each coordinate would put
    every far point in a corner). ``inset`` (a fraction of the box) keeps the
    marker inside the frame.
    """
    lo, hi = (np.asarray(b, dtype=float) for b in box)
    mid, half = (lo + hi) / 2, (1 - inset) * (hi - lo) / 2
    D = X - mid[:, None]
    t = np.max(np.abs(D) / half[:, None], axis=0)  # > 1 outside the (inset) box
    return np.where(t > 1, mid[:, None] + D / np.maximum(t, 1), X)


def plot_variants_outliers(X, is_out, traces, fig=None, margin=0.15):
    """Figure 4's drawing: each run's centers (top) and block 3's listening lines (bottom), one column per run.

    Parameters
    ----------
    X : ndarray, shape (2, n)
    is_out : ndarray of bool, shape (n,)
        Which points are outliers: left out of the objective in the titles and
        of the axis range; those beyond the axes are drawn as red crosses on
        the border, where the ray from the middle of the axes to them leaves
        it, and the listening lines to them end at that cross.
    traces : dict name -> ClusteringTrace
        With ``record=True`` (:func:`run_all_variants`).
    fig : matplotlib Figure, optional
    margin : float
        Added around the inliers (and center paths) to set the axes.

    Returns
    -------
    matplotlib.figure.Figure
        Titles give log J of the inliers only,
        ``log sum_{i inlier} min_j ||x_i - c_j||^2`` at the final centers.
    """
    X = np.asarray(X, dtype=float)
    is_out = np.asarray(is_out, dtype=bool)
    Xin = X[:, ~is_out]
    if fig is None:
        fig = plt.figure(figsize=(3.4 * len(traces), 8.4), layout="constrained")
    axes = fig.subplots(2, len(traces), squeeze=False)
    paths = np.concatenate([tr.centers.transpose(1, 0, 2).reshape(2, -1) for tr in traces.values()], axis=1)
    inside = np.concatenate([Xin, paths], axis=1)
    box = (inside.min(axis=1) - margin, inside.max(axis=1) + margin)
    shown = X.copy()
    shown[:, is_out] = _on_border(X[:, is_out], box)  # where the outliers are drawn, and where lines to them end
    n_edge = int(np.sum(np.any(shown != X, axis=0)))
    for col, (name, tr) in enumerate(traces.items()):
        ax = axes[0, col]
        ax.scatter(Xin[0], Xin[1], s=6, c="0.6", linewidths=0)
        for j in range(tr.centers.shape[2]):
            c = CLUSTER_COLORS[j % len(CLUSTER_COLORS)]
            ax.plot(tr.centers[:, 0, j], tr.centers[:, 1, j], "-", color=c, lw=1)
            ax.plot(tr.centers[1:-1, 0, j], tr.centers[1:-1, 1, j], "^", color=c, ms=4)
            ax.plot(tr.centers[0, 0, j], tr.centers[0, 1, j], "o", mfc="none", mec=c, ms=8)
            ax.plot(tr.centers[-1, 0, j], tr.centers[-1, 1, j], "^", color=c, mec="k", ms=9)
        log_j_in = np.log(kmeans_objective(Xin, tr.centers[-1]))
        ax.set_title(f"{name}\nlog J of the inliers: {log_j_in:.3f}", fontsize=9)
        ax.tick_params(labelbottom=False)  # same box in both rows: the bottom row's ticks serve
        plot_listening(shown, tr.layers[-1].weights["3"], tr.centers[-2], tr.centers[-1], ax=axes[1, col],
                       title="block 3: who each center listens to")
        for a in axes[:, col]:
            a.set_xlim(box[0][0], box[1][0])
            a.set_ylim(box[0][1], box[1][1])
            a.set_aspect("equal")
            a.scatter(shown[0, is_out], shown[1, is_out], s=40, marker="x", c="r", linewidths=1.5, zorder=5)
    handles = [
        Line2D([], [], ls="", marker="o", ms=4, mfc="0.6", mec="none", label="points (inliers)"),
        Line2D([], [], ls="", marker="x", ms=7, mew=1.5, color="r",
               label=f"outliers ({n_edge} beyond the axes: drawn on the border, in their direction from the middle)"),
        Line2D([], [], ls="", marker="o", ms=8, mfc="none", mec="k", label="initial center"),
        Line2D([], [], ls="-", marker="^", ms=4, color="k", lw=1, label="center path (after each layer)"),
        Line2D([], [], ls="", marker="^", ms=9, mfc="w", mec="k", label="final center (one colour per center)"),
        Line2D([], [], ls="-", color="k", lw=1, alpha=0.6, label="bottom: center -> point it listens to (to an outlier: up to its mark)"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    return fig


def figure_variants_outliers(path, seed=4):
    """Figure 4 (SPEC §7): each variant on data with outliers, beside Lloyd.

    Top row: final centers after 5 layers with the center paths; titles give
    the log objective of the inliers. Bottom row: block 3's attention in the
    last layer, drawn as lines from each center to the points it listens to.
    Axes are set by the inliers and the center paths; the outliers sit
    beyond them and are drawn on the border, in their direction. Deterministic (fixed seeds);
    writes one PNG (:func:`plot_variants_outliers`).
    """
    X, C0, is_out = blobs_with_outliers(rng=np.random.default_rng(seed))
    traces = run_all_variants(X, C0, 5, gamma2=3.0, gamma_robust=4.0, gamma_medoid=20.0, seed=seed)
    fig = plot_variants_outliers(X, is_out, traces)
    fig.suptitle("Figure 4: variants on data with outliers, 5 layers, same initial centers", fontsize=10)
    return save_png(fig, path, dpi=110)
