r"""``python -m kmt_ref train-sweep``: the training runs behind the paper's Figures 9, 10a and 10b, as one CSV.

The authors' ``expts.md`` (rithram/kmeans-trf, "Training runs for Figure 9 /
10a / 10b") trains the layer of :func:`~kmt_ref.learning.training.train` on a
grid of settings, each with both embeddings (``onehot``, ``d_emb = d + k``, and
``none``, ``d_emb = d``; their ``expt-run.sh``), ten trials per setting,
10,000 steps each; the rest of the protocol is their main setting
(:class:`~kmt_ref.learning.config.TrainConfig`'s defaults):

- Figure 9: n = 512, k = 6, d ∈ {4, 32}, the loss's λ ∈ {1, 4, 7, 10};
- Figure 10a: n = 512, d = 32, λ = 10, k ∈ {10, 16, 25};
- Figure 10b: n = 512, k = 6, λ = 10, d ∈ {8, 16}.

:data:`FIGURE_SETTINGS` is that grid. Their plotting commands (``expts.md``,
"Appendix plots", ``plot_train_id_gen.py``) select runs by a file-name pattern
in one folder of runs, so each figure also draws the runs of the others that
match it: Figure 10a's pattern (``k=*_d=32 ... l=10.0``) matches Figure 9's
k = 6 runs at d = 32, λ = 10, and Figure 10b's (``k=6_d=* ... l=10.0``) its
d = 4 and d = 32 runs at λ = 10. :func:`figure_runs` selects the same way, so
one CSV holds every run and a run serves each figure it belongs to.

:func:`run_train_sweep` runs the runs a CSV does not yet hold, one run per worker
process (``jobs``), each run's validation curve appended to the CSV as soon as
it finishes (one write per run, flushed); re-running the same command resumes.
A row is one validation evaluation of one run (:data:`COLUMNS`); a run's
``run_cpu_s`` is the CPU time of the process that trained it. Seeds are
``0 … seeds − 1`` (the authors' ten are read from their ``random_seeds``
file; ours are the project's own, open). A file holds one scale: its runs
all have the same number of steps.
"""
from __future__ import annotations

import csv
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from ..progress import Progress, format_duration
from ..output_paths import not_read_by, replace_atomically
from ..validation import check_choice, check_count, check_real_in
from .config import TrainConfig
from .model import d_emb_of

__all__ = ["FIGURE_SETTINGS", "FIGURE_SPLIT", "EMBEDDINGS_COMPARED", "COLUMNS", "DEFAULT_STEPS", "DEFAULT_SEEDS",
           "COMMITTED_CSV", "SWEEP_FILE", "run_key", "checkpoint_name", "figure_runs", "figure_curves", "final_scores",
           "seeds_text", "read_train_sweep", "run_train_sweep"]

#: the settings (n, d, k, loss λ) each figure's training runs use (the authors' ``expts.md``)
FIGURE_SETTINGS = {
    "9": [(512, d, 6, lam) for d in (4, 32) for lam in (1.0, 4.0, 7.0, 10.0)],
    "10a": [(512, 32, k, 10.0) for k in (10, 16, 25)],
    "10b": [(512, d, 6, 10.0) for d in (8, 16)],
}

#: each drawn figure: what its panels split on, and the runs its plotting pattern selects (the authors'
#: ``expts.md``, "Appendix plots": Figure 9a is d = 4, 9b d = 32; see the module docstring)
FIGURE_SPLIT = {
    "9a": ("loss_lambda", lambda n, d, k, lam: n == 512 and k == 6 and d == 4),
    "9b": ("loss_lambda", lambda n, d, k, lam: n == 512 and k == 6 and d == 32),
    "10a": ("k", lambda n, d, k, lam: n == 512 and d == 32 and lam == 10.0),
    "10b": ("d", lambda n, d, k, lam: n == 512 and k == 6 and lam == 10.0),
}

#: both embeddings of the authors' ``expt-run.sh`` (``ENC=("onehot" "none")``)
EMBEDDINGS_COMPARED = ("onehot", "none")

#: one row per validation evaluation of one run
COLUMNS = ("n", "d", "k", "loss_lambda", "embedding", "seed", "steps", "step", "train_loss", "val_score", "lr",
           "run_cpu_s")

#: the scale of the committed sweep, kmt_ref/datasets/train_sweep.csv (open: the authors' expts.md lists 10
#: trials of 10,000 steps; its CPU time: ``python -m kmt_ref report train-sweep``)
DEFAULT_STEPS = 600
DEFAULT_SEEDS = 3

#: the committed sweep at that scale (package data; the figures of :mod:`kmt_ref.viz.train_sweep_figures`)
COMMITTED_CSV = Path(__file__).resolve().parents[1] / "datasets" / "train_sweep.csv"

_RUN_KEY = ("n", "d", "k", "loss_lambda", "embedding", "seed", "steps")


def run_key(row):
    """A row's run: (n, d, k, λ, embedding, seed, steps)."""
    return tuple(row[c] for c in _RUN_KEY)


def _parse_row(line):
    if len(line) != len(COLUMNS):
        raise ValueError
    row = dict(zip(COLUMNS, line))
    out = {c: int(row[c]) for c in ("n", "d", "k", "seed", "steps", "step")}
    out["loss_lambda"] = float(row["loss_lambda"])
    if row["embedding"] not in EMBEDDINGS_COMPARED or not math.isfinite(out["loss_lambda"]):
        raise ValueError
    for c in ("train_loss", "val_score", "lr", "run_cpu_s"):
        out[c] = float(row[c]) if row[c] else math.nan
    out["embedding"] = row["embedding"]
    return out


def read_train_sweep(path):
    """The rows of a train-sweep CSV, as dicts (ints, floats; an empty ``train_loss`` is NaN).

    A last line cut short (no newline: an interrupted write) is left out; the
    run it belonged to is trained again on resume.

    Raises
    ------
    ValueError
        The file is not UTF-8 text, its header is not :data:`COLUMNS`, a line
        is not a row, or its runs do not all have the same number of steps.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        raise ValueError(f"{str(path)!r} is not a train-sweep CSV (not even UTF-8 text)") from None
    if not lines or lines[0].strip() != ",".join(COLUMNS):
        raise ValueError(f"{str(path)!r} is not a train-sweep CSV: its first line should be {','.join(COLUMNS)!r}")
    if not lines[-1].endswith("\n"):
        lines = lines[:-1]
    rows = []
    for no, line in enumerate(csv.reader(lines[1:]), start=2):
        try:
            rows.append(_parse_row(line))
        except ValueError:
            raise ValueError(f"{str(path)!r} line {no} is not a train-sweep row: {','.join(line)!r}") from None
    steps = sorted({r["steps"] for r in rows})
    if len(steps) > 1:
        raise ValueError(f"{str(path)!r} mixes runs of {', '.join(map(str, steps))} steps; a file holds one scale")
    return rows


#: ``train-sweep --out``: an existing train-sweep CSV is resumed; nothing else is written over
SWEEP_FILE = ("train-sweep resumes a train-sweep CSV and writes over no other file",
              not_read_by(read_train_sweep, "train-sweep CSV"))


def _complete_runs(rows):
    """The keys of the runs whose every evaluation is in ``rows`` (a run is written in one piece)."""
    count = {}
    for r in rows:
        count[run_key(r)] = count.get(run_key(r), 0) + 1
    return {key for key, c in count.items() if c == _n_evaluations(key[_RUN_KEY.index("steps")])}


def _n_evaluations(steps, eval_every=TrainConfig.eval_every):
    return steps // eval_every + 1 + (steps % eval_every != 0)


def _config(n, d, k, lam, embedding, steps):
    return replace(TrainConfig(), n=n, d=d, k=k, loss_lambda=lam, embedding=embedding, steps=steps).validate()


def _cost(n, d, k, embedding, steps):
    """A run's expected CPU time, in arbitrary units: about 32 + d_emb per step at n = 512.

    As the committed CSV's ``run_cpu_s`` grow (the progress line's estimate of the time left rests on it).
    """
    return steps * n / 512 * (32 + d_emb_of(d, k, embedding))


def _format(value):
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return str(value)


def checkpoint_name(run):
    """The file name of a run's checkpoint in ``checkpoints`` (:func:`run_train_sweep`); the steps are not in it."""
    n, d, k, lam, embedding, seed, _ = run
    return f"n{n}_d{d}_k{k}_lambda{lam:g}_{embedding}_seed{seed}.npz"


def _train_one(run, config, checkpoints=None):
    """Train one run (in a worker process) with its ``config``; return its CSV lines and its CPU seconds.

    With a ``checkpoints`` folder the run writes its checkpoint there every ``config.checkpoint_every`` steps
    and continues from one it finds (:func:`~kmt_ref.learning.training.train`'s ``resume``, bit for bit).
    """
    from .training import TrainingDiverged, train, tune_malloc

    n, d, k, lam, embedding, seed, steps = run
    tune_malloc()
    path = Path(checkpoints) / checkpoint_name(run) if checkpoints is not None else None
    resume = path if path is not None and path.exists() else None
    if resume is not None:
        from .checkpoint import load_checkpoint

        held = load_checkpoint(resume).step
        if held > steps or (held < steps and held % config.eval_every):
            why = (f"beyond steps={steps:,}" if held > steps else
                   f"not a multiple of {config.eval_every} (its last evaluation is one that a run of "
                   f"steps={steps:,} does not make, so continuing would change its numbers)")
            raise ValueError(f"checkpoints={str(checkpoints)!r} holds {path.name} at step {held:,}, {why}; "
                             "give another checkpoints folder")
    t0 = time.process_time()
    try:
        ck = train(config, seed=seed, out=path, resume=resume, log=lambda line: None, blas_threads=1)
    except TrainingDiverged as exc:  # name the run: the sweep stops here, and on every resume (training is seeded)
        raise TrainingDiverged(f"the run n={n} d={d} k={k} lambda={lam:g} {embedding} seed={seed}: {exc}") from None
    cpu = time.process_time() - t0
    h = ck.history
    lines = []
    for step, loss, val, lr in zip(h["step"], h["loss"], h["val"], h["lr"]):
        values = (n, d, k, float(lam), embedding, seed, steps, int(step), float(loss), float(val), float(lr), cpu)
        lines.append(",".join(_format(v) for v in values) + "\n")
    return lines, cpu


def figure_runs(figure, rows):
    """The rows of ``rows`` that the drawn ``figure`` ("9a", "9b", "10a", "10b") selects, as the authors' pattern."""
    check_choice(figure, "figure", tuple(FIGURE_SPLIT))
    select = FIGURE_SPLIT[figure][1]
    return [r for r in rows if select(r["n"], r["d"], r["k"], r["loss_lambda"])]


def figure_curves(rows, figure, quantile=25.0):
    """What ``figure`` draws: per panel value and embedding, the median and quantile band over seeds at each step.

    As the authors' ``plot_train_id_gen.py`` (their ``--quantile 25 --drop_step_zero``): the
    evaluations at step 0 are left out; at each evaluation step, the 50th, ``quantile``-th and
    (100 − ``quantile``)-th percentiles over the runs' seeds (``np.percentile``, linear
    interpolation; with 3 seeds the 25–75 % band runs halfway from the median to the lowest and
    the highest seed) of the validation score and of the mean training loss over the 50 steps
    before the evaluation. That window holds the loss at the initial weights in its first point,
    which the authors' ``--drop_step_zero`` leaves out of theirs, and each of theirs starts one
    step later (open: the training history keeps one mean per evaluation).

    Returns
    -------
    dict
        ``{panel value: {embedding: {"step", "seeds", "val", "loss"}}}``, panel values sorted;
        ``"val"`` and ``"loss"`` are arrays (3, evaluations): the low band, the median, the high band;
        ``"seeds"`` is the sorted tuple of seeds. Raises ValueError if a panel's runs do not
        all hold the same evaluation steps.
    """
    import numpy as onp

    check_real_in(quantile, "quantile", 0.0, 50.0, lo_open=False, hi_open=False)
    split = FIGURE_SPLIT[figure][0]
    runs = {}
    for r in figure_runs(figure, rows):
        if r["step"] == 0:
            continue
        runs.setdefault((r[split], r["embedding"], r["seed"]), []).append(r)
    out = {}
    for (value, embedding, seed), rs in sorted(runs.items()):
        rs.sort(key=lambda r: r["step"])
        out.setdefault(value, {}).setdefault(embedding, []).append((seed, rs))
    for value, by_emb in out.items():
        for embedding, seeded in by_emb.items():
            steps = [tuple(r["step"] for r in rs) for _, rs in seeded]
            if len(set(steps)) != 1:
                raise ValueError(f"figure {figure}: the runs at {split}={value}, {embedding} hold different steps")
            q = [quantile, 50.0, 100.0 - quantile]
            by_emb[embedding] = {
                "step": onp.array(steps[0]),
                "seeds": tuple(seed for seed, _ in seeded),
                "val": onp.percentile([[r["val_score"] for r in rs] for _, rs in seeded], q, axis=0),
                "loss": onp.percentile([[r["train_loss"] for r in rs] for _, rs in seeded], q, axis=0),
            }
    return out


def seeds_text(counts):
    """How many seeds the curves or panels have, from their seed counts: "3 seeds", "1 seed", "1–3 seeds"."""
    counts = sorted(set(counts))
    if not counts:
        raise ValueError("seeds_text needs at least one seed count, got none")
    span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return span + (" seed" if counts == [1] else " seeds")


def final_scores(rows, figure):
    """Each run's last validation score: ``{panel value: {embedding: {seed: score}}}``, panel values sorted."""
    split = FIGURE_SPLIT[figure][0]
    last = {}
    for r in figure_runs(figure, rows):
        key = (r[split], r["embedding"], r["seed"])
        if key not in last or r["step"] > last[key]["step"]:
            last[key] = r
    out = {}
    for (value, embedding, seed), r in sorted(last.items()):
        out.setdefault(value, {}).setdefault(embedding, {})[seed] = r["val_score"]
    return out


def run_train_sweep(out, figures=("9",), seeds=DEFAULT_SEEDS, steps=DEFAULT_STEPS, jobs=1, log=print,
                    progress=None, checkpoints=None):
    """Train the runs of ``figures`` that ``out`` does not hold yet, appending each to ``out`` as it finishes.

    Parameters
    ----------
    out : str or Path
        The CSV; if it exists it must be a train-sweep CSV of ``steps`` steps, whose runs are kept and skipped.
    figures : sequence of {"9", "10a", "10b"}
    seeds : int >= 1
        Seeds 0 … seeds − 1 of every setting and embedding.
    steps : int >= 1
        Training steps of every run (validation every 50, as the authors').
    jobs : int >= 1
        Runs trained at once, each in its own process on one BLAS thread.
    log : callable
        Receives a line per finished run.
    progress : file-like, optional
        Where the progress line (runs done, time left) goes.
    checkpoints : str or Path, optional
        A folder for each run's checkpoint (:func:`checkpoint_name`), written every 250 steps: an
        interrupted run continues from its last one (bit for bit, on the same machine and software)
        instead of from step 0, and each finished run's weights stay there. The file names leave the
        steps out, so a sweep of more steps (into another ``out``) continues the runs of a shorter one
        from where they ended, with the numbers of runs trained that long from the start on that machine,
        if the shorter one's steps are a multiple of 50 (the evaluation at its end is then one that the
        longer runs make too; otherwise the sweep refuses the folder). A resumed run's ``run_cpu_s`` counts the
        CPU time since its checkpoint only.

    Returns
    -------
    dict
        ``{"runs": trained in this call, "cpu_s": their CPU seconds, "wall_s": this call's wall time}``.
    """
    for f in figures:
        check_choice(f, "figure", tuple(FIGURE_SETTINGS))
    check_count(seeds, "seeds", minimum=1)
    check_count(steps, "steps", minimum=1)
    check_count(jobs, "jobs", minimum=1)
    out = Path(out)
    if out.exists():
        held = read_train_sweep(out)
        if held and held[0]["steps"] != steps:
            raise ValueError(f"steps={steps}, but {str(out)!r} holds runs of {held[0]['steps']} steps; "
                             "a file holds one scale (give another out)")
        text = out.read_text(encoding="utf-8")
        lines = text[: text.rfind("\n") + 1].splitlines(keepends=True)[1:]
        done = _complete_runs(held)
        # drop a line cut short and the rows of any run that is not complete (it is trained again)
        kept = ",".join(COLUMNS) + "\n" + "".join(line for line, r in zip(lines, held) if run_key(r) in done)
        if kept != text:
            replace_atomically(out, kept)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(out, ",".join(COLUMNS) + "\n")
        done = set()
    runs = []
    for f in figures:
        for n, d, k, lam in FIGURE_SETTINGS[f]:
            for embedding in EMBEDDINGS_COMPARED:
                for seed in range(seeds):
                    run = (n, d, k, float(lam), embedding, seed, steps)
                    if run not in done and run not in runs:
                        runs.append(run)
    runs.sort(key=lambda r: -_cost(r[0], r[1], r[2], r[4], r[6]))  # longest first: the workers end together
    total = len(runs) + len(done)
    log(f"train-sweep: {len(done)} runs already in {out}; {len(runs)} to train ({steps} steps each, {jobs} at once)")
    bar = Progress("train-sweep", "runs", [_cost(r[0], r[1], r[2], r[4], r[6]) for r in runs], progress) \
        if progress is not None and runs else None
    t0, cpu_total = time.perf_counter(), 0.0
    with out.open("a", encoding="utf-8", newline="") as fh:
        configs = {run: _config(*run[:5], run[6]) for run in runs}
        if checkpoints is not None:
            checkpoints = Path(checkpoints)
            checkpoints.mkdir(parents=True, exist_ok=True)
        if jobs == 1:
            results = ((run, _train_one(run, configs[run], checkpoints)) for run in runs)
        else:
            pool = ProcessPoolExecutor(max_workers=jobs)
            futures = {pool.submit(_train_one, run, configs[run], checkpoints): run for run in runs}
            results = ((futures[fut], fut.result()) for fut in as_completed(futures))
        try:
            for i, (run, (lines, cpu)) in enumerate(results, start=1):
                fh.write("".join(lines))
                fh.flush()
                cpu_total += cpu
                n, d, k, lam, embedding, seed, _ = run
                final = float(lines[-1].split(",")[COLUMNS.index("val_score")])
                if bar:
                    bar.clear()
                log(f"run {len(done) + i}/{total}: n={n} d={d} k={k} lambda={lam:g} {embedding} seed={seed}: "
                    f"validation score {final:.4f} (Lloyd's step: 1), {format_duration(cpu)} CPU")
                if bar:
                    bar.step()
        finally:
            if jobs != 1:
                pool.shutdown(cancel_futures=True)
    return {"runs": len(runs), "cpu_s": cpu_total, "wall_s": time.perf_counter() - t0}


def _train_sweep_command(args):
    """``python -m kmt_ref train-sweep``: check every argument and --out, then train."""
    from ..validation import check_output_file

    figures = ["9", "10a", "10b"] if args.figure == "all" else [args.figure]
    check_count(args.seeds, "--seeds", minimum=1)
    check_count(args.steps, "--steps", minimum=1)
    check_count(args.jobs, "--jobs", minimum=1)
    out = check_output_file(args.out, "--out", ".csv", SWEEP_FILE)
    if out.exists():
        held = read_train_sweep(out)
        if held and held[0]["steps"] != args.steps:
            raise ValueError(f"--steps={args.steps}, but --out={args.out!r} holds runs of {held[0]['steps']} "
                             "steps; a file holds one scale (give another --out)")
    if args.checkpoints is not None and Path(args.checkpoints).exists() and not Path(args.checkpoints).is_dir():
        raise ValueError(f"--checkpoints={args.checkpoints!r} is not a folder")
    res = run_train_sweep(out, figures, args.seeds, args.steps, args.jobs, progress=sys.stderr,
                          checkpoints=args.checkpoints)
    print(f"trained {res['runs']} runs in {format_duration(res['wall_s'])} ({format_duration(res['cpu_s'])} CPU "
          f"in the workers); wrote {out}")
    return 0


def register(sub):
    """Add the ``train-sweep`` command to the ``python -m kmt_ref`` parser."""
    p = sub.add_parser(
        "train-sweep", help="the training runs of the paper's Figures 9, 10a, 10b (resumable CSV)",
        description="Train the runs of the authors' expts.md for a figure (both embeddings, seeds 0..N-1) into a "
                    "CSV, one run at a time per job; re-running the same command resumes.")
    p.add_argument("--figure", choices=["9", "10a", "10b", "all"], default="9",
                   help="9: loss lambda in {1,4,7,10} at d in {4,32}, k=6; 10a: k in {10,16,25} at d=32; "
                        "10b: d in {8,16} at k=6; all: the three (default: 9). As the authors' plots, the drawn "
                        "Figures 10a and 10b also show Figure 9's runs at lambda=10 (k=6; d=4 and 32): run "
                        "--figure 9 too, or all")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                   help=f"seeds 0..N-1 of every setting (default {DEFAULT_SEEDS}; the authors ran 10 trials)")
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                   help=f"training steps of every run (default {DEFAULT_STEPS}; the authors ran 10,000)")
    p.add_argument("--jobs", type=int, default=1, help="runs trained at once, one process each (default 1)")
    p.add_argument("--out", default="train_sweep.csv",
                   help="the CSV to write (ending in .csv), or to resume if it is a train-sweep CSV of the same "
                        "--steps; any other file is refused (default: train_sweep.csv in the current folder)")
    p.add_argument("--checkpoints", default=None, metavar="DIR",
                   help="keep each run's checkpoint in this folder (every 250 steps): an interrupted run continues "
                        "from its last one, and a later sweep of more --steps (into another --out) continues each "
                        "run from where this one ended, if this one's --steps is a multiple of 50 (else the later "
                        "sweep refuses the folder) (default: none kept)")
    p.set_defaults(func=_train_sweep_command)
