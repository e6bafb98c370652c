"""Trajectory animations: a transformer trace against Lloyd's, frame by frame (kmt_ref/viz/animation.py)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402

from kmt_ref import binary_transformer, kmeans_transformer, lloyd  # noqa: E402
from kmt_ref.data import gaussian_blobs, toy_data  # noqa: E402
from kmt_ref.viz import animation  # noqa: E402


def _close(anim):
    """Close an animation's figure that a test inspected without rendering it (no 'deleted unrendered' warning)."""
    anim._draw_was_started = True
    plt.close(anim.frames.fig)


@pytest.fixture(scope="module")
def toy_runs():
    X, C0 = toy_data()
    return X, lloyd(X, C0, 3), kmeans_transformer(X, C0, 3, record=True), kmeans_transformer(X, C0, 3, gamma=10.0,
                                                                                                  record=True)


def test_frame_steps_counts():
    assert animation.frame_steps(3) == [(0, "start"), (1, "layer"), (2, "layer"), (3, "layer")]
    steps = animation.frame_steps(2, per_block=True)
    assert steps == [(0, "start"), (1, "assign"), (1, "update"), (2, "assign"), (2, "update")]


@pytest.mark.parametrize("per_block, count", [(False, 4), (True, 7)])
def test_animation_has_a_frame_per_layer_or_block(toy_runs, per_block, count):
    X, ref, tr, _ = toy_runs
    anim = animation.animate_trace(X, tr, ref, per_block=per_block)
    assert isinstance(anim, FuncAnimation)
    assert len(anim.frames.steps) == count
    assert len(list(anim.new_frame_seq())) == count
    assert len(anim.frames.fig.axes) == 4  # plane, attention, its colorbar, objectives
    _close(anim)


def test_transformer_centers_filled_reference_hollow_and_overlapping_at_gamma_inf(toy_runs):
    X, ref, tr, _ = toy_runs
    anim = animation.animate_trace(X, tr, ref)
    fr = anim.frames
    for i in range(len(fr.steps)):
        fr.draw(i)
        # gamma = inf: every filled marker sits exactly on its hollow ring
        assert np.allclose(fr.centers.get_offsets(), fr.ref_centers.get_offsets(), atol=1e-12)
    assert np.all(fr.centers.get_facecolors()[:, 3] == 1.0)  # filled
    assert fr.ref_centers.get_facecolors().size == 0 or np.all(fr.ref_centers.get_facecolors()[:, 3] == 0.0)
    assert np.all(fr.ref_centers.get_edgecolors()[:, 3] == 1.0)  # hollow: edges only
    assert fr.centers.get_gid() == "trace centers" and fr.ref_centers.get_gid() == "reference centers"
    assert len(fr.rings.get_offsets()) == 0  # no label differs
    _close(anim)


def test_frame_shows_block_1_attention_positions_and_differing_labels(toy_runs):
    X, ref, tr, soft = toy_runs
    anim = animation.animate_trace(X, soft, ref, per_block=True)
    fr = anim.frames
    fr.draw(0)
    assert np.array_equal(fr.image.get_array(), np.zeros((3, X.shape[1])))
    for i, (t, stage) in enumerate(fr.steps[1:], start=1):
        fr.draw(i)
        W = soft.layers[t - 1].weights["1"][:, fr.shown]
        assert np.array_equal(fr.image.get_array(), W)
        c = t - 1 if stage == "assign" else t
        assert np.array_equal(fr.centers.get_offsets(), soft.centers[c].T)
        assert np.array_equal(fr.ref_centers.get_offsets(), ref.centers[c].T)
        assert fr.marker.get_xdata()[0] == c
        differ = soft.labels[t - 1][fr.shown] != ref.labels[t - 1][fr.shown]
        assert len(fr.rings.get_offsets()) == int(differ.sum())
    _close(anim)


def test_html_is_self_contained_with_every_frame(toy_runs):
    X, ref, tr, _ = toy_runs
    figs_before = plt.get_fignums()
    html = animation.trace_animation_html(X, tr, ref)
    assert plt.get_fignums() == figs_before  # the figure is closed
    assert "<script" in html and "data:image/png;base64" in html
    assert html.count("data:image/png;base64") == 4  # T + 1 frames
    assert 10_000 < len(html) < 400_000


def test_points_downsampled_but_objective_of_all(tmp_path):
    X, C0, _ = gaussian_blobs(3, 2, 200, rng=1)  # 600 points
    ref, tr = lloyd(X, C0, 2), kmeans_transformer(X, C0, 2, record=True)
    fig = animation.trace_frame(X, tr, ref, max_points=150)
    plane, attn = fig.axes[0], fig.axes[1]
    assert len(plane.collections[0].get_offsets()) == 150
    assert attn.images[0].get_array().shape == (3, 150)
    fig.savefig(tmp_path / "frame.png")
    plt.close(fig)


def test_binary_circuit_is_animated(toy_runs):
    X, ref, _, _ = toy_runs
    tr = binary_transformer(X, toy_data()[1], 3, record=True)
    fig = animation.trace_frame(X, tr, ref, trace_label="binary codes")
    assert np.allclose(fig.axes[0].collections[-2].get_offsets(), ref.centers[-1].T, atol=1e-12)
    plt.close(fig)


def test_bad_inputs_name_the_argument(toy_runs):
    X, ref, tr, _ = toy_runs
    C0 = toy_data()[1]
    with pytest.raises(ValueError, match="d=3"):
        X3 = np.vstack([X, X[:1]])
        animation.animate_trace(X3, kmeans_transformer(X3, np.vstack([C0, C0[:1]]), 3, record=True),
                                lloyd(X3, np.vstack([C0, C0[:1]]), 3))
    with pytest.raises(ValueError, match="reference"):
        animation.animate_trace(X, tr, lloyd(X, C0, 2))
    with pytest.raises(ValueError, match="record=True"):
        animation.animate_trace(X, kmeans_transformer(X, C0, 3), ref)
    with pytest.raises(ValueError, match="trace.labels"):
        animation.animate_trace(X[:, :10], tr, ref)
    with pytest.raises(TypeError, match="reference"):
        animation.animate_trace(X, tr, ref.centers)
    with pytest.raises(ValueError, match="frame"):
        animation.trace_frame(X, tr, ref, frame=4)
    with pytest.raises(ValueError, match="max_points"):
        animation.animate_trace(X, tr, ref, max_points=0)
    with pytest.raises(TypeError, match="seed"):
        animation.animate_trace(X, tr, ref, seed="a")
    with pytest.raises(TypeError, match="n_layers"):
        animation.frame_steps("3")


def test_given_axes_are_drawn_on(toy_runs):
    X, ref, tr, _ = toy_runs
    fig, axes = plt.subplots(1, 3)
    assert animation.trace_frame(X, tr, ref, axes=axes) is fig
    assert len(axes[0].collections) == 4 and len(axes[1].images) == 1
    with pytest.raises(ValueError, match="axes"):
        animation.trace_frame(X, tr, ref, axes=axes[:2])
    plt.close("all")
