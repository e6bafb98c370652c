"""``python -m kmt_ref train`` and ``python -m kmt_ref evaluate``: learning the algorithm (SPEC §6).

Examples::

    python -m kmt_ref train                         # small config (d=8): ends below Lloyd
    python -m kmt_ref train --config paper --seed 0 --out runs/paper.npz
    python -m kmt_ref train --resume runs/paper.npz --steps 12000
    python -m kmt_ref evaluate paper paper_d_only   # the committed models, 320 tasks
    python -m kmt_ref evaluate paper --init kmeans++ --n 128 256 1024 2048 --family all
    python -m kmt_ref evaluate paper --suite --save kmt_ref/models/evaluation.npz
    python -m kmt_ref evaluate paper --lloyd-empty reseed   # Lloyd as the authors ran it
    python -m kmt_ref evaluate paper --blas-threads 2       # the BLAS on two threads (default: one)

A checkpoint argument is a path to a ``.npz`` written by ``train``, or the name
of a model shipped in ``kmt_ref/models/`` (``paper``, ``paper_d_only``).

Both commands check every argument, the checkpoints they read and the file
they will write before any work starts; a mistake ends in ``error: ...`` and
exit status 2 (see :mod:`kmt_ref.cli`). The files they write end in ``.npz``
(another name is refused, never extended). ``train`` replaces an existing
``--out`` (a long training run) or its ``_best`` snapshot only with ``--force``
and only if it is a kmt_ref training checkpoint, whatever the flags; resuming
into the checkpoint it continues is the one case without ``--force``.
``evaluate --save`` merges into an existing evaluation file and writes over
nothing else (:func:`kmt_ref.validation.check_output_file`). At the end,
``train`` evaluates the trained layer against Lloyd's algorithm on seeded
tasks (the numbers ``evaluate`` prints for the same checkpoint) and says
which ends lower. ``evaluate`` shows its progress and an estimate of the time
left on stderr (:class:`kmt_ref.progress.Progress`).

Both run their loop of small matrix products with the BLAS on one thread
(:func:`kmt_ref.blas.blas_limit`; docs/PERFORMANCE.md, "BLAS threads"):
``--blas-threads N`` chooses another count, and an ``OPENBLAS_NUM_THREADS`` or
``OMP_NUM_THREADS`` set in the environment is kept.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from ..algorithms.lloyd import EMPTY_POLICIES
from ..blas import describe_blas_threads, resolve_blas_threads
from ..validation import check_choice, check_count, check_output_file, check_real_in
from ..progress import Progress
from .checkpoint import CHECKPOINT_FILE, EVALUATION_FILE, MODELS_DIR, load_checkpoint, save_evaluation
from .config import CONFIGS, SOURCES, TrainConfig
from .evaluation import EVAL_SEED, PAPER_SUITE, evaluate, setting_label
from .tasks import FAMILIES, INITS
from .training import train, tune_malloc

_FIELD_HELP = {
    "n": "points per task", "d": "dimension", "k": "clusters", "embedding": "token layout (onehot | none = d-only ablation | binary codes)",
    "batch": "tasks per step", "steps": "optimisation steps", "lr": "Adam learning rate",
    "lr_decay": "learning-rate factor on a plateau",
    "patience": "evaluations in a row without improvement tolerated (the rate decays at the next one)",
    "eval_every": "steps between validation evaluations", "n_val": "fixed validation tasks",
    "loss_lambda": "lambda of the smoothed loss", "dropout": "attention dropout in training",
    "scale": "noise scale of the task mixture", "family": "training task family",
    "checkpoint_every": "steps between checkpoints", "dtype": "arithmetic (float32 | float64)",
}


def resolve_checkpoint(name):
    """A path, or the name of a committed model (``paper`` -> kmt_ref/models/paper.npz)."""
    p = Path(name)
    if p.suffix != ".npz" and not p.exists() and (MODELS_DIR / f"{name}.npz").exists():
        return MODELS_DIR / f"{name}.npz"
    return p


def _train(args):
    """``python -m kmt_ref train``: check every argument and --out, then train and compare with Lloyd."""
    if args.seed is not None:
        check_count(args.seed, "--seed")
    check_count(args.eval_tasks, "--eval-tasks")
    resolve_blas_threads(args.blas_threads, "--blas-threads")
    if args.resume:
        if args.config is not None:
            raise ValueError("--config has no effect with --resume: the run continues with the checkpoint's "
                             "configuration (override single fields, such as --steps, instead)")
        prev, _ = load_checkpoint(args.resume, with_adam=True)  # also checks that it can be resumed
        if args.seed is not None and args.seed != prev.seed:
            raise ValueError(f"--seed={args.seed}: the run in {str(args.resume)!r} has seed {prev.seed}, "
                             "which a resumed run keeps")
        config, seed, name = dataclasses.replace(prev.config), prev.seed, None
    else:
        name = args.config or "small"
        config, seed = dataclasses.replace(CONFIGS[name]), 0 if args.seed is None else args.seed
    for f in dataclasses.fields(TrainConfig):
        v = getattr(args, f.name)
        if v is not None:
            setattr(config, f.name, v)
    config.validate()
    if args.resume:
        for field in ("d", "k", "embedding"):
            if getattr(config, field) != getattr(prev.config, field):
                raise ValueError(
                    f"--{field}={getattr(config, field)!r}: the checkpoint {str(args.resume)!r} was trained with "
                    f"{field}={getattr(prev.config, field)!r}, and a model does not transfer to another d, k or "
                    "embedding (train a new model instead)")
        if config.steps <= prev.step:
            if args.steps is None:
                raise ValueError(f"the checkpoint {str(args.resume)!r} has done all its {prev.step} steps; "
                                 f"pass --steps N with N > {prev.step} to train further")
            raise ValueError(f"--steps={config.steps} should be > the checkpoint's step {prev.step} to resume")
    option = "--out" if args.out or not args.resume else "--out (by default the --resume file)"
    out = check_output_file(args.out or args.resume or f"runs/{name}_seed{seed}.npz", option, ".npz", CHECKPOINT_FILE)
    best = check_output_file(out.with_name(out.stem + "_best.npz"), "--out (its best snapshot)", ".npz",
                             CHECKPOINT_FILE)
    in_place = bool(args.resume) and out.resolve() == Path(args.resume).resolve()
    if not args.force and not in_place:
        for p in (out, best):
            if p.exists():
                what = "" if p == out else f" (the best snapshot that goes with --out {str(out)!r})"
                raise ValueError(
                    f"{str(p)!r} already exists{what}; refusing to replace a trained model. Pass --force to "
                    f"replace it, --resume {str(out)!r} to continue that run, or choose another --out")
    if tune_malloc():
        print("# glibc malloc tuned to keep large temporaries in the heap (about 1.6x faster steps; "
              "see kmt_ref.learning.training.tune_malloc)")
    if args.resume:
        print(f"# resuming from {args.resume} (step {prev.step}, seed {seed}); checkpoints -> {out}")
    else:
        print(f"# config {name}: {dataclasses.asdict(config)}")
        print(f"# seed {seed}; d_emb {config.d_emb}; parameters {12 * (config.d_emb ** 2 + config.d_emb)}; "
              f"checkpoints -> {out}")
    print(f"# {describe_blas_threads(args.blas_threads, '--blas-threads')}")
    stamp = out.stat().st_mtime_ns if out.exists() else None
    try:
        ck = train(config, seed=seed, out=out, resume=args.resume, log=lambda s: print(s, flush=True),
                   blas_threads=args.blas_threads)
    except KeyboardInterrupt:
        if out.exists() and out.stat().st_mtime_ns != stamp:
            print(f"# interrupted; the last checkpoint (written every {config.checkpoint_every} steps) is {out}; "
                  f"continue with: python -m kmt_ref train --resume {out}", file=sys.stderr)
        raise
    print(f"# done: {ck.step} steps, final validation score {ck.history['val'][-1]:.4f}; saved {out}")
    if args.eval_tasks:
        res = evaluate(ck.params, config.embedding, n_tasks=args.eval_tasks, n=config.n, d=config.d, k=config.k,
                       family=config.family, scale=config.scale, n_steps=EVAL_STEPS, seed=EVAL_SEED,
                       blas_threads=args.blas_threads)
        print(lloyd_comparison(res, config, out))
    return 0


#: T of the comparison printed at the end of ``train`` (20: the authors' evaluation, ``--niters 20`` in their expts.md)
EVAL_STEPS = 20

#: ``evaluate``'s progress weighs a run on n points as n (n + EVAL_COST_N0): the cost of 20 steps of the
#: committed ``paper`` model on 32 tasks, fitted as a n^2 + b n over n = 512 and 2048 (one BLAS thread), b / a = 580
EVAL_COST_N0 = 580


def lloyd_comparison(res, config, out):
    """The lines ``train`` prints at the end: the trained layer against Lloyd, and who wins.

    Parameters
    ----------
    res : dict
        :func:`~kmt_ref.learning.evaluation.evaluate`'s result on ``config``'s
        task distribution (seed :data:`~kmt_ref.learning.evaluation.EVAL_SEED`).
    config : TrainConfig
    out : Path
        The checkpoint (named in the command that reproduces the numbers).
    """
    n_tasks, T = res["model"].shape[0], res["model"].shape[1] - 1
    t0, lloyd_T, model_T = res["lloyd_mean"][0], res["lloyd_mean"][-1], res["model_mean"][-1]
    gap = res["model"][:, -1] - res["lloyd"][:, -1]  # (n_tasks,)
    again = f"python -m kmt_ref evaluate {out}"
    for option, value, default in (("--tasks", n_tasks, 320), ("--steps", T, EVAL_STEPS),
                                   ("--family", config.family, "normal")):
        again += f" {option} {value}" if value != default else ""
    lines = [f"# Lloyd vs the trained layer on {n_tasks} seeded tasks (seed {EVAL_SEED}) of the training distribution "
             f"(n={config.n}, d={config.d}, k={config.k}, {config.family}, scale {config.scale}), T={T}, no dropout;",
             "# mean natural log of the k-means objective"
             + (f" ({again} prints the same numbers):" if config.scale == TrainConfig.scale else ":")]
    lines += [f"#   {label:<26}{value:7.3f}" for label, value in (
        ("initial centers (t=0)", t0), (f"Lloyd, {T} iterations", lloyd_T), (f"trained layer, {T} steps", model_T))]
    share = f"it ends lower on {(gap < 0).mean():.0%} of the tasks"
    if model_T < lloyd_T:
        lines.append(f"# The trained layer beats Lloyd's algorithm on these tasks: {lloyd_T - model_T:.3f} lower in "
                     f"mean log objective after T={T} ({share}). A summary of the paper reports that its trained "
                     "layer ends below Lloyd.")
    else:
        lines.append(f"# The trained layer does not beat Lloyd's algorithm: {model_T - lloyd_T:.3f} higher in mean log "
                     f"objective ({share}). Train longer (--steps) or at larger d (notebook 04, exercise 04.8).")
    return "\n".join(lines)


def _table(results, names, header_extra=""):
    lines = []
    head = f"{'setting':<28}{'t=0':>8}{'Lloyd T':>9}" + "".join(f"{nm[:14]:>15}" for nm in names)
    lines.append(head)
    lines.append("-" * len(head))
    for label, res in results:
        first = res[0]
        row = f"{label:<28}{first['lloyd_mean'][0]:8.3f}{first['lloyd_mean'][-1]:9.3f}"
        row += "".join(f"{r['model_mean'][-1]:15.3f}" for r in res)
        lines.append(row)
    return "\n".join(lines)


def _evaluate_settings(args, k):
    """The (init, n, family) settings of an ``evaluate`` command, checked."""
    if args.suite:
        if args.n or args.family or args.init:
            raise ValueError("--suite runs the settings of the authors' evaluation (their expts.md); it cannot be "
                             "combined with --n, --family or --init")
        settings = list(PAPER_SUITE)
    else:
        families = args.family or ["normal"]
        if "all" in families:
            if len(families) > 1:
                raise ValueError(f"--family={' '.join(families)!r}: 'all' already names every family; give it alone")
            families = list(FAMILIES)
        for f in families:
            if f not in FAMILIES:
                raise ValueError(f"--family={f!r} should be one of {list(FAMILIES)} or 'all'")
        settings = [(init, n, fam) for init in args.init or ["random"] for n in args.n or [None] for fam in families]
    for _, n, _ in settings:
        if n is not None:
            check_count(n, "--n", minimum=1)
            if n < k:
                raise ValueError(f"--n={n} should be >= k={k}: a task of the models' {k} clusters "
                                 f"needs at least {k} points")
    return settings


def _evaluate(args):
    """``python -m kmt_ref evaluate``: check every argument and --save, then evaluate."""
    check_count(args.tasks, "--tasks", minimum=1)
    check_count(args.seed, "--seed")
    check_count(args.steps, "--steps")
    check_real_in(args.dropout, "--dropout", 0, 1, lo_open=False)
    check_choice(args.lloyd_empty, "--lloyd-empty", EMPTY_POLICIES)
    resolve_blas_threads(args.blas_threads, "--blas-threads")
    if args.save and args.lloyd_empty != "keep":
        raise ValueError(f"--save stores Lloyd's curves with --lloyd-empty keep (figures and notebooks read them), "
                         f"got --lloyd-empty {args.lloyd_empty}; drop --save to measure the other policy")
    ckpts = [load_checkpoint(resolve_checkpoint(c)) for c in args.checkpoint]
    base = ckpts[0].config
    for c, name in zip(ckpts, args.checkpoint):
        if (c.config.d, c.config.k) != (base.d, base.k):
            raise ValueError(f"{name} has (d, k) = ({c.config.d}, {c.config.k}) but {args.checkpoint[0]} has "
                             f"({base.d}, {base.k}); compare models of one (d, k)")
    names = [Path(c).stem for c in args.checkpoint]  # label the results (table, --save)
    for i, nm in enumerate(names):
        if nm == "lloyd":
            raise ValueError(f"checkpoint {args.checkpoint[i]!r} is named 'lloyd' (its file name), the label of "
                             "Lloyd's results; rename the file")
        if nm in names[:i]:
            raise ValueError(f"checkpoints {args.checkpoint[names.index(nm)]!r} and {args.checkpoint[i]!r} share the "
                             f"name {nm!r} (the file name) that labels their results; give each model its own name")
    settings = [(init, n or base.n, fam) for init, n, fam in _evaluate_settings(args, base.k)]
    if args.save:
        check_output_file(args.save, "--save", ".npz", EVALUATION_FILE)
    print(f"# {args.tasks} tasks per setting (seed {args.seed}), d={base.d}, k={base.k}, T={args.steps} steps; "
          "mean natural log of the k-means objective; model evaluated "
          + (f"WITH attention dropout {args.dropout}" if args.dropout else "WITHOUT dropout"))
    print(f"# {describe_blas_threads(args.blas_threads, '--blas-threads')}")
    for c, name in zip(ckpts, args.checkpoint):
        print(f"# {name}: embedding={c.config.embedding}, trained {c.step} steps, seed {c.seed}, "
              f"{c.n_params} parameters")
    results, stored = [], {}
    bar = Progress("evaluate", "runs (settings x models)",
                   [n * (n + EVAL_COST_N0) for _, n, _ in settings for _ in ckpts], sys.stderr)
    for init, n, fam in settings:
        res = []
        for c in ckpts:
            res.append(evaluate(c.params, c.config.embedding, n_tasks=args.tasks, n=n, d=base.d, k=base.k,
                                family=fam, init=init, n_steps=args.steps, seed=args.seed, dropout=args.dropout,
                                lloyd_empty=args.lloyd_empty, progress=bar.part, blas_threads=args.blas_threads))
            bar.step()
        bar.clear()
        label = f"{init}, n={n}, {fam}"
        results.append((label, res))
        stored[setting_label(init, n, fam)] = {"lloyd": res[0]["lloyd"], **{nm: r["model"] for nm, r in zip(names, res)}}
        print(f"# {label}: Lloyd (empty clusters: {args.lloyd_empty}; met in {res[0]['lloyd_empty_tasks']} of "
              f"{args.tasks} tasks) {res[0]['lloyd_mean'][-1]:.3f}, "
              + ", ".join(f"{nm} {r['model_mean'][-1]:.3f}" for nm, r in zip(names, res)), flush=True)
        if args.curves:
            for c_name, r in zip(args.checkpoint, res):
                curve = " ".join(f"{v:.3f}" for v in r["model_mean"])
                print(f"# curve {label} {c_name}: {curve}")
            print(f"# curve {label} Lloyd: " + " ".join(f"{v:.3f}" for v in res[0]["lloyd_mean"]))
    print(_table(results, names))
    if args.save:
        info = {"seed": args.seed, "tasks": args.tasks, "steps": args.steps,
                **{f"{nm}_steps_trained": c.step for nm, c in zip(names, ckpts)}}
        save_evaluation(args.save, stored, info)
        print(f"# saved the per-task curves to {args.save}")
    return 0


BLAS_HELP = ("BLAS threads of the loop, >= 1 (default 1: for its thousands of small matrix products a second "
             "thread saves little on a quiet machine and costs several times the wall time on a busy one; an "
             "OPENBLAS_NUM_THREADS or OMP_NUM_THREADS set in the environment is kept instead)")


def register(subparsers):
    """Add ``train`` and ``evaluate`` to the ``python -m kmt_ref`` parser."""
    p = subparsers.add_parser(
        "train", help="train the one-layer transformer (SPEC §6)",
        description="Train the one-layer transformer with autograd, then compare it with Lloyd's algorithm on "
                    "seeded tasks. Default: the small configuration (n=64, d=8, k=3, 3,000 steps); --config "
                    "paper is the authors' main setting (n=512, d=32, k=10, 10,000 steps: their expts.md and "
                    "expt-run.sh). Every hyperparameter can be overridden.",
    )
    p.add_argument("--config", choices=sorted(CONFIGS), default=None, help="base configuration (default: small)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of weights, tasks and dropout, >= 0 (default 0; a resumed run keeps its own)")
    p.add_argument("--out", default=None, metavar="FILE.npz",
                   help="checkpoint file, ending in .npz (default runs/<config>_seed<seed>.npz, or the --resume "
                        "file); the best weights go to FILE_best.npz")
    p.add_argument("--resume", default=None, metavar="CKPT", help="continue from this checkpoint")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out (and its _best snapshot) if it is a kmt_ref training "
                        "checkpoint; any other file is never replaced, with or without --force")
    p.add_argument("--eval-tasks", dest="eval_tasks", type=int, default=320,
                   help="seeded tasks of the comparison with Lloyd printed at the end (default 320, the "
                        "evaluate command's; 0 skips it)")
    p.add_argument("--blas-threads", dest="blas_threads", type=int, default=None, metavar="N", help=BLAS_HELP)
    for f in dataclasses.fields(TrainConfig):
        typ = type(f.default)
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=typ, default=None,
                       help=f"{_FIELD_HELP[f.name]} (--config paper: {f.default}, {SOURCES[f.name]})")
    p.set_defaults(func=_train)

    e = subparsers.add_parser(
        "evaluate", help="compare trained models with Lloyd's algorithm (SPEC §6)",
        description="Apply each model T times (re-embedding between steps, no dropout) and Lloyd for T iterations "
                    "from the same initial centers; print the mean log k-means objective. Progress and an "
                    "estimate of the time left go to stderr.",
    )
    e.add_argument("checkpoint", nargs="+", help="checkpoint .npz or committed model name (paper, paper_d_only)")
    e.add_argument("--tasks", type=int, default=320, help="evaluation tasks per setting, >= 1 (default 320)")
    e.add_argument("--seed", type=int, default=2506_19125, help="seed of the evaluation tasks, >= 0")
    e.add_argument("--steps", type=int, default=20, help="T, >= 0 (default 20)")
    e.add_argument("--n", type=int, nargs="+", default=None, help="points per task, >= k (default: the training n)")
    e.add_argument("--family", nargs="+", default=None,
                   help=f"task families, or 'all' ({', '.join(FAMILIES)}; default normal)")
    e.add_argument("--init", nargs="+", default=None, choices=INITS, help="initial centers (default random)")
    e.add_argument("--curves", action="store_true", help="also print the mean log objective after every step")
    e.add_argument("--dropout", type=float, default=0.0,
                   help="attention dropout at evaluation (default 0; the authors' evaluation leaves 0.01 on)")
    e.add_argument("--lloyd-empty", dest="lloyd_empty", choices=EMPTY_POLICIES, default="keep",
                   help="Lloyd's empty clusters: keep the center (default, what the transformer does) or reseed "
                        "it with a random data point (the authors' baseline; seeded by --seed)")
    e.add_argument("--suite", action="store_true",
                   help="the settings of the authors' evaluation (their expts.md, Figure 4 and Table 1, run by "
                        "plot_eval_ood_gen.py): random and k-means++ init at n=512, n in 128..2048, every family")
    e.add_argument("--save", default=None, metavar="FILE.npz",
                   help="store the per-task curves (figures read them); an existing FILE.npz must be a kmt_ref "
                        "evaluation file, and the results are merged into it (any other file is refused)")
    e.add_argument("--blas-threads", dest="blas_threads", type=int, default=None, metavar="N", help=BLAS_HELP)
    e.set_defaults(func=_evaluate)
