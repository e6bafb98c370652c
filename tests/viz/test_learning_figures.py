"""Tests for kmt_ref.viz.learning_figures: figures 5 and 6 drawn from stored models (on tiny models in tmp_path)."""
import dataclasses

import numpy as np

import kmt_ref.learning as learning
import kmt_ref.viz.learning_figures as F
from kmt_ref.cli import main
from kmt_ref.learning import train
from learning_cases import TINY


def test_figures_5_and_6_from_stored_models(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    cfg = dataclasses.replace(TINY, steps=10)
    train(cfg, seed=0, out=tmp_path / "paper.npz", log=lambda s: None)
    train(dataclasses.replace(cfg, embedding="none"), seed=0, out=tmp_path / "paper_d_only.npz", log=lambda s: None)
    ev = str(tmp_path / "evaluation.npz")
    assert main(["evaluate", str(tmp_path / "paper.npz"), str(tmp_path / "paper_d_only.npz"), "--n", "30",
                 "--tasks", "2", "--steps", "3", "--save", ev]) == 0
    stored, _ = learning.load_evaluation(ev)
    assert set(stored["random,n=30,normal"]) == {"lloyd", "paper", "paper_d_only"}
    # the figure reads the paper's whole suite; stand-in curves keep this test fast
    rng = np.random.default_rng(0)
    fake = {learning.setting_label(*s): {"lloyd": rng.random((4, 21)), "paper": rng.random((4, 21)),
                                  "paper_d_only": rng.random((4, 21))} for s in learning.PAPER_SUITE}
    learning.save_evaluation(ev, fake)
    monkeypatch.setattr(F, "MODELS_DIR", tmp_path)
    for f in (F.fig5_training, F.fig6_learned_weights):
        out = tmp_path / f"{f.__name__}.png"
        f(out)
        assert out.stat().st_size > 10_000


def test_weight_grid_one_symmetric_scale_per_block_with_colorbar():
    import numpy as np
    from kmt_ref import lloyd_weights
    from kmt_ref.viz.learning_figures import plot_weight_grid

    hand, _ = lloyd_weights(3, 2, "linear")
    rng = np.random.default_rng(0)
    learned = {name: 5 * rng.standard_normal(M.shape) for name, M in hand.items() if name[0] in "QKV"}
    fig = plot_weight_grid(learned, hand, 3, 2)
    panels = [ax for ax in fig.axes if ax.images and getattr(ax, "_colorbar", None) is None]
    bars = [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is not None]
    assert len(panels) == 16 and len(bars) == 4
    for r in range(4):
        norms = {id(ax.images[0].norm) for ax in panels[4 * r:4 * r + 4]}
        assert len(norms) == 1  # learned and hand-set panels of a block share one scale
        norm = panels[4 * r].images[0].norm
        assert norm.vmin == -norm.vmax
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["data", "one-hot"]


def test_diagonal_vs_off_draws_each_blocks_diagonal_apart():
    import matplotlib

    matplotlib.use("Agg")
    from kmt_ref import lloyd_weights

    hand, _ = lloyd_weights(3, 2, "linear")
    fig = F.plot_diagonal_vs_off(hand, 3)
    qk, v = fig.axes
    # per block: the 6 off-diagonal entries, then the 3 diagonal ones
    diag = [c.get_offsets()[:, 1] for c in qk.collections[1::2]]
    off = [c.get_offsets()[:, 1] for c in qk.collections[0::2]]
    assert [len(o) for o in off] == [6] * 4 and [len(g) for g in diag] == [3] * 4
    np.testing.assert_array_equal(diag[0], [1, 1, 1])  # Q1ᵀK1 = P_X: ones on the data diagonal
    np.testing.assert_array_equal(diag[2], [0, 0, 0])  # Q3ᵀK3 = P_Y: zero on the data block
    assert all(np.all(o == 0) for o in off)
    np.testing.assert_array_equal(v.collections[7].get_offsets()[:, 1], [-1, -1, -1])  # V4 = -P_X


def test_fig6_attention_panels_each_have_their_own_scale(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    saved = {}
    monkeypatch.setattr(F, "save_png", lambda fig, path, dpi=110: saved.setdefault("fig", fig) and path)
    F.fig6_learned_weights(tmp_path / "f.png")
    fig = saved["fig"]
    att = [ax for ax in fig.axes if ax.images and ax.get_title().startswith("block ")]
    assert len(att) == 4
    for ax in att:  # each map from 0 to its own largest weight (blocks 2 and 3 peak near 0.1)
        im = ax.images[-1]
        assert im.get_clim() == (0, im.get_array().max())
    assert max(ax.images[-1].get_clim()[1] for ax in att[1:3]) < 0.5
    plt.close(fig)


def test_assignment_counts_writes_each_pairs_count_and_rejects_bad_labels():
    import matplotlib
    import pytest

    matplotlib.use("Agg")
    rows, cols = np.array([0, 0, 1, 2, 2, 2]), np.array([0, 1, 1, 2, 2, 0])
    fig = F.plot_assignment_counts(rows, cols, 3, row_label="nearest", col_label="block 1")
    ax = fig.axes[0]
    assert np.array_equal(ax.images[0].get_array(), [[1, 1, 0], [0, 1, 0], [1, 0, 2]])
    cells = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}
    assert cells == {(0, 0): "1", (0, 1): "1", (1, 1): "1", (2, 0): "1", (2, 2): "2"}   # zero cells left blank
    assert ax.get_ylabel() == "nearest" and ax.get_xlabel() == "block 1" and len(fig.axes) == 2   # and a colorbar
    with pytest.raises(ValueError, match="cols"):
        F.plot_assignment_counts(rows, np.array([0, 1, 1, 2, 2, 3]), 3)
    with pytest.raises(ValueError, match="cols"):
        F.plot_assignment_counts(rows, cols[:5], 3)
    with pytest.raises(ValueError, match="rows"):
        F.plot_assignment_counts(rows + 0.5, cols, 3)
    with pytest.raises(TypeError, match="k"):
        F.plot_assignment_counts(rows, cols, 3.0)
