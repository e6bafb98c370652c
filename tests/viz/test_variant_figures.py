"""Figures of the variants: the soft-beta sweep and figure 4 (kmt_ref/viz/variant_figures.py)."""
import matplotlib

matplotlib.use("Agg")

from kmt_ref.viz.variant_figures import figure_soft_beta_sweep, figure_variants_outliers  # noqa: E402


def test_figure4(tmp_path):
    path = figure_variants_outliers(tmp_path / "fig4.png")
    assert path.exists() and path.stat().st_size > 10_000


def test_soft_beta_sweep_figure_is_written(tmp_path):
    out = figure_soft_beta_sweep(tmp_path / "fig_soft_beta_sweep.png")
    assert out.stat().st_size > 10_000


def test_figure4_titles_use_the_inlier_objective():
    import numpy as np
    from kmt_ref import kmeans_transformer, trimmed_kmeans_transformer
    from kmt_ref.data import blobs_with_outliers
    from kmt_ref.viz.variant_figures import plot_variants_outliers

    X, C0, is_out = blobs_with_outliers(rng=np.random.default_rng(4))
    traces = {"Lloyd": kmeans_transformer(X, C0, 3, record=True),
              "trimmed": trimmed_kmeans_transformer(X, C0, 3, 3.0, record=True)}
    fig = plot_variants_outliers(X, is_out, traces)
    for ax, tr in zip(fig.axes[:2], traces.values()):
        inl = np.log(np.sum(np.min(((X[:, ~is_out, None] - tr.centers[-1][:, None, :]) ** 2).sum(0), axis=1)))
        assert f"{inl:.3f}" in ax.get_title()
        assert ax.get_xlim()[1] < X[0, is_out].max() or ax.get_ylim()[1] < X[1, is_out].max()
    assert fig.legends  # markers explained
