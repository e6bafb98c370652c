"""``python -m kmt_ref figures``: regenerate every file in ``figures/`` from code.

:data:`FIGURES` lists ``(file name, "module:function")``; each function takes
the output path and writes that one file deterministically (fixed seeds). To add
a figure, append one entry.
"""
from __future__ import annotations

import importlib
import time
from pathlib import Path

import matplotlib

#: (file name in figures/, "module:function(path)")
FIGURES = [
    ("fig1_validation.png", "kmt_ref.paper_figures:fig1_validation"),
    ("fig2_finite_gamma_gap.png", "kmt_ref.paper_figures:fig2_finite_gamma_gap"),
    ("fig3_weights_and_attention.png", "kmt_ref.paper_figures:fig3_weights_and_attention"),
    ("fig_soft_beta_sweep.png", "kmt_ref.standard_variants:figure_soft_beta_sweep"),
    ("fig4_variants_outliers.png", "kmt_ref.sparse_variants:figure_variants_outliers"),
    ("fig5_training.png", "kmt_ref.training:fig5_training"),
    ("fig6_learned_weights.png", "kmt_ref.training:fig6_learned_weights"),
]


def regenerate(outdir="figures", only=None, verbose=True):
    """Write every figure in :data:`FIGURES` (or those whose name contains ``only``)."""
    matplotlib.use("Agg")
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for fname, target in FIGURES:
        if only and only not in fname:
            continue
        module, func = target.split(":")
        t0 = time.perf_counter()
        getattr(importlib.import_module(module), func)(outdir / fname)
        written.append(outdir / fname)
        if verbose:
            print(f"wrote {outdir / fname}  ({time.perf_counter() - t0:.1f} s)")
    return written


def register(sub):
    p = sub.add_parser("figures", help="regenerate every figure in figures/ (deterministic)")
    p.add_argument("--outdir", default="figures", help="output folder (default: figures)")
    p.add_argument("--only", default=None, help="only figures whose file name contains this")
    p.set_defaults(func=lambda a: regenerate(a.outdir, a.only) and 0)
