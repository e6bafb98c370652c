"""The documents hold exactly the tables :mod:`kmt_ref.reports` prints, and the README's example prints what it says.

A table of results sits in a document between ``<!-- report NAME -->`` and ``<!-- end report -->``;
``python tools/update_reports.py`` writes it there. These tests fail while a document holds another
text (a number edited by hand, a table left behind after the results changed).
"""
import contextlib
import io
import re
from pathlib import Path

import pytest

from kmt_ref import reports

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"<!-- report (\S+) -->")


def _names(text):
    return MARKER.findall(text)


@pytest.mark.parametrize("path", DOCUMENTS, ids=[p.name for p in DOCUMENTS])
def test_document_holds_the_tables_the_code_prints(path):
    text = path.read_text(encoding="utf-8")
    assert reports.fill(text) == text, f"{path.name}: a table differs from kmt_ref.reports; run tools/update_reports.py"


def test_every_table_is_shown_once():
    shown = [name for path in DOCUMENTS for name in _names(path.read_text(encoding="utf-8"))]
    assert sorted(shown) == sorted(reports.REPORTS), shown


def test_fill_can_fail():
    """An edited number, an unknown table and a missing end are all caught."""
    table = reports.report("models")
    good = f"{reports.begin_marker('models')}\n{table}\n{reports.END_MARKER}\n"
    assert reports.fill(good) == good
    assert reports.fill(good.replace("47.9", "48.0")) != good.replace("47.9", "48.0")
    with pytest.raises(ValueError, match="is not a report"):
        reports.fill("<!-- report nothing -->\n<!-- end report -->")
    with pytest.raises(ValueError, match="has no"):
        reports.fill(f"{reports.begin_marker('models')}\n| a |\n")


def test_report_command_prints_the_tables(capsys):
    from kmt_ref.cli import main

    assert main(["report", "models"]) == 0
    assert capsys.readouterr().out.strip() == reports.report("models")
    assert main(["report", "nothing"]) == 2
    assert "name='nothing' is not a report" in capsys.readouterr().err


def _readme_example():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## A first example"):]
    code, printed = re.findall(r"```(?:python)?\n(.*?)```", section, re.S)[:2]
    return code, printed


def test_readme_first_example_prints_what_the_readme_says():
    code, printed = _readme_example()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == printed


def test_train_sweep_findings_count_each_run_once():
    """A run drawn by two figures (Figure 9's at λ = 10 are also in 10a and 10b) is one run in the counts."""
    import re

    from kmt_ref.learning import train_sweep as ts
    from kmt_ref.reports import train_sweep_findings

    runs = sum(len(ts.FIGURE_SETTINGS[f]) for f in ts.FIGURE_SETTINGS) * ts.DEFAULT_SEEDS
    level = [line for line in train_sweep_findings().splitlines() if "Lloyd's level" in line][0]
    assert re.findall(r"(\d+) of (\d+) (one-hot|d-only) runs", level) and all(
        int(total) == runs for _, total, _ in re.findall(r"(\d+) of (\d+) (one-hot|d-only) runs", level))


@pytest.mark.parametrize("seeds, text", [((0,), "1 seed"), ((0, 1), "2 seeds")])
def test_the_train_sweep_table_counts_the_seeds(tmp_path, monkeypatch, seeds, text):
    from kmt_ref.learning import train_sweep as ts

    lines = ts.COMMITTED_CSV.read_text().splitlines(keepends=True)
    seed = lines[0].split(",").index("seed")
    kept = tmp_path / "sweep.csv"
    kept.write_text(lines[0] + "".join(line for line in lines[1:] if int(line.split(",")[seed]) in seeds))
    monkeypatch.setattr(ts, "COMMITTED_CSV", kept)
    table = reports.train_sweep_table()
    assert f"A panel's runs: {text} of 600 steps per embedding;" in table
    assert "| 9a | λ = 1 | " in table and f"of {len(seeds)} |" in table


def test_train_sweep_statements_in_results_hold():
    """The words after the training-sweep findings in docs/RESULTS.md, each checked against the committed CSV."""
    import numpy as np

    from kmt_ref.learning.train_sweep import COMMITTED_CSV, figure_curves, final_scores, read_train_sweep

    rows = read_train_sweep(COMMITTED_CSV)
    f = {name: final_scores(rows, name) for name in ("9a", "9b", "10a", "10b")}
    med = lambda name, e: {v: np.median(list(by[e].values())) for v, by in f[name].items()}  # noqa: E731
    assert all(r["val_score"] > 1 for r in rows if r["step"] == r["steps"])  # every run above one Lloyd step
    pairs = lambda name, lam: [by["onehot"][s] < by["none"][s] for v, by in f[name].items() if v in lam  # noqa
                               for s in by["onehot"]]
    assert all(pairs("9b", (1.0, 4.0, 7.0, 10.0)))  # every seed pair of Figure 9 at d = 32
    assert 0 < sum(pairs("9a", (1.0, 4.0, 7.0, 10.0))) < len(pairs("9a", (1.0, 4.0, 7.0, 10.0)))  # some at d = 4
    for e in ("onehot", "none"):
        m4, m32 = med("9a", e), med("9b", e)
        assert max(m4, key=m4.get) == 1.0 and max(m32, key=m32.get) == 1.0  # λ = 1 the worst at both d
        assert m4[1.0] - max(m4[x] for x in (4.0, 7.0, 10.0)) > 1  # by more than 1 at d = 4
        assert 0 < m32[1.0] - max(m32[x] for x in (4.0, 7.0, 10.0)) < 0.05  # by less than 0.05 at d = 32
        assert max(m4[x] for x in (4.0, 7.0, 10.0)) - min(m4[x] for x in (4.0, 7.0, 10.0)) < 0.06
        c = figure_curves(rows, "9a")[1.0][e]["val"][1]
        assert c[-1] > c.min() + 0.5  # the validation score rises while training at d = 4, λ = 1
        assert med("10b", e)[32] > med("10b", e)[4]  # higher at d = 32 than at d = 4 (k = 6, λ = 10)
    results = (Path(__file__).resolve().parents[1] / "docs" / "RESULTS.md").read_text()
    for phrase in ("by more than 1 at\nd = 4", "by less\nthan 0.05 at d = 32", "within 0.06 of each other"):
        assert phrase in results


def test_results_states_the_training_sweeps_grid_and_scale():
    """The grid and scale RESULTS.md gives for the training sweeps are the command's."""
    from kmt_ref.learning import train_sweep as ts

    text = (Path(__file__).resolve().parents[1] / "docs" / "RESULTS.md").read_text()
    settings = sum(len(v) for v in ts.FIGURE_SETTINGS.values())
    assert f"training commands of {settings} settings at n = 512" in text
    assert f"**{ts.DEFAULT_SEEDS} seeds × {ts.DEFAULT_STEPS} steps**" in text
    assert f"--seeds {ts.DEFAULT_SEEDS} --steps {ts.DEFAULT_STEPS}" in text
    assert "Figure 9 covers λ ∈ {1, 4, 7, 10} at\nd ∈ {4, 32}, k = 6" in text
    assert ts.FIGURE_SETTINGS["9"] == [(512, d, 6, lam) for d in (4, 32) for lam in (1.0, 4.0, 7.0, 10.0)]
    assert "Figure 10a k ∈ {10, 16, 25} at d = 32,\nλ = 10, and Figure 10b d ∈ {8, 16} at k = 6, λ = 10" in text
    assert ts.FIGURE_SETTINGS["10a"] == [(512, 32, k, 10.0) for k in (10, 16, 25)]
    assert ts.FIGURE_SETTINGS["10b"] == [(512, d, 6, 10.0) for d in (8, 16)]
