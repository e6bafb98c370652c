"""Figures of the leaner transformer with binary codes (the follow-up, Park et al., arXiv 2610.09760).

1. :func:`fig_binary_finite_gamma` — the leak at finite gamma: the log-objective
   gap to Lloyd after 10 layers against gamma, one-hot against binary codes,
   with gamma in the decoder's block 3 alone and in blocks 1 and 3. A
   non-member's code sits at distance 1 from a binary query, 2 from a one-hot
   one, so the binary decoder mixes in more of the other clusters at the same
   gamma: about e^gamma times more in kmt_ref's scores, which (unlike the
   follow-up's Definition 2.2) are not divided by sqrt(d_emb). The numbers
   come from :func:`finite_gamma_leak` (computed on the spot, seeded).
2. :func:`fig_binary_cost` — parameters, forward time, the one-hot/binary
   time ratio and peak memory against k at d = 32, drawn from the committed
   benchmark output :data:`COST_CSV` (``python benchmarks/bench_binary.py
   --out ...``); the ratio panel sets the follow-up's GPU ratio at k = 1000
   (its Table 1) beside the CPU ratio.
3. :func:`fig_binary_training` — the trained binary model beside the one-hot
   and d-only ones: validation curves and the 20-step evaluation on the same
   320 tasks, from the committed models and stored evaluations.
"""
from __future__ import annotations

import csv
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from .. import binary_transformer, gaussian_blobs, kmeans_transformer, lloyd
from ..algorithms.lloyd import lloyd_layer, lloyd_weights
from ..algorithms.binary import FOLLOW_UP_TABLE1_MS
from ..core.tokens import prepare, run_layers, with_block
from .canvas import drawn_values
from .plotting import save_png

__all__ = ["LEAK_VARIANTS", "LEAK_MODES", "LEAK_FLOOR", "plain_onehot_transformer", "finite_gamma_leak",
           "fig_binary_finite_gamma", "COST_CSV", "FOLLOW_UP_GPU_MS", "read_cost_csv", "plot_binary_cost",
           "fig_binary_cost", "fig_binary_training"]


def plain_onehot_transformer(X, C0, n_layers, gamma=np.inf, gamma_update=None):
    """Theorem 2.1 with the Euclidean block 3 over the points only (no flag token): the paper's circuit as the follow-up compares it."""
    X, C0, n_layers, frame = prepare(X, C0, n_layers)
    params, emb = lloyd_weights(X.shape[0], C0.shape[1], "linear")  # layout (x, y); K3 = P_Y
    layer = with_block(lloyd_layer(frame.gamma(gamma), np.inf, "euclidean", gamma_update), "3", keys="X")
    return run_layers(X, params, layer, emb, C0, n_layers, frame=frame)


#: label -> (run(X, C0, T, gamma, gamma_update), line style): the circuits compared at finite gamma
LEAK_VARIANTS = {
    "one-hot (paper, no flag)": (plain_onehot_transformer, dict(color="C0", ls="-")),
    "one-hot + flag (kmt_ref)": (lambda X, C, T, g, gu: kmeans_transformer(X, C, T, g, gamma_update=gu),
                                 dict(color="C0", ls="--")),
    "binary (follow-up)": (lambda X, C, T, g, gu: binary_transformer(X, C, T, g, gamma_update=gu, empty="nearest_code"),
                           dict(color="C3", ls="-")),
    "binary + shift (kmt_ref, keep)": (lambda X, C, T, g, gu: binary_transformer(X, C, T, g, gamma_update=gu),
                                       dict(color="C3", ls="--")),
}


#: the panels of :func:`fig_binary_finite_gamma`: mode -> title
LEAK_MODES = {
    "center": "block 3 at gamma, one layer:\nmax |c - c_Lloyd| (data in [0, 1])",
    "decoder": "block 3 at gamma, 10 layers:\nlog J - log J_Lloyd",
    "both": "blocks 1 and 3 at gamma, 10 layers:\nlog J - log J_Lloyd",
}


def finite_gamma_leak(gammas=tuple(np.logspace(0, 3, 19)), seeds=range(5), k=8, d=2, n_per_cluster=100, n_layers=10):
    """The gap to Lloyd at finite gamma, for every circuit of :data:`LEAK_VARIANTS`.

    Data: :func:`kmt_ref.gaussian_blobs` (k clusters, std 0.1, min-max scaled,
    first k points as centers), one draw per seed. Modes (:data:`LEAK_MODES`):
    ``"center"``, the largest center error after one layer with gamma in
    block 3 only; ``"decoder"``, the log-objective gap after ``n_layers``
    layers with gamma in block 3 only (block 1 exact); ``"both"``, the same
    with gamma in blocks 1 and 3 (the resets exact, as in the authors'
    validation).

    Returns
    -------
    dict (mode, label) -> ndarray, shape (len(gammas), len(seeds))
    """
    out = {}
    data = [gaussian_blobs(k, d, n_per_cluster, rng=s)[:2] for s in seeds]
    refs = [lloyd(X, C0, n_layers) for X, C0 in data]
    for mode in LEAK_MODES:
        for label, (run, _) in LEAK_VARIANTS.items():
            gap = np.empty((len(gammas), len(data)))
            for a, g in enumerate(gammas):
                for b, ((X, C0), ref) in enumerate(zip(data, refs)):
                    if mode == "center":
                        gap[a, b] = np.max(np.abs(run(X, C0, 1, np.inf, g).centers[1] - ref.centers[1]))
                    else:
                        tr = run(X, C0, n_layers, np.inf if mode == "decoder" else g, g)
                        gap[a, b] = tr.log_objective[-1] - ref.log_objective[-1]
            out[mode, label] = gap
    return out


#: below this a gap is rounding: drawn at the floor (log panel) or at 0 (symlog panels), see :func:`drawn_values`
LEAK_FLOOR = 1e-12


def fig_binary_finite_gamma(path, gammas=tuple(np.logspace(0, 3, 19)), seeds=range(5), res=None):
    """Write the finite-gamma figure: the gap to Lloyd against gamma, one-hot against binary (median, range over seeds).

    ``res`` is the output of :func:`finite_gamma_leak` for ``gammas`` and
    ``seeds`` (computed when None). Gaps are drawn through
    :func:`drawn_values` (3 significant digits, :data:`LEAK_FLOOR`), so the
    PNG does not change with the BLAS kernel's rounding.
    """
    res = finite_gamma_leak(gammas, seeds) if res is None else res
    n_seeds = next(iter(res.values())).shape[1]  # (len(gammas), len(seeds)) arrays: what is drawn
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for ax, (mode, title) in zip(axes, LEAK_MODES.items()):
        for label, (_, style) in LEAK_VARIANTS.items():
            gap = drawn_values(res[mode, label], LEAK_FLOOR, sig=3, log=mode == "center")
            ax.plot(gammas, np.median(gap, axis=1), label=label, **style)
            ax.fill_between(gammas, gap.min(axis=1), gap.max(axis=1), color=style["color"], alpha=0.08)
        ax.set_xscale("log")
        if mode == "center":
            ax.set_yscale("log")
            ax.set_ylim(LEAK_FLOOR / 4, 1)
            ax.axhline(LEAK_FLOOR, color="0.5", lw=0.6, ls=":")
            ax.text(gammas[-1], LEAK_FLOOR * 1.5, f"rounding: below {LEAK_FLOOR:.0e} drawn here", fontsize=7,
                    color="0.4", va="bottom", ha="right")
            ax.set_ylabel("max |c - c_Lloyd|")
        else:
            ax.set_yscale("symlog", linthresh=1e-6)
            ax.axhline(0, color="k", lw=0.6)
            ax.set_ylabel(f"log J - log J_Lloyd (0: |gap| < {LEAK_FLOOR:.0e})")
        ax.set_xlabel("gamma")
        ax.set_title(title, fontsize=10)
    axes[0].legend(fontsize=8, loc="upper right")
    fig.suptitle(f"The leak at finite gamma: k = 8 Gaussian clusters (m = 3 code bits), d = 2, n = 800; "
                 f"median and range over {n_seeds} draw{'' if n_seeds == 1 else 's'}", fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)


# --------------------------------------------------------------------------
# Cost against k
# --------------------------------------------------------------------------
#: the committed output of ``python benchmarks/bench_binary.py --out kmt_ref/datasets/binary_cost.csv``: package data,
#: so that notebook 05 reads it wherever kmt_ref is installed (a course archive holds no figures/)
COST_CSV = Path(__file__).resolve().parents[1] / "datasets" / "binary_cost.csv"

#: the follow-up's GPU forward times at k = 1000, d = 32, ms (:data:`kmt_ref.algorithms.binary.FOLLOW_UP_TABLE1_MS`)
FOLLOW_UP_GPU_MS = FOLLOW_UP_TABLE1_MS


def read_cost_csv(path=COST_CSV):
    """The benchmark rows: dict embedding -> dict column -> ndarray (sorted by k)."""
    rows = list(csv.DictReader(open(path, newline="")))
    out = {}
    for emb in ("onehot", "binary"):
        sel = sorted((r for r in rows if r["embedding"] == emb), key=lambda r: int(r["k"]))
        out[emb] = {c: np.array([float(r[c]) for r in sel]) for c in rows[0] if c != "embedding"}
    return out


def fig_binary_cost(path, csv_path=COST_CSV):
    """Write :func:`plot_binary_cost` of the benchmark CSV ``csv_path``."""
    return save_png(plot_binary_cost(read_cost_csv(csv_path)), path)


def plot_binary_cost(res):
    """The cost against k: parameters, forward time on one CPU thread, the one-hot/binary time ratio, peak memory.

    The follow-up's GPU times (:data:`FOLLOW_UP_GPU_MS`) are another machine
    and another batch (32 tasks), so they are not drawn on the CPU time axis:
    only their ratio, a pure number, is set beside the CPU ratio.

    Parameters
    ----------
    res : dict
        :func:`read_cost_csv`'s output.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, 4, figsize=(17, 4.2), layout="constrained")
    style = {"onehot": dict(color="C0", marker="o", label="one-hot, d_emb = d + k"),
             "binary": dict(color="C3", marker="s", label="binary, d_emb = d + ceil(log2 k)")}
    for emb, r in res.items():
        axes[0].plot(r["k"], r["params"], **style[emb])
        axes[1].plot(r["k"], 1e3 * r["model_s"], **style[emb])
        axes[1].plot(r["k"], 1e3 * r["circuit_s"], color=style[emb]["color"], ls=":", marker=".",
                     label=f"{emb}: exact circuit (gamma = inf)")
        axes[3].plot(r["k"], r["model_peak_mb"], **style[emb])
    on, bi = res["onehot"], res["binary"]
    axes[2].plot(on["k"], on["model_s"] / bi["model_s"], color="k", marker="o", label="trained model, one CPU thread")
    axes[2].plot(on["k"], on["circuit_s"] / bi["circuit_s"], color="k", ls=":", marker=".",
                 label="exact circuit (gamma = inf), one CPU thread")
    gpu = FOLLOW_UP_GPU_MS["onehot"] / FOLLOW_UP_GPU_MS["binary"]
    axes[2].plot([1000], [gpu], marker="*", ms=14, color="C2", ls="none",
                 label=f"follow-up's Table 1, GPU, 32 tasks: {FOLLOW_UP_GPU_MS['onehot']:g} / "
                       f"{FOLLOW_UP_GPU_MS['binary']:g} ms")
    axes[2].axhline(1.0, color="0.5", lw=0.6)
    n = int(bi["n"][0])
    panels = (("parameters = 12 (d_emb² + d_emb)", "parameters", "log"),
              (f"forward time of one task, n = {n}, one CPU thread", "milliseconds", "log"),
              ("forward time, one-hot / binary", "ratio (one-hot time / binary time)", "log"),
              ("peak memory of the model forward", "MB", "linear"))
    for ax, (title, ylabel, yscale) in zip(axes, panels):
        ax.set_xscale("log")
        ax.set_yscale(yscale)
        ax.set_xlabel("clusters k (d = 32)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
    axes[2].yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    for ax, size in zip(axes, (8, 7, 7, 8)):
        ax.legend(fontsize=size)
    return fig


# --------------------------------------------------------------------------
# Learning with binary codes
# --------------------------------------------------------------------------
def fig_binary_training(path):
    """Write the learning figure: validation score during training and the 20-step evaluation, binary beside one-hot.

    Reads the committed models ``paper`` (one-hot), ``paper_d_only`` and
    ``paper_binary`` (kmt_ref/models/), the stored evaluation of the first two
    (``evaluation.npz``) and of the binary model (``evaluation_binary.npz``,
    written by ``python -m kmt_ref evaluate kmt_ref/models/paper_binary.npz --save ...``):
    the same 320 seeded tasks.
    """
    from ..learning import MODELS_DIR, load_checkpoint, load_evaluation, setting_label
    from .learning_figures import plot_evaluation_curves, plot_training_history

    cks = {name: load_checkpoint(MODELS_DIR / f"{name}.npz") for name in ("paper", "paper_d_only", "paper_binary")}
    labels = {"paper": "one-hot, d_emb = 42", "paper_d_only": "d-only, d_emb = 32", "paper_binary": "binary, d_emb = 36"}
    key = setting_label("random", 512, "normal")
    ev = load_evaluation(MODELS_DIR / "evaluation.npz")[0][key]
    evb = load_evaluation(MODELS_DIR / "evaluation_binary.npz")[0][key]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.3))
    plot_training_history({f"{labels[n]} ({c.step} steps)": c.history for n, c in cks.items()}, "val", axes[0])
    axes[0].set_title("validation score during training (objective after the layer / after one Lloyd step)",
                      fontsize=9)
    plot_evaluation_curves({"Lloyd": ev["lloyd"], labels["paper"]: ev["paper"], labels["paper_d_only"]: ev["paper_d_only"],
                            labels["paper_binary"]: evb["paper_binary"]}, axes[1],
                           title=f"{ev['lloyd'].shape[0]} tasks, d = 32, k = 10, n = 512 (band: min-max)")
    fig.tight_layout()
    return save_png(fig, path)
