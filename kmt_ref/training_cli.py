"""``python -m kmt_ref train`` and ``python -m kmt_ref evaluate``: learning the algorithm (SPEC §6).

Examples::

    python -m kmt_ref train                         # small config, about a minute
    python -m kmt_ref train --config paper --seed 0 --out runs/paper.npz
    python -m kmt_ref train --resume runs/paper.npz --steps 12000
    python -m kmt_ref evaluate paper paper_d_only   # the committed models, 320 tasks
    python -m kmt_ref evaluate paper --init kmeans++ --n 128 256 1024 2048 --family all
    python -m kmt_ref evaluate paper --suite --save kmt_ref/models/evaluation.npz

A checkpoint argument is a path to a ``.npz`` written by ``train``, or the name
of a model shipped in ``kmt_ref/models/`` (``paper``, ``paper_d_only``).
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from .tasks import FAMILIES, INITS

#: folder of the committed trained models
MODELS_DIR = Path(__file__).resolve().parent / "models"

_FIELD_HELP = {
    "n": "points per task", "d": "dimension", "k": "clusters", "embedding": "token layout (onehot | none = d-only ablation)",
    "batch": "tasks per step", "steps": "optimisation steps", "lr": "Adam learning rate",
    "lr_decay": "learning-rate factor on a plateau", "patience": "evaluations without improvement before decaying",
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
    from .training import tune_malloc, CONFIGS, CheckpointError, TrainConfig, load_checkpoint, train

    config = dataclasses.replace(CONFIGS[args.config])
    if args.resume:
        try:
            config = load_checkpoint(args.resume).config
        except CheckpointError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    for f in dataclasses.fields(TrainConfig):
        v = getattr(args, f.name)
        if v is not None:
            setattr(config, f.name, v)
    try:
        config.validate()
    except (TypeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = args.out or (str(args.resume) if args.resume else f"runs/{args.config}_seed{args.seed}.npz")
    if tune_malloc():
        print("# glibc malloc tuned to keep large temporaries in the heap (about 1.6x faster steps; "
              "see kmt_ref.training.tune_malloc)")
    if args.resume:
        print(f"# resuming from {args.resume}; checkpoints -> {out}")
    else:
        print(f"# config {args.config}: {dataclasses.asdict(config)}")
        print(f"# seed {args.seed}; d_emb {config.d_emb}; parameters {12 * (config.d_emb ** 2 + config.d_emb)}; "
              f"checkpoints -> {out}")
    ck = train(config, seed=args.seed, out=out, resume=args.resume, log=lambda s: print(s, flush=True))
    print(f"# done: {ck.step} steps, final validation score {ck.history['val'][-1]:.4f}; saved {out}")
    return 0


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


def _evaluate(args):
    from .training import PAPER_SUITE, CheckpointError, evaluate, load_checkpoint, save_evaluation, setting_label

    try:
        ckpts = [load_checkpoint(resolve_checkpoint(c)) for c in args.checkpoint]
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    base = ckpts[0].config
    for c, name in zip(ckpts, args.checkpoint):
        if (c.config.d, c.config.k) != (base.d, base.k):
            print(f"error: {name} has (d, k) = ({c.config.d}, {c.config.k}) but {args.checkpoint[0]} has "
                  f"({base.d}, {base.k}); compare models of one (d, k)", file=sys.stderr)
            return 2
    families = list(FAMILIES) if args.family == ["all"] else args.family
    for f in families:
        if f not in FAMILIES:
            print(f"error: family={f!r} should be one of {list(FAMILIES)} or 'all'", file=sys.stderr)
            return 2
    ns = args.n or [base.n]
    settings = [(init, n, fam) for init in args.init for n in ns for fam in families]
    if args.suite:
        settings = list(PAPER_SUITE)
    print(f"# {args.tasks} tasks per setting (seed {args.seed}), d={base.d}, k={base.k}, T={args.steps} steps; "
          "mean natural log of the k-means objective; model evaluated "
          + (f"WITH attention dropout {args.dropout}" if args.dropout else "WITHOUT dropout"))
    for c, name in zip(ckpts, args.checkpoint):
        print(f"# {name}: embedding={c.config.embedding}, trained {c.step} steps, seed {c.seed}, "
              f"{c.n_params} parameters")
    results, stored = [], {}
    names = [Path(c).stem for c in args.checkpoint]
    for init, n, fam in settings:
        res = [evaluate(c.params, c.config.embedding, n_tasks=args.tasks, n=n, d=base.d, k=base.k, family=fam,
                        init=init, n_steps=args.steps, seed=args.seed, dropout=args.dropout) for c in ckpts]
        label = f"{init}, n={n}, {fam}"
        results.append((label, res))
        stored[setting_label(init, n, fam)] = {"lloyd": res[0]["lloyd"], **{nm: r["model"] for nm, r in zip(names, res)}}
        print(f"# {label}: Lloyd {res[0]['lloyd_mean'][-1]:.3f}, "
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


def register(subparsers):
    """Add ``train`` and ``evaluate`` to the ``python -m kmt_ref`` parser."""
    from .training import CONFIGS, TrainConfig

    p = subparsers.add_parser(
        "train", help="train the one-layer transformer (SPEC §6)",
        description="Train the one-layer transformer with autograd. Default: the small configuration "
                    "(about a minute); --config paper is the paper's setting. Every hyperparameter can be overridden.",
    )
    p.add_argument("--config", choices=sorted(CONFIGS), default="small", help="base configuration (default: small)")
    p.add_argument("--seed", type=int, default=0, help="seed of weights, tasks and dropout (default 0)")
    p.add_argument("--out", default=None, help="checkpoint file (default runs/<config>_seed<seed>.npz)")
    p.add_argument("--resume", default=None, metavar="CKPT", help="continue from this checkpoint")
    for f in dataclasses.fields(TrainConfig):
        typ = type(f.default)
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=typ, default=None,
                       help=f"{_FIELD_HELP[f.name]} (paper: {f.default})")
    p.set_defaults(func=_train)

    e = subparsers.add_parser(
        "evaluate", help="compare trained models with Lloyd's algorithm (SPEC §6)",
        description="Apply each model T times (re-embedding between steps, no dropout) and Lloyd for T iterations "
                    "from the same initial centers; print the mean log k-means objective.",
    )
    e.add_argument("checkpoint", nargs="+", help="checkpoint .npz or committed model name (paper, paper_d_only)")
    e.add_argument("--tasks", type=int, default=320, help="evaluation tasks per setting (default 320)")
    e.add_argument("--seed", type=int, default=2506_19125, help="seed of the evaluation tasks")
    e.add_argument("--steps", type=int, default=20, help="T (default 20)")
    e.add_argument("--n", type=int, nargs="+", default=None, help="points per task (default: the training n)")
    e.add_argument("--family", nargs="+", default=["normal"], help=f"task families, or 'all' ({', '.join(FAMILIES)})")
    e.add_argument("--init", nargs="+", default=["random"], choices=INITS, help="initial centers")
    e.add_argument("--curves", action="store_true", help="also print the mean log objective after every step")
    e.add_argument("--dropout", type=float, default=0.0,
                   help="attention dropout at evaluation (default 0; the authors' evaluation leaves 0.01 on)")
    e.add_argument("--suite", action="store_true",
                   help="the paper's settings: random and k-means++ init at n=512, n in 128..2048, every family")
    e.add_argument("--save", default=None, metavar="FILE.npz",
                   help="store the per-task curves (merged into FILE if it exists; figures read them)")
    e.set_defaults(func=_evaluate)
