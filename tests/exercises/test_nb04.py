"""Notebook 04's checkers: right answers computed independently pass, hints do not give the answer away, and the
measured facts the exercises rest on still hold (if kmt_ref changes so that one fails, the exercise text is wrong).

The wrong answers are in wrong_nb04.py (tests/exercises/test_registry.py runs them).
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from kmt_ref import lloyd, lloyd_weights
from kmt_ref.exercises import check, nb04
from kmt_ref.learning import (EVAL_SEED, MODELS_DIR, load_checkpoint, run_model, sample_tasks,
                              soft_kmeans_loss)

SCALES = (1, 2, 3, 5, 10, 100)
_spec = importlib.util.spec_from_file_location("wrong_nb04", Path(__file__).with_name("wrong_nb04.py"))
_wrong = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_wrong)
WRONG = _wrong.WRONG


def tasks(d):
    """The exercises' tasks, drawn here as the notebook draws them."""
    return sample_tasks(np.random.default_rng(EVAL_SEED), 32, n=64, d=d, k=3)


def soft(d, s):
    """The s layer built here as the notebook's solution builds it (float32 runs, like a student's)."""
    W, _ = lloyd_weights(d, 3, "linear")
    params = {name: s * M if name[0] in "QK" else M for name, M in W.items()}
    params.update({"b" + name: np.zeros(d + 3) for name in W})
    return params


def lloyd_ends(X, C):
    """log J after 20 iterations of the classical loop, task by task (not lloyd_batch, which the checker uses)."""
    return np.array([np.log(lloyd(X[b], C[b], 20).objective[-1]) for b in range(X.shape[0])])


@pytest.fixture(scope="module")
def measured():
    out = {}
    for d in (4, 8):
        X, C0 = tasks(d)
        ends = np.stack([lloyd_ends(X, X[:, :, 3 * r:3 * r + 3]) for r in range(8)], axis=1)  # (32, 8)
        out[d] = {"ends": ends, "gap": ends[:, 0] - ends.min(axis=1),
                  "soft": {a: np.log(run_model(soft(d, a), X, C0, 20)[0][:, -1]) for a in (SCALES if d == 8 else (3,))}}
    X, C0 = tasks(8)
    out["loss1"] = [soft_kmeans_loss(X, run_model(soft(8, a), X, C0, 1)[1][1], 10.0).mean() for a in SCALES]
    return out


@pytest.fixture(scope="module")
def answers(measured):
    """The right answers, computed here from the measurements above (not with the checker's helpers)."""
    m4, m8 = measured[4], measured[8]
    stuck = m8["gap"] > 1e-6
    diff8 = m8["soft"][3] - m8["ends"][:, 0]
    p = load_checkpoint(MODELS_DIR / "paper.npz").params
    return {
        "04.1": [m4["gap"].mean(), m8["gap"].mean()],
        "04.3": [m8["soft"][a].mean() for a in SCALES],
        "04.4": measured["loss1"],
        "04.5": [diff8[stuck].mean(), diff8[~stuck].mean()],
        "04.6": [np.mean(np.diag(p["Q" + b].T @ p["K" + b])[:32]) / np.sqrt(p["Q1"].shape[0]) for b in "12"],
        "04.8": [np.mean(m4["soft"][3] - m4["ends"][:, 0]), diff8.mean()],
    }


def test_right_answers_computed_independently_pass(answers, capsys):
    assert set(answers) == {i for i, ex in nb04_exercises().items() if ex.checked and ex.kind != "quiz"}
    for id, answer in answers.items():
        assert check(id, answer), capsys.readouterr().out
        assert check(id, list(np.asarray(answer, dtype=float)))  # a list is an array too


def test_right_answers_rounded_to_four_significant_digits_pass(answers, capsys):
    for id, answer in answers.items():
        rounded = [float(f"{v:.4g}") for v in np.asarray(answer, dtype=float)]
        assert check(id, rounded), (id, rounded, capsys.readouterr().out)


def test_two_digits_short_says_right_method(answers, capsys):
    for id, answer in answers.items():
        rounded = [float(f"{v:.2g}") for v in np.asarray(answer, dtype=float)]
        if not check(id, rounded):
            out = capsys.readouterr().out
            assert "right method, give more digits" in out and "not yet: not yet" not in out, (id, out)


def test_04_6_asks_what_the_notebook_does_not_print(answers, capsys):
    """Section 8 prints the mean diagonals; their square roots (the equivalent scale) are not the answer."""
    p = load_checkpoint(MODELS_DIR / "paper.npz").params
    diag = [np.mean(np.diag(p["Q" + b].T @ p["K" + b])[:32]) for b in "12"]
    assert not check("04.6", diag) and not check("04.6", np.sqrt(diag))
    assert not check("04.6", [4.977, 3.651])  # the model answer's values of the earlier question


def nb04_exercises():
    from kmt_ref.exercises import EXERCISES

    return {i: ex for i, ex in EXERCISES.items() if i.startswith("04.")}


def test_the_premises_of_the_exercises_hold(measured):
    m4, m8 = measured[4], measured[8]
    lloyd4, lloyd8 = m4["ends"][:, 0].mean(), m8["ends"][:, 0].mean()
    # 04.1: Lloyd from a random start is stuck on a share of the tasks, and more is at stake at d = 8
    assert 0.1 < m4["gap"].mean() < m8["gap"].mean() and 0.2 < np.mean(m8["gap"] > 1e-6) < 0.5
    # 04.3: s = 1, 2 end above the start, s = 3 lowest and below Lloyd, s = 100 is Lloyd
    finals = np.array([m8["soft"][a].mean() for a in SCALES])
    start = np.log(run_model(soft(8, 1), *tasks(8), 0)[0][:, 0]).mean()
    assert finals[0] > start and finals[1] > start
    assert np.argmin(finals) == SCALES.index(3) and finals[2] < lloyd8 - 0.05
    assert abs(finals[-1] - lloyd8) < 1e-3
    # 04.4: the one-step loss prefers another s than the 20-step objective
    assert SCALES[int(np.argmin(measured["loss1"]))] != 3
    # 04.5: the gain is on the stuck tasks; elsewhere the soft layer is as good as Lloyd
    diff8, stuck = m8["soft"][3] - m8["ends"][:, 0], m8["gap"] > 1e-6
    assert diff8[stuck].mean() < -0.2 and abs(diff8[~stuck].mean()) < 0.01
    # 04.8: a layer that beats Lloyd exists at d = 4 too, but the prize is smaller there
    gain4 = np.mean(m4["soft"][3] - m4["ends"][:, 0])
    assert diff8.mean() < gain4 < 0 and m4["soft"][3].mean() < lloyd4


def test_the_checkers_reference_values_are_the_notebooks():
    """The checker's own helpers and the notebook's recipe draw the same tasks and build the same layer."""
    X, C0 = tasks(8)
    X2, C02 = nb04.ex_tasks(8)
    assert np.array_equal(X, X2) and np.array_equal(C0, C02)
    a, b = soft(8, 3), nb04.soft_lloyd_params(8, 3, 3)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("id", ["04.1", "04.3", "04.4", "04.5", "04.6", "04.8"])
def test_hints_do_not_print_the_expected_numbers(id, answers, capsys):
    """A wrong answer's hint names the mistake but not the right values (3 decimals)."""
    for wrong in WRONG[id]:
        assert check(id, wrong) is False
        out = capsys.readouterr().out
        for v in answers[id]:
            assert f"{v:.3f}" not in out and f"{abs(v):.3f}" not in out, (id, wrong, out)


def test_the_exercise_list():
    """Eight exercises, six checked, and three self-checks; the concept and proof ones carry no checker."""
    exs = nb04_exercises()
    assert list(exs) == [f"04.{i}" for i in range(1, 12)]
    assert [ex.kind for ex in exs.values()] == ["code", "proof", "code", "code", "code", "code", "concept", "explore",
                                                "quiz", "quiz", "quiz"]
    assert [i for i, ex in exs.items() if not ex.checked] == ["04.2", "04.7"]
