"""Tests for kmt_ref.learning.optim: Adam and the plateau schedule (SPEC §6 "Optimiser")."""
import numpy as np

from kmt_ref.learning.optim import Adam, Plateau


def test_adam_first_step_is_lr_times_sign():
    p = {"w": np.array([1.0, -2.0, 3.0])}
    g = {"w": np.array([0.5, -4.0, 1e-3])}
    new = Adam(p, lr=0.1).step(p, g)
    np.testing.assert_allclose(new["w"], p["w"] - 0.1 * g["w"] / (np.abs(g["w"]) + 1e-8), rtol=1e-12)


def test_plateau_halves_after_patience_evaluations_without_improvement():
    s = Plateau(factor=0.5, patience=2)
    lrs = [1.0]
    for score in [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.94, 0.8]:
        lrs.append(s.step(score, lrs[-1]))
    # improvements at 1.0, 0.9; then 3 bad evaluations -> halve; count restarts
    assert lrs == [1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5]
