"""Plotting primitives: arrays in, a figure out (kmt_ref/viz/plotting.py with matrices.py and canvas.py)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kmt_ref import kmeans_transformer, lloyd, lloyd_weights  # noqa: E402
from kmt_ref.data import toy_data  # noqa: E402
from kmt_ref.viz import plotting  # noqa: E402


@pytest.fixture(scope="module")
def toy_runs():
    X, C0 = toy_data()
    return X, lloyd(X, C0, 3), kmeans_transformer(X, C0, 3, record=True)


def test_plot_functions_return_figures(toy_runs):
    X, ref, tr = toy_runs
    params, emb = lloyd_weights(2, 3)
    figs = [
        plotting.plot_log_objective({"Lloyd": ref.log_objective, "transformer": tr.log_objective}),
        plotting.plot_center_trajectories(X, ref.centers),
        plotting.plot_assignments(X, ref.labels[-1], ref.centers[-1]),
        plotting.plot_matrix(params["K3"], row_blocks=plotting.embedding_blocks(emb), title="K3"),
        plotting.plot_attention(tr.layers[0].weights["3"]),
        plotting.plot_layer_attention(tr.layers[0].weights, n_points=X.shape[1]),
        plotting.plot_weights(params, emb),
        plotting.plot_validation(X, ref, tr),
    ]
    for fig in figs:
        assert isinstance(fig, matplotlib.figure.Figure)
        plt.close(fig)


def test_plot_on_given_ax_returns_its_figure(toy_runs):
    X, ref, _ = toy_runs
    fig, axes = plt.subplots(1, 2)
    assert plotting.plot_assignments(X, ref.labels[-1], ax=axes[0]) is fig
    assert plotting.plot_matrix(np.eye(3), ax=axes[1]) is fig
    plt.close(fig)


def test_embedding_blocks_name_the_rows():
    _, emb = lloyd_weights(2, 3)
    assert plotting.embedding_blocks(emb) == [("x", slice(0, 2)), ("y", slice(2, 5)), ("flag", slice(5, 6))]


def test_plot_bad_shapes():
    with pytest.raises(ValueError, match="labels must have shape"):
        plotting.plot_assignments(np.zeros((2, 4)), np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="M must be a 2-D array"):
        plotting.plot_matrix(np.zeros(3))
    with pytest.raises(ValueError, match="centers must have shape"):
        plotting.plot_center_trajectories(np.zeros((2, 4)), np.zeros((2, 3)))
    plt.close("all")


def _n_colorbars(fig):
    return sum(getattr(ax, "_colorbar", None) is not None for ax in fig.axes)


def test_attention_and_weight_plots_have_colorbars(toy_runs):
    X, _, tr = toy_runs
    params, emb = lloyd_weights(2, 3)
    figs = [plotting.plot_attention(tr.layers[0].weights["3"]), plotting.plot_matrix(params["K3"]),
            plotting.plot_layer_attention(tr.layers[0].weights, n_points=X.shape[1], scale="shared"),
            plotting.plot_weights(params, emb)]
    for fig in figs:
        assert _n_colorbars(fig) == 1  # a single (shared) scale per figure
        plt.close(fig)


def test_layer_attention_gives_each_block_its_own_scale(toy_runs):
    """Block 3 spreads 1/|M_j| over a center's members: on a shared [0, 1] scale those weights look black."""
    X, _, tr = toy_runs
    weights = tr.layers[0].weights
    fig = plotting.plot_layer_attention(weights, n_points=X.shape[1])
    assert _n_colorbars(fig) == 4
    panels = [ax for ax in fig.axes if ax.images and getattr(ax, "_colorbar", None) is None]
    for ax, name in zip(panels, sorted(weights)):
        assert ax.images[0].get_clim() == (0.0, weights[name].max())
        assert f"0 to {weights[name].max():.3g}" in ax.get_title()
    assert weights["3"].max() <= 0.5  # the case the shared scale hid
    with pytest.raises(ValueError, match="scale='both'"):
        plotting.plot_layer_attention(weights, scale="both")
    plt.close("all")


def test_validation_panel_d_is_the_difference(toy_runs):
    X, ref, tr = toy_runs
    fig = plotting.plot_validation(X, ref, tr)
    ax_d = fig.axes[3]  # row 2, column 1
    assert ax_d.get_title().startswith("D  difference")
    y = ax_d.get_lines()[0].get_ydata()
    np.testing.assert_allclose(y, np.asarray(tr.log_objective) - np.asarray(ref.log_objective))
    plt.close(fig)


def test_every_public_name_is_importable_from_plotting_and_is_its_home_modules():
    """The primitives live in three modules (runs here, heatmaps in matrices, colours and PNGs in canvas);
    ``kmt_ref.viz.plotting.<name>`` still gives each public name, the very object of its home module."""
    from kmt_ref.viz import canvas, matrices

    homes = {name: module for module in (canvas, matrices) for name in module.__all__}
    assert set(homes) <= set(plotting.__all__)
    for name in plotting.__all__:
        obj = getattr(plotting, name)
        if name in homes:
            assert obj is getattr(homes[name], name), name
        else:
            assert getattr(obj, "__module__", "kmt_ref.viz.plotting") == "kmt_ref.viz.plotting", name


def test_save_png_writes_the_same_bytes_twice(tmp_path):
    for name in ("a.png", "b.png"):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [1, 0], color=plotting.CLUSTER_COLORS[1])
        plotting.save_png(fig, tmp_path / "sub" / name)
    assert (tmp_path / "sub" / "a.png").read_bytes() == (tmp_path / "sub" / "b.png").read_bytes()


def test_blend_colors_mixes_the_cluster_colours_by_weight():
    from kmt_ref.viz.canvas import CLUSTER_COLORS, blend_colors
    W = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]])  # (k, n): two one-hot columns and a tie
    rgb = blend_colors(W)
    assert rgb.shape == (3, 3)
    np.testing.assert_array_equal(rgb[:2], np.array(CLUSTER_COLORS[:2]))
    np.testing.assert_allclose(rgb[2], (np.array(CLUSTER_COLORS[0]) + np.array(CLUSTER_COLORS[1])) / 2, atol=1e-15)
