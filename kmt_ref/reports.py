"""The tables of results that the documentation shows, computed from the committed results.

Each function returns one Markdown table, computed from files that ship with the package (the stored
evaluations and models in ``kmt_ref/models/``, the sweeps and the cost benchmark in
``kmt_ref/datasets/``); nothing is re-run. ``python -m kmt_ref report NAME`` prints one, and the
documents hold each table between the lines ``<!-- report NAME -->`` and ``<!-- end report -->``, which
a test compares with what the function prints, character for character. So a number of a table is
written in one place, the code, and the text cannot drift from it.

Tables (:data:`REPORTS`):

- ``evaluation``: the trained model and the d-only ablation against Lloyd in every evaluated setting;
- ``models``: the committed models, their training setting and the training time each records;
- ``sweep``: the authors' gamma sweep, ours against theirs, paired by cell, on two grids;
- ``binary``: the follow-up's binary codes against one-hot (size, forward time, trained quality);
- ``train-sweep``, ``train-sweep-findings``: the training sweeps of the paper's Figures 9, 10a, 10b at a
  reduced scale, and what they show (each sentence computed);
- ``headline``: one line per main result, with the command that reproduces it;
- ``forward``, ``train``: the benchmarks' results (:mod:`kmt_ref.bench_reports`, docs/PERFORMANCE.md).
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from .bench_reports import BENCH_REPORTS

__all__ = ["REPORTS", "report", "evaluation_table", "models_table", "sweep_table", "binary_table",
           "train_sweep_table", "train_sweep_findings", "headline_table", "begin_marker", "END_MARKER", "fill"]

PACKAGE = Path(__file__).resolve().parent
MODELS = PACKAGE / "models"
DATASETS = PACKAGE / "datasets"

#: the authors' sweep rows (their results/klic_parameter_sweep.csv, MIT licence) for the cells compared
AUTHORS_SWEEP = DATASETS / "authors_sweep_compared.csv"
#: our sweep of their grid's cells with at most 774 points
SWEEP_774 = DATASETS / "gamma_sweep_774.csv"
SWEEP_SMALL = DATASETS / "gamma_sweep_small.csv"
COST_CSV = DATASETS / "binary_cost.csv"

#: the main setting's label in the stored evaluation
MAIN = "random,n=512,normal"

#: what the paper reports for the main setting, from a summary of it (not verified against its text)
PAPER_REPORTS = {"lloyd": 5.25, "paper": 5.0, "paper_d_only": 5.35}


END_MARKER = "<!-- end report -->"


def begin_marker(name):
    """The line that opens table ``name`` in a document."""
    return f"<!-- report {name} -->"


def _final_mean(curves):
    return float(np.mean(curves[:, -1]))


def _signed(x, digits=3):
    return f"{x:+.{digits}f}".replace("-", "−")


def _num(x, digits=3):
    return f"{x:.{digits}f}".replace("-", "−")


def _load(name):
    from .learning.checkpoint import load_evaluation

    return load_evaluation(MODELS / name)


def _setting_name(label):
    init, n, family = label.split(",")
    n = int(n.split("=")[1])
    if label == MAIN:
        return "random init, n = 512, normal"
    if init != "random":
        return f"{'k-means++' if init == 'kmeans++' else init} init"
    return f"n = {n}" if family == "normal" else family


def _setting_order(label):
    init, n, family = label.split(",")
    return (label != MAIN, init == "random", family != "normal", int(n.split("=")[1]), family)


def evaluation_table():
    """The stored evaluation (``kmt_ref/models/evaluation.npz``): mean log objective per setting."""
    ev, info = _load("evaluation.npz")
    lines = [f"| setting ({info['tasks']} tasks, seed {info['seed']}, T = {info['steps']}) | t = 0 | Lloyd | "
             "trained | trained − Lloyd | d-only ablation |",
             "|---|---|---|---|---|---|"]
    for label in sorted(ev, key=_setting_order):
        res = ev[label]
        lloyd, model = _final_mean(res["lloyd"]), _final_mean(res["paper"])
        d_only = _num(_final_mean(res["paper_d_only"])) if "paper_d_only" in res else ""
        lines.append(f"| {_setting_name(label)} | {_num(float(np.mean(res['lloyd'][:, 0])))} | {_num(lloyd)} | "
                     f"{_num(model)} | {_signed(model - lloyd)} | {d_only} |")
    return "\n".join(lines)


def models_table():
    """The committed models: embedding, training setting, steps and the training time each records."""
    from .learning.checkpoint import load_checkpoint

    lines = ["| model | embedding | n, d, k | steps × tasks | seed | parameters | training time recorded |",
             "|---|---|---|---|---|---|---|"]
    for name in ("paper", "paper_d_only", "paper_binary"):
        ck = load_checkpoint(MODELS / f"{name}.npz")
        c = ck.config
        minutes = ck.history["elapsed"][-1] / 60
        lines.append(f"| `{name}` | {c.embedding} | {c.n}, {c.d}, {c.k} | {ck.step:,} × {c.batch} | {ck.seed} | "
                     f"{ck.n_params:,} | {minutes:.1f} min |")
    return "\n".join(lines)


def sweep_table():
    """Ours against the authors' sweep, per gamma, paired by cell, on the small grid and on n <= 774."""
    from .sweep import compare, read_sweep

    theirs = read_sweep(AUTHORS_SWEEP)
    lines = ["| grid | γ | cells compared | mean Loss, ours | theirs | ours − theirs (± s.e.) | in s.e. |",
             "|---|---|---|---|---|---|---|"]
    for grid, path in (("small (256 cells)", SWEEP_SMALL), ("theirs with n ≤ 774 (3,000 cells)", SWEEP_774)):
        for g, r in compare(read_sweep(path), theirs).items():
            lines.append(f"| {grid} | {g} | {r['cells']:,} | {_num(r['ours'])} | {_num(r['theirs'])} | "
                         f"{_signed(r['diff'])} ± {r['se']:.3f} | {abs(r['diff']) / r['se']:.1f} |")
    return "\n".join(lines)


def _cost_rows():
    with open(COST_CSV, newline="") as f:
        return {(r["embedding"], int(r["k"])): r for r in csv.DictReader(f)}


def binary_table():
    """One-hot against binary codes at d = 32: size, the model's forward time, the trained model."""
    rows = _cost_rows()
    one, binary = rows[("onehot", 1000)], rows[("binary", 1000)]
    d = int(one["d"])
    ev, _ = _load("evaluation.npz")
    evb, _ = _load("evaluation_binary.npz")
    onehot_T, binary_T = ev[MAIN]["paper"][:, -1], evb[MAIN]["paper_binary"][:, -1]
    diff = binary_T - onehot_T  # the same tasks: paired
    se = float(np.std(diff, ddof=1) / math.sqrt(diff.size))

    def size(emb, k):
        r = rows[(emb, k)]
        return r["d_emb"], f"{int(r['params']):,}"

    (e10, p10), (e1000, p1000) = size("onehot", 10), size("onehot", 1000)
    (b10, q10), (b1000, q1000) = size("binary", 10), size("binary", 1000)
    ratio = float(one["model_s"]) / float(binary["model_s"])
    from .algorithms.binary import FOLLOW_UP_TABLE1_MS

    theirs = FOLLOW_UP_TABLE1_MS["onehot"] / FOLLOW_UP_TABLE1_MS["binary"]
    lines = [f"| d = {d} | one-hot | binary |", "|---|---|---|",
             f"| d_emb at k = 10 / 1000 | {e10} / {e1000} | {b10} / {b1000} |",
             f"| parameters of the trainable layer at k = 10 / 1000 | {p10} / {p1000} | {q10} / {q1000} |",
             f"| model forward of one task, k = 1000, n = {int(one['n'])}, one CPU thread, best of 7 "
             f"(`benchmarks/bench_binary.py`) | {1000 * float(one['model_s']):.0f} ms | "
             f"{1000 * float(binary['model_s']):.0f} ms ({ratio:.1f}× faster; the follow-up's Table 1, 32 tasks at "
             f"once on a GPU: {theirs:.1f}×) |",
             f"| trained at k = 10, n = 512, seed 0: mean log objective after 20 steps on the 320 tasks "
             f"(Lloyd {_num(_final_mean(ev[MAIN]['lloyd']))}, d-only {_num(_final_mean(ev[MAIN]['paper_d_only']))}) | "
             f"{_num(float(onehot_T.mean()))} | {_num(float(binary_T.mean()))} (binary − one-hot "
             f"{_signed(float(diff.mean()))} ± {se:.3f}, paired by task) |"]
    return "\n".join(lines)


def headline_table():
    """The main results, one line each, with the command that reproduces it."""
    from .sweep import compare, read_sweep

    ev, _ = _load("evaluation.npz")
    lloyd, model, d_only = (_final_mean(ev[MAIN][k]) for k in ("lloyd", "paper", "paper_d_only"))
    evb, _ = _load("evaluation_binary.npz")
    binary = _final_mean(evb[MAIN]["paper_binary"])
    rows = _cost_rows()
    speed = float(rows[("onehot", 1000)]["model_s"]) / float(rows[("binary", 1000)]["model_s"])
    small = compare(read_sweep(SWEEP_SMALL), read_sweep(AUTHORS_SWEEP))
    p = PAPER_REPORTS
    lines = ["| result | kmt_ref | the source | reproduce |", "|---|---|---|---|",
             "| Theorem 2.1 at γ = ∞ against Lloyd's algorithm | labels equal, centers bit for bit, every layer "
             "(property tests, [exactness](docs/EXACTNESS.md)) | an exact equality (the paper, from a summary) | "
             "`python -m pytest tests/properties` |",
             f"| a trained softmax layer against Lloyd, mean log objective after 20 steps, 320 tasks "
             f"(n = 512, d = 32, k = 10) | trained {_num(model)}, Lloyd {_num(lloyd)}, d-only {_num(d_only)} | "
             f"trained ≈ {p['paper']}, Lloyd ≈ {p['lloyd']}, d-only ≈ {p['paper_d_only']} (the paper, from a summary) | "
             "`python -m kmt_ref evaluate paper paper_d_only` |",
             "| the authors' circuit at finite γ: mean log J(transformer) − log J(Lloyd) after 10 steps, small grid | "
             + ", ".join(f"γ = {g}: {_num(r['ours'])}" for g, r in small.items()) + " | "
             + ", ".join(f"{_num(r['theirs'])}" for r in small.values())
             + " (the authors' CSV, same cells) | `python -m kmt_ref sweep --grid small` |",
             f"| binary codes (the follow-up): trained, mean log objective as above; forward at k = 1000 | "
             f"{_num(binary)}; {speed:.1f}× faster than one-hot (one task, one CPU thread) | its Section 4; its Table 1 "
             f"(32 tasks on a GPU) ([binary codes](docs/BINARY.md)) | "
             "`python -m kmt_ref evaluate paper_binary`; `python benchmarks/bench_binary.py` |"]
    return "\n".join(lines)


def _train_sweep():
    """The committed training sweep: its rows, each drawn figure's final scores, its steps and seeds per cell."""
    from .learning import train_sweep

    rows = train_sweep.read_train_sweep(train_sweep.COMMITTED_CSV)
    finals = {figure: train_sweep.final_scores(rows, figure) for figure in train_sweep.FIGURE_SPLIT}
    seeds = train_sweep.seeds_text(len(e) for panels in finals.values() for by in panels.values() for e in by.values())
    return rows, finals, rows[0]["steps"], seeds


def _panel(figure, value):
    return f"λ = {value:g}" if figure.startswith("9") else f"{'k' if figure == '10a' else 'd'} = {value}"


def _median_band(scores):
    q = np.percentile(list(scores.values()), [25, 50, 75])
    return f"{q[1]:.3f} [{q[0]:.3f}, {q[2]:.3f}]"


def train_sweep_table():
    """The training sweeps (``kmt_ref/datasets/train_sweep.csv``): each panel's final validation score per embedding."""
    from .learning.config import TrainConfig
    from .learning.train_sweep import run_key

    rows, finals, steps, seeds = _train_sweep()
    lines = ["| figure | panel | one-hot (d + k): final score, median [25–75 %] | d-only (d) | "
             "one-hot lower, seed pairs |", "|---|---|---|---|---|"]
    for figure, panels in finals.items():
        for value, by in panels.items():
            pairs = [by["onehot"][s] < by["none"][s] for s in by["onehot"] if s in by.get("none", {})]
            lines.append(f"| {figure} | {_panel(figure, value)} | {_median_band(by['onehot'])} | "
                         f"{_median_band(by['none'])} | {sum(pairs)} of {len(pairs)} |")
    cpu = list({run_key(r): r["run_cpu_s"] for r in rows}.values())
    lines.append(f"\nA panel's runs: {seeds} of {steps:,} steps per embedding; "
                 f"a run's final score: the objective "
                 f"after one layer / after one Lloyd step, mean over its {TrainConfig.n_val} validation tasks, at its "
                 f"last step. A run serves every figure that draws it (Figure 9's runs at λ = 10 are also in 10a "
                 f"and 10b). The {len(cpu)} runs took {sum(cpu) / 3600:.2f} CPU hours, {min(cpu) / 60:.1f}–"
                 f"{max(cpu) / 60:.1f} min each (median {np.median(cpu) / 60:.1f}).")
    return "\n".join(lines)


def train_sweep_findings():
    """What the training sweeps show, each finding beside what the follow-up reports of its own runs.

    The follow-up's words are quoted from its text (section named); every number and every trend word after
    "here" is computed from ``kmt_ref/datasets/train_sweep.csv`` and the committed models.
    """
    from .learning.checkpoint import load_checkpoint
    from .learning.train_sweep import figure_curves, run_key

    rows, finals, steps, _ = _train_sweep()

    def medians(figure, embedding):
        return [float(np.median(list(by[embedding].values()))) for by in finals[figure].values()]

    def listing(figure, embedding):
        m = medians(figure, embedding)
        order = ("falls at each step" if all(b < a for a, b in zip(m, m[1:])) else
                 "rises at each step" if all(b > a for a, b in zip(m, m[1:])) else "not monotone")
        return f"{', '.join(f'{x:.3f}' for x in m)} ({order})"

    def pairs(figure):
        return [by["onehot"][s] < by["none"][s] for by in finals[figure].values() for s in by["onehot"]]

    def below(embedding):  # each run once, whichever figures draw it
        last = {}
        for r in rows:
            if r["embedding"] == embedding and r["step"] == r["steps"]:
                last[run_key(r)] = r["val_score"]
        return f"{sum(x < 1 for x in last.values())} of {len(last)}"

    lams = ", ".join(f"{v:g}" for v in finals["9a"])
    hot = figure_curves(rows, "9a")[min(finals["9a"])]  # d = 4 at the smallest λ

    def rise(embedding):
        c = hot[embedding]
        low = int(np.argmin(c["val"][1]))
        return (f"{embedding.replace('none', 'd-only').replace('onehot', 'one-hot')} from {c['val'][1][low]:.3f} at "
                f"step {int(c['step'][low])} to {c['val'][1][-1]:.3f} at step {int(c['step'][-1])}")
    out = [
        "- **The one-hot rows.** The follow-up (its Appendix A): \"the models without these additional "
        "dimensions (the NA models) are empirically unable to match Lloyd's\"; its Section 3 (d = 4, k = 6): at "
        "τ = 0.1 the layer outperforms Lloyd's step \"except with the NA embedding scheme\". Here, after "
        f"{steps:,} steps: the one-hot layer ends lower than the d-only one in {sum(pairs('9a'))} of "
        f"{len(pairs('9a'))} seed pairs at d = 4 and {sum(pairs('9b'))} of {len(pairs('9b'))} at d = 32 (Figure 9, "
        "every λ; a pair shares its seed, so its validation tasks).",
        "- **The loss temperature.** The follow-up (its Appendix F, its Figure 10: the same grid): \"as the penalty "
        "τ decreases, the training loss (the upper-bound) becomes tighter\" and the validation score \"starts "
        "matching or even outperforming 1-step Lloyd's\"; \"for the larger value of d […] τ does not need to be "
        f"too low\". Here, the median final validation score at λ = {lams} (τ = 1/λ): at d = 4 one-hot "
        f"{listing('9a', 'onehot')}, d-only {listing('9a', 'none')}; at d = 32 one-hot {listing('9b', 'onehot')}, "
        f"d-only {listing('9b', 'none')}. At d = 4, λ = {min(finals['9a']):g} the median validation score rises while "
        f"training: {rise('onehot')}, {rise('none')}; the follow-up (its Section 3, d = 4, τ = 1, its softmax "
        "loss): the learned layer \"does not perform well on the unseen validation clustering tasks for any of the "
        "token embedding schemes (the validation loss increases during training)\".",
        "- **k.** The follow-up (its Appendix F, its Figure 15, d = 32, τ = 0.1): the one-hot and binary layers "
        "\"outperform Lloyd's on the validation tasks\" at every k it ran (6, 10, 16, 25; at k = 25 three of ten "
        "one-hot trials hit numerical problems and did not recover, and the median still outperforms). Here "
        f"(Figure 10a, k = {', '.join(str(v) for v in finals['10a'])}): one-hot {listing('10a', 'onehot')}, d-only "
        f"{listing('10a', 'none')}.",
        "- **d.** The follow-up (its Appendix F, its Figure 14: d = 4, 8, 16, 32 at τ = 0.25 and 0.1) says its smoothed "
        "loss \"produces tighter upper-bounds with increasing d for a fixed […] τ\" and compares its two losses "
        "(kmt_ref trains one); it states no trend of the validation score with d. Here (Figure 10b, d = "
        f"{', '.join(str(v) for v in finals['10b'])}): one-hot {listing('10b', 'onehot')}, d-only "
        f"{listing('10b', 'none')}.",
    ]
    full = {name: load_checkpoint(MODELS / f"{name}.npz").history for name in ("paper", "paper_d_only")}
    at = {name: float(h["val"][list(h["step"]).index(steps)]) for name, h in full.items()}
    gap = max(abs(r["val_score"] / float(h["val"][list(h["step"]).index(r["step"])]) - 1)
              for name, e in (("paper", "onehot"), ("paper_d_only", "none")) for h in (full[name],) for r in rows
              if (r["d"], r["k"], r["loss_lambda"], r["embedding"], r["seed"]) == (32, 10, 10.0, e, 0))
    out.append(
        f"- **Lloyd's level.** Here {below('onehot')} one-hot runs and {below('none')} d-only runs end below one "
        f"Lloyd step. The committed models `paper` and `paper_d_only` were trained in the setting of the runs at "
        f"d = 32, k = 10, λ = 10 with the same seed (0), for {int(full['paper']['step'][-1]):,} steps (trained "
        f"apart, in float32, their validation scores over the first {steps:,} steps are those runs' to within "
        f"{gap:.1e} relative): at step "
        f"{steps:,} they score {at['paper']:.3f} and {at['paper_d_only']:.3f}, at the end "
        f"{float(full['paper']['val'][-1]):.3f} and {float(full['paper_d_only']['val'][-1]):.3f}.")
    return "\n".join(out)


#: name -> the function that makes the table (the benchmarks' tables: :mod:`kmt_ref.bench_reports`)
REPORTS = {"evaluation": evaluation_table, "models": models_table, "sweep": sweep_table, "binary": binary_table,
           "headline": headline_table, "train-sweep": train_sweep_table, "train-sweep-findings": train_sweep_findings,
           **BENCH_REPORTS}


def fill(text):
    """``text`` with every table between its markers replaced by what :func:`report` prints now.

    A marker names a table of :data:`REPORTS`; an unknown name, or a marker without its end, is a
    ``ValueError``. ``tools/update_reports.py`` writes the result back into the documents.
    """
    out, rest = [], text
    while True:
        start = rest.find("<!-- report ")
        if start < 0:
            return "".join(out) + rest
        head_end = rest.index("-->", start) + 3
        name = rest[start + len("<!-- report "):head_end - 3].strip()
        end = rest.find(END_MARKER, head_end)
        if end < 0:
            raise ValueError(f"the table {name!r} has no {END_MARKER!r} after it")
        out.append(rest[:head_end] + "\n" + report(name) + "\n")
        rest = rest[end:]


def report(name):
    """The table ``name`` of :data:`REPORTS`, as Markdown."""
    if name not in REPORTS:
        raise ValueError(f"name={name!r} is not a report; choose one of {sorted(REPORTS)}")
    return REPORTS[name]()


def _report_command(args):
    names = args.names or sorted(REPORTS)
    unknown = [name for name in names if name not in REPORTS]
    if unknown:  # every name checked before anything is printed
        report(unknown[0])
    for i, name in enumerate(names):
        if len(names) > 1:
            print(("\n" if i else "") + begin_marker(name))
        print(report(name))


def register(sub):
    """Add the ``report`` command to the ``python -m kmt_ref`` parser."""
    p = sub.add_parser("report", help="print the documentation's tables of results from the committed results",
                       description="Print the tables of results that the documentation shows, computed from the "
                                   "committed evaluations, models, sweeps and benchmark (nothing is re-run).")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"one or more of {', '.join(sorted(REPORTS))} (default: all)")
    p.set_defaults(func=_report_command)
