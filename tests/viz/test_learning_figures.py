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
