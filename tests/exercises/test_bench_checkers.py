"""benchmarks/bench_checkers.py, the checkers' timing (what the tests no longer time): it finds a right answer
for every checked exercise but the value answers the tests check inline, and a tiny run prints its table."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_checkers", ROOT / "benchmarks" / "bench_checkers.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_every_checked_exercise_is_timed_but_the_inline_value_answers():
    answers, untimed = bench.right_answers()
    assert untimed == ["02.2", "02.8", "04.2", "04.7"]  # checked inline in test_nb02.py / test_nb04.py
    assert len(answers) == 48 and set(bench.GOALS) == set(bench.NOTEBOOKS)
    assert list(answers)[:12] == ["01.1", "01.2", "01.3", "01.4", "01.5", "01.6", "01.7", "01.8", "01.9", "01.10",
                                  "01.11", "02.1"]  # in the notebooks' order, 01.10 after 01.9


def test_performance_states_the_goals_the_benchmark_holds():
    text = (ROOT / "docs" / "PERFORMANCE.md").read_text()
    assert bench.GOALS == {"01": 18.0, "02": 18.0, "03": 18.0, "04": 45.0, "05": 18.0}
    assert "every check within 18 of those\nbaselines (notebooks 01, 02, 03 and 05;" in text
    assert "and within 45 in notebook 04" in text and f"n = {bench.BASELINE_SHAPE[0]:,}, d = 16, k = 16, 10 it" in text


def test_a_right_answer_that_fails_stops_the_benchmark():
    with pytest.raises(SystemExit, match="right answer to 01.9 failed"):
        bench.timed_check("01.9", 11)()  # d + k + flag is 10
    bench.timed_check("01.9", 10)()


def test_a_tiny_run_prints_the_table_and_its_verdict():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_checkers.py"), "--repeat", "1",
                          "--only", "01.2,05.6"], capture_output=True, text=True, check=True)
    lines = run.stdout.splitlines()
    assert lines[0].startswith("# ") and "baseline: lloyd" in lines[0]
    assert [line.split()[:2] for line in lines[3:5]] == [["01.2", "18"], ["05.6", "18"]]
    assert lines[-1] in ("# every check within its goal", "# over its goal: 01.2", "# over its goal: 05.6",
                         "# over its goal: 01.2, 05.6")  # the verdict, whatever this machine's load


@pytest.mark.parametrize("args, message", [(["--repeat", "0"], "--repeat must be at least 1, got 0"),
                                           (["--only", "01.2,9.9"], "--only names no checked exercise: ['9.9']")])
def test_bad_arguments_are_named(args, message):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_checkers.py"), *args],
                         capture_output=True, text=True)
    assert run.returncode != 0 and message in run.stderr
