"""Figures of the variants: the soft-beta sweep and figure 4 (kmt_ref/viz/variant_figures.py).

Copied from tests/test_standard_variants.py and tests/test_sparse_variants.py
(issue 9: tests mirror the layout); the originals go at the merge.
"""
import matplotlib

matplotlib.use("Agg")

from kmt_ref.viz.variant_figures import figure_soft_beta_sweep, figure_variants_outliers  # noqa: E402


def test_figure4(tmp_path):
    path = figure_variants_outliers(tmp_path / "fig4.png")
    assert path.exists() and path.stat().st_size > 10_000


def test_soft_beta_sweep_figure_is_written(tmp_path):
    out = figure_soft_beta_sweep(tmp_path / "fig_soft_beta_sweep.png")
    assert out.stat().st_size > 10_000
