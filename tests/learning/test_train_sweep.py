"""``python -m kmt_ref train-sweep`` (kmt_ref/learning/train_sweep.py): the grid, the CSV, resuming, the curves."""
import csv
import dataclasses

import numpy as np
import pytest

from kmt_ref.cli import main
from kmt_ref.learning import train_sweep as ts
from learning_cases import sweep_rows

TINY = {"9": [(24, 2, 3, 1.0), (24, 3, 3, 4.0)], "10a": [(24, 2, 3, 1.0)], "10b": []}


@pytest.fixture
def tiny(monkeypatch):
    """The grid at n = 24 with 8 validation tasks and batches of 4: a run takes a fraction of a second."""
    monkeypatch.setattr(ts, "FIGURE_SETTINGS", TINY)
    config = ts._config
    monkeypatch.setattr(ts, "_config", lambda *a: dataclasses.replace(config(*a), n_val=8, batch=4))


def _lines(path):
    return path.read_text().splitlines(keepends=True)


def test_the_grid_is_the_authors_expts_md():
    # rithram/kmeans-trf expts.md, "Training runs for Figure 9 / 10a / 10b"
    assert ts.FIGURE_SETTINGS["9"] == [(512, d, 6, lam) for d in (4, 32) for lam in (1.0, 4.0, 7.0, 10.0)]
    assert ts.FIGURE_SETTINGS["10a"] == [(512, 32, k, 10.0) for k in (10, 16, 25)]
    assert ts.FIGURE_SETTINGS["10b"] == [(512, d, 6, 10.0) for d in (8, 16)]
    assert ts.EMBEDDINGS_COMPARED == ("onehot", "none")
    # the rest is the authors' main setting (TrainConfig's defaults); only the steps are the command's
    c = ts._config(512, 4, 6, 7.0, "none", 600)
    assert (c.batch, c.lr, c.eval_every, c.n_val, c.dropout, c.scale, c.lr_decay, c.patience) == \
        (32, 0.01, 50, 320, 0.01, 0.1, 0.5, 5)
    assert (c.n, c.d, c.k, c.loss_lambda, c.embedding, c.steps) == (512, 4, 6, 7.0, "none", 600)


def test_the_drawn_figures_select_runs_as_the_authors_patterns():
    rows = [dict(n=512, d=d, k=k, loss_lambda=lam) for d in (4, 8, 16, 32) for k in (6, 10, 16, 25)
            for lam in (1.0, 4.0, 7.0, 10.0)]
    pick = {f: {(r["d"], r["k"], r["loss_lambda"]) for r in ts.figure_runs(f, rows)} for f in ts.FIGURE_SPLIT}
    assert pick["9a"] == {(4, 6, lam) for lam in (1.0, 4.0, 7.0, 10.0)}
    assert pick["9b"] == {(32, 6, lam) for lam in (1.0, 4.0, 7.0, 10.0)}
    assert pick["10a"] == {(32, k, 10.0) for k in (6, 10, 16, 25)}  # k = 6 is Figure 9's run
    assert pick["10b"] == {(d, 6, 10.0) for d in (4, 8, 16, 32)}  # d = 4, 32 are Figure 9's runs
    with pytest.raises(ValueError, match="figure='9'"):
        ts.figure_runs("9", rows)


def test_sweep_writes_one_piece_per_run_and_resumes(tiny, tmp_path):
    out = tmp_path / "s.csv"
    res = ts.run_train_sweep(out, ["9", "10a"], seeds=2, steps=60, log=lambda line: None)
    assert res["runs"] == 2 * 2 * 2  # 10a's setting is also 9's: trained once
    rows = ts.read_train_sweep(out)
    assert len(rows) == 8 * 3  # evaluations at steps 0, 50, 60
    assert {r["step"] for r in rows} == {0, 50, 60}
    assert all(np.isnan(r["train_loss"]) == (r["step"] == 0) for r in rows)
    per_run = {}
    for r in rows:
        per_run.setdefault(ts.run_key(r), set()).add(r["run_cpu_s"])
    assert all(len(v) == 1 and next(iter(v)) > 0 for v in per_run.values())
    first = out.read_text()
    assert ts.run_train_sweep(out, ["9", "10a"], seeds=2, steps=60, log=lambda line: None)["runs"] == 0
    assert out.read_text() == first
    # an interruption: the last line cut short, and one run missing a complete line
    lines = _lines(out)
    cut_run = ts.run_key(ts._parse_row(next(csv.reader([lines[1]]))))
    out.write_text("".join([lines[0]] + lines[2:-1]) + lines[-1][:7])
    res = ts.run_train_sweep(out, ["9", "10a"], seeds=2, steps=60, log=lambda line: None)
    assert res["runs"] == 2  # the run cut at its end and the run missing its first evaluation
    again = ts.read_train_sweep(out)
    assert len(again) == len(rows)
    key = lambda r: (ts.run_key(r), r["step"])  # noqa: E731
    strip = lambda r: {c: v for c, v in r.items() if c != "run_cpu_s"}  # noqa: E731
    assert sorted(map(strip, again), key=key) == sorted(map(strip, rows), key=key)  # same numbers, bit for bit
    assert cut_run in {ts.run_key(r) for r in again}
    # more seeds: only the new ones run
    assert ts.run_train_sweep(out, ["9"], seeds=3, steps=60, log=lambda line: None)["runs"] == 4


def test_two_jobs_give_the_rows_of_one(tiny, tmp_path):
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    ts.run_train_sweep(one, ["9"], seeds=1, steps=20, log=lambda line: None)
    ts.run_train_sweep(two, ["9"], seeds=1, steps=20, jobs=2, log=lambda line: None)
    strip = lambda r: tuple(v for c, v in r.items() if c != "run_cpu_s")  # noqa: E731
    a, b = (sorted(map(strip, ts.read_train_sweep(p)), key=repr) for p in (one, two))
    assert [repr(x) for x in a] == [repr(x) for x in b]


def test_a_file_holds_one_scale(tiny, tmp_path):
    out = tmp_path / "s.csv"
    ts.run_train_sweep(out, ["10a"], seeds=1, steps=20, log=lambda line: None)
    with pytest.raises(ValueError, match="steps=30, but .* holds runs of 20 steps"):
        ts.run_train_sweep(out, ["10a"], seeds=1, steps=30, log=lambda line: None)
    lines = _lines(out)
    out.write_text("".join(lines) + lines[-1].replace(",20,20,", ",30,20,"))
    with pytest.raises(ValueError, match="mixes runs of 20, 30 steps"):
        ts.read_train_sweep(out)


@pytest.mark.parametrize("text, match", [
    ("", "first line should be"),
    ("Clusters,Iteration,Dimensions,Gamma,Points,Loss,Scale\n", "first line should be"),
    (",".join(ts.COLUMNS) + "\n24,2,3,1.0,binary,0,20,0,,1.0,0.01,1.0\n", "line 2 is not a train-sweep row"),
    (",".join(ts.COLUMNS) + "\n24,2,3,1.0,none,0,20,0,,1.0,0.01\n", "line 2 is not a train-sweep row"),
    (",".join(ts.COLUMNS) + "\n24,2,3,inf,none,0,20,0,,1.0,0.01,1.0\n", "line 2 is not a train-sweep row"),
])
def test_read_refuses_what_is_not_a_sweep(tmp_path, text, match):
    p = tmp_path / "x.csv"
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        ts.read_train_sweep(p)
    p.write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="not even UTF-8"):
        ts.read_train_sweep(p)


def test_cli_runs_resumes_and_refuses(tiny, tmp_path, capsys):
    out = tmp_path / "cli.csv"
    args = ["train-sweep", "--figure", "10a", "--seeds", "1", "--steps", "20", "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr()
    assert "trained 2 runs" in text.out and "run 2/2: n=24 d=2 k=3 lambda=1" in text.out
    assert "train-sweep: 2/2 runs" in text.err  # the progress line, with the time left
    assert "left" in text.err
    assert main(args) == 0
    assert "2 runs already in" in capsys.readouterr().out
    for bad, match in ((["--seeds", "0"], "--seeds=0"), (["--jobs", "0"], "--jobs=0"), (["--steps", "0"], "--steps=0"),
                       (["--steps", "30"], "--steps=30, but --out=")):
        assert main(args + bad) == 2
        assert match in capsys.readouterr().err
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    assert main(["train-sweep", "--out", str(other)]) == 2
    assert "is not a train-sweep CSV" in capsys.readouterr().err
    assert other.read_text() == "a,b\n1,2\n"
    assert main(["train-sweep", "--out", str(tmp_path / "x.txt")]) == 2


def test_figure_curves_are_the_median_and_quartiles_over_seeds():
    curves = ts.figure_curves(sweep_rows((8, 16)), "10b")
    assert list(curves) == [8, 16]
    c = curves[8]["onehot"]
    assert c["seeds"] == (0, 1, 2)
    assert c["step"].tolist() == [50, 100]  # step 0 left out, as the authors' --drop_step_zero
    # seeds 0, 1, 2 give 0.9 + {0, 0.01, 0.02} - 0.001 step: the median is seed 1's, the quartiles halfway
    np.testing.assert_allclose(c["val"][1], [0.91 - 0.05, 0.91 - 0.1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(c["val"][0], [0.905 - 0.05, 0.905 - 0.1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(c["val"][2], [0.915 - 0.05, 0.915 - 0.1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(c["loss"][1], [19.0, 19.0])
    assert ts.figure_curves(sweep_rows((8,)), "10b", quantile=0.0)[8]["none"]["val"][0][0] == pytest.approx(1.05)
    with pytest.raises(ValueError, match="quantile=60"):
        ts.figure_curves(sweep_rows((8,)), "10b", quantile=60.0)
    ragged = [r for r in sweep_rows((8,)) if not (r["seed"] == 2 and r["step"] == 100 and r["embedding"] == "none")]
    with pytest.raises(ValueError, match="hold different steps"):
        ts.figure_curves(ragged, "10b")
    assert ts.figure_curves(sweep_rows((8,)), "9a") == {}


def test_the_committed_sweep_holds_every_run_of_its_scale():
    rows = ts.read_train_sweep(ts.COMMITTED_CSV)
    runs = {ts.run_key(r) for r in rows}
    expected = {(n, d, k, lam, e, seed, ts.DEFAULT_STEPS) for f in ts.FIGURE_SETTINGS for n, d, k, lam in
                ts.FIGURE_SETTINGS[f] for e in ts.EMBEDDINGS_COMPARED for seed in range(ts.DEFAULT_SEEDS)}
    assert runs == expected
    assert ts._complete_runs(rows) == expected
    assert len(rows) == len(expected) * ts._n_evaluations(ts.DEFAULT_STEPS)


@pytest.mark.parametrize("model, embedding", [("paper", "onehot"), ("paper_d_only", "none")])
def test_the_committed_sweep_begins_the_committed_models(model, embedding):
    """The sweep's run at the main setting's d, k, λ and seed 0 scores what the committed model did in its first steps."""
    from kmt_ref.learning import MODELS_DIR, load_checkpoint

    ck = load_checkpoint(MODELS_DIR / f"{model}.npz")
    c = ck.config
    assert (c.n, c.d, c.k, c.loss_lambda, c.embedding, ck.seed) == (512, 32, 10, 10.0, embedding, 0)
    run = sorted((r for r in ts.read_train_sweep(ts.COMMITTED_CSV)
                  if (r["d"], r["k"], r["loss_lambda"], r["embedding"], r["seed"]) == (32, 10, 10.0, embedding, 0)),
                 key=lambda r: r["step"])
    h = ck.history
    at = np.searchsorted(h["step"], [r["step"] for r in run])
    np.testing.assert_array_equal(h["step"][at], [r["step"] for r in run])
    # two float32 trainings of the same run, in two processes: their numbers round differently. Measured between
    # the two committed files: at most 2.5e-7 relative (validation and loss); the tolerance is four times that.
    # Both files are fixed, so the comparison is the same on any machine.
    np.testing.assert_allclose([r["val_score"] for r in run], h["val"][at], rtol=1e-6)
    np.testing.assert_allclose([r["train_loss"] for r in run][1:], h["loss"][at][1:], rtol=1e-6)
    np.testing.assert_array_equal([r["lr"] for r in run], h["lr"][at])


def test_checkpoints_continue_a_run_bit_for_bit(tiny, tmp_path):
    """A run continued from its checkpoint (an interruption, or a longer sweep) has a fresh run's numbers."""
    strip = lambda rows: sorted((tuple(v for c, v in r.items() if c != "run_cpu_s") for r in rows), key=repr)  # noqa
    fresh = tmp_path / "fresh.csv"
    ts.run_train_sweep(fresh, ["10a"], seeds=1, steps=100, log=lambda line: None)
    ckdir = tmp_path / "ck"
    short = tmp_path / "short.csv"
    ts.run_train_sweep(short, ["10a"], seeds=1, steps=50, log=lambda line: None, checkpoints=ckdir)
    names = sorted(p.name for p in ckdir.iterdir())
    runs = [(24, 2, 3, 1.0, e, 0, 50) for e in ("onehot", "none")]
    assert names == sorted([ts.checkpoint_name(r) for r in runs] + [ts.checkpoint_name(r)[:-4] + "_best.npz" for r in runs])
    longer = tmp_path / "long.csv"
    ts.run_train_sweep(longer, ["10a"], seeds=1, steps=100, log=lambda line: None, checkpoints=ckdir)
    assert [repr(x) for x in strip(ts.read_train_sweep(longer))] == [repr(x) for x in strip(ts.read_train_sweep(fresh))]
    with pytest.raises(ValueError, match="at step 100, beyond steps=50"):
        ts.run_train_sweep(tmp_path / "again.csv", ["10a"], seeds=1, steps=50, log=lambda line: None,
                           checkpoints=ckdir)
    odd = tmp_path / "odd"
    ts.run_train_sweep(tmp_path / "odd.csv", ["10a"], seeds=1, steps=30, log=lambda line: None, checkpoints=odd)
    with pytest.raises(ValueError, match="at step 30, not a multiple of 50"):
        ts.run_train_sweep(tmp_path / "odd2.csv", ["10a"], seeds=1, steps=60, log=lambda line: None, checkpoints=odd)
    (tmp_path / "file").write_text("x")
    assert main(["train-sweep", "--figure", "10a", "--seeds", "1", "--steps", "20", "--out", str(tmp_path / "c.csv"),
                 "--checkpoints", str(tmp_path / "file")]) == 2


def test_a_header_cut_short_is_written_again(tiny, tmp_path):
    out = tmp_path / "h.csv"
    out.write_text(",".join(ts.COLUMNS))  # an interruption while the header was written
    assert ts.run_train_sweep(out, ["10a"], seeds=1, steps=20, log=lambda line: None)["runs"] == 2
    assert _lines(out)[0] == ",".join(ts.COLUMNS) + "\n" and len(ts.read_train_sweep(out)) == 2 * 2
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("counts, text", [([3, 3, 3], "3 seeds"), ([1], "1 seed"), ([3, 1, 2], "1–3 seeds"),
                                          ([2, 1], "1–2 seeds")])
def test_seeds_text(counts, text):
    assert ts.seeds_text(iter(counts)) == text
    with pytest.raises(ValueError, match="at least one seed count"):
        ts.seeds_text([])
