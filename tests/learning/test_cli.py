"""Tests for kmt_ref.learning.cli: the train and evaluate commands end to end (the errors: tests/test_cli.py)."""
import dataclasses
import re

import numpy as np
import pytest

from kmt_ref.cli import main
from kmt_ref.learning import CONFIGS, EVAL_SEED, TrainConfig, evaluate
from kmt_ref.learning.checkpoint import load_checkpoint
from kmt_ref.learning.cli import lloyd_comparison


def test_cli_train_and_evaluate(tmp_path, capsys):
    out = tmp_path / "cli.npz"
    args = ["train", "--n", "24", "--d", "2", "--k", "3", "--batch", "4", "--steps", "20", "--eval-every", "10",
            "--n-val", "8", "--seed", "2", "--eval-tasks", "3", "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "step     20/20" in text and "val" in text and "eta" in text and "lr" in text
    assert load_checkpoint(out).seed == 2
    assert main(["train", "--resume", str(out), "--steps", "30", "--eval-tasks", "0",
                 "--out", str(tmp_path / "r.npz")]) == 0
    assert "# evaluation:" not in capsys.readouterr().out  # --eval-tasks 0 skips the comparison
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


def test_train_ends_with_the_comparison_with_lloyd(tmp_path, capsys):
    """The lines printed after training are evaluate()'s numbers on the seeded tasks, and the verdict matches them."""
    out = tmp_path / "m.npz"
    assert main(["train", "--n", "24", "--d", "2", "--k", "3", "--batch", "4", "--steps", "10", "--eval-every", "5",
                 "--n-val", "8", "--seed", "1", "--eval-tasks", "6", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    ck = load_checkpoint(out)
    res = evaluate(ck.params, n_tasks=6, n=24, d=2, k=3, n_steps=20, seed=EVAL_SEED)  # computed again, independently
    assert f"on 6 seeded tasks (seed {EVAL_SEED}) of the training distribution (n=24, d=2, k=3, normal" in text
    assert f"(python -m kmt_ref evaluate {out} --tasks 6 prints the same numbers)" in text
    printed = {label: float(v) for label, v in re.findall(r"#   (.+?)\s{2,}(-?\d+\.\d{3})$", text, re.M)}
    assert printed == {"initial centers (t=0)": round(res["lloyd_mean"][0], 3),
                       "Lloyd, 20 iterations": round(res["lloyd_mean"][-1], 3),
                       "trained layer, 20 steps": round(res["model_mean"][-1], 3)}
    verdict = text.strip().splitlines()[-1]
    beats = res["model_mean"][-1] < res["lloyd_mean"][-1]
    assert verdict.startswith("# The trained layer beats" if beats else "# The trained layer does not beat")
    # the same numbers as the evaluate command prints for this checkpoint
    assert main(["evaluate", str(out), "--tasks", "6"]) == 0
    assert f"{res['model_mean'][-1]:15.3f}" in capsys.readouterr().out


def _result(lloyd_end, model_end):
    """An evaluate()-shaped result of two tasks, T = 2."""
    lloyd = np.array([[3.0, 2.5, lloyd_end[0]], [3.0, 2.6, lloyd_end[1]]])
    model = np.array([[3.0, 2.4, model_end[0]], [3.0, 2.7, model_end[1]]])
    return {"lloyd": lloyd, "model": model, "lloyd_mean": lloyd.mean(0), "model_mean": model.mean(0)}


def test_lloyd_comparison_says_who_wins():
    cfg = dataclasses.replace(CONFIGS["small"])
    win = lloyd_comparison(_result((2.0, 2.2), (1.5, 2.3)), cfg, "runs/m.npz")  # mean 1.9 < 2.1, lower on task 0
    assert "\n#   initial centers (t=0)       3.000\n#   Lloyd, 2 iterations         2.100\n" \
           "#   trained layer, 2 steps      1.900\n" in win
    assert "(python -m kmt_ref evaluate runs/m.npz --tasks 2 --steps 2 prints the same numbers)" in win
    assert win.splitlines()[-1] == ("# The trained layer beats Lloyd's algorithm on these tasks: 0.200 lower in mean "
                                    "log objective after T=2 (it ends lower on 50% of the tasks). A summary of the paper "
                                    "reports that its trained layer ends below Lloyd.")
    lose = lloyd_comparison(_result((2.0, 2.2), (2.1, 2.2)), cfg, "runs/m.npz")  # mean 2.15 > 2.1
    assert lose.splitlines()[-1].startswith("# The trained layer does not beat Lloyd's algorithm: 0.050 higher")
    assert "it ends lower on 0% of the tasks" in lose
    tie = lloyd_comparison(_result((2.0, 2.2), (2.0, 2.2)), cfg, "runs/m.npz")  # equal is not beating
    assert "does not beat" in tie
    other = lloyd_comparison(_result((2.0, 2.2), (1.5, 2.3)), dataclasses.replace(cfg, family="laplace"), "m.npz")
    assert "evaluate m.npz --tasks 2 --steps 2 --family laplace prints the same" in other
    assert "prints the same" not in lloyd_comparison(_result((2.0, 2.2), (1.5, 2.3)),
                                                     dataclasses.replace(cfg, scale=0.2), "m.npz")


def test_small_config_is_the_paper_protocol_at_d_8(capsys):
    """The small configuration differs from the authors' main setting only in sizes and length (d = 8: at d = 4 the
    layer ends near Lloyd, see kmt_ref.learning.config.CONFIGS), and the train command checks --eval-tasks."""
    small, paper = CONFIGS["small"], TrainConfig()
    differ = {f.name for f in dataclasses.fields(TrainConfig) if getattr(small, f.name) != getattr(paper, f.name)}
    assert differ == {"n", "d", "k", "batch", "steps", "n_val"}
    assert (small.n, small.d, small.k, small.batch, small.steps) == (64, 8, 3, 16, 3000)
    assert main(["train", "--eval-tasks", "-1"]) == 2
    assert "--eval-tasks=-1 should be >= 0" in capsys.readouterr().err


def test_evaluate_shows_its_progress_and_the_time_left(tmp_path, capsys):
    """Every evaluate run (the --suite is the longest command after training) prints a status line on stderr
    with an estimate of the time left; the results stay alone on stdout."""
    out = tmp_path / "m.npz"
    assert main(["train", "--n", "24", "--d", "2", "--k", "3", "--batch", "4", "--steps", "5", "--eval-every", "5",
                 "--n-val", "4", "--eval-tasks", "0", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(out), str(out.with_name("m_best.npz")), "--tasks", "3", "--steps", "2",
                 "--n", "24", "48"]) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert lines and all(re.fullmatch(r"evaluate: \d/4 runs \(settings x models\) \(\d+\.\d% of the work\), "
                                      r"\dm\d\ds elapsed, about (\dm\d\ds|\?) left", ln) for ln in lines), lines
    assert lines[-1].startswith("evaluate: 4/4 runs (settings x models) (100.0% of the work)")
    assert "left" not in captured.out
