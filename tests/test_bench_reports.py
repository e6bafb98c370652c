"""The benchmark tables of :mod:`kmt_ref.bench_reports`: read from the committed runs, refusing a malformed file.

That docs/PERFORMANCE.md holds exactly what they print, once, is tests/test_reports.py's check (the
tables are in :data:`kmt_ref.reports.REPORTS`). Here: a results file that is not what the benchmarks
write gives an error, never a table, and what a benchmark saves is what the table reads.
"""
import csv
import subprocess
import sys
from pathlib import Path

import pytest

from kmt_ref import bench_reports as br

ROOT = Path(__file__).resolve().parents[1]


def test_the_results_are_package_data():
    for path in (br.FORWARD_CSV, br.TRAIN_CSV):
        assert path.parent == ROOT / "kmt_ref" / "datasets" and path.suffix == ".csv" and path.is_file()


# --------------------------------------------------------------------------
# Malformed results files fail loudly
# --------------------------------------------------------------------------
def _rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def _write(path, rows):
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    return path


def _edit(rows, column, value, where=lambda row: True, first_only=True):
    header, body = rows[0], [list(r) for r in rows[1:]]
    i = header.index(column)
    for row in body:
        if where(dict(zip(header, row))):
            row[i] = value
            if first_only:
                break
    return [header] + body


def _contender(name):
    return lambda row: row["contender"] == name


FORWARD_CASES = {
    "another header": (lambda rows: [rows[0][:-1] + ["peak_mb"]] + rows[1:], "header"),
    "a short row": (lambda rows: rows[:2] + [rows[2][:-1]] + rows[3:], "values for"),
    "a missing time": (lambda rows: _edit(rows, "cpu_ms", ""), "cpu_ms='' is not a float"),
    "a word for a ratio": (lambda rows: _edit(rows, "wall_x_lloyd_floor", "fast"), "is not a float"),
    "a negative ratio": (lambda rows: _edit(rows, "cpu_x_soft_floor", "-1"), "finite number >= 0"),
    "not a number": (lambda rows: _edit(rows, "cpu_x_lloyd_floor", "nan"), "finite number >= 0"),
    "an unknown contender": (lambda rows: _edit(rows, "contender", "sklearn", _contender("lloyd")), "not one of"),
    "an unknown setting": (lambda rows: _edit(rows, "setting", "4"), "setting='4'"),
    "a run without a setting": (lambda rows: [r for r in rows if r[rows[0].index("setting")] != "1"], "has no rows"),
    "a duplicated row": (lambda rows: rows + [rows[1]], "a second row"),
    "runs of other sizes": (lambda rows: _edit(rows, "n", "5", lambda r: r["date"] == rows[1][0], first_only=False),
                            "differ in n"),
    "a memory row without its peak": (lambda rows: _edit(rows, "peak", "", _contender(br.MEMORY_SCALING)),
                                      "without its peak"),
    "a run on two kernels": (lambda rows: _edit(rows, "blas_kernel", "Nehalem"), "ran on the BLAS kernels"),
    "no rows": (lambda rows: rows[:1], "no rows"),
    "empty": (lambda rows: [], "empty"),
}


def test_forward_table_has_a_row_per_contender_and_kernel(tmp_path):
    """Runs on another kernel (here: the committed runs with their kernel renamed) get rows of their own."""
    rows = _rows(br.FORWARD_CSV)
    i = rows[0].index("blas_kernel")
    other = [rows[0]] + [r[:i] + ["Nehalem"] + r[i + 1:] for r in rows[1:]]
    date = rows[0].index("date")
    other = other[:1] + [r[:date] + ["1999" + r[date][4:]] + r[date + 1:] for r in other[1:]]  # other runs
    path = _write(tmp_path / "two.csv", rows + other[1:])
    table = br.forward_table(path)
    kernels = sorted({r[i] for r in rows[1:]} | {"Nehalem"})
    body = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    assert len(body) == len(br.FORWARD_CONTENDERS) * len(kernels)
    assert [line.split(" | ")[1] for line in body] == kernels * len(br.FORWARD_CONTENDERS)
    assert "Nehalem: " in table.splitlines()[-1]


def test_a_copy_of_the_committed_runs_gives_the_same_table(tmp_path):
    path = _write(tmp_path / "copy.csv", _rows(br.FORWARD_CSV))
    assert br.forward_table(path) == br.forward_table()
    path = _write(tmp_path / "copy_train.csv", _rows(br.TRAIN_CSV))
    assert br.train_table(path) == br.train_table()


@pytest.mark.parametrize("case", FORWARD_CASES)
def test_forward_table_rejects_a_malformed_file(case, tmp_path):
    change, message = FORWARD_CASES[case]
    path = _write(tmp_path / "bad.csv", change(_rows(br.FORWARD_CSV)))
    with pytest.raises(ValueError, match=message):
        br.forward_table(path)


TRAIN_CASES = {
    "another header": (lambda rows: [rows[0][:-1] + ["adam_ms"]] + rows[1:], "header"),
    "a missing step time": (lambda rows: _edit(rows, "step_s", ""), "step_s='' is not a float"),
    "a word for a count": (lambda rows: _edit(rows, "batch", "many"), "batch='many' is not a int"),
    "runs of other settings": (lambda rows: _edit(rows, "n", "128"), "differ in n"),
    "another dtype": (lambda rows: _edit(rows, "dtype", "float16"), "differ in dtype"),
    "not a flag": (lambda rows: _edit(rows, "malloc_tuned", "yes"), "malloc_tuned='yes'"),
    "no rows": (lambda rows: rows[:1], "no rows"),
}


@pytest.mark.parametrize("case", TRAIN_CASES)
def test_train_table_rejects_a_malformed_file(case, tmp_path):
    change, message = TRAIN_CASES[case]
    rows = _rows(br.TRAIN_CSV)
    rows = rows + rows[1:2] if len(rows) < 3 else rows  # "differ in" needs two runs
    path = _write(tmp_path / "bad.csv", change(rows))
    with pytest.raises(ValueError, match=message):
        br.train_table(path)


def test_append_rows_writes_one_header_and_refuses_another(tmp_path):
    path = tmp_path / "out.csv"
    br.append_rows(path, ("a", "b"), [{"a": 1, "b": None}])
    br.append_rows(path, ("a", "b"), [{"a": 2, "b": 3}])
    assert path.read_text() == "a,b\n1,\n2,3\n"
    with pytest.raises(ValueError, match="header"):
        br.append_rows(path, ("a", "c"), [{"a": 4}])
    assert path.read_text() == "a,b\n1,\n2,3\n"


def test_bench_forward_saves_what_forward_table_reads(tmp_path):
    """A tiny run of the benchmark (both thread settings, each in its own process) appends rows the table reads."""
    out = tmp_path / "forward.csv"
    args = [sys.executable, str(ROOT / "benchmarks" / "bench_forward.py"), "--n", "800", "--d", "3", "--k", "4",
            "--layers", "2", "--repeat", "1", "--save", str(out)]
    subprocess.run(args, check=True, capture_output=True)
    subprocess.run(args, check=True, capture_output=True)
    rows = _rows(out)
    assert rows[0] == list(br.FORWARD_COLUMNS)
    assert len(rows) == 1 + 2 * (2 * len(br.FORWARD_CONTENDERS) + 3)  # two runs: 2 settings x 5, 3 memory rows
    table = br.forward_table(out)
    assert table.count("\n") == len(br.FORWARD_CONTENDERS) + 3  # header, rule, contenders, blank, caption
    assert "2 runs of `python benchmarks/bench_forward.py --repeat 1` (n = 800, d = 3, k = 4, 2 layers" in table
