"""The binary-code figures (kmt_ref/viz/binary_figures.py): the finite-gamma leak and the cost against k."""
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import kmt_ref.viz.binary_figures as F  # noqa: E402


def test_leak_is_larger_for_binary_codes_and_vanishes_at_large_gamma():
    res = F.finite_gamma_leak(gammas=(10.0, 1e3), seeds=range(1), n_per_cluster=20)
    assert set(res) == {(m, v) for m in F.LEAK_MODES for v in F.LEAK_VARIANTS}
    assert all(v.shape == (2, 1) for v in res.values())
    center = {label: res["center", label][:, 0] for label in F.LEAK_VARIANTS}
    # at gamma = 10 a non-member weighs exp(-10) (binary, distance 1) against exp(-20) (one-hot, distance 2)
    assert center["binary (follow-up)"][0] > 100 * center["one-hot (paper, no flag)"][0]
    assert max(c[1] for c in center.values()) <= 1e-12  # gamma = 1000: the exact means, to rounding


def test_plain_one_hot_circuit_is_lloyd_at_infinite_gamma():
    from kmt_ref import gaussian_blobs, lloyd
    X, C0, _ = gaussian_blobs(4, 2, 10, rng=0)
    np.testing.assert_array_equal(F.plain_onehot_transformer(X, C0, 3).centers, lloyd(X, C0, 3).centers)


def test_figures_write_a_png(tmp_path):
    out = F.fig_binary_finite_gamma(tmp_path / "leak.png", gammas=(1.0, 100.0), seeds=range(1))
    assert out.stat().st_size > 10_000
    path = tmp_path / "cost.csv"
    cols = ["embedding", "k", "d", "n", "d_emb", "params", "model_s", "model_peak_mb", "circuit_s"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for k in (6, 100):
            for emb, de in (("onehot", 32 + k), ("binary", 32 + (k - 1).bit_length())):
                w.writerow([emb, k, 32, 128, de, 12 * (de * de + de), 0.01 * de, 0.1 * de, 0.001 * de])
    res = F.read_cost_csv(path)
    np.testing.assert_array_equal(res["binary"]["d_emb"], [35, 39])
    assert F.fig_binary_cost(tmp_path / "cost.png", path).stat().st_size > 10_000


def test_training_figure_from_stored_models(tmp_path, monkeypatch):
    import dataclasses

    import kmt_ref.learning as learning
    from kmt_ref.learning import train
    from learning_cases import TINY

    for name, emb in (("paper", "onehot"), ("paper_d_only", "none"), ("paper_binary", "binary")):
        train(dataclasses.replace(TINY, steps=10, embedding=emb), seed=0, out=tmp_path / f"{name}.npz",
              log=lambda s: None)
    rng = np.random.default_rng(0)
    key = learning.setting_label("random", 512, "normal")
    learning.save_evaluation(tmp_path / "evaluation.npz", {key: {"lloyd": rng.random((4, 21)), "paper": rng.random((4, 21)),
                                                                 "paper_d_only": rng.random((4, 21))}})
    learning.save_evaluation(tmp_path / "evaluation_binary.npz", {key: {"lloyd": rng.random((4, 21)),
                                                                        "paper_binary": rng.random((4, 21))}})
    monkeypatch.setattr(learning, "MODELS_DIR", tmp_path)
    assert F.fig_binary_training(tmp_path / "train.png").stat().st_size > 10_000


def test_cost_figure_labels_every_axis_and_keeps_gpu_times_off_the_cpu_axis(tmp_path, monkeypatch):
    saved = {}
    monkeypatch.setattr(F, "save_png", lambda fig, path: saved.setdefault("fig", fig))
    F.fig_binary_cost(tmp_path / "cost.png")
    axes = saved["fig"].axes
    assert all(ax.get_ylabel() for ax in axes)
    cpu_ms = next(ax for ax in axes if ax.get_ylabel() == "milliseconds")
    assert not any(line.get_marker() == "*" for line in cpu_ms.lines)  # the follow-up's GPU times: not on this axis
    ratio = next(ax for ax in axes if "ratio" in ax.get_ylabel())
    star = next(line for line in ratio.lines if line.get_marker() == "*")
    assert np.isclose(star.get_ydata()[0], F.FOLLOW_UP_GPU_MS["onehot"] / F.FOLLOW_UP_GPU_MS["binary"])
    assert next(ax for ax in axes if ax.get_ylabel() == "MB").get_yscale() == "linear"


def test_leak_figure_counts_the_draws_it_drew(monkeypatch):
    """The title's count of draws comes from the numbers drawn, even when ``seeds`` is a one-shot iterator."""
    monkeypatch.setattr(F, "save_png", lambda fig, path: fig)
    fig = F.fig_binary_finite_gamma("unused.png", (1.0, 10.0), iter([0, 1]))
    assert "over 2 draws" in fig._suptitle.get_text()
    res = F.finite_gamma_leak((1.0, 10.0), range(3), n_per_cluster=10)
    fig2 = F.fig_binary_finite_gamma("unused.png", (1.0, 10.0), range(5), res=res)
    assert "over 3 draws" in fig2._suptitle.get_text()
    plt.close("all")
