"""Tests for kmt_ref.learning.checkpoint: checkpoints, exact resumption and stored evaluations (SPEC §6)."""
import dataclasses

import numpy as np
import pytest

from kmt_ref.learning.checkpoint import CheckpointError, load_checkpoint, load_evaluation, save_checkpoint, save_evaluation
from kmt_ref.learning.evaluation import evaluate
from kmt_ref.learning.training import train
from learning_cases import TINY


def test_checkpoint_round_trip_and_resume_is_exact(tmp_path):
    cfg = dataclasses.replace(TINY, steps=20)
    full = train(cfg, seed=1, out=tmp_path / "full.npz", log=lambda s: None)
    half = train(dataclasses.replace(cfg, steps=10), seed=1, out=tmp_path / "half.npz", log=lambda s: None)
    resumed = train(cfg, seed=1, out=tmp_path / "res.npz", resume=tmp_path / "half.npz", log=lambda s: None)
    assert half.step == 10 and resumed.step == 20
    for key in full.params:
        np.testing.assert_array_equal(resumed.params[key], full.params[key])
    loaded = load_checkpoint(tmp_path / "full.npz", d=2, k=3)
    assert loaded.config == cfg and loaded.seed == 1 and loaded.step == 20
    for key in full.params:
        np.testing.assert_array_equal(loaded.params[key], full.params[key])
    np.testing.assert_array_equal(loaded.history["val"], full.history["val"])
    assert (tmp_path / "full_best.npz").exists()


def test_checkpoint_errors(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nope.npz")
    ck = train(dataclasses.replace(TINY, steps=10), seed=0, out=tmp_path / "m.npz", log=lambda s: None)
    with pytest.raises(CheckpointError, match="trained for k=3.*k=4 was requested"):
        load_checkpoint(tmp_path / "m.npz", d=2, k=4)
    with pytest.raises(CheckpointError, match="trained for d=2"):
        train(dataclasses.replace(TINY, d=3), resume=tmp_path / "m.npz", log=lambda s: None)
    bad = dataclasses.replace(ck, params={**ck.params, "Q1": np.zeros((3, 3))})
    save_checkpoint(tmp_path / "bad.npz", bad)
    with pytest.raises(CheckpointError, match="do not match its configuration"):
        load_checkpoint(tmp_path / "bad.npz")
    np.savez(tmp_path / "other.npz", a=np.zeros(2))
    with pytest.raises(CheckpointError, match="not a kmt_ref training checkpoint"):
        load_checkpoint(tmp_path / "other.npz")
    with pytest.raises(CheckpointError, match="d_emb"):
        evaluate(ck.params, n_tasks=2, n=10, d=3, k=3)


def test_evaluation_file_merges_and_round_trips(tmp_path):
    a = {"random,n=8,normal": {"lloyd": np.ones((2, 3)), "m": np.zeros((2, 3))}}
    b = {"kmeans++,n=8,normal": {"lloyd": np.full((2, 3), 2.0)}}
    save_evaluation(tmp_path / "e.npz", a, {"seed": 1})
    save_evaluation(tmp_path / "e.npz", b, {"tasks": 2})
    ev, info = load_evaluation(tmp_path / "e.npz")
    assert info == {"seed": 1, "tasks": 2}
    np.testing.assert_array_equal(ev["random,n=8,normal"]["m"], 0.0)
    np.testing.assert_array_equal(ev["kmeans++,n=8,normal"]["lloyd"], 2.0)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_evaluation(tmp_path / "none.npz")


def test_a_truncated_or_damaged_file_is_called_so_with_what_to_do(tmp_path):
    """A checkpoint cut short (a copy or download interrupted) is not 'not a .npz file': it says damaged or
    truncated, and what to do about it."""
    train(dataclasses.replace(TINY, steps=10), seed=0, out=tmp_path / "m.npz", log=lambda s: None)
    whole = (tmp_path / "m.npz").read_bytes()
    for size in (len(whole) // 2, len(whole) - 1, 0):
        (tmp_path / "cut.npz").write_bytes(whole[:size])
        with pytest.raises(CheckpointError, match="damaged or truncated") as exc:
            load_checkpoint(tmp_path / "cut.npz")
        assert f"({size} bytes;" in str(exc.value) and "copy it again" in str(exc.value)
        assert "_best.npz' snapshot" in str(exc.value)
        with pytest.raises(CheckpointError, match=r"evaluation file .* is damaged or truncated .*copy it again$"):
            load_evaluation(tmp_path / "cut.npz")
    flipped = bytearray(whole)
    flipped[len(whole) // 2] ^= 0xFF  # inside a stored array: its CRC-32 no longer matches
    (tmp_path / "flipped.npz").write_bytes(bytes(flipped))
    with pytest.raises(CheckpointError, match="is damaged: .*CRC-32.*copy it again"):
        load_checkpoint(tmp_path / "flipped.npz")
    (tmp_path / "notes.npz").write_text("not a zip archive at all")
    with pytest.raises(CheckpointError, match="is not a .npz file .it is not a zip archive"):
        load_checkpoint(tmp_path / "notes.npz")
