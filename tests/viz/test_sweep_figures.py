"""The γ-sweep heatmaps in the authors' form (kmt_ref/viz/sweep_figures.py), and what docs/RESULTS.md says of them."""
import csv
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import QuadMesh  # noqa: E402

from kmt_ref.sweep import PAPER_GRID, summarize  # noqa: E402
from kmt_ref.viz import registry  # noqa: E402
from kmt_ref.viz import sweep_figures as S  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAIRS = list(S.HEATMAPS.values())


@pytest.fixture(scope="module")
def rows():
    return S.read_rows()


def _groupby_mean(index, columns):
    """The mean Loss per (Gamma, index, columns) straight from the CSV text, with np.add.at (not pair_table)."""
    with S.SWEEP_774_CSV.open(newline="") as f:
        table = list(csv.DictReader(f))
    loss = np.array([float(r["Loss"]) if r["Loss"] else np.nan for r in table])
    keys = [np.array([int(r[c]) for r in table]) for c in ("Gamma", index, columns)]
    values, codes = zip(*(np.unique(k, return_inverse=True) for k in keys))
    shape = tuple(len(v) for v in values)
    ok = ~np.isnan(loss)
    sums, counts, nans = np.zeros(shape), np.zeros(shape, dtype=int), np.zeros(shape, dtype=int)
    at_ok = tuple(c[ok] for c in codes)
    np.add.at(sums, at_ok, loss[ok])
    np.add.at(counts, at_ok, 1)
    np.add.at(nans, tuple(c[~ok] for c in codes), 1)
    return values, sums / counts, counts, nans


@pytest.mark.parametrize("index,columns", PAIRS)
def test_table_is_the_groupby_mean_of_the_csv(rows, index, columns):
    (gammas, iv, cv), mean, counts, nans = _groupby_mean(index, columns)
    t = S.pair_table(rows, index, columns)
    assert (t.index, t.columns) == (index, columns)
    assert t.gammas == tuple(gammas) == (1, 10, 100)
    assert t.index_values == tuple(iv) and t.column_values == tuple(cv)
    np.testing.assert_allclose(t.mean, mean, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(t.count, counts)
    np.testing.assert_array_equal(t.nan, nans)


@pytest.mark.parametrize("index,columns", PAIRS)
def test_each_cell_holds_the_rows_of_the_other_axes(rows, index, columns):
    t = S.pair_table(rows, index, columns)
    others = [a for a in S.AXES if a not in (index, columns)]
    per_cell = math.prod(len({r[a] for r in rows}) for a in others)  # e.g. 10 dimensions x 3 points = 30
    assert (t.count + t.nan == per_cell).all()
    nan_rows = {g: st["nan"] for g, st in summarize(rows).items()}
    assert {g: int(n.sum()) for g, n in zip(t.gammas, t.nan)} == nan_rows == {1: 39, 10: 39, 100: 39}


def _row(k, d, p, s, g, loss):
    return {"Clusters": k, "Iteration": -1, "Dimensions": d, "Gamma": g, "Points": p, "Loss": loss, "Scale": s}


def test_nan_rows_are_left_out_of_the_mean_and_counted():
    rows = [_row(5, 1, 100, 1, 1, 1.0), _row(5, 2, 100, 1, 1, 3.0), _row(5, 3, 100, 1, 1, math.nan),
            _row(10, 1, 100, 1, 1, math.nan), _row(10, 2, 100, 1, 1, math.nan),
            _row(5, 1, 100, 1, 10, 0.5)]
    t = S.pair_table(rows, "Clusters", "Scale")
    assert t.gammas == (1, 10) and t.index_values == (5, 10) and t.column_values == (1,)
    assert t.mean[0, 0, 0] == 2.0 and t.count[0, 0, 0] == 2 and t.nan[0, 0, 0] == 1
    assert math.isnan(t.mean[0, 1, 0]) and t.count[0, 1, 0] == 0 and t.nan[0, 1, 0] == 2
    assert t.mean[1, 0, 0] == 0.5 and t.count[1, 1, 0] == 0 and t.nan[1, 1, 0] == 0
    # one γ only, in the order asked
    only = S.pair_table(rows, "Clusters", "Scale", gammas=[10])
    assert only.gammas == (10,) and only.mean.shape == (1, 2, 1)


def _drawn(monkeypatch, tmp_path, *args, **kw):
    """Draw a heatmap figure and keep what the saved matplotlib figure holds (texts, panels, colour bar)."""
    kept = {}
    real = S.save_png

    def keep(fig, path, **k):
        kept["texts"] = [fig._suptitle.get_text(), fig._supxlabel.get_text()]
        kept["cbar"] = [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is not None]
        kept["axes"] = [ax for ax in fig.axes if ax not in kept["cbar"]]
        return real(fig, path, **k)

    monkeypatch.setattr(S, "save_png", keep)
    table = S.heatmap_figure(tmp_path / "h.png", *args, **kw)
    assert (tmp_path / "h.png").stat().st_size > 10_000
    return table, kept


def test_one_panel_per_gamma_drawing_the_table(monkeypatch, tmp_path):
    table, kept = _drawn(monkeypatch, tmp_path, "Clusters", "Scale")
    assert [ax.get_title() for ax in kept["axes"]] == ["γ = 1", "γ = 10", "γ = 100"]
    for ax, mean in zip(kept["axes"], table.mean):
        mesh = next(c for c in ax.collections if isinstance(c, QuadMesh))
        # the colour values drawn are the table's means, row 0 (smallest Clusters) at the bottom
        np.testing.assert_array_equal(np.asarray(mesh.get_array()).reshape(mean.shape), mean)
        assert (mesh.norm.vmin, mesh.norm.vmax) == (S.VMIN, S.VMAX)
        expected = S.HEATMAP_CMAP(np.clip((mean - S.VMIN) / (S.VMAX - S.VMIN), 0, 1))
        np.testing.assert_allclose(mesh.get_facecolors().reshape(expected.shape)[..., :3], expected[..., :3],
                                   atol=1 / 255)
        assert ax.get_ylim()[0] < ax.get_ylim()[1]  # smallest value at the bottom, as theirs
    assert kept["axes"][0].get_ylabel().startswith("Clusters") and kept["axes"][0].get_xlabel().startswith("Scaling")
    assert [t.get_text() for t in kept["axes"][0].get_xticklabels()] == ["1", "4", "7", "10"]
    assert [t.get_text() for t in kept["axes"][0].get_yticklabels()] == ["5", "15", "25", "35", "45"]
    (cbar,) = kept["cbar"]
    assert "mean Loss" in cbar.get_ylabel() and "log J(Lloyd)" in cbar.get_ylabel()
    title, notes = kept["texts"]
    assert "Clusters_v_Scale.pdf" in title and "NumPy draws" in title and "n ≤ 774" in title
    assert "10 iterations" in title and "log J(transformer) − log J(Lloyd)" in title
    assert "39 of 3,000 rows at each γ" in notes and "27 to 30 rows a cell" in notes
    assert f"3 of the authors' {len(PAPER_GRID['points'])} values (100, 278, 774" in notes


def test_a_cell_with_no_row_left_is_grey_and_said_so(monkeypatch, tmp_path):
    path = tmp_path / "s.csv"
    lines = ["Clusters,Iteration,Dimensions,Gamma,Points,Loss,Scale"]
    lines += [f"{k},-1,1,{g},100,{'' if k == 10 else 0.5},1" for k in (5, 10) for g in (1, 10)]
    path.write_text("\n".join(lines) + "\n")
    table, kept = _drawn(monkeypatch, tmp_path, "Clusters", "Scale", csv=path)
    mesh = next(c for c in kept["axes"][0].collections if isinstance(c, QuadMesh))
    assert np.ma.getmaskarray(mesh.get_array()).reshape(2, 1).tolist() == [[False], [True]]
    assert "grey: a cell with no non-NaN row" in kept["texts"][1]
    assert "1 of 2 rows at each γ" in kept["texts"][1] and len(kept["axes"]) == 2


def test_bad_arguments_raise_naming_them(rows, tmp_path):
    with pytest.raises(ValueError, match="index='Colour' is not a grid axis"):
        S.pair_table(rows, "Colour", "Scale")
    with pytest.raises(ValueError, match="columns='Loss' is not a grid axis"):
        S.pair_table(rows, "Clusters", "Loss")
    with pytest.raises(ValueError, match="both 'Scale'"):
        S.pair_table(rows, "Scale", "Scale")
    with pytest.raises(TypeError, match="index must be a column name"):
        S.pair_table(rows, 3, "Scale")
    with pytest.raises(ValueError, match="rows is empty"):
        S.pair_table([], "Clusters", "Scale")
    with pytest.raises(ValueError, match=r"rows\[0\] is not a sweep row"):
        S.pair_table([{"Clusters": 5}], "Clusters", "Scale")
    with pytest.raises(ValueError, match=r"no row has Gamma \[1000\]"):
        S.pair_table(rows, "Clusters", "Scale", gammas=[1, 1000])
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="csv='.*wrong.csv'.*is not a sweep CSV"):
        S.heatmap_figure(tmp_path / "w.png", "Clusters", "Scale", csv=wrong)
    with pytest.raises(ValueError, match="csv='.*none.csv' does not exist"):
        S.heatmap_figure(tmp_path / "w.png", "Clusters", "Scale", csv=tmp_path / "none.csv")
    with pytest.raises(ValueError, match="index='Gamma'"):
        S.heatmap_figure(tmp_path / "w.png", "Gamma", "Scale")
    assert not (tmp_path / "w.png").exists()


def test_the_four_heatmaps_are_registered_beside_figure_2():
    names = [f for f, _ in registry.FIGURES]
    heat = [f for f in names if f.startswith("fig2_heatmap_")]
    assert heat == [f"fig2_heatmap_{pdf[:-4].lower()}.png" for pdf in S.HEATMAPS]
    assert names.index(heat[0]) == names.index("fig2_finite_gamma_gap.png") + 1
    for f in heat:
        assert (ROOT / "figures" / f).is_file()
        assert f"../figures/{f}" in (ROOT / "docs" / "USAGE.md").read_text()


def test_results_says_what_the_heatmaps_show(rows):
    """docs/RESULTS.md's sentence on the heatmaps: each claim and number from the tables."""
    text = (ROOT / "docs" / "RESULTS.md").read_text()
    m = re.search(r"in every cell the mean Loss at γ = 1 is above those at γ = 10 and 100, and at each γ it is "
                  r"largest at d = 1 \(in every column k\) and at s = 1 \(in every row k\)\. At γ = 100 the row "
                  r"d = 1 alone stands out, its means rising to (\d\.\d+) at k = (\d+) while every row d ≥ 2 "
                  r"lies within ±(\d\.\d+)\.", " ".join(text.split()))
    assert m, "docs/RESULTS.md lacks the sentence on the heatmaps"
    dk, ks = S.pair_table(rows, "Dimensions", "Clusters"), S.pair_table(rows, "Clusters", "Scale")
    for t in (dk, ks, *(S.pair_table(rows, *p) for p in PAIRS[2:])):
        assert (t.mean[0] > t.mean[1]).all() and (t.mean[0] > t.mean[2]).all()
    assert (dk.mean.argmax(axis=1) == dk.index_values.index(1)).all()  # d = 1 in every column, at each γ
    assert (ks.mean.argmax(axis=2) == ks.column_values.index(1)).all()  # s = 1 in every row, at each γ
    top, k, within = float(m[1]), int(m[2]), float(m[3])
    d1 = dk.mean[2, dk.index_values.index(1)]
    assert top == round(d1.max(), 3) and k == dk.column_values[int(d1.argmax())]
    assert within == round(np.abs(dk.mean[2, 1:]).max(), 3)
