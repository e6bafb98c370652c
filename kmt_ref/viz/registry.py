"""The registry of every figure in ``figures/`` (SPEC §7, figures 1-6) and ``python -m kmt_ref figures``.

:data:`FIGURES` lists ``(file name, "module:function")``; each function takes
the output path and writes that one file deterministically (fixed seeds). The
functions are imported only when their figure is drawn, so ``--only`` draws one
figure without importing the others. To add a figure, append one entry.

Byte for byte: a figure drawn twice gives the same PNG (fixed seeds, no
timings drawn, no software stamp, values at rounding level removed by
:func:`kmt_ref.viz.canvas.drawn_values`), and the same PNG under another BLAS
kernel. Across versions of matplotlib or FreeType the bytes differ (text
rasterisation, PNG encoding), so ``figures/`` matches a regeneration only
under :data:`DRAWN_WITH`, the stack it was drawn with (open: the tests
compare with the committed files only there).
"""
from __future__ import annotations

import importlib
import time

import matplotlib

#: (file name in figures/, "module:function(path)")
FIGURES = [
    ("fig1_validation.png", "kmt_ref.viz.lloyd_figures:fig1_validation"),
    ("fig2_finite_gamma_gap.png", "kmt_ref.viz.lloyd_figures:fig2_finite_gamma_gap"),
    ("fig2_heatmap_clusters_v_scale.png", "kmt_ref.viz.sweep_figures:fig2_heatmap_clusters_v_scale"),
    ("fig2_heatmap_dimensions_v_clusters.png", "kmt_ref.viz.sweep_figures:fig2_heatmap_dimensions_v_clusters"),
    ("fig2_heatmap_points_v_clusters.png", "kmt_ref.viz.sweep_figures:fig2_heatmap_points_v_clusters"),
    ("fig2_heatmap_points_v_dimensions.png", "kmt_ref.viz.sweep_figures:fig2_heatmap_points_v_dimensions"),
    ("fig3_weights_and_attention.png", "kmt_ref.viz.lloyd_figures:fig3_weights_and_attention"),
    ("fig_soft_beta_sweep.png", "kmt_ref.viz.variant_figures:figure_soft_beta_sweep"),
    ("fig4_variants_outliers.png", "kmt_ref.viz.variant_figures:figure_variants_outliers"),
    ("fig5_training.png", "kmt_ref.viz.learning_figures:fig5_training"),
    ("fig6_learned_weights.png", "kmt_ref.viz.learning_figures:fig6_learned_weights"),
    ("fig9a_loss_temperature.png", "kmt_ref.viz.train_sweep_figures:fig9a_loss_temperature"),
    ("fig9b_loss_temperature.png", "kmt_ref.viz.train_sweep_figures:fig9b_loss_temperature"),
    ("fig10a_clusters.png", "kmt_ref.viz.train_sweep_figures:fig10a_clusters"),
    ("fig10b_dimensions.png", "kmt_ref.viz.train_sweep_figures:fig10b_dimensions"),
    ("fig_binary_finite_gamma.png", "kmt_ref.viz.binary_figures:fig_binary_finite_gamma"),
    ("fig_binary_cost.png", "kmt_ref.viz.binary_figures:fig_binary_cost"),
    ("fig_binary_training.png", "kmt_ref.viz.binary_figures:fig_binary_training"),
    ("fig_animation_still.png", "kmt_ref.viz.animation:fig_animation_still"),
    ("fig0_circuit.png", "kmt_ref.viz.circuit:fig0_circuit"),
    ("fig0_circuit_variants.png", "kmt_ref.viz.circuit:fig0_circuit_variants"),
]


#: the drawing stack ``figures/`` was last drawn with (see :func:`drawing_stack`)
DRAWN_WITH = {"matplotlib": "3.11.2", "freetype": "2.14.3"}


def drawing_stack():
    """The versions the PNG bytes depend on: matplotlib and the FreeType it renders text with."""
    from matplotlib import ft2font

    return {"matplotlib": matplotlib.__version__, "freetype": ft2font.__freetype_version__}


def select(only=None):
    """The entries of :data:`FIGURES` whose file name contains ``only`` (all if None)."""
    return [(fname, target) for fname, target in FIGURES if not only or only in fname]


def _no_match(option, only):
    names = ", ".join(fname for fname, _ in FIGURES)
    return ValueError(f"{option}={only!r} matches no figure; the figures are: {names}")


def regenerate(outdir="figures", only=None, verbose=True):
    """Write every figure in :data:`FIGURES` (or those whose name contains ``only``).

    Raises
    ------
    ValueError
        ``only`` matches no figure (the message lists them), ``outdir`` is
        not a folder that exists or can be created and written, or a file
        there has the name of a figure to draw and is not a PNG image (only
        the chosen figures' PNG files are written or replaced); all are
        checked before any figure is drawn.
    """
    from ..validation import check_output_dir

    chosen = select(only)
    if not chosen:
        raise _no_match("only", only)
    outdir = check_output_dir(outdir, "outdir", [fname for fname, _ in chosen])
    matplotlib.use("Agg")
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for fname, target in chosen:
        module, func = target.split(":")
        t0 = time.perf_counter()
        getattr(importlib.import_module(module), func)(outdir / fname)
        written.append(outdir / fname)
        if verbose:
            print(f"wrote {outdir / fname}  ({time.perf_counter() - t0:.1f} s)")
    if verbose:
        print(f"{len(written)} figure{'s' * (len(written) != 1)} in {outdir.resolve()}")
    return written


def _figures_command(args):
    """``python -m kmt_ref figures``: check --only and --outdir, then draw."""
    from ..validation import check_output_dir

    chosen = select(args.only)
    if not chosen:
        raise _no_match("--only", args.only)
    check_output_dir(args.outdir, "--outdir", [fname for fname, _ in chosen])
    regenerate(args.outdir, args.only)
    return 0


def register(sub):
    """Add the ``figures`` command to the ``python -m kmt_ref`` parser."""
    p = sub.add_parser("figures", help="regenerate every figure in figures/ (deterministic)")
    p.add_argument("--outdir", default="figures",
                   help="output folder (default: figures, in the current folder). Only the figures' PNG files "
                        "are written there; an existing file of one of their names is replaced only if it is a PNG "
                        "image, and anything else is refused before any figure is drawn")
    p.add_argument("--only", default=None,
                   help="only figures whose file name contains this (e.g. fig1, fig5_training)")
    p.set_defaults(func=_figures_command)
