"""Pictures of the learning experiment (SPEC §7, figures 5 and 6).

Training curves, evaluation curves, learned beside hand-set weights, and the
two figures drawn from the committed models (``kmt_ref/models/``). The
experiment itself is :mod:`kmt_ref.learning`; nothing there draws.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import SymLogNorm
from matplotlib.ticker import MaxNLocator

from .. import lloyd, lloyd_weights
from ..validation import check_count, check_labels
from ..learning import (BLOCKS, EVAL_SEED, FAMILIES, MODELS_DIR, attention_maps, load_checkpoint, load_evaluation,
                        sample_task, setting_label)
from .canvas import _new_ax, save_png
from .matrices import _block_ticks, plot_attention

__all__ = ["plot_training_history", "plot_evaluation_curves", "plot_final_vs_n", "plot_weight_grid",
           "plot_diagonal_vs_off", "plot_assignment_counts", "fig5_training", "fig6_learned_weights"]


def plot_training_history(histories, key="val", ax=None):
    """Validation score (or ``key="loss"``) against the step, one line per run.

    Parameters
    ----------
    histories : dict name -> dict with arrays ``step`` and ``key``
    """
    fig, ax = _new_ax(ax, figsize=(5, 3.5))
    for name, h in histories.items():
        step, y = np.asarray(h["step"]), np.asarray(h[key])
        ok = np.isfinite(y)
        ax.plot(step[ok], y[ok], label=name, lw=1)
    if key == "val":
        ax.axhline(1.0, color="k", ls="--", lw=0.8, label="one Lloyd step")
        ax.set_ylabel("validation: objective / Lloyd's (1 step)")
    else:
        ax.set_ylabel("training loss (smoothed bound)")
    ax.set_xlabel("training step")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    return fig


def plot_evaluation_curves(curves, ax=None, band=(0.0, 1.0), title=None):
    """Mean log objective per clustering step with a band over tasks.

    Parameters
    ----------
    curves : dict name -> ndarray (n_tasks, T+1)
        Log objectives (e.g. ``"Lloyd"``, ``"trained"``).
    band : (float, float)
        Quantiles of the shaded band over tasks ((0, 1): min-max, as in the
        authors' figure).
    """
    fig, ax = _new_ax(ax, figsize=(5, 3.5))
    colors = {"lloyd": "k", "Lloyd": "k"}
    for name, L in curves.items():
        L = np.asarray(L)
        t = np.arange(L.shape[1])
        (line,) = ax.plot(t, L.mean(0), lw=1.5, label=f"{name} ({L.mean(0)[-1]:.3f})", color=colors.get(name))
        lo, hi = np.quantile(L, band, axis=0)
        ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.12)
    ax.set_xlabel("clustering step t")
    ax.set_ylabel("log k-means objective")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return fig


def plot_final_vs_n(ns, finals, ax=None):
    """Final mean log objective against n, one line per method (``finals``: name -> values)."""
    fig, ax = _new_ax(ax, figsize=(5, 3.5))
    for name, v in finals.items():
        ax.plot(ns, v, "o-", label=name, color="k" if name.lower() == "lloyd" else None)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.set_xlabel("n (points per task; trained at 512)")
    ax.set_ylabel("log objective after T steps")
    ax.legend(fontsize=8)
    return fig


def plot_weight_grid(learned, hand, d, k, fig=None, linthresh=0.1):
    """Heatmaps of ``Q_b^T K_b`` and ``V_b``, learned beside hand-set, for the four blocks.

    Parameters
    ----------
    learned, hand : dict
        Parameter dicts with ``Q1 .. V4`` of shape (d_emb, d_emb) (the same d_emb).
    d, k : int
        Name the row/column blocks: the first ``d`` rows are the data, the
        next ``k`` the one-hot rows (the layout ``d_emb = d + k``).
    fig : matplotlib Figure or SubFigure, optional
    linthresh : float
        The colour scale is symmetric-log, linear within ``[-linthresh, linthresh]``.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Each block (row of panels) has one symmetric colour scale, ``vmin = -vmax``
    with ``vmax`` the largest ``|entry|`` of its four panels, shared by the
    learned and the hand-set panels and shown by the row's colorbar. The
    scale is symmetric-log because the learned ``Q^T K`` entries are tens of
    times the hand-set ones (the learned layer folds gamma into them): on a
    linear scale the hand-set 1s would be white.
    """
    if fig is None:
        fig = plt.figure(figsize=(11, 10), layout="constrained")
    axs = fig.subplots(4, 4)
    blocks = [("data", slice(0, d)), ("one-hot", slice(d, d + k))]
    for r, b in enumerate(BLOCKS):
        mats = [
            (learned["Q" + b].T @ learned["K" + b], f"learned Q{b}ᵀK{b}"),
            (hand["Q" + b].T @ hand["K" + b], f"hand-set Q{b}ᵀK{b}"),
            (learned["V" + b], f"learned V{b}"),
            (hand["V" + b], f"hand-set V{b}"),
        ]
        vmax = max(float(np.max(np.abs(M))) for M, _ in mats) or 1.0
        norm = SymLogNorm(linthresh, vmin=-vmax, vmax=vmax, base=10)
        for c, (M, title) in enumerate(mats):
            ax = axs[r, c]
            im = ax.imshow(M, cmap="RdBu_r", norm=norm, interpolation="nearest")
            if M.shape[0] == d + k:
                _block_ticks(ax, blocks, "y")
                _block_ticks(ax, blocks, "x")
                ax.tick_params(labelsize=7, length=0)
                ax.tick_params(axis="y", labelrotation=90)
            else:
                ax.set_xticks([])
                ax.set_yticks([])
            ax.set_title(f"{title} (max |.| {np.max(np.abs(M)):.2g})", fontsize=8)
        cb = fig.colorbar(im, ax=list(axs[r]), fraction=0.03, pad=0.01)
        cb.set_label(f"block {b} (symlog, ±{vmax:.2g})", fontsize=8)
        cb.ax.tick_params(labelsize=7)
    return fig


def plot_diagonal_vs_off(params, d, axes=None):
    """The data blocks of ``Q_b^T K_b`` and ``V_b`` entry by entry: the d diagonal entries beside the off-diagonal ones.

    What a heatmap of 1,764 entries hides and Theorem 2.1 predicts: a data
    block that is a multiple of ``P_X`` has its diagonal entries equal and
    the rest zero. One column of dots per block; red, the ``d`` diagonal
    entries; grey, the ``d^2 - d`` off-diagonal ones (spread sideways so that
    they can be told apart; the sideways position means nothing).

    Parameters
    ----------
    params : dict
        ``Q1 .. V4``, shape (d_emb, d_emb), the data rows first.
    d : int
    axes : pair of Axes, optional
        For ``Q^T K`` and for ``V``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), layout="constrained")
    fig = axes[0].figure
    off = ~np.eye(d, dtype=bool)
    spread = ((np.arange(d * d - d) * 0.6180339887) % 1.0 - 0.5) * 0.5  # deterministic sideways spread
    for ax, name in zip(axes, ("QK", "V")):
        for x, b in enumerate(BLOCKS):
            M = params["Q" + b].T @ params["K" + b] if name == "QK" else params["V" + b]
            M = M[:d, :d]
            ax.scatter(x + spread, M[off], s=3, color="0.6", lw=0, label="off-diagonal" if x == 0 else None)
            ax.scatter(np.full(d, x + 0.32), np.diag(M), s=9, color="C3", lw=0, label="diagonal" if x == 0 else None)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xticks(range(len(BLOCKS)))
        ax.set_xticklabels([f"block {b}" for b in BLOCKS])
        title = "QᵀK" if name == "QK" else "V"
        ax.set_ylabel(f"entry of {title} (data rows and columns)", fontsize=9)
        ax.set_title(f"{title} of each block, data block:\n{d} diagonal entries (red), {d * d - d} others (grey)",
                     fontsize=9)
    axes[0].legend(fontsize=8, markerscale=2)
    return fig


def plot_assignment_counts(rows, cols, k, ax=None, row_label="rows", col_label="columns", title=None):
    """How many points carry each pair of labels: a k x k table of counts, drawn and written in its cells.

    Two assignments of the same points (e.g. each point's nearest center and the
    center a block gives its largest weight) agree where the counts sit on the
    diagonal; a relabelling of the centers would put one count in each row and
    column; a point moved to another center's group is off the diagonal.

    Parameters
    ----------
    rows, cols : int arrays, shape (n,)
        The two labels of each point, in ``0 .. k-1``.
    k : int
    ax : matplotlib Axes, optional
    row_label, col_label, title : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    k = check_count(k, "k", minimum=1)
    rows = np.asarray(rows)
    if rows.ndim != 1:
        raise ValueError(f"rows must have shape (n,), got shape={rows.shape}")
    cols = check_labels(cols, rows.shape[0], "cols")
    for name, lab in (("rows", rows), ("cols", cols)):
        if not np.issubdtype(lab.dtype, np.integer) or lab.min(initial=0) < 0 or lab.max(initial=0) >= k:
            raise ValueError(f"{name} must be integer labels in 0..{k - 1} (k={k}), got {lab.dtype} "
                             f"from {lab.min(initial=0)} to {lab.max(initial=0)}")
    counts = np.zeros((k, k), dtype=int)
    np.add.at(counts, (rows, cols), 1)
    fig, ax = _new_ax(ax, (4.2, 3.8))
    im = ax.imshow(counts, cmap="Greys", vmin=0, vmax=max(int(counts.max()), 1))
    for (r, c), v in np.ndenumerate(counts):
        if v:
            ax.text(c, r, str(v), ha="center", va="center", fontsize=7,
                    color="w" if v > 0.6 * counts.max() else "k")
    ax.set_xticks(range(k))
    ax.set_yticks(range(k))
    ax.tick_params(labelsize=7)
    ax.set_xlabel(col_label, fontsize=8)
    ax.set_ylabel(row_label, fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, label="points")
    return fig


def _committed(name):
    return load_checkpoint(MODELS_DIR / f"{name}.npz")


def fig5_training(path):
    """Figure 5: training curves, evaluation curves (d-only ablation, k-means++, other n, families)."""
    paper, donly = _committed("paper"), _committed("paper_d_only")
    ev, info = load_evaluation(MODELS_DIR / "evaluation.npz")
    fig, axs = plt.subplots(2, 3, figsize=(15, 8.5))
    hist = {f"d+k one-hot ({paper.step} steps)": paper.history, f"d-only ({donly.step} steps)": donly.history}
    plot_training_history(hist, "val", axs[0, 0])
    axs[0, 0].set_title("validation score during training", fontsize=9)
    plot_training_history(hist, "loss", axs[0, 1])
    axs[0, 1].set_title("training loss (mean over the steps between evaluations)", fontsize=9)
    base = ev[setting_label("random", 512, "normal")]
    plot_evaluation_curves({"Lloyd": base["lloyd"], "trained (d+k)": base["paper"],
                            "d-only ablation": base["paper_d_only"]}, axs[0, 2],
                           title=f"{base['lloyd'].shape[0]} tasks, n=512, random initial centers (band: min-max)")
    kpp = ev[setting_label("kmeans++", 512, "normal")]
    plot_evaluation_curves({"Lloyd": kpp["lloyd"], "trained (d+k)": kpp["paper"]}, axs[1, 0],
                           title="k-means++ initial centers")
    ns = [128, 256, 512, 1024, 2048]
    finals = {"Lloyd": [ev[setting_label("random", n, "normal")]["lloyd"][:, -1].mean() for n in ns],
              "trained (d+k)": [ev[setting_label("random", n, "normal")]["paper"][:, -1].mean() for n in ns]}
    plot_final_vs_n(ns, finals, axs[1, 1])
    axs[1, 1].set_title("other n (log objective after 20 steps)", fontsize=9)
    fams = list(FAMILIES)
    x = np.arange(len(fams))
    for off, (name, key, col) in enumerate([("Lloyd", "lloyd", "k"), ("trained (d+k)", "paper", "C1")]):
        vals = [ev[setting_label("random", 512, f)][key][:, -1].mean() for f in fams]
        axs[1, 2].bar(x + (off - 0.5) * 0.38, vals, width=0.38, label=name, color=col, alpha=0.8)
    axs[1, 2].set_xticks(x)
    axs[1, 2].set_xticklabels(fams)
    axs[1, 2].set_ylabel("log objective after 20 steps")
    axs[1, 2].set_title("task families (trained on normal only)", fontsize=9)
    axs[1, 2].legend(fontsize=8)
    fig.suptitle("Learning the algorithm: d=32, k=10, trained at n=512 "
                 f"(evaluation seed {info.get('seed', EVAL_SEED)}, no dropout at evaluation)", fontsize=10)
    fig.tight_layout()
    return save_png(fig, path, dpi=110)


def fig6_learned_weights(path):
    """Figure 6: learned vs hand-set Q^T K and V per block, and the learned attention maps."""
    paper = _committed("paper")
    cfg = paper.config
    hand, _ = lloyd_weights(cfg.d, cfg.k, "linear")  # the authors' d_emb = d + k layout (their train.py)
    fig = plt.figure(figsize=(11, 18), layout="constrained")
    top, middle, bottom = fig.subfigures(3, 1, height_ratios=[10, 3.2, 3.6])
    plot_weight_grid(paper.params, hand, cfg.d, cfg.k, top)
    plot_diagonal_vs_off(paper.params, cfg.d, middle.subplots(1, 2))
    X, C0 = sample_task(np.random.default_rng(EVAL_SEED), cfg.n, cfg.d, cfg.k)
    order = np.argsort(lloyd(X, C0, 1).labels[0], kind="stable")  # points grouped by Lloyd's first assignment
    W = attention_maps(paper.params, X[:, order], C0, cfg.embedding)
    axs = bottom.subplots(1, 4)
    roles = {"1": ("points, sorted", "centers", "block 1: centers (rows) per point"),
             "2": ("points, sorted", "points, sorted", "block 2: points per point"),
             "3": ("centers", "points, sorted", "block 3: points (rows) per center"),
             "4": ("centers", "centers", "block 4: centers per center")}
    for ax, b in zip(axs, BLOCKS):
        q, key, title = roles[b]
        plot_attention(W[b], ax=ax, title=title, query_label=q, key_label=key, colorbar=False)
        ax.images[-1].set_clim(0, W[b].max())  # each block its own scale: blocks 2 and 3 peak near 0.1
        ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))  # 512 points: few ticks
        bottom.colorbar(ax.images[-1], ax=ax, fraction=0.046, pad=0.01).ax.tick_params(labelsize=7)
    bottom.suptitle("learned attention on one task (points sorted by Lloyd's first assignment); "
                    "each panel its own colour scale, 0 to its largest weight", fontsize=9)
    return save_png(fig, path, dpi=100)
