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


def test_outliers_drawn_on_the_border_in_their_direction():
    import numpy as np
    from kmt_ref.viz.variant_figures import _on_border

    box = (np.array([0.0, 0.0]), np.array([1.0, 1.0]))
    P = np.array([[3.0, 0.5, -1.0, 0.2], [0.5, 5.5, -1.0, 0.3]])
    Q = _on_border(P, box, inset=0.0)
    np.testing.assert_allclose(Q, [[1.0, 0.5, 0.0, 0.2], [0.5, 1.0, 0.0, 0.3]])  # inside: unchanged
    # not the corner that clipping each coordinate gives: (5, 1) from the middle leaves through the right side
    np.testing.assert_allclose(_on_border(np.array([[5.5], [1.5]]), box, inset=0.0), [[1.0], [0.6]])


def test_figure4_rows_do_not_overlap_and_lines_end_at_the_outlier_marks():
    import numpy as np
    from kmt_ref import kmeans_transformer
    from kmt_ref.data import blobs_with_outliers
    from kmt_ref.viz.variant_figures import plot_variants_outliers

    X, C0, is_out = blobs_with_outliers(rng=np.random.default_rng(4))
    traces = {"Lloyd": kmeans_transformer(X, C0, 3, record=True)}
    fig = plot_variants_outliers(X, is_out, traces)
    fig.canvas.draw()
    top, bottom = fig.axes[:2]
    r = fig.canvas.get_renderer()
    assert bottom.title.get_window_extent(r).y1 < top.get_window_extent(r).y0  # the title below the top panel
    marks = next(c for c in bottom.collections if c.get_offsets().shape[0] == is_out.sum()).get_offsets()
    ends = {tuple(np.round(line.get_xydata()[-1], 12)) for line in bottom.lines}
    assert all(tuple(np.round(m, 12)) in ends for m in np.asarray(marks)[:2])  # Lloyd listens to them
    x0, x1 = bottom.get_xlim()
    y0, y1 = bottom.get_ylim()
    assert not any(np.allclose(m, c) for m in np.asarray(marks) for c in [(x0, y0), (x0, y1), (x1, y0), (x1, y1)])
