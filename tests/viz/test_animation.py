"""Trajectory animations: a transformer trace against Lloyd's, frame by frame (kmt_ref/viz/animation.py)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import re  # noqa: E402

import pytest  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402
from matplotlib.font_manager import FontProperties  # noqa: E402
from matplotlib.text import Text  # noqa: E402

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
    assert 10_000 < len(html) < animation.EMBED_LIMIT_MB * 1e6


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


# --------------------------------------------------------------------------
# Readable frames: size, fonts, nothing clipped, nothing on top of another
# --------------------------------------------------------------------------
def _inside(box, fig_box, what):
    assert (box.x0 >= fig_box.x0 - 0.5 and box.y0 >= fig_box.y0 - 0.5 and box.x1 <= fig_box.x1 + 0.5
            and box.y1 <= fig_box.y1 + 0.5), f"{what} {box.bounds} leaves the figure {fig_box.bounds}"


def _texts(fig):
    """Every visible, non-empty text of ``fig`` but the tick labels (those are in the axes' tight boxes)."""
    ticks = {id(lab) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for tick in axis.get_major_ticks() + axis.get_minor_ticks() for lab in (tick.label1, tick.label2)}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text() and id(t) not in ticks]


@pytest.fixture(scope="module")
def long_labels():
    """The toy example at gamma = 10, four layers, with the notebooks' longest trace label."""
    X, C0 = toy_data(19)
    return X, lloyd(X, C0, 4), kmeans_transformer(X, C0, 4, 10.0, record=True)


@pytest.mark.parametrize("label", ["transformer, γ = ∞", "transformer, γ = 10", "binary codes"])
def test_no_text_is_clipped_in_any_frame(long_labels, label):
    X, ref, tr = long_labels
    anim = animation.animate_trace(X, tr, ref, per_block=True, trace_label=label)
    fr, fig = anim.frames, anim.frames.fig
    renderer = fig.canvas.get_renderer()
    for i in range(len(fr.steps)):
        fr.draw(i)
        fig.canvas.draw()
        for ax in fig.axes:
            _inside(ax.get_tightbbox(renderer), fig.bbox, f"frame {i}: the axes {ax.get_label()!r} with its labels")
        texts = _texts(fig)
        assert any(t.get_text() == label for t in texts)  # the legends' labels are among them
        for text in texts:
            _inside(text.get_window_extent(renderer), fig.bbox, f"frame {i}: the text {text.get_text()!r}")
        for legend in [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
            box = legend.get_window_extent(renderer)
            _inside(box, fig.bbox, f"frame {i}: a legend")
            # outside every panel: no curve, center or marker line runs through a legend
            assert not any(box.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes), f"frame {i}"
    _close(anim)


def test_frames_are_wide_and_their_text_as_large_as_the_notebooks(long_labels):
    """At least 960 px wide; the smallest text as tall in pixels as an inline figure's tick labels.

    The notebooks' inline figures are drawn at matplotlib's default dpi and font size
    (matplotlib_inline sets neither); their tick labels are ``xtick.labelsize`` there.
    """
    X, ref, tr = long_labels
    fig = animation.trace_frame(X, tr, ref, frame=2)
    width, height = fig.canvas.get_width_height()
    assert width >= 960 and height >= 400
    assert (width, height) == (1050, 470)  # FIGSIZE at DPI, as the module says
    defaults = matplotlib.rcParamsDefault
    tick_px = FontProperties(size=defaults["xtick.labelsize"]).get_size_in_points() * defaults["figure.dpi"] / 72
    fig.canvas.draw()
    sizes = [t.get_fontsize() * fig.dpi / 72 for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    assert len(sizes) > 30 and min(sizes) >= tick_px - 1e-9
    plt.close(fig)


def test_objective_y_label_is_clear_of_the_colorbar(long_labels):
    X, ref, tr = long_labels
    fig = animation.trace_frame(X, tr, ref, frame=2)
    renderer = fig.canvas.get_renderer()
    ax_obj, colorbar = fig.axes[2], fig.axes[3]
    ylabel = ax_obj.yaxis.label.get_window_extent(renderer)
    bar = colorbar.get_tightbbox(renderer)  # the bar and its tick labels
    assert not ylabel.overlaps(bar)
    assert ylabel.x0 - bar.x1 >= 10  # pixels between them: the label reads as the objective's
    # and the objective's own tick labels lie between its y label and its axes
    assert ylabel.x1 <= ax_obj.get_window_extent(renderer).x0
    plt.close(fig)


def test_the_layout_stays_put_across_frames(long_labels):
    X, ref, tr = long_labels
    anim = animation.animate_trace(X, tr, ref, per_block=True)
    fr = anim.frames
    positions = []
    for i in range(len(fr.steps)):
        fr.draw(i)
        fr.fig.canvas.draw()
        positions.append([ax.get_position().bounds for ax in fr.fig.axes])
    assert all(p == positions[0] for p in positions)
    _close(anim)


# --------------------------------------------------------------------------
# The player: offline, and on a phone
# --------------------------------------------------------------------------
def test_player_needs_no_network_and_every_button_has_a_label(toy_runs):
    X, ref, tr, _ = toy_runs
    anim = animation.animate_trace(X, tr, ref)
    raw = anim.to_jshtml()
    html = animation.offline_player(raw)
    plt.close(anim.frames.fig)
    assert "font-awesome" in raw and "fa fa-" in raw  # what matplotlib emits, and what is replaced
    assert not re.search(r"https?://|//[a-z0-9.-]+\.(?:com|org|net)/", html)
    assert "fa fa-" not in html and "<link" not in html
    buttons = re.findall(r"<button([^>]*)>(.*?)</button>", html, flags=re.S)
    assert len(buttons) == 9
    for attrs, inner in buttons:
        assert re.search(r'title="[^"]+"', attrs) and re.search(r'aria-label="[^"]+"', attrs)
        assert inner.strip() and "<" not in inner  # visible text, no icon element
        assert set(inner.strip()) <= set("|+\u2212\u25c0\u25b6\u275a")
    onclick = r'onclick="([^"]+)"'
    assert re.findall(onclick, html) == re.findall(onclick, raw)  # the same handlers, in the same order
    assert {t for t in animation.BUTTON_LABELS.values()} == {b[1].strip() for b in buttons}


def test_player_fits_a_narrow_screen(toy_runs):
    X, ref, tr, _ = toy_runs
    html = animation.trace_animation_html(X, tr, ref)
    assert html.startswith('<div class="kmt-animation">') and html.rstrip().endswith("</div>")
    css = animation.PLAYER_CSS
    assert re.search(r"\.kmt-animation \.animation img \{[^}]*max-width: 100%;[^}]*height: auto;", css)
    assert re.search(r"\.kmt-animation \.anim-buttons \{[^}]*flex-wrap: wrap;", css)
    assert re.search(r"\.kmt-animation input\[type=range\]\.anim-slider \{[^}]*width: 100%;", css)


def test_player_refuses_what_it_does_not_know():
    with pytest.raises(TypeError, match="html"):
        animation.offline_player(b"<div></div>")
    with pytest.raises(ValueError, match="fa-rocket"):
        animation.offline_player('<button onclick="x()"><i class="fa fa-rocket"></i></button>')
    with pytest.raises(ValueError, match="network"):
        animation.offline_player('<script src="https://example.org/x.js"></script>')
