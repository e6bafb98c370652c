"""benchmarks/bench_checkers.py, how long the checkers take: it finds a right answer for every checked exercise,
prints each check's times as ratios to the baseline of the same round, and lists the checks over their goal."""
import contextlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_checkers", ROOT / "benchmarks" / "bench_checkers.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_every_checked_exercise_is_timed():
    from kmt_ref.exercises import EXERCISES
    answers, untimed = bench.right_answers()
    assert untimed == [] and len(answers) == 52 == sum(ex.checked for ex in EXERCISES.values())
    assert set(bench.GOALS) == set(bench.NOTEBOOKS)
    assert list(answers)[:12] == ["01.1", "01.2", "01.3", "01.4", "01.5", "01.6", "01.7", "01.8", "01.9", "01.10",
                                  "01.11", "02.1"]  # in the notebooks' order, 01.10 after 01.9


def test_performance_states_the_goals_and_the_baseline_the_benchmark_holds():
    text = " ".join((ROOT / "docs" / "PERFORMANCE.md").read_text().split())
    assert bench.GOALS == {"01": 18.0, "02": 18.0, "03": 18.0, "04": 45.0, "05": 18.0}
    assert "every check within 18 of those baselines (notebooks 01, 02, 03 and 05;" in text
    assert "and within 45 in notebook 04" in text
    n, d, k, iterations = bench.BASELINE_SHAPE
    assert f"Lloyd run: n = {n:,}, d = {d}, k = {k}, {iterations} iterations, one thread" in text


def test_a_right_answer_that_fails_stops_the_benchmark():
    with pytest.raises(SystemExit, match="right answer to 01.9 failed"):
        bench.timed_check("01.9", 11)()  # d + k + flag is 10
    bench.timed_check("01.9", 10)()


@pytest.fixture
def clocked(monkeypatch):
    """The benchmark on a made-up clock: the baseline takes 0.1 s at one thread (0.05 s otherwise); a check takes
    ``times["first"]`` seconds on its first call, then ``times["one"]`` at one thread and ``times["default"]`` at
    the default thread count (a number, or a list of one per round). Returns ``times`` (to set) and the calls'
    (id, thread limit)."""
    limit, calls, times = [None], [], {"first": 1.0, "default": 0.4, "one": 0.2}

    @contextlib.contextmanager
    def fake_limit(threads):
        before, limit[0] = limit[0], threads
        try:
            yield
        finally:
            limit[0] = before

    def fake_check(id, answer):
        def run():
            calls.append((id, limit[0]))
            if [c[0] for c in calls].count(id) == 1:
                return times["first"]
            key = "one" if limit[0] == 1 else "default"
            per_round = times[key] if isinstance(times[key], list) else [times[key]] * 3
            return per_round[calls.count((id, limit[0])) - 1 - (limit[0] is None)]  # round r's time
        return run

    def fake_wall(func):
        if func is base:
            return 0.1 if limit[0] == 1 else 0.05
        return func()

    def base():
        pass

    monkeypatch.setattr(bench, "blas_limit", fake_limit)
    monkeypatch.setattr(bench, "timed_check", fake_check)
    monkeypatch.setattr(bench, "wall", fake_wall)
    monkeypatch.setattr(bench, "baseline", lambda: base)
    return times, calls


@pytest.mark.parametrize("first, default, one, goal, over", [
    (1.0, 0.4, 0.2, 10.0, False), (1.0, 0.4, 0.2, 9.99, True),  # the first call over the goal, the medians not
    (0.3, 0.4, 0.2, 4.0, False), (0.3, 0.4, 0.2, 3.99, True),  # the default threads' median alone
    (0.3, 0.2, 0.5, 5.0, False), (0.3, 0.2, 0.5, 4.99, True),  # the one thread's median alone
])
def test_the_table_and_the_verdict(clocked, monkeypatch, capsys, first, default, one, goal, over):
    times, calls = clocked
    times.update(first=first, default=default, one=one)
    monkeypatch.setattr(bench, "GOALS", dict.fromkeys(bench.NOTEBOOKS, goal))
    bench.main(["--repeat", "3", "--only", "01.2,05.6"])
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if line[:2] in ("01", "05")]
    cells = [f"{first / 0.1:.2f}", "(", f"{first:.2f}", "s)", f"{default / 0.1:.2f}", "(", f"{default:.2f}", "s)",
             f"{one / 0.1:.2f}", "(", f"{one:.2f}", "s)"]  # ratios to the one-thread baseline of 0.1 s
    assert rows == [[id, f"{goal:g}", *cells] + (["over", "the", "goal"] if over else []) for id in ("01.2", "05.6")]
    assert "# 2 checks, 3 rounds;" in lines[-2]
    assert lines[-1] == ("# over its goal: 01.2, 05.6" if over else "# every check within its goal")
    # per check its first call, then the rounds at both thread counts, the order swapped every round
    assert [limit for _, limit in calls] == [None] * 2 + [None, None, 1, 1] + [1, 1, None, None] + [None, None, 1, 1]
    assert [id for id, _ in calls] == ["01.2", "05.6"] * 7


def test_the_table_gives_the_median_of_the_rounds(clocked, monkeypatch, capsys):
    times, _ = clocked
    times.update(first=0.3, default=[0.4, 2.0, 0.4], one=[0.2, 0.2, 0.1])  # a slow round at the default count
    monkeypatch.setattr(bench, "GOALS", dict.fromkeys(bench.NOTEBOOKS, 5.0))
    bench.main(["--repeat", "3", "--only", "01.2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].split() == ["01.2", "5", "3.00", "(", "0.30", "s)", "4.00", "(", "0.40", "s)", "2.00", "(",
                                "0.20", "s)"] and lines[-1] == "# every check within its goal"


def test_an_empty_only_is_refused_before_the_answers_load(monkeypatch, capsys):
    def loading(*_):
        raise AssertionError("the test modules were loaded")

    monkeypatch.setattr(bench, "right_answers", loading)
    with pytest.raises(SystemExit) as stop:
        bench.main(["--only", " , "])
    assert stop.value.code == 2 and "--only names no exercise: ' , '" in capsys.readouterr().err


def test_one_check_and_one_round_are_not_plural(clocked, capsys):
    bench.main(["--repeat", "1", "--only", "01.9"])
    assert "# 1 check, 1 round;" in capsys.readouterr().out


def test_a_tiny_real_run_prints_the_table_and_its_verdict():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_checkers.py"), "--repeat", "1",
                          "--only", "01.2,05.6"], capture_output=True, text=True, check=True)
    lines = run.stdout.splitlines()
    assert lines[0].startswith("# ") and "baseline: lloyd" in lines[0]
    assert [line.split()[:2] for line in lines[3:5]] == [["01.2", "18"], ["05.6", "18"]]
    assert lines[-1] in ("# every check within its goal", "# over its goal: 01.2", "# over its goal: 05.6",
                         "# over its goal: 01.2, 05.6")  # the verdict depends on this machine's load


@pytest.mark.parametrize("args, message", [(["--repeat", "0"], "--repeat must be at least 1, got 0"),
                                           (["--only", ","], "--only names no exercise: ','"),
                                           (["--only", "01.2,9.9"], "--only names no timed exercise: ['9.9']")])
def test_bad_arguments_are_named(args, message):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_checkers.py"), *args],
                         capture_output=True, text=True)
    assert run.returncode == 2 and message in run.stderr and "usage:" in run.stderr
