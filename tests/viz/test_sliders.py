"""The knobs' drawings, their small multiples and their sliders (kmt_ref/viz/sliders.py)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kmt_ref import kmeans_transformer, lloyd  # noqa: E402
from kmt_ref.data import blobs_with_outliers, toy_data  # noqa: E402
from kmt_ref.viz import sliders  # noqa: E402


@pytest.fixture(scope="module")
def toy():
    return toy_data()


@pytest.fixture(scope="module")
def outliers():
    return blobs_with_outliers(rng=np.random.default_rng(19))


def test_block1_gamma_draws_attention_leak_and_gap(toy):
    X, C0 = toy
    fig = sliders.plot_block1_gamma(X, C0, 10.0, n_layers=3)
    ax_w, ax_leak, ax_gap = fig.axes[:3]
    ref, tr = lloyd(X, C0, 3), kmeans_transformer(X, C0, 3, 10.0, record=True)
    order = np.argsort(ref.labels[0], kind="stable")
    assert np.array_equal(ax_w.images[0].get_array(), tr.layers[0].weights["1"][:, order])
    heights = np.array([p.get_height() for p in ax_leak.patches])
    W = tr.layers[0].weights["1"]
    leak = 1.0 - W[ref.labels[0], np.arange(X.shape[1])]
    np.testing.assert_allclose(heights, np.maximum(leak[order], sliders.LEAK_FLOOR), rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(ax_gap.lines[0].get_ydata(), tr.log_objective - ref.log_objective)
    plt.close(fig)
    fig = sliders.plot_block1_gamma(X, C0, np.inf)
    assert "leak: max 0.0e+00" in fig.axes[1].get_title()  # gamma = inf: exactly one-hot
    plt.close(fig)


def test_soft_beta_beside_the_hard_limit(toy):
    X, C0 = toy
    fig = sliders.plot_soft_beta(X, C0, np.inf, n_layers=4)
    ax = fig.axes[0]
    filled, hollow = ax.collections[1], ax.collections[2]
    assert np.allclose(filled.get_offsets(), hollow.get_offsets(), atol=1e-12)  # the limit is Lloyd
    assert hollow.get_facecolors().size == 0 or np.all(hollow.get_facecolors()[:, 3] == 0)
    plt.close(fig)
    fig = sliders.plot_soft_beta(X, C0, 1.0, n_layers=4)
    assert not np.allclose(fig.axes[0].collections[1].get_offsets(), fig.axes[0].collections[2].get_offsets())
    plt.close(fig)


def test_trimming_counts_the_points_block_3_uses(outliers):
    X, C0, is_out = outliers
    fig = sliders.plot_trimming(X, C0, 0.0, is_out=is_out)
    assert f"in a mean: {X.shape[1]}/{X.shape[1]} points" in fig.axes[0].get_title()  # gamma2 = 0: Lloyd
    plt.close(fig)
    fig = sliders.plot_sparse_supports(X, C0, 30.0, 30.0, is_out=is_out)
    for ax in fig.axes[:2]:
        used = len(ax.collections[0].get_offsets())
        trimmed = len(ax.collections[1].get_offsets())
        assert used + trimmed == X.shape[1] and trimmed > 0
        assert f"in a mean: {used}/{X.shape[1]}" in ax.get_title()
    plt.close(fig)


def test_small_multiples_one_column_per_value(toy):
    X, C0 = toy
    fig = sliders.small_multiples(lambda b, axes: sliders.plot_soft_beta(X, C0, b, n_layers=2, axes=axes),
                                  [1.0, 10.0, np.inf], rows=2)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title().startswith("beta")]
    assert [t.split(":")[0] for t in titles] == ["beta = 1", "beta = 10", "beta = inf"]
    plt.close(fig)


def test_sliders_build_headless_and_draw_with_the_same_function(toy):
    X, C0 = toy
    calls = []

    def draw(gamma, n_layers):
        calls.append((gamma, n_layers))
        return sliders.plot_block1_gamma(X, C0, gamma, n_layers=n_layers)

    figs_before = plt.get_fignums()
    widget = sliders.parameter_sliders(draw, {"gamma": [1.0, 10.0, np.inf]}, n_layers=2)
    slider = widget.children[0]
    assert type(slider).__name__ == "SelectionSlider" and slider.value == 10.0
    assert calls == [(10.0, 2)]  # drawn once on creation, not waiting for a user
    slider.value = np.inf
    assert calls[-1] == (np.inf, 2)
    assert plt.get_fignums() == figs_before  # every figure it drew is closed


def test_bad_arguments_name_themselves(toy):
    X, C0 = toy
    with pytest.raises(ValueError, match="2-D data"):
        sliders.plot_block1_gamma(np.vstack([X, X[:1]]), np.vstack([C0, C0[:1]]), 1.0)
    with pytest.raises(ValueError, match="axes"):
        sliders.plot_soft_beta(X, C0, 1.0, axes=plt.subplots(1, 3)[1])
    with pytest.raises(ValueError, match="sliders"):
        sliders.parameter_sliders(lambda: None, {})
    with pytest.raises(ValueError, match="values"):
        sliders.small_multiples(lambda v, axes: None, [])
    with pytest.raises(TypeError, match="values"):
        sliders.small_multiples(lambda v, axes: None, 3)
    with pytest.raises(ValueError, match="gamma"):
        sliders.plot_block1_gamma(X, C0, -1.0)
    with pytest.raises(TypeError, match="beta"):
        sliders.plot_soft_beta(X, C0, "10")
    with pytest.raises(TypeError, match="is_out"):
        sliders.plot_trimming(X, C0, 1.0, is_out=[0, 1])
    with pytest.raises(ValueError, match="is_out"):
        sliders.plot_robust_support(X, C0, 1.0, is_out=np.zeros(3, dtype=bool))
    plt.close("all")


def test_leak_bars_colours_have_a_legend_inside_the_figure(toy):
    """The leak panel's legend names the centers whose colours the bars mix, clear of every panel and not clipped."""
    X, C0 = toy
    from matplotlib.colors import to_rgba
    from kmt_ref.viz.canvas import _color

    one = sliders.plot_block1_gamma(X, C0, 10.0, n_layers=3)
    many = sliders.small_multiples(lambda g, axes: sliders.plot_block1_gamma(X, C0, g, n_layers=4, axes=axes),
                                   [1.0, 10.0, 100.0, np.inf], rows=3, panel_size=(3.2, 2.4))
    for fig, leak_axes in ((one, [one.axes[1]]), (many, [ax for ax in many.axes if ax.get_legend()])):
        assert len(leak_axes) == (1 if fig is one else 4)
        renderer = fig.canvas.get_renderer()
        fig.canvas.draw()
        for ax in leak_axes:
            assert ax.get_title().startswith("leak")
            legend = ax.get_legend()
            assert "colour" in legend.get_title().get_text()
            assert [t.get_text() for t in legend.get_texts()] == ["0", "1", "2"]
            assert [to_rgba(p.get_facecolor()) for p in legend.get_patches()] == [to_rgba(_color(j)) for j in range(3)]
            box = legend.get_window_extent(renderer)
            fb = fig.bbox
            assert box.x0 >= fb.x0 and box.y0 >= fb.y0 and box.x1 <= fb.x1 and box.y1 <= fb.y1
            assert not any(box.overlaps(other.get_window_extent(renderer)) for other in fig.axes)
            # and below the leak panel's own x label, not on it
            assert box.y1 <= ax.xaxis.label.get_window_extent(renderer).y0
        plt.close(fig)
