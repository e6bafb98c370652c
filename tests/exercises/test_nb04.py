"""Notebook 04's checkers: right functions written independently pass, shortcuts through kmt_ref's own answers
fail with a hint naming what they call, functions fitted to the notebook's tasks fail, half-right functions get
the points of their right parts, hints do not give the answer away, and the measured facts the exercises and
their model answers rest on still hold (if kmt_ref changes so that one fails, the exercise text is wrong).

The wrong answers are in wrong_nb04.py (tests/exercises/test_registry.py runs them).
"""
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from kmt_ref import lloyd, lloyd_weights
from kmt_ref.exercises import EXERCISES, check, nb04
from kmt_ref.learning import EVAL_SEED, MODELS_DIR, load_checkpoint, run_model, sample_tasks, soft_kmeans_loss

SCALES = (1, 2, 3, 5, 10, 100)
_spec = importlib.util.spec_from_file_location("wrong_nb04", Path(__file__).with_name("wrong_nb04.py"))
_wrong = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_wrong)
WRONG = _wrong.WRONG
FUNCTION_EXERCISES = ("04.1", "04.3", "04.4", "04.5", "04.6", "04.8")


# ----------------------------------------------------------------------------- right answers, written here
def tasks(d):
    """The notebook's tasks (TASKS[d]), drawn here as the notebook draws them."""
    return sample_tasks(np.random.default_rng(EVAL_SEED), 32, n=64, d=d, k=3)


def soft(d, k, s):
    """The s layer, built here as the notebook's solution builds it."""
    W, _ = lloyd_weights(d, k, "linear")
    params = {name: s * M if name[0] in "QK" else M for name, M in W.items()}
    params.update({"b" + name: np.zeros(d + k) for name in W})
    return params


def lloyd_log_end(X, C):
    """log J after 20 iterations of the classical loop, task by task (the checker uses lloyd_batch)."""
    return np.array([np.log(lloyd(X[b], C[b], 20).objective[-1]) for b in range(X.shape[0])])


def right_gaps(X, C0):  # 04.1
    k = C0.shape[2]
    ends = np.stack([lloyd_log_end(X, X[:, :, k * r:k * (r + 1)]) for r in range(8)], axis=1)
    return ends[:, 0] - ends.min(axis=1)


def right_soft_ends(X, C0, s, dtype="float32"):  # 04.3 (run_model's default float32, as a student runs it)
    return np.log(run_model(soft(X.shape[1], C0.shape[2], s), X, C0, 20, dtype=dtype)[0][:, -1])


def right_one_step_loss(X, C0, s, lam):  # 04.4: the loss of section 3 written out, one center axis at a time
    C1 = run_model(soft(X.shape[1], C0.shape[2], s), X, C0, 1)[1][1]  # (B, d, k)
    out = np.zeros(X.shape[0])
    for b in range(X.shape[0]):
        D = np.array([np.sum((X[b] - C1[b][:, [j]]) ** 2, axis=0) for j in range(C1.shape[2])])  # (k, n)
        W = np.exp(-lam * (D - D.min(axis=0)))
        out[b] = np.sum(W / W.sum(axis=0) * D)
    return out


def right_split(X, C0, s):  # 04.5
    gain = right_soft_ends(X, C0, s) - lloyd_log_end(X, C0)
    stuck = right_gaps(X, C0) > 1e-6
    return gain[stuck].mean(), gain[~stuck].mean()


def right_gammas(params, d):  # 04.6: diag(Q^T K)_i = sum over rows of Q_ri K_ri
    d_emb = params["Q1"].shape[0]
    return [np.einsum("ri,ri->i", params["Q" + b], params["K" + b])[:d].mean() / d_emb ** 0.5 for b in "12"]


def right_gain(X, C0, s):  # 04.8
    return float(np.mean(right_soft_ends(X, C0, s) - lloyd_log_end(X, C0)))


RIGHT = {"04.1": right_gaps, "04.3": right_soft_ends, "04.4": right_one_step_loss, "04.5": right_split,
         "04.6": right_gammas, "04.8": right_gain}
#: the right answers of the value exercises (two numbers in 04.2, a choice in 04.7)
RIGHT_VALUES = {"04.2": (nb04.point_gap(), nb04.largest_gap()), "04.7": "b"}


def test_right_functions_written_independently_pass(capsys):
    # every exercise whose answer is a function: the code ones and 04.8 (the proof and concept ones take values)
    assert set(RIGHT) == set(FUNCTION_EXERCISES) == {i for i, ex in nb04_exercises().items()
                                                     if ex.checked and ex.kind not in ("quiz", "proof", "concept")}
    for id, fn in RIGHT.items():
        assert check(id, fn), capsys.readouterr().out
    # in float64 too (the checker's own arithmetic)
    assert check("04.3", lambda X, C0, s: right_soft_ends(X, C0, s, "float64"), quiet=True)


def test_a_function_that_writes_into_its_inputs_changes_nothing(capsys):
    def gaps_then_scribble(X, C0):
        out = right_gaps(X, C0)
        X[:] = 0.0
        C0[:] = 0.0
        return out
    assert check("04.1", gaps_then_scribble, quiet=True) and check("04.1", right_gaps, quiet=True)


# ----------------------------------------------------------------------------- shortcuts
def _fails_naming(id, fn, name, capsys):
    assert check(id, fn) is False
    out = capsys.readouterr().out
    assert f"calls {name}" in out, out


def test_the_library_loss_is_a_shortcut_in_04_4(capsys):
    def with_library_loss(X, C0, s, lam):
        return soft_kmeans_loss(X, run_model(soft(X.shape[1], C0.shape[2], s), X, C0, 1)[1][1], lam)

    def caught(X, C0, s, lam):
        try:
            return with_library_loss(X, C0, s, lam)
        except Exception:  # noqa: BLE001 (the point: catching the error does not help)
            return right_one_step_loss(X, C0, s, lam)

    _fails_naming("04.4", with_library_loss, "soft_kmeans_loss", capsys)
    assert check("04.4", caught) is False
    out = capsys.readouterr().out
    assert "calls soft_kmeans_loss" in out and "this exercise does without soft_kmeans_loss, batch_loss" in out


def test_the_checkers_own_helpers_are_shortcuts(capsys):
    """04.1, 04.3, 04.5, 04.6 and 04.8 forbid no library function (lloyd_batch, run_model and lloyd_weights are
    the tools they teach); what would hand over the answer is the checker's own code, and it raises."""
    _fails_naming("04.3", lambda X, C0, s: np.log(run_model(nb04.soft_lloyd_params(X.shape[1], C0.shape[2], s),
                                                            X, C0, 20)[0][:, -1]), "nb04_tasks.soft_lloyd_params", capsys)
    _fails_naming("04.6", lambda p, d: nb04._gammas(p, d), "nb04._gammas", capsys)

    def split(X, C0, s):
        try:
            nb04.soft_lloyd_params(X.shape[1], C0.shape[2], s)
        except Exception:  # noqa: BLE001
            pass
        return right_split(X, C0, s)
    _fails_naming("04.5", split, "nb04_tasks.soft_lloyd_params", capsys)
    _fails_naming("04.8", lambda X, C0, s: float(np.mean(nb04._soft_gain(None, s))), "nb04_tasks._soft_gain", capsys)
    _fails_naming("04.1", lambda X, C0: nb04._gaps(None), "nb04_tasks._gaps", capsys)


# ----------------------------------------------------------------------------- fitted to the notebook
@pytest.fixture(scope="module")
def notebook_values():
    """What the solutions compute on the notebook's tasks and the committed model."""
    out = {}
    for d in (4, 8):
        X, C0 = tasks(d)
        out[d] = {"gaps": right_gaps(X, C0), "soft3": right_soft_ends(X, C0, 3),
                  "lloyd": lloyd_log_end(X, C0), "X": X}
    return out


def test_functions_fitted_to_the_notebooks_tasks_fail(notebook_values, capsys):
    nv = notebook_values

    def stored(key):  # the notebook's values when the input is a notebook task set, else the same numbers
        return lambda X, *rest: nv[X.shape[1] if X.shape[1] in nv else 8][key][:X.shape[0]]

    # right on the notebook's tasks, by construction; wrong on the checkers' own
    for d in (4, 8):
        assert np.allclose(stored("gaps")(nv[d]["X"]), right_gaps(*tasks(d)))
    assert not check("04.1", stored("gaps"))
    assert not check("04.3", stored("soft3"))
    gain = {d: nv[d]["soft3"] - nv[d]["lloyd"] for d in (4, 8)}
    stuck8 = nv[8]["gaps"] > 1e-6
    assert not check("04.5", lambda X, C0, s: (gain[8][stuck8].mean(), gain[8][~stuck8].mean()))
    assert not check("04.8", lambda X, C0, s: gain[X.shape[1]].mean() if X.shape[1] in gain else 0.0)
    p = load_checkpoint(MODELS_DIR / "paper.npz").params
    paper = right_gammas(p, 32)
    assert not check("04.6", lambda params, d: paper)
    X8, C08 = tasks(8)
    losses = right_one_step_loss(X8, C08, 3, 10.0)
    assert not check("04.4", lambda X, C0, s, lam: losses[:X.shape[0]])
    capsys.readouterr()


# ----------------------------------------------------------------------------- parts
def test_a_half_right_function_gets_its_right_parts(capsys):
    def gaps_right_at_d4(X, C0):
        return right_gaps(X, C0) * (1 if X.shape[1] == 4 else 2)

    def split_right_on_stuck(X, C0, s):
        stuck, other = right_split(X, C0, s)
        return stuck, other + 0.05

    def gammas_right_for_block1(p, d):
        g = right_gammas(p, d)
        return [g[0], g[0]]  # block 2 read off Q1, K1

    def gain_right_at_d8(X, C0, s):
        return right_gain(X, C0, s) + (0.0 if X.shape[1] == 8 else 0.02)

    for id, fn, right_parts in (("04.1", gaps_right_at_d4, {1}), ("04.5", split_right_on_stuck, {1}),
                                ("04.6", gammas_right_for_block1, {1}), ("04.8", gain_right_at_d8, {2})):
        n = len(EXERCISES[id].parts)
        assert n == 2
        assert {i for i in range(1, n + 1) if check(id, fn, part=i, quiet=True)} == right_parts, id
        assert check(id, fn, quiet=True) is False
    assert check("04.6", gammas_right_for_block1, part=2) is False
    assert "block 1's gamma again" in capsys.readouterr().out


def test_parts_reuse_the_output_of_the_same_function_only():
    calls = []

    def counted(X, C0, s):
        calls.append(1)
        return right_split(X, C0, s)

    assert check("04.5", counted, quiet=True) and len(calls) == 2   # 2 task sets, shared by the 2 parts
    calls.clear()
    assert check("04.5", counted, part=2, quiet=True) and len(calls) == 2   # a later check runs it again
    calls.clear()
    assert check("04.5", counted, part=1, quiet=True) and check("04.5", counted, part=2, quiet=True)
    assert len(calls) == 2                                            # nbgrader's part cells, one after the other
    assert not check("04.5", lambda X, C0, s: (right_split(X, C0, s)[0], 1.0), part=2, quiet=True)


# ----------------------------------------------------------------------------- hints
@pytest.mark.parametrize("id", FUNCTION_EXERCISES)
def test_hints_print_no_value_of_the_answer(id, capsys):
    """A wrong function's hint names the mistake but prints no computed value (nothing to 3 decimals or more)."""
    for wrong in WRONG[id]:
        if not callable(wrong):
            continue
        assert check(id, wrong) is False
        out = capsys.readouterr().out
        assert not re.search(r"\d\.\d{3,}", out), (id, out)


def test_numbers_typed_in_are_told_to_be_a_function(capsys):
    for id in FUNCTION_EXERCISES:
        assert not check(id, [0.1381, 0.2030])
        assert "expected a function" in capsys.readouterr().out


# ----------------------------------------------------------------------------- premises
def nb04_exercises():
    return {i: ex for i, ex in EXERCISES.items() if i.startswith("04.")}


def _all_task_cases():
    return ([c for d in nb04.EX_DIMS for c in nb04.GAP_CASES[d]] + [c for c, _ in nb04.SPLIT_CASES]
            + [c for d in nb04.EX_DIMS for c, _ in nb04.GAIN_CASES[d]])


def test_the_checkers_tasks_are_not_the_notebooks():
    for case in _all_task_cases() + [c for c, _ in nb04.SOFT_CASES] + [c for c, *_ in nb04.LOSS_CASES]:
        seed, count, n, d, k = case
        assert seed != EVAL_SEED and (count, n, k) != (32, 64, 3)


def test_the_premises_of_the_checks_hold():
    """What the docstring of kmt_ref/exercises/nb04.py states about the checkers' inputs."""
    for case in _all_task_cases():
        X, C0 = nb04._tasks(case)
        gaps = right_gaps(X, C0)
        assert np.allclose(gaps, nb04._gaps(case), rtol=0, atol=1e-12)
        assert 0 < np.sum(gaps > 1e-6) < len(gaps), case               # stuck tasks and others
        assert not np.any((gaps > 1e-9) & (gaps < 1e-4)), case         # the mask does not hang on rounding
    worst = 0.0
    for case, s in list(nb04.SOFT_CASES) + list(nb04.SPLIT_CASES):
        X, C0 = nb04._tasks(case)
        worst = max(worst, np.abs(right_soft_ends(X, C0, s) - nb04._soft_ends(case, s)).max())
    assert worst < 1e-6                                                 # measured 1.5e-7; tolerance 1e-5
    worst = 0.0
    for case, s, lam in nb04.LOSS_CASES:
        X, C0 = nb04._tasks(case)
        want = soft_kmeans_loss(X, nb04._after_one_step(case, s), lam)
        worst = max(worst, np.max(np.abs(right_one_step_loss(X, C0, s, lam) / want - 1)))
    assert worst < 1e-6                                                 # measured 1.7e-7; tolerance 1e-5
    for name, params, d in nb04._param_cases()[2:]:                    # the committed float32 models
        in32 = np.array([np.mean(np.diag(params["Q" + b].T @ params["K" + b])[:d]) for b in "12"])
        in32 = in32 / np.sqrt(params["Q1"].shape[0])
        assert np.allclose(in32, nb04._gammas(params, d), rtol=1e-7, atol=0), name   # measured 5e-8


@pytest.fixture(scope="module")
def measured():
    """The notebook's tasks: what its model answers quote."""
    out = {}
    for d in (4, 8):
        X, C0 = tasks(d)
        ends = np.stack([lloyd_log_end(X, X[:, :, 3 * r:3 * r + 3]) for r in range(8)], axis=1)  # (32, 8)
        out[d] = {"ends": ends, "gap": ends[:, 0] - ends.min(axis=1),
                  "soft": {a: right_soft_ends(X, C0, a) for a in (SCALES if d == 8 else (3,))}}
    X, C0 = tasks(8)
    out["loss1"] = [right_one_step_loss(X, C0, a, 10.0).mean() for a in SCALES]
    return out


def test_the_premises_of_the_exercises_hold(measured):
    m4, m8 = measured[4], measured[8]
    lloyd4, lloyd8 = m4["ends"][:, 0].mean(), m8["ends"][:, 0].mean()
    # 04.1: Lloyd from a random start is stuck on a share of the tasks, and more is at stake at d = 8
    assert 0.1 < m4["gap"].mean() < m8["gap"].mean() and 0.2 < np.mean(m8["gap"] > 1e-6) < 0.5
    assert round(m4["gap"].mean(), 4) == 0.1381 and round(m8["gap"].mean(), 4) == 0.2030
    # 04.3: s = 1, 2 end above the start, s = 3 lowest and below Lloyd, s = 100 is Lloyd
    finals = np.array([m8["soft"][a].mean() for a in SCALES])
    start = np.log(run_model(soft(8, 3, 1), *tasks(8), 0)[0][:, 0]).mean()
    assert finals[0] > start and finals[1] > start
    assert np.argmin(finals) == SCALES.index(3) and finals[2] < lloyd8 - 0.05
    assert abs(finals[-1] - lloyd8) < 1e-3
    # 04.4: the one-step loss prefers another s than the 20-step objective
    assert SCALES[int(np.argmin(measured["loss1"]))] != 3
    # 04.5: the gain is on the stuck tasks; elsewhere the soft layer is as good as Lloyd
    diff8, stuck = m8["soft"][3] - m8["ends"][:, 0], m8["gap"] > 1e-6
    assert diff8[stuck].mean() < -0.2 and abs(diff8[~stuck].mean()) < 0.01
    assert round(diff8[stuck].mean(), 4) == -0.3695 and round(diff8[~stuck].mean(), 4) == 0.0021
    # 04.8: a layer that beats Lloyd exists at d = 4 too, but the prize is smaller there
    gain4 = np.mean(m4["soft"][3] - m4["ends"][:, 0])
    assert diff8.mean() < gain4 < 0 and m4["soft"][3].mean() < lloyd4
    assert round(gain4, 4) == -0.0517 and round(diff8.mean(), 4) == -0.1024


def test_the_checkers_layer_is_the_notebooks():
    a, b = soft(8, 3, 3), nb04.soft_lloyd_params(8, 3, 3)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_the_exercise_list():
    """Eleven exercises, all checked (the proof and the concept exercise by a part beside the written answer),
    three of them self-checks."""
    exs = nb04_exercises()
    assert list(exs) == [f"04.{i}" for i in range(1, 12)]
    assert [ex.kind for ex in exs.values()] == ["code", "proof", "code", "code", "code", "code", "concept", "explore",
                                                "quiz", "quiz", "quiz"]
    assert [i for i, ex in exs.items() if not ex.checked] == []
    assert [i for i, ex in exs.items() if ex.parts] == ["04.1", "04.2", "04.5", "04.6", "04.8"]
    assert [f.__name__ for f in exs["04.4"].forbidden] == ["soft_kmeans_loss", "batch_loss"]


# ----------------------------------------------------------------------------- 04.2 and 04.7
def test_04_2_premises():
    """One point's gap, by soft_kmeans_loss - batch_objective, is sum_j p_j d_j - d_min; for k = 2 the largest
    gap is attained (100 equal points at lambda (d_2 - d_1) = u*) and nothing on a grid of distances exceeds it;
    it is 40 % of the bound."""
    from kmt_ref.learning import batch_objective
    d = nb04.GAP_DISTANCES
    p = np.exp(-5.0 * d) / np.exp(-5.0 * d).sum()
    assert np.isclose(nb04.point_gap(), p @ d - d.min(), rtol=1e-12) and round(nb04.point_gap(), 5) == 0.05385
    assert nb04.point_gap() < np.log(3) / 5
    want = nb04.largest_gap()
    u = 1.0 + want * 10.0 / 100  # the maximum solves u = 1 + e^-u, where lambda * gap = u - 1
    x = np.zeros((1, 2, 100))  # 100 points at the origin; centers at squared distances 1 and 1 + u/10
    C = np.array([[[1.0, 0.0], [0.0, np.sqrt(1.0 + u / 10.0)]]])
    assert np.isclose((soft_kmeans_loss(x, C, 10.0) - batch_objective(x, C))[0], want, rtol=1e-10)
    gaps = np.linspace(0.0, 3.0, 30_001)  # d_2 - d_1 of one point, lambda = 10
    per_point = gaps * np.exp(-10 * gaps) / (1 + np.exp(-10 * gaps))
    assert 100 * per_point.max() <= want * (1 + 1e-12) and np.isclose(100 * per_point.max(), want, rtol=1e-6)
    assert round(want, 4) == 2.7846 and round(want / (100 * np.log(2) / 10), 2) == 0.40


def test_04_2_right_and_half_right(capsys):
    assert check("04.2", RIGHT_VALUES["04.2"]) and check("04.2", [0.05385, 2.785])
    for answer, right_part in (((0.05385, 6.931), 1), ((0.2197, 2.785), 2)):
        assert check("04.2", answer, part=right_part) and not check("04.2", answer, part=3 - right_part)
        assert not check("04.2", answer)
        assert "1 of 2 parts right" in capsys.readouterr().out


def test_04_7_premise_block_3_reads_the_points_only():
    """Block 3's keys are the points: its weights for center j compare c_j with the points, never with the other
    centers (statement (b)); with d_emb = d nothing else is in a token."""
    from kmt_ref.learning.model import model_layer
    block3 = model_layer(32)[1].blocks[0]
    assert block3.name == "3" and block3.keys == "X" and block3.normalizer == "softmax"
    assert check("04.7", RIGHT_VALUES["04.7"], quiet=True) and not any(check("04.7", w, quiet=True) for w in "acd")


def test_04_2_and_04_7_hints_do_not_name_the_right_letter_or_value():
    for answer in ("a", "c", "d"):
        try:
            EXERCISES["04.7"].checker(answer)
        except nb04.Wrong as wrong:
            assert "(b)" not in str(wrong) and "mean-shift" not in str(wrong)
    for answer in _wrong.WRONG["04.2"][:4]:
        for part in (1, 2):
            try:
                EXERCISES["04.2"].checker(answer, part)
            except nb04.Wrong as wrong:
                assert "0.0538" not in str(wrong) and "2.78" not in str(wrong)


# ----------------------------------------------------------------------------- the precision policy of 04.1
def test_04_1_float32_gaps_get_the_dtype_hint_and_a_near_miss_more_digits(capsys):
    """Every part compares the function's own output (its dtype included) under the stated 1e-9."""
    assert check("04.1", lambda X, C0: right_gaps(X, C0).astype(np.float32)) is False
    out = capsys.readouterr().out
    assert out.count("float32") == 2 and out.count("right method") == 2, out
    assert check("04.1", lambda X, C0: right_gaps(X, C0) + 3e-9) is False
    assert capsys.readouterr().out.count("right method, give more digits") == 2


def test_04_1_a_wrong_function_is_told_which_step_is_wrong(capsys):
    def three_iterations(X, C0):  # every run stopped early, before Lloyd has converged
        k = C0.shape[2]
        ends = np.stack([[np.log(lloyd(X[b], X[b][:, k * r:k * (r + 1)], 3).objective[-1]) for b in range(len(X))]
                         for r in range(8)], axis=1)
        return ends[:, 0] - ends.min(axis=1)

    def some_starts_missed(X, C0):  # only the first two starts: some stuck tasks get gap 0
        k = C0.shape[2]
        ends = np.stack([lloyd_log_end(X, X[:, :, k * r:k * (r + 1)]) for r in range(2)], axis=1)
        return ends[:, 0] - ends.min(axis=1)

    for fn, part, hint in [(_wrong._gaps_of_J, 1, "gaps of the objective J"),
                           (lambda X, C0: right_gaps(X, C0) / np.log(10), 1, "log10"),
                           (_wrong._gaps_k3, 1, "for this task's k"),
                           (some_starts_missed, 1, "get gap 0"),
                           (three_iterations, 1, "as many iterations")]:
        assert check("04.1", fn, part=part) is False
        out = capsys.readouterr().out
        assert hint in out and "right method" not in out, out


@pytest.mark.parametrize("id, fn", [
    ("04.1", lambda X, C0: right_gaps(X, C0) * 1.5),
    ("04.3", lambda X, C0, s: right_soft_ends(X, C0, s) + 0.01),
    ("04.4", lambda X, C0, s, lam: right_one_step_loss(X, C0, s, lam) * 1.01),
    ("04.6", lambda params, d: np.array(right_gammas(params, d)) * 1.01),
])
def test_the_last_hint_points_at_a_step_without_writing_its_code(id, fn, capsys):
    assert check(id, fn) is False
    out = capsys.readouterr().out
    assert "not yet: not " in out, out
    for code in ("run_model(", "lloyd_batch", "lloyd_weights(", "@", "[:", "softmax_j", ".T", "sqrt", "M = "):
        assert code not in out, (code, out)
