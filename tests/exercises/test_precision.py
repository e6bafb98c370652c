"""The precision policy, exercise by exercise: every checked exercise accepts its right answer exactly,
and, where the policy applies, rounded to the 4 significant digits the notebooks print (as a list and as
an array). An exercise whose answer must be exact (a function the student writes, an integer, a letter,
a construction that has to hit a value exactly) says so in its registered ``checks`` text.

The table below covers every checked exercise: a new checked exercise without an entry fails
:func:`test_the_table_covers_every_checked_exercise`. The right answers reuse the functions the
checkers compute their targets with (each is computed by kmt_ref); the rejected wrong answers, with
their hints, are in tests/exercises/wrong_nbNN.py (tested by test_registry.py).
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from kmt_ref import kmeans_transformer, spherical_kmeans
from kmt_ref.algorithms.binary import binary_codes, code_length
from kmt_ref.algorithms.dot_product import dot_product_weights
from kmt_ref.algorithms.lloyd import lloyd_layer, lloyd_weights
from kmt_ref.core.attention import layer_forward
from kmt_ref.core.normalizers import sparsemax
from kmt_ref.core.tokens import run_layers
from kmt_ref.exercises import EXERCISES, check, nb01, nb02, nb03, nb04, nb05
from kmt_ref.learning import lloyd_batch, run_model
from kmt_ref.exercises._registry import DIGITS


# ----------------------------------------------------------------------------- right answers that are functions
def _one_layer_tokens(X, C):  # 01.1
    params, emb = lloyd_weights(X.shape[0], C.shape[1])
    return layer_forward(params, emb.embed_points(X), emb.embed_centers(C), lloyd_layer())


def _flagless_centers(X, C):  # 01.4
    params, emb = nb01._flagless_params(*C.shape)
    return run_layers(X, params, lloyd_layer(), emb, C, 1).centers[1]


def _one_hot_columns(X, C, gamma):  # 01.8
    return int(kmeans_transformer(X, C, 1, gamma=gamma).one_hot[0])


def _requ_norm_block():  # 02.3: one ReQU unit per coordinate reads x, W2 sums the squares into the norm row
    _, emb = dot_product_weights(2, 3)
    W1, W2 = np.zeros((2, emb.d_emb)), np.zeros((emb.d_emb, 2))
    W1[:, emb.rows("x")] = np.eye(2)
    W2[emb.rows("norm"), :] = 1.0
    return W1, W2


def _nb04_params(d, k, s):  # 04.3: Theorem 2.1's weights, Q and K times s, zero biases
    W, _ = lloyd_weights(d, k, "linear")
    params = {n: s * M if n[0] in "QK" else M for n, M in W.items()}
    params.update({"b" + n: np.zeros(d + k) for n in W})
    return params


def _nb04_soft_ends(X, C0, s):  # 04.3: 20 re-embedded steps
    return np.log(run_model(_nb04_params(X.shape[1], C0.shape[2], s), X, C0, 20)[0][:, -1])


def _nb04_gaps(X, C0):  # 04.1
    k = C0.shape[2]
    ends = np.stack([np.log(lloyd_batch(X, X[:, :, k * r:k * (r + 1)], 20)[:, -1]) for r in range(8)], axis=1)
    return ends[:, 0] - ends.min(axis=1)


def _nb04_loss(X, C0, s, lam):  # 04.4: the loss written out
    C1 = run_model(_nb04_params(X.shape[1], C0.shape[2], s), X, C0, 1)[1][1]
    D = ((X[:, :, None, :] - C1[:, :, :, None]) ** 2).sum(axis=1)
    W = np.exp(-lam * (D - D.min(axis=1, keepdims=True)))
    return (W / W.sum(axis=1, keepdims=True) * D).sum(axis=(1, 2))


def _nb04_gain(X, C0, s):  # per task, 04.5 and 04.8
    return _nb04_soft_ends(X, C0, s) - np.log(lloyd_batch(X, C0, 20)[:, -1])


def _nb04_split(X, C0, s):  # 04.5
    g, stuck = _nb04_gain(X, C0, s), _nb04_gaps(X, C0) > 1e-6
    return g[stuck].mean(), g[~stuck].mean()


def _nb04_gammas(params, d):  # 04.6
    return [np.mean(np.diag(params["Q" + b].T @ params["K" + b])[:d]) / np.sqrt(params["Q1"].shape[0])
            for b in "12"]


ROUNDED = "rounded"
#: id -> (right answer, a function of nothing; ROUNDED, or ("exact", what the checks text says about it))
TABLE = {
    "01.1": (lambda: _one_layer_tokens, ("exact", "a function", "to 1e-12")),
    "01.2": (nb01.tie_layer, ROUNDED),
    "01.4": (lambda: _flagless_centers, ("exact", "a function", "to 1e-12")),
    "01.5": (lambda: nb01._linear_centers, ("exact", "a function", "to 1e-10")),
    "01.6": (lambda: nb01._reset_y, ("exact", "a function", "to 1e-12")),
    "01.7": (nb01.gamma_star, ROUNDED),                                       # and its stated relative 5e-3
    "01.8": (lambda: _one_hot_columns, ("exact", "a function", "exact: integer counts")),
    "01.9": (lambda: lloyd_weights(nb01.QUIZ_D, nb01.QUIZ_K)[1].d_emb, ("exact", "exact: an integer")),
    "01.10": (lambda: "b", ("exact", "a choice")),
    "01.11": (lambda: "c", ("exact", "a choice")),
    "02.1": (nb02._norm_row_dropped, ("exact", "exact: integer labels")),
    "02.3": (_requ_norm_block, ("exact", "rtol 1e-13")),
    "02.4": (lambda: nb02._empty_center_after_one_layer(1.5), ROUNDED),
    "02.5": (nb02.separation_beta, ROUNDED),                                  # and its stated 0.01
    "02.6": (nb02.critical_beta, ROUNDED),
    "02.7": (lambda: lambda X, C: spherical_kmeans(X, C, 1).centers[1], ("exact", "your step", "atol 1e-12")),
    "02.9": (nb02.quiz_dot_score, ROUNDED),
    "02.10": (lambda: dot_product_weights(5, 4)[0]["W1"].shape, ("exact", "exact: integers")),
    "02.11": (nb02.quiz_responsibility, ROUNDED),
    "03.1": (lambda: np.array([1.0, 1.0, 0.5]), ("exact", "exact: a score must sit exactly at the threshold")),
    "03.2": (nb03.leak_threshold, ROUNDED),                                   # and its stated 0.5 %
    "03.4": (nb03.quantile_windows, ROUNDED),                                 # and its stated 0.5 %
    "03.5": (nb03.robust_outlier_gamma, ROUNDED),                             # and its stated 0.5 %
    "03.7": (nb03.medoid_outlier_probability, ROUNDED),
    "03.9": (lambda: sparsemax(nb03.QUIZ_Z), ROUNDED),
    "03.10": (lambda: sparsemax(-nb03.QUIZ_GAMMA / np.sqrt(nb03.QUIZ_D) * nb03.QUIZ_SQ), ROUNDED),
    "03.11": (lambda: "a", ("exact", "a choice")),
    "04.1": (lambda: _nb04_gaps, ("exact", "a function", "to 1e-9")),
    "04.3": (lambda: _nb04_soft_ends, ("exact", "a function", "to 1e-5")),
    "04.4": (lambda: _nb04_loss, ("exact", "a function", "relative 1e-5")),
    "04.5": (lambda: _nb04_split, ("exact", "a function", "to 1e-5")),
    "04.6": (lambda: _nb04_gammas, ("exact", "a function", "relative 1e-6")),
    "04.8": (lambda: lambda X, C0, s: float(_nb04_gain(X, C0, s).mean()), ("exact", "a function", "to 1e-5")),
    "04.9": (nb04.quiz_n_params, ("exact", "exact: an integer")),
    "04.10": (nb04.quiz_loss, ROUNDED),
    "04.11": (lambda: "d", ("exact", "a choice")),
    "05.1": (lambda: binary_codes, ("exact", "a function", "exact: 0/1 entries")),
    "05.2": (lambda: (nb05.nearest_code_pairs(binary_codes(10)), nb05.nearest_code_pairs(np.eye(10))),
             ("exact", "exact: integers")),
    "05.3": (lambda: nb05.scalar_code_centers(nb05.X_TIE, nb05.C0_TIE), ROUNDED),
    "05.4": (lambda: nb05.leak_ratio(10.0), ROUNDED),
    "05.6": (lambda: code_length(nb05.QUIZ_K), ("exact", "exact: an integer")),
    "05.7": (nb05.quiz_code_score, ("exact", "exact: an integer")),
    "05.8": (lambda: "b", ("exact", "a choice")),
}
CHECKED = [i for i, ex in EXERCISES.items() if ex.checked]


def _rounded(answer, as_list):
    """Every float entry of ``answer`` rounded to DIGITS significant digits, as the notebooks print it;
    arrays as nested lists if ``as_list``, else as float arrays; tuples and lists keep their structure."""
    if isinstance(answer, (tuple, list)):
        return type(answer)(_rounded(a, as_list) for a in answer)
    arr = np.asarray(answer, dtype=float)
    out = np.vectorize(lambda v: float(f"{v:.{DIGITS}g}"), otypes=[float])(arr) if arr.size else arr
    if arr.ndim == 0:
        return float(out)
    return out.tolist() if as_list else out


def _as_list(answer):
    """The same answer with every array written as a (nested) list."""
    if isinstance(answer, (tuple, list)):
        return type(answer)(_as_list(a) for a in answer)
    return answer.tolist() if isinstance(answer, np.ndarray) else answer


def test_the_table_covers_every_checked_exercise():
    assert len(CHECKED) == 43
    assert sorted(TABLE) == sorted(CHECKED), "every checked exercise needs a row here (and only those)"


def test_every_checked_exercise_has_a_plausible_wrong_answer():
    """That each is rejected with a hint is test_registry.py::test_checker_rejects_plausible_wrong_answers."""
    wrong = {}
    for path in sorted(Path(__file__).parent.glob("wrong_nb*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        wrong.update(module.WRONG)
    assert [i for i in CHECKED if not wrong.get(i)] == []


@pytest.mark.parametrize("id", sorted(TABLE))
def test_the_exact_answer_passes(id):
    right, _ = TABLE[id]
    answer = right()
    assert check(id, answer, quiet=True)
    if not callable(answer) and not isinstance(answer, str):
        assert check(id, _as_list(answer), quiet=True)


@pytest.mark.parametrize("id", sorted(i for i, (_, how) in TABLE.items() if how == ROUNDED))
@pytest.mark.parametrize("as_list", [False, True], ids=["array", "list"])
def test_the_answer_at_the_printed_precision_passes(id, as_list):
    right, _ = TABLE[id]
    exact = right()
    printed = _rounded(exact, as_list)
    assert check(id, printed, quiet=True), f"{id}: {printed!r} (4 significant digits of {exact!r}) is rejected"
    assert "significant digits" in EXERCISES[id].checks or any(
        s in EXERCISES[id].checks for s in ("relative tolerance", "within")), id


@pytest.mark.parametrize("id", sorted(i for i, (_, how) in TABLE.items() if how != ROUNDED))
def test_an_exact_answer_says_so_in_its_checks_text(id):
    _, (_, *says) = TABLE[id]
    for words in says:
        assert words in EXERCISES[id].checks, f"{id}: its checks text should say {words!r}"


def test_rounding_is_what_the_notebooks_print():
    assert _rounded(599.6842, False) == 599.7 and _rounded(0.005341234, True) == 0.005341
    assert _rounded(np.array([[0.41871, 0.0021234]]), True) == [[0.4187, 0.002123]]
    assert _rounded(([0.5, 0.5], (1 / 3,)), False)[1] == (0.3333,)
