"""Figures 1-3 of Theorem 2.1; figure 2 drawn from the gamma sweep's CSV (kmt_ref/viz/lloyd_figures.py)."""
import io

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kmt_ref import kmeans_transformer  # noqa: E402
from kmt_ref.data import gaussian_blobs  # noqa: E402
from kmt_ref.demo import run_demo  # noqa: E402
from kmt_ref.viz import lloyd_figures  # noqa: E402

INF = np.inf


def test_fig1_is_the_figure_the_demo_writes(tmp_path):
    """One home for figure 1: ``python -m kmt_ref demo`` and the registry write the same bytes."""
    demo = run_demo(outdir=tmp_path / "demo", out=io.StringIO())
    fig1 = lloyd_figures.fig1_validation(tmp_path / "fig1_validation.png")
    assert demo.figure.read_bytes() == fig1.read_bytes()


def test_fig1_is_the_authors_data_and_circuit(tmp_path, monkeypatch):
    """Figure 1 draws the authors' draw and circuit, with the flag circuit labelled as the extension."""
    from kmt_ref.viz import plotting

    seen = {}

    def spy(path, X, lloyd_trace, transformer_trace, **kw):
        seen.update(kw, X=X, lloyd=lloyd_trace, transformer=transformer_trace)
        return path

    monkeypatch.setattr(plotting, "write_validation_figure", spy)
    lloyd_figures.fig1_validation(tmp_path / "f.png")
    assert "authors' draw" in seen["data_label"] and "5487" in seen["data_label"]
    assert seen["transformer_label"].startswith("authors' circuit")
    assert "project's extension" in seen["extension_label"]
    # the paper's curve: 6.44 -> 4.59, Lloyd and the authors' circuit alike
    for tr in (seen["lloyd"], seen["transformer"]):
        assert round(tr.log_objective[0], 2) == 6.44 and round(tr.log_objective[-1], 2) == 4.59
    assert round(seen["transformer"].log_objective[2], 4) == 5.4694
    # the seeded draw stays available
    lloyd_figures.fig1_validation(tmp_path / "g.png", data="seeded", seed=0)
    assert "validation_data(seed=0)" in seen["data_label"]


def test_fig3_is_deterministic(tmp_path):
    a = lloyd_figures.fig3_weights_and_attention(tmp_path / "a.png")
    b = lloyd_figures.fig3_weights_and_attention(tmp_path / "b.png")
    assert a.read_bytes() == b.read_bytes()


def test_fig2_is_drawn_from_the_sweep_csv(tmp_path):
    from kmt_ref.sweep import run_sweep, summarize, read_sweep

    csv = tmp_path / "s.csv"
    run_sweep(csv, {"clusters": (5,), "dimensions": (1, 2), "points": (100,), "scale": (1, 3), "gamma": (1, 10, 100)},
              log=lambda *_: None)
    lines = []
    a = lloyd_figures.fig2_finite_gamma_gap(tmp_path / "a.png", csv=csv, out=lines.append)
    lloyd_figures.fig2_finite_gamma_gap(tmp_path / "b.png", csv=csv)
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert a == {g: st["mean"] for g, st in summarize(read_sweep(csv)).items()}
    assert lines and lines[0].startswith("fig2 mean Loss: gamma=1:")


def test_fig2_default_is_the_committed_small_grid():
    assert lloyd_figures.SWEEP_CSV.name == "gamma_sweep_small.csv" and lloyd_figures.SWEEP_CSV.exists()


def test_fig2_missing_csv(tmp_path):
    with pytest.raises(ValueError, match="kmt_ref sweep --grid small"):
        lloyd_figures.fig2_finite_gamma_gap(tmp_path / "a.png", csv=tmp_path / "none.csv")


def test_fig2_missing_package_data(tmp_path, monkeypatch):
    """Without its package data the default names the missing file and asks for a reinstall."""
    monkeypatch.setattr(lloyd_figures, "SWEEP_CSV", tmp_path / "gamma_sweep_small.csv")
    with pytest.raises(ValueError, match="package data.*reinstall kmt_ref"):
        lloyd_figures.fig2_finite_gamma_gap(tmp_path / "a.png")


def test_scale_acts_on_block_1_only():
    """Data scaled by s at gamma = block 1 at gamma * s^2 with block 3 still at gamma (default circuit)."""
    X, C0, _ = gaussian_blobs(3, 2, 20, rng=4)
    s = 3.0
    scaled = kmeans_transformer(s * X, s * C0, 5, gamma=10.0)
    plain = kmeans_transformer(X, C0, 5, gamma=90.0, gamma_update=10.0)
    np.testing.assert_array_equal(scaled.labels, plain.labels)
    np.testing.assert_allclose(scaled.centers / s, plain.centers, rtol=0, atol=1e-12)
    # ... and not block 3 too: gamma_update = 90 is a different computation
    other = kmeans_transformer(X, C0, 5, gamma=90.0)
    assert np.max(np.abs(other.centers - plain.centers)) > 1e-6


def test_fig2_short_title_paired_caption_and_separate_bars(tmp_path, monkeypatch):
    saved = {}
    monkeypatch.setattr(lloyd_figures, "save_png", lambda fig, path: saved.setdefault("fig", fig))
    lloyd_figures.fig2_finite_gamma_gap(tmp_path / "a.png")
    fig = saved["fig"]
    title = fig._suptitle.get_text()
    assert title.count("\n") <= 1 and "10,000" not in title  # their means over other cells are not set beside ours
    caption = fig.legends[0].get_title().get_text()
    assert "paired" in caption and "-0.023 ± 0.019" in caption
    ax = fig.axes[0]
    xs = [line.get_xdata()[0] for line in ax.lines if line.get_marker() == "s"]  # the means, one per gamma
    assert len(set(xs)) == 3  # the three gammas side by side, not on top of each other
    assert "[0, s]" in fig.axes[3].get_xlabel()
