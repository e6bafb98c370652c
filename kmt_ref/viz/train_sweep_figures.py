"""The training sweeps of the paper's Figures 9, 10a and 10b, drawn as the authors' ``plot_train_id_gen.py`` draws them.

The runs are :mod:`kmt_ref.learning.train_sweep`'s (``python -m kmt_ref train-sweep``);
the committed ones, ``kmt_ref/datasets/train_sweep.csv``, are at a reduced scale
(:data:`~kmt_ref.learning.train_sweep.DEFAULT_SEEDS` seeds of
:data:`~kmt_ref.learning.train_sweep.DEFAULT_STEPS` steps per setting and embedding;
the authors ran 10 trials of 10,000 steps), stated on every figure.

The form follows the authors' plotting commands (rithram/kmeans-trf ``expts.md``,
"Appendix plots": ``--quantile 25 --drop_step_zero --logy --alt_plot``): one column
per value of the swept setting; the top row the training loss (the mean over the
50 steps before each evaluation; its first point holds the initial weights' loss, which the authors'
``--drop_step_zero`` leaves out: :func:`~kmt_ref.learning.train_sweep.figure_curves`), the bottom row the validation score (objective
after one layer / objective after one Lloyd step, mean over the validation tasks),
each the median over seeds with the 25-75 % band (with 3 seeds: halfway from the median to the
lowest and the highest seed), log₂ y axes, a dotted line at 1
(one Lloyd step) on the bottom row, both embeddings in the colours of matplotlib's
Dark2 as theirs.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import AutoMinorLocator, FuncFormatter, LogLocator, NullLocator

from ..learning.train_sweep import COMMITTED_CSV, FIGURE_SPLIT, figure_curves, read_train_sweep, seeds_text
from ..validation import check_choice
from .canvas import save_png

__all__ = ["plot_train_sweep", "fig9a_loss_temperature", "fig9b_loss_temperature",
           "fig10a_clusters", "fig10b_dimensions"]

#: the legend's words and the colours (Dark2's first two, in the authors' sorted order: none, onehot)
EMBEDDING_STYLE = {"none": ("d_emb = d (no one-hot rows)", 0), "onehot": ("d_emb = d + k (one-hot rows)", 1)}

#: each figure's fixed settings, for its title
FIXED = {"9a": "n = 512, k = 6, d = 4", "9b": "n = 512, k = 6, d = 32", "10a": "n = 512, d = 32, λ = 10",
         "10b": "n = 512, k = 6, λ = 10"}


def _panel_title(figure, value):
    if FIGURE_SPLIT[figure][0] == "loss_lambda":
        return f"loss temperature 1/λ = {1 / value:.2f}\n(λ = {value:g})"
    return f"{FIGURE_SPLIT[figure][0]} = {value}"


def plot_train_sweep(rows, figure, scale=None):
    """Draw ``figure`` ("9a", "9b", "10a", "10b") from train-sweep ``rows``; return the Figure.

    ``scale`` is the text that says how many seeds and steps the runs have (default: read from the rows).
    """
    check_choice(figure, "figure", tuple(FIGURE_SPLIT))
    curves = figure_curves(rows, figure)
    if not curves:
        raise ValueError(f"the rows hold no run that figure {figure} draws ({FIXED[figure]})")
    if scale is None:
        steps = sorted({r["steps"] for r in rows})
        scale = (f"{seeds_text(len(c['seeds']) for by in curves.values() for c in by.values())} × "
                 f"{'–'.join(f'{s:,}' for s in steps)} steps")
    colors = plt.get_cmap("Dark2").colors
    ncol = len(curves)
    fig, axes = plt.subplots(2, ncol, figsize=(2.9 * ncol + 0.6, 5.6), sharex=True, squeeze=False,
                             layout="constrained")
    for j, (value, by_emb) in enumerate(curves.items()):
        top, bottom = axes[0, j], axes[1, j]
        for embedding in sorted(by_emb):
            c = by_emb[embedding]
            label, ci = EMBEDDING_STYLE[embedding]
            for ax, key in ((top, "loss"), (bottom, "val")):
                lo, med, hi = c[key]
                ax.plot(c["step"], med, color=colors[ci], lw=1.2, marker="o", ms=2.5, label=label)  # one point shows
                ax.fill_between(c["step"], lo, hi, color=colors[ci], alpha=0.2, lw=0)
        bottom.axhline(1.0, color="k", ls=":", lw=1.0, label="one Lloyd step")
        top.set_title(_panel_title(figure, value), fontsize=10)
        bottom.set_xlabel("training step")
        for ax in (top, bottom):
            ax.set_yscale("log", base=2)
            # ticks at 1, 1.25, 1.5, 1.75 times each power of 2, written as numbers (the committed panels span
            # one to three octaves)
            ax.yaxis.set_major_locator(LogLocator(base=2, subs=(1.0, 1.25, 1.5, 1.75)))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:.4g}"))
            ax.yaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_minor_locator(AutoMinorLocator())
            ax.grid(which="major", alpha=0.6)
            ax.grid(which="minor", axis="x", alpha=0.3)
            ax.tick_params(labelsize=9)
    axes[0, 0].set_ylabel("training loss\n(smoothed bound)")
    axes[1, 0].set_ylabel("validation: objective /\none Lloyd step's")
    handles, labels = axes[1, -1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=9)
    fig.suptitle(f"Figure {figure}, reduced scale: {scale} per setting and embedding (the authors' expts.md: "
                 "10 trials × 10,000 steps)\n"
                 f"{FIXED[figure]}; median over seeds, 25–75 % band", fontsize=10)
    return fig


def _committed(figure, path):
    save_png(plot_train_sweep(read_train_sweep(COMMITTED_CSV), figure), path)


def fig9a_loss_temperature(path):
    """Figure 9a at reduced scale: the loss temperature at d = 4 (from kmt_ref/datasets/train_sweep.csv)."""
    _committed("9a", path)


def fig9b_loss_temperature(path):
    """Figure 9b at reduced scale: the loss temperature at d = 32."""
    _committed("9b", path)


def fig10a_clusters(path):
    """Figure 10a at reduced scale: k at d = 32, λ = 10 (k = 6 from Figure 9's runs, as the authors' pattern)."""
    _committed("10a", path)


def fig10b_dimensions(path):
    """Figure 10b at reduced scale: d at k = 6, λ = 10 (d = 4 and 32 from Figure 9's runs, as the authors')."""
    _committed("10b", path)
