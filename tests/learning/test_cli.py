"""Tests for kmt_ref.learning.cli: the train and evaluate commands end to end (the errors: tests/test_cli.py)."""
import pytest

from kmt_ref.cli import main
from kmt_ref.learning.checkpoint import load_checkpoint


def test_cli_train_and_evaluate(tmp_path, capsys):
    out = tmp_path / "cli.npz"
    args = ["train", "--n", "24", "--d", "2", "--k", "3", "--batch", "4", "--steps", "20", "--eval-every", "10",
            "--n-val", "8", "--seed", "2", "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "step     20/20" in text and "val" in text and "eta" in text and "lr" in text
    assert load_checkpoint(out).seed == 2
    assert main(["train", "--resume", str(out), "--steps", "30", "--out", str(tmp_path / "r.npz")]) == 0
    assert load_checkpoint(tmp_path / "r.npz").step == 30
    assert main(["evaluate", str(out), str(tmp_path / "r.npz"), "--tasks", "3", "--steps", "2", "--n", "24", "30",
                 "--family", "normal", "laplace", "--init", "random", "kmeans++"]) == 0
    table = capsys.readouterr().out
    assert "Lloyd T" in table and "kmeans++, n=30, laplace" in table and "WITHOUT dropout" in table
    assert main(["train", "--lr", "-1", "--out", str(tmp_path / "x.npz")]) == 2
    assert main(["evaluate", str(tmp_path / "missing.npz")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_evaluate_lloyd_empty(tmp_path, capsys):
    args = ["evaluate", "paper", "--tasks", "8", "--steps", "3", "--n", "64"]  # 3 of these 8 tasks empty a cluster
    assert main(args) == 0
    keep = capsys.readouterr().out
    assert "Lloyd (empty clusters: keep; met in 3 of 8 tasks) 3.362" in keep
    assert main(args + ["--lloyd-empty", "reseed"]) == 0
    reseed = capsys.readouterr().out
    assert "Lloyd (empty clusters: reseed; met in 3 of 8 tasks)" in reseed and "3.362" not in reseed
    assert main(args + ["--lloyd-empty", "reseed", "--save", str(tmp_path / "e.npz")]) == 2
    assert "--save stores Lloyd's curves with --lloyd-empty keep" in capsys.readouterr().err
    assert not (tmp_path / "e.npz").exists()
    with pytest.raises(SystemExit) as exc:  # argparse's choices
        main(args + ["--lloyd-empty", "drop"])
    assert exc.value.code == 2 and "invalid choice: 'drop'" in capsys.readouterr().err
