"""Tests for kmt_ref.learning.training: the training loop of paper §4 (SPEC §6)."""
import dataclasses

import pytest

from kmt_ref.learning.training import TrainingDiverged, train
from learning_cases import TINY


def test_short_training_lowers_the_validation_score(tmp_path):
    ck = train(dataclasses.replace(TINY, steps=60), seed=3, out=tmp_path / "m.npz", log=lambda s: None)
    val = ck.history["val"]
    # float32 training: the trajectory depends on the CPU's BLAS kernel in the last bits, not the
    # outcome. Measured val[-1] / val[0] = 0.7125 (2.691035 -> 1.917349 or ...350) with OpenBLAS's
    # SkylakeX, Haswell, Sandybridge and Nehalem kernels, numpy's SSE path and numpy 1.26: 0.8 is safe.
    assert val[-1] < 0.8 * val[0]
    assert ck.step == 60 and list(ck.history["step"]) == list(range(0, 61, 10))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflow is the point of the test
def test_non_finite_loss_stops_with_step_and_last_checkpoint(tmp_path):
    cfg = dataclasses.replace(TINY, lr=1e200, steps=30, checkpoint_every=1, dtype="float64")
    with pytest.raises(TrainingDiverged, match=r"at step \d+.*Last good checkpoint: .*m\.npz"):
        train(cfg, seed=0, out=tmp_path / "m.npz", log=lambda s: None)
