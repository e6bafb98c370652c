"""Tests for the command line ``python -m kmt_ref``: a user's mistake ends in
``error: ...`` on stderr and exit status 2, never a traceback, and nothing the
user made is lost (checkpoints, evaluation files, work already done).

Commands run in-process through :func:`kmt_ref.cli.main` on tiny configurations;
two subprocess runs check the real exit status and stderr.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kmt_ref.learning.checkpoint as checkpoint
import kmt_ref.learning.cli as learning_cli
from kmt_ref import cli, demo, sweep
from kmt_ref.cli import main
from kmt_ref.validation import check_output_dir, check_output_file
from kmt_ref.learning import MODELS_DIR, CheckpointError, load_checkpoint, load_evaluation, save_evaluation

#: a training run of about a second
TINY = ["--n", "24", "--d", "2", "--k", "3", "--batch", "4", "--steps", "10", "--eval-every", "5", "--n-val", "8",
        "--eval-tasks", "2"]
#: an evaluation of a fraction of a second
QUICK = ["--tasks", "2", "--steps", "2", "--n", "20"]
COMMITTED_EVALUATION = MODELS_DIR / "evaluation.npz"


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    """A tiny trained checkpoint (d=2, k=3, 10 steps) and its _best snapshot."""
    out = tmp_path_factory.mktemp("ckpt") / "tiny.npz"
    assert main(["train", *TINY, "--out", str(out)]) == 0
    return out


def fails(capsys, argv, *fragments):
    """Run a command that must fail as a user error; return its stderr."""
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    return err


def rewrite(src, dst, meta=None, drop=(), **arrays):
    """Copy the checkpoint ``src`` to ``dst`` with its meta, some arrays changed or dropped."""
    with np.load(src) as z:
        data = {key: z[key] for key in z.files if key not in drop}
    m = json.loads(str(data["meta"]))
    if meta:
        meta(m)
    data["meta"] = np.array(json.dumps(m))
    data.update(arrays)
    np.savez(dst, **data)
    return dst


def file_bytes(path):
    return path.read_bytes()


# --------------------------------------------------------------------------
# What keeps working
# --------------------------------------------------------------------------
def test_help_and_no_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "demo" in capsys.readouterr().out
    assert main([]) == 2


def test_demo_without_arguments(tmp_path, monkeypatch, capsys):
    """The main job writes its figure in a folder of its own, never in figures/ (the committed figures)."""
    monkeypatch.chdir(tmp_path)
    assert main(["demo"]) == 0
    written = tmp_path / "demo_output" / "fig1_validation.png"
    assert written.exists() and not (tmp_path / "figures").exists()
    text = capsys.readouterr().out
    assert "data=paper" in text  # the authors' draw by default
    assert f"wrote figure 1 to {written.resolve()}" in text


def test_train_default_config_and_default_out(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--steps", "5", "--eval-every", "5", "--eval-tasks", "2"]) == 0  # the small config, shortened
    out = tmp_path / "runs" / "small_seed0.npz"
    ck = load_checkpoint(out)
    assert (ck.config.d, ck.config.k, ck.step, ck.seed) == (8, 3, 5, 0)
    assert "saved runs/small_seed0.npz" in capsys.readouterr().out
    before = file_bytes(out)
    fails(capsys, ["train", "--steps", "5"], "already exists", "--force", "--resume")
    assert file_bytes(out) == before


def test_evaluate_and_save_round_trip(ckpt, tmp_path, capsys):
    ev = tmp_path / "sub" / "ev.npz"  # the folder is created
    assert main(["evaluate", str(ckpt), *QUICK, "--save", str(ev)]) == 0
    assert "Lloyd T" in capsys.readouterr().out
    assert main(["evaluate", str(ckpt), *QUICK, "--init", "kmeans++", "--save", str(ev)]) == 0  # merged
    stored, info = load_evaluation(ev)
    assert set(stored) == {"random,n=20,normal", "kmeans++,n=20,normal"}
    assert set(stored["random,n=20,normal"]) == {"lloyd", "tiny"} and info["tasks"] == 2


# --------------------------------------------------------------------------
# Files that are not checkpoints, or invalid ones
# --------------------------------------------------------------------------
def test_evaluation_file_is_not_a_checkpoint(capsys, tmp_path):
    fails(capsys, ["evaluate", COMMITTED_EVALUATION, *QUICK], "not a kmt_ref training checkpoint", "evaluation")
    fails(capsys, ["train", "--resume", COMMITTED_EVALUATION, "--out", tmp_path / "x.npz"],
          "not a kmt_ref training checkpoint")
    assert not (tmp_path / "x.npz").exists()


def test_files_that_are_not_npz(capsys, tmp_path):
    (tmp_path / "notes.npz").write_text("hello")
    fails(capsys, ["evaluate", tmp_path / "notes.npz"], "not a .npz file")
    np.save(tmp_path / "array.npy", np.zeros(3))
    fails(capsys, ["evaluate", tmp_path / "array.npy"], "not a .npz file")
    fails(capsys, ["evaluate", tmp_path / "missing.npz"], "does not exist")
    fails(capsys, ["evaluate", "no_such_model"], "does not exist")
    fails(capsys, ["evaluate", tmp_path], "is a directory")
    fails(capsys, ["train", "--resume", tmp_path / "missing.npz", "--out", tmp_path / "x.npz"], "does not exist")


def _set(path, value):
    """A meta editor: ``path`` like ("config", "k") is set to ``value``."""
    def edit(m):
        target = m
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


@pytest.mark.parametrize("name,change,fragment", [
    ("newer_field", dict(meta=_set(("config", "attention_heads"), 2)), "does not know"),
    ("newer_format", dict(meta=_set(("format",), "kmt_ref.training/2")), "has format 'kmt_ref.training/2'"),
    ("older_config", dict(meta=lambda m: m["config"].pop("dtype")), "lacks configuration field(s) ['dtype']"),
    ("bad_k", dict(meta=_set(("config", "k"), 100)), "invalid value: n=24 points should be >= k=100"),
    ("bad_d", dict(meta=_set(("config", "d"), -1)), "invalid value: d=-1"),
    ("bad_dtype", dict(meta=_set(("config", "dtype"), "int8")), "dtype='int8'"),
    ("bad_step", dict(meta=_set(("step",), -3)), "step=-3"),
    ("no_meta", dict(drop=("meta",)), None),
    ("nan_weights", dict(param_Q1=np.full((5, 5), np.nan, np.float32)), "parameter Q1 contains NaN"),
    ("inf_bias", dict(param_bV4=np.array([0, 0, np.inf, 0, 0], np.float32)), "parameter bV4 contains NaN"),
    ("int_weights", dict(param_K2=np.zeros((5, 5), int)), "K2 has dtype int64"),
    ("wrong_shape", dict(param_V3=np.zeros((7, 7), np.float32)), "wrong shapes {'V3': (7, 7)}"),
    ("missing_param", dict(drop=("param_Q2",)), "missing ['Q2']"),
    ("missing_history", dict(drop=("history_val",)), "lacks the entries ['history_val']"),
])
def test_invalid_checkpoints_are_refused_on_load(ckpt, tmp_path, capsys, no_work, name, change, fragment):
    bad = tmp_path / f"{name}.npz"
    meta = change.pop("meta", None)
    drop = change.pop("drop", ())
    if name == "no_meta":
        with np.load(ckpt) as z:
            np.savez(bad, **{key: z[key] for key in z.files if key != "meta"})
        fragment = "not a kmt_ref training checkpoint"
    else:
        rewrite(ckpt, bad, meta=meta, drop=drop, **change)
    with pytest.raises(CheckpointError) as exc:
        load_checkpoint(bad)
    assert fragment in str(exc.value)
    fails(capsys, ["evaluate", bad, *QUICK], fragment)  # no_work: refused before any evaluation
    fails(capsys, ["train", "--resume", bad, "--steps", "20", "--out", tmp_path / "r.npz"])
    assert not (tmp_path / "r.npz").exists()


def test_meta_that_is_not_json(ckpt, tmp_path):
    with np.load(ckpt) as z:
        data = {key: z[key] for key in z.files}
    data["meta"] = np.array("{not json")
    np.savez(tmp_path / "m.npz", **data)
    with pytest.raises(CheckpointError, match="not a JSON object"):
        load_checkpoint(tmp_path / "m.npz")


def test_load_evaluation_refuses_other_files(ckpt, tmp_path):
    with pytest.raises(CheckpointError, match="not a kmt_ref evaluation file .a training checkpoint"):
        load_evaluation(ckpt)
    np.savez(tmp_path / "other.npz", a=np.zeros((2, 2)))
    with pytest.raises(CheckpointError, match="entry 'a' is not"):
        load_evaluation(tmp_path / "other.npz")
    with pytest.raises(CheckpointError, match="not a .npz file"):
        load_evaluation(__file__)
    before = file_bytes(ckpt)
    with pytest.raises(CheckpointError, match="training checkpoint"):  # no merging into a checkpoint
        save_evaluation(ckpt, {"random,n=8,normal": {"lloyd": np.ones((2, 3))}})
    assert file_bytes(ckpt) == before


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "e.npz"
    save_evaluation(path, {"random,n=8,normal": {"lloyd": np.ones((2, 3))}})
    before = file_bytes(path)

    def disk_full(file, **arrays):
        with open(file, "wb") as f:
            f.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint.onp, "savez_compressed", disk_full)
    with pytest.raises(OSError):
        save_evaluation(path, {"random,n=8,normal": {"m": np.ones((2, 3))}})
    assert file_bytes(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.npz"]


# --------------------------------------------------------------------------
# Resuming
# --------------------------------------------------------------------------
def test_resume_refuses_what_does_not_fit(ckpt, tmp_path, capsys):
    r = tmp_path / "r.npz"
    fails(capsys, ["train", "--resume", ckpt, "--d", "3", "--steps", "20", "--out", r], "--d=3", "d=2")
    fails(capsys, ["train", "--resume", ckpt, "--k", "4", "--steps", "20", "--out", r], "--k=4")
    fails(capsys, ["train", "--resume", ckpt, "--embedding", "none", "--steps", "20", "--out", r], "embedding")
    fails(capsys, ["train", "--resume", ckpt, "--steps", "5", "--out", r],
          "--steps=5 should be > the checkpoint's step 10")
    fails(capsys, ["train", "--resume", ckpt, "--out", r], "has done all its 10 steps", "--steps N")
    fails(capsys, ["train", "--resume", ckpt, "--seed", "7", "--steps", "20", "--out", r], "seed 0")
    fails(capsys, ["train", "--resume", ckpt, "--config", "paper", "--steps", "20", "--out", r], "--config")
    best = ckpt.with_name("tiny_best.npz")
    assert best.exists()
    fails(capsys, ["train", "--resume", best, "--steps", "20", "--out", r], "no optimiser state", "evaluated")
    assert not r.exists()


def test_resume_in_place_and_to_a_new_file(ckpt, tmp_path, capsys):
    own = tmp_path / "own.npz"
    own.write_bytes(file_bytes(ckpt))
    assert main(["train", "--resume", str(own), "--steps", "15"]) == 0  # --out defaults to the resumed file
    assert load_checkpoint(own).step == 15
    assert main(["train", "--resume", str(own), "--steps", "20", "--out", str(tmp_path / "more.npz")]) == 0
    assert load_checkpoint(tmp_path / "more.npz").step == 20 and load_checkpoint(own).step == 15
    fails(capsys, ["train", "--resume", own, "--steps", "25", "--out", tmp_path / "more.npz"], "already exists")


# --------------------------------------------------------------------------
# Nothing the user made is replaced silently; output paths are checked first
# --------------------------------------------------------------------------
def test_train_refuses_to_replace_a_model_without_force(tmp_path, capsys):
    out = tmp_path / "m.npz"
    assert main(["train", *TINY, "--out", str(out)]) == 0
    before = file_bytes(out)
    fails(capsys, ["train", *TINY, "--seed", "1", "--out", out], "m.npz' already exists", "--force")
    assert file_bytes(out) == before
    out.unlink()  # the _best snapshot of that run is still there
    fails(capsys, ["train", *TINY, "--out", out], "m_best.npz' already exists", "best snapshot")
    assert main(["train", *TINY, "--seed", "1", "--out", str(out), "--force"]) == 0
    assert load_checkpoint(out).seed == 1


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if an evaluation or a training run starts."""
    def forbidden(*a, **k):
        raise AssertionError("the command started working before checking its output path")
    monkeypatch.setattr(learning_cli, "evaluate", forbidden)  # where the command looks it up
    monkeypatch.setattr(learning_cli, "train", forbidden)


def test_output_paths_are_checked_before_the_work(ckpt, tmp_path, capsys, no_work):
    afile = tmp_path / "somefile.txt"
    afile.write_text("my notes")
    fails(capsys, ["train", *TINY, "--out", afile / "model.npz"], "is a file, not a folder")
    fails(capsys, ["train", *TINY, "--out", tmp_path], "is a folder")
    fails(capsys, ["evaluate", ckpt, *QUICK, "--save", afile / "ev.npz"], "is a file, not a folder")
    fails(capsys, ["evaluate", ckpt, *QUICK, "--save", tmp_path], "is a folder")
    fails(capsys, ["evaluate", ckpt, *QUICK, "--save", afile], "should end in .npz")
    fails(capsys, ["evaluate", ckpt, *QUICK, "--save", ckpt], "merges the results", "(a training checkpoint)")
    fails(capsys, ["figures", "--outdir", afile / "figs"], "is a file, not a folder")
    fails(capsys, ["figures", "--outdir", afile], "is a file, not a folder")
    fails(capsys, ["demo", "--outdir", afile / "figs", "--n-layers", "1"], "is a file, not a folder")
    assert afile.read_text() == "my notes"


def test_no_command_writes_over_a_file_of_another_kind(ckpt, tmp_path, capsys, no_work, monkeypatch):
    """One rule for every command that writes: a name ends in its format's suffix (.npz, .csv), and an
    existing file is written over only if it is of the command's own kind, whatever the flags."""
    monkeypatch.setattr(sweep, "run_sweep", no_work_at_all)
    readme = tmp_path / "README.md"
    readme.write_text("# my project")
    fails(capsys, ["train", *TINY, "--out", readme, "--force"], "--out=", "should end in .npz", "README.npz")
    fails(capsys, ["train", *TINY, "--out", tmp_path / "x.txt"], "should end in .npz")
    fails(capsys, ["evaluate", ckpt, *QUICK, "--save", readme], "--save=", "should end in .npz")
    fails(capsys, ["sweep", "--out", readme], "--out=", "should end in .csv")
    assert readme.read_text() == "# my project"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]  # no x.txt, x_best.npz, README_best.npz

    other = tmp_path / "other.npz"
    np.savez(other, a=np.zeros(2))
    ev = tmp_path / "ev.npz"
    save_evaluation(ev, {"random,n=8,normal": {"lloyd": np.ones((2, 3))}})
    cut = tmp_path / "cut.npz"
    cut.write_bytes(file_bytes(ckpt)[:200])
    kept = {p: file_bytes(p) for p in (other, ev, cut)}
    fails(capsys, ["train", *TINY, "--out", other, "--force"], "is not a kmt_ref training checkpoint",
          "--force replaces a kmt_ref training checkpoint and no other file")
    fails(capsys, ["train", *TINY, "--out", ev, "--force"], "holds evaluation results")
    fails(capsys, ["train", *TINY, "--out", cut, "--force"], "damaged or truncated")
    fails(capsys, ["train", "--resume", ckpt, "--steps", "20", "--out", other, "--force"], "not a kmt_ref training")
    best_of = tmp_path / "run.npz"
    (tmp_path / "run_best.npz").write_bytes(kept[other])
    fails(capsys, ["train", *TINY, "--out", best_of, "--force"], "run_best.npz' exists", "best snapshot")
    fails(capsys, ["evaluate", ckpt, *QUICK, "--save", other], "is not a kmt_ref evaluation file",
          "writes over no other file")
    bad_meta = tmp_path / "bad_meta.npz"
    np.savez(bad_meta, meta=np.array("[1, 2]"))
    kept[bad_meta] = file_bytes(bad_meta)
    for argv in (["train", *TINY, "--out", bad_meta, "--force"], ["evaluate", ckpt, *QUICK, "--save", bad_meta]):
        fails(capsys, argv, f"={str(bad_meta)!r} exists and has a 'meta' entry that is not a JSON object;")
    notes = tmp_path / "notes.csv"
    notes.write_text("date,weight\n")
    fails(capsys, ["sweep", "--out", notes], "is not a sweep CSV", "resumes a sweep CSV")
    assert notes.read_text() == "date,weight\n" and not best_of.exists()
    assert all(file_bytes(p) == b for p, b in kept.items())

    figs = tmp_path / "figs"
    figs.mkdir()
    (figs / "fig1_validation.png").write_text("not a picture")
    (figs / "fig3_weights_and_attention.png").mkdir()
    fails(capsys, ["demo", "--outdir", figs], "fig1_validation.png' exists and is not a PNG image")
    fails(capsys, ["figures", "--outdir", figs, "--only", "fig1"], "is not a PNG image", "nothing else")
    fails(capsys, ["figures", "--outdir", figs], "fig1_validation.png")
    fails(capsys, ["figures", "--outdir", figs, "--only", "fig3"], "fig3_weights_and_attention.png' exists and is "
          "a folder")
    assert (figs / "fig1_validation.png").read_text() == "not a picture"


def no_work_at_all(*a, **k):
    raise AssertionError("the command started working before checking its output path")


def test_output_folder_rule(tmp_path):
    """A figure's PNG of an earlier run is replaced; a file of that name that is not a PNG is refused;
    other files in the folder are not the command's business."""
    (tmp_path / "fig.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"old picture")  # the PNG signature
    (tmp_path / "notes.txt").write_text("mine")
    assert check_output_dir(tmp_path, "--outdir", ["fig.png", "new.png"]) == tmp_path
    (tmp_path / "new.png").write_text("mine too")
    with pytest.raises(ValueError, match="new.png' exists and is not a PNG image"):
        check_output_dir(tmp_path, "--outdir", ["fig.png", "new.png"])
    assert check_output_dir(tmp_path, "--outdir", ["fig.png"]) == tmp_path
    (tmp_path / "link.png").symlink_to(tmp_path / "missing" / "target.png")
    with pytest.raises(ValueError, match="link.png' exists and is a broken symbolic link"):
        check_output_dir(tmp_path, "--outdir", ["link.png"])


@pytest.mark.skipif(not os.path.isdir("/sys"), reason="needs a folder nobody may write in")
def test_unwritable_folder(ckpt, capsys, no_work):
    fails(capsys, ["evaluate", ckpt, *QUICK, "--save", "/sys/kmt_ref_ev.npz"], "cannot write in the folder '/sys'")
    fails(capsys, ["train", *TINY, "--out", "/sys/kmt_ref/m.npz"], "cannot write")
    fails(capsys, ["figures", "--outdir", "/sys/kmt_ref_figs"], "cannot write")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflow is the point of the test
def test_diverged_training_names_the_last_checkpoint(tmp_path, capsys):
    out = tmp_path / "m.npz"
    fails(capsys, ["train", *TINY, "--steps", "30", "--lr", "1e200", "--dtype", "float64", "--checkpoint-every", "1",
                   "--out", out], "training loss is nan", "Last good checkpoint")
    load_checkpoint(out)  # what was trained before the divergence is kept


def test_interrupted_training_says_how_to_resume(tmp_path, monkeypatch, capsys):
    out = tmp_path / "m.npz"

    def interrupted_after_a_checkpoint(config, seed, out, resume, log, blas_threads):
        out.write_bytes(b"a checkpoint")
        raise KeyboardInterrupt

    monkeypatch.setattr(learning_cli, "train", interrupted_after_a_checkpoint)
    assert main(["train", *TINY, "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"continue with: python -m kmt_ref train --resume {out}" in err and err.endswith("interrupted\n")


def test_out_of_memory_is_a_user_error(ckpt, monkeypatch, capsys, tmp_path):
    def too_big(*a, **k):
        raise MemoryError("Unable to allocate 335. GiB")

    monkeypatch.setattr(learning_cli, "evaluate", too_big)
    err = fails(capsys, ["evaluate", ckpt, *QUICK], "out of memory (Unable to allocate 335. GiB)", "(--n, --tasks)")
    assert "--batch" not in err
    monkeypatch.setattr(learning_cli, "train", too_big)
    err = fails(capsys, ["train", *TINY, "--out", tmp_path / "m.npz"], "out of memory", "(--n, --batch, --n-val)")
    assert "--tasks" not in err  # train has no --tasks
    monkeypatch.setattr(demo, "_demo_command", too_big)
    assert "--" not in fails(capsys, ["demo"], "out of memory", "free some memory")


def test_memory_hints_name_options_of_their_command():
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for command, options in cli.SIZE_OPTIONS.items():
        known = commands[command]._option_string_actions
        assert all(o in known for o in options), (command, options)


def test_check_output_helpers(tmp_path):
    assert check_output_file(tmp_path / "new" / "deeper" / "f.npz", "out").name == "f.npz"
    assert not (tmp_path / "new").exists()  # checking creates nothing
    assert check_output_dir(tmp_path / "figs", "outdir") == tmp_path / "figs"
    assert sorted(tmp_path.iterdir()) == []  # nor leaves its probe file
    with pytest.raises(ValueError, match="should be a file path"):
        check_output_file("", "out")
    with pytest.raises(ValueError, match="is a folder"):
        check_output_file(tmp_path, "out")
    with pytest.raises(ValueError, match="is a folder"):
        check_output_file(str(tmp_path / "new") + "/", "out")
    with pytest.raises(ValueError, match="should be a folder path"):
        check_output_dir("", "outdir")


# --------------------------------------------------------------------------
# Bad values of every argument
# --------------------------------------------------------------------------
BAD_ARGS = [
    (["demo", "--n-layers", "-1", "--no-figure"], "--n-layers=-1 should be >= 0"),
    (["demo", "--seed", "-1", "--no-figure"], "--seed=-1 should be >= 0"),
    (["train", "--seed", "-1"], "--seed=-1 should be >= 0"),
    (["train", "--steps", "0"], "steps=0 should be >= 1"),
    (["train", "--batch", "0"], "batch=0"),
    (["train", "--n", "0"], "n=0"),
    (["train", "--k", "100"], "k=100"),
    (["train", "--d", "-2"], "d=-2"),
    (["train", "--eval-every", "0"], "eval_every=0"),
    (["train", "--n-val", "0"], "n_val=0"),
    (["train", "--checkpoint-every", "-5"], "checkpoint_every=-5"),
    (["train", "--patience", "-1"], "patience=-1"),
    (["train", "--lr", "0"], "lr=0.0"),
    (["train", "--lr", "nan"], "lr=nan"),
    (["train", "--lr-decay", "1.5"], "lr_decay=1.5"),
    (["train", "--dropout", "1"], "dropout=1.0"),
    (["train", "--loss-lambda", "inf"], "loss_lambda=inf"),
    (["train", "--scale", "-0.1"], "scale=-0.1"),
    (["train", "--embedding", "flag"], "embedding='flag'"),
    (["train", "--family", "uniform"], "family='uniform'"),
    (["train", "--dtype", "float16"], "dtype='float16'"),
    (["evaluate", "{ck}", "--seed", "-1"], "--seed=-1 should be >= 0"),
    (["evaluate", "{ck}", "--tasks", "0"], "--tasks=0 should be >= 1"),
    (["evaluate", "{ck}", "--steps", "-1"], "--steps=-1 should be >= 0"),
    (["evaluate", "{ck}", "--n", "2"], "--n=2 should be >= k=3"),
    (["evaluate", "{ck}", "--n", "20", "0"], "--n=0 should be >= 1"),
    (["evaluate", "{ck}", "--dropout", "1"], "--dropout=1.0 should be in [0, 1)"),
    (["evaluate", "{ck}", "--dropout", "-0.5"], "--dropout=-0.5"),
    (["evaluate", "{ck}", "--family", "uniform"], "--family='uniform' should be one of"),
    (["evaluate", "{ck}", "--family", "all", "normal"], "'all' already names every family"),
    (["evaluate", "{ck}", "--suite", "--n", "20"], "--suite"),
    (["evaluate", "{ck}", "{ck}"], "share the name 'tiny'"),
    (["evaluate", "{ck}", "paper"], "compare models of one (d, k)"),
    (["figures", "--only", "nomatch"], "matches no figure; the figures are: fig1_validation.png"),
]


@pytest.mark.parametrize("argv,fragment", BAD_ARGS, ids=[" ".join(a) for a, _ in BAD_ARGS])
def test_bad_argument_values(argv, fragment, ckpt, tmp_path, monkeypatch, capsys, no_work):
    monkeypatch.chdir(tmp_path)  # nothing may be written here
    fails(capsys, [a.replace("{ck}", str(ckpt)) for a in argv], fragment)
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [
    ["demo", "--n-layers", "two"], ["train", "--config", "huge"], ["train", "--batch", "2.5"],
    ["evaluate"], ["evaluate", "paper", "--init", "best"], ["evaluate", "paper", "--tasks", "many"], ["nocommand"],
])
def test_argparse_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_model_named_lloyd_is_refused_before_its_results_collide(ckpt, tmp_path, capsys):
    lloyd = tmp_path / "lloyd.npz"
    lloyd.write_bytes(file_bytes(ckpt))
    fails(capsys, ["evaluate", lloyd, *QUICK], "named 'lloyd'")


# --------------------------------------------------------------------------
# Bugs keep their traceback; --traceback shows it for user errors too
# --------------------------------------------------------------------------
def test_bugs_are_not_reported_as_user_errors(monkeypatch):
    def buggy(args):
        raise KeyError("a bug")

    monkeypatch.setattr(demo, "_demo_command", buggy)  # register() reads it when main builds the parser
    with pytest.raises(KeyError, match="a bug"):
        main(["demo"])


def test_traceback_flag_and_interrupt(monkeypatch, capsys, tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        main(["--traceback", "evaluate", str(tmp_path / "missing.npz")])

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(demo, "_demo_command", interrupted)
    assert main(["demo"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


# --------------------------------------------------------------------------
# The real process: exit status and stderr
# --------------------------------------------------------------------------
def _run(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "kmt_ref", *map(str, argv)], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_subprocess_user_error_exits_2_without_traceback(tmp_path):
    r = _run("evaluate", COMMITTED_EVALUATION, "--tasks", "2", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("error: ") and "Traceback" not in r.stderr
    assert "not a kmt_ref training checkpoint" in r.stderr


def test_subprocess_train_then_refuse_to_replace(tmp_path):
    r = _run("train", *TINY, "--out", "m.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _run("train", *TINY, "--out", "m.npz", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--force" in r.stderr
