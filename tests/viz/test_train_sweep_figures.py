"""The training-sweep figures (kmt_ref/viz/train_sweep_figures.py): what each panel draws is the CSV's median and band."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

from kmt_ref.learning import train_sweep as ts  # noqa: E402
from kmt_ref.viz.train_sweep_figures import EMBEDDING_STYLE, plot_train_sweep  # noqa: E402

from learning_cases import sweep_rows  # noqa: E402


def test_each_panel_draws_the_median_and_the_band_of_its_runs():
    rows = sweep_rows((4, 8, 16, 32), steps=(0, 50, 100, 150))
    fig = plot_train_sweep(rows, "10b")
    axes = np.array(fig.axes).reshape(2, 4)
    curves = ts.figure_curves(rows, "10b")
    for j, d in enumerate((4, 8, 16, 32)):
        assert axes[0, j].get_title() == f"d = {d}"
        for row, key in ((0, "loss"), (1, "val")):
            ax = axes[row, j]
            assert ax.get_yscale() == "log"
            lines = {line.get_label(): line for line in ax.get_lines()}
            for e, (label, _) in EMBEDDING_STYLE.items():
                np.testing.assert_array_equal(lines[label].get_xdata(), [50, 100, 150])  # step 0 left out
                np.testing.assert_array_equal(lines[label].get_ydata(), curves[d][e][key][1])
            bands = [c.get_paths()[0].vertices[:, 1] for c in ax.collections]
            assert len(bands) == 2
            for e in ("none", "onehot"):  # drawn in sorted order
                lo, _, hi = curves[d][e][key]
                band = bands[sorted(EMBEDDING_STYLE).index(e)]
                assert np.isclose(band.min(), lo.min()) and np.isclose(band.max(), hi.max())
        lloyd = [line for line in axes[1, j].get_lines() if line.get_label() == "one Lloyd step"]
        assert len(lloyd) == 1 and set(lloyd[0].get_ydata()) == {1.0}
        assert not [line for line in axes[0, j].get_lines() if line.get_label() == "one Lloyd step"]
    assert "3 seeds × 150 steps" in fig._suptitle.get_text() and "10 trials × 10,000 steps" in fig._suptitle.get_text()
    plt.close(fig)


@pytest.mark.parametrize("seeds, text", [((0,), "1 seed × 100 steps"), ((0, 1), "2 seeds × 100 steps")])
def test_the_title_counts_the_seeds(seeds, text):
    fig = plot_train_sweep(sweep_rows((4, 8), seeds=seeds), "10b")
    assert f"reduced scale: {text} per setting" in fig._suptitle.get_text()
    plt.close(fig)
    mixed = [r for r in sweep_rows((4, 8)) if r["d"] == 4 or r["seed"] == 0]  # d = 4 has 3 seeds, d = 8 one
    fig = plot_train_sweep(mixed, "10b")
    assert "reduced scale: 1–3 seeds × 100 steps per setting" in fig._suptitle.get_text()
    plt.close(fig)


def test_figure_9_titles_give_the_loss_temperature():
    rows = [dict(r, d=4, loss_lambda=lam) for lam in (1.0, 4.0, 7.0, 10.0) for r in sweep_rows((8,))]
    fig = plot_train_sweep(rows, "9a")
    titles = [ax.get_title() for ax in fig.axes[:4]]
    assert titles[1] == "loss temperature 1/λ = 0.25\n(λ = 4)" and titles[2].startswith("loss temperature 1/λ = 0.14")
    plt.close(fig)


def test_bad_arguments():
    with pytest.raises(ValueError, match="figure='9'"):
        plot_train_sweep(sweep_rows((8,)), "9")
    with pytest.raises(ValueError, match="no run that figure 9b draws"):
        plot_train_sweep(sweep_rows((8,)), "9b")
