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

from kmt_ref import kmeans_transformer, lloyd, spherical_kmeans
from kmt_ref.algorithms.binary import binary_codes, code_length
from kmt_ref.algorithms.dot_product import dot_product_weights
from kmt_ref.algorithms.lloyd import lloyd_layer, lloyd_weights
from kmt_ref.core.attention import layer_forward
from kmt_ref.core.normalizers import sparsemax
from kmt_ref.core.tokens import run_layers
from kmt_ref.exercises import EXERCISES, check, nb01, nb02, nb03, nb04, nb05
from kmt_ref.learning import lloyd_batch, run_model
from kmt_ref.exercises._registry import DIGITS

_spec = importlib.util.spec_from_file_location("right_nb03", Path(__file__).with_name("right_nb03.py"))
right_nb03 = importlib.util.module_from_spec(_spec)  # notebook 03's right answers, independent of the checkers
_spec.loader.exec_module(right_nb03)


# ----------------------------------------------------------------------------- right answers that are functions
def _one_layer_tokens(X, C):  # 01.1, in NumPy: the layer's output is Lloyd's step in token form
    k, n = C.shape[1], X.shape[1]
    D = ((X[:, None, :] - C[:, :, None]) ** 2).sum(axis=0)  # (k, n)
    labels = np.argmin(D, axis=0)                            # ties: the lowest index
    Y = np.eye(k)[:, labels]
    counts = Y.sum(axis=1)
    C1 = np.where(counts > 0, X @ Y.T / np.maximum(counts, 1), C)  # an empty cluster keeps its center
    return np.vstack([X, Y, np.zeros((1, n))]), np.vstack([C1, np.eye(k), np.ones((1, k))])


def _flagless_centers(X, C):  # 01.4: the own token ties with the members
    Y = _one_layer_tokens(X, C)[0][X.shape[0]:-1]            # (k, n) one-hot
    return (X @ Y.T + C) / (Y.sum(axis=1) + 1)


def _soft_means(X, C, gamma):  # 01.5: softmax y, then the y-weighted means
    D = ((X[:, None, :] - C[:, :, None]) ** 2).sum(axis=0)
    Y = np.exp(-gamma * (D - D.min(axis=0)))
    Y /= Y.sum(axis=0)
    return X @ Y.T / Y.sum(axis=1)


def _reset_rows(X, Y, gamma):  # 01.6: minus the softmax blend of the keys' y
    D = ((X[:, :, None] - X[:, None, :]) ** 2).sum(axis=0)
    W = np.exp(-gamma * (D - D.min(axis=0)))
    return -Y @ (W / W.sum(axis=0))


def _gamma_bisection(X, C0, T, lo, hi):  # 01.7: in log(gamma), to a relative width of 1e-6
    ref = lloyd(X, C0, T).labels
    while hi / lo > 1 + 1e-6:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if not np.array_equal(kmeans_transformer(X, C0, T, gamma=mid).labels, ref) else (lo, mid)
    return lo


def _one_hot_columns(X, C, gamma):  # 01.8: every other weight exp(-gamma * gap) underflows
    D = ((X[:, None, :] - C[:, :, None]) ** 2).sum(axis=0)
    return int(np.sum(gamma * (np.sort(D, axis=0)[1] - D.min(axis=0)) > 1075 * np.log(2)))


def _load_right(stem):  # the right answers written in NumPy beside a notebook's wrong ones
    spec = importlib.util.spec_from_file_location(stem, Path(__file__).with_name(f"{stem}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RIGHT


_RIGHT_02 = _load_right("wrong_nb02")  # 02.1 ... 02.7


def _codes(k):  # 05.1: B_k from Python's integers
    m = max(1, (k - 1).bit_length())
    return ((np.arange(k)[None, :] >> np.arange(m)[:, None]) & 1).astype(float)


def _scalar_layer(X, C0):  # 05.3: blocks 1 and 3 with scalar codes at gamma = inf (averaging hardmax)
    k = C0.shape[1]
    D = ((X[:, :, None] - C0[:, None, :]) ** 2).sum(axis=0)  # (n, k)
    tied = D == D.min(axis=1, keepdims=True)
    y = (tied * np.arange(k)).sum(axis=1) / tied.sum(axis=1)
    W = -(np.arange(k)[:, None] - y[None, :]) ** 2  # (k, n) block 3's scores
    W = W == W.max(axis=1, keepdims=True)
    return (X @ W.T) / W.sum(axis=1)


def _leak(X, C0, gamma):  # 05.4
    from kmt_ref import binary_transformer, lloyd
    from kmt_ref.viz.binary_figures import plain_onehot_transformer
    ref = lloyd(X, C0, 1).centers[1]
    eb = np.abs(binary_transformer(X, C0, 1, gamma_update=gamma, empty="nearest_code").centers[1] - ref).max()
    return eb / np.abs(plain_onehot_transformer(X, C0, 1, gamma_update=gamma).centers[1] - ref).max()


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


def _nb04_gap_pair():  # 04.2: one point's sum_j p_j d_j - d_min; max over u of 100 u / (1 + e^u) / 10 (Newton)
    d = np.array([1.0, 1.2, 3.0])
    p = np.exp(-5.0 * d) / np.exp(-5.0 * d).sum()
    u = 1.3
    for _ in range(50):  # the maximum solves e^u (u - 1) = 1
        u -= (np.exp(u) * (u - 1) - 1) / (np.exp(u) * u)
    return float(p @ d - 1.0), 100 * u / (1 + np.exp(u)) / 10


ROUNDED = "rounded"
#: id -> (right answer, a function of nothing; ROUNDED, or ("exact", what the checks text says about it))
TABLE = {
    "01.1": (lambda: _one_layer_tokens, ("exact", "a function", "to 1e-12")),
    "01.2": (nb01.tie_layer, ROUNDED),
    "01.3": (lambda: ((0.1, 0.2), "b"), ("exact", "exact: evaluated in float64", "a choice")),
    "01.4": (lambda: _flagless_centers, ("exact", "a function", "to 1e-12")),
    "01.5": (lambda: _soft_means, ("exact", "a function", "to 1e-10")),
    "01.6": (lambda: _reset_rows, ("exact", "a function", "to 1e-12")),
    "01.7": (lambda: _gamma_bisection, ("exact", "a function", "relative tolerance 5e-3")),
    "01.8": (lambda: _one_hot_columns, ("exact", "a function", "exact: integer counts")),
    "01.9": (lambda: lloyd_weights(nb01.QUIZ_D, nb01.QUIZ_K)[1].d_emb, ("exact", "exact: an integer")),
    "01.10": (lambda: "b", ("exact", "a choice")),
    "01.11": (lambda: "c", ("exact", "a choice")),
    "02.1": (lambda: _RIGHT_02["02.1"], ("exact", "a function", "exact: integer labels")),
    "02.2": (lambda: ("c", 4.0 + 0.3 ** 2 + 1.2 ** 2 + 2.5 ** 2), ("exact", "a choice", "4 significant digits")),
    "02.3": (lambda: _RIGHT_02["02.3"], ("exact", "a function", "rtol 1e-13")),
    "02.4": (lambda: _RIGHT_02["02.4"], ("exact", "a function", "to 1e-12")),
    "02.5": (lambda: _RIGHT_02["02.5"], ("exact", "a function", "within 0.01")),
    "02.6": (lambda: _RIGHT_02["02.6"], ("exact", "a function", "relative 1e-10")),
    "02.7": (lambda: _RIGHT_02["02.7"], ("exact", "a function", "atol 1e-12")),
    "02.8": (lambda: "d", ("exact", "a choice")),
    "02.9": (nb02.quiz_dot_score, ROUNDED),
    "02.10": (lambda: dot_product_weights(5, 4)[0]["W1"].shape, ("exact", "exact: integers")),
    "02.11": (nb02.quiz_responsibility, ROUNDED),
    "03.1": (lambda: right_nb03.disagreeing_scores, ("exact", "a function",
                                                     "exact: a score must sit exactly at the threshold")),
    "03.2": (lambda: right_nb03.gamma1_star, ("exact", "a function", "within 0.5 %")),
    "03.3": (lambda: 1.25, ROUNDED),                                          # tau of (2, 1.5, 1.2)
    "03.4": (lambda: right_nb03.quantile_windows, ("exact", "a function", "within 0.5 %")),
    "03.5": (lambda: right_nb03.outlier_gamma, ("exact", "a function", "within 0.5 %")),
    "03.6": (lambda: (np.exp(-3.0), "b"), ("exact", "4 significant digits", "a choice")),  # test_nb03: 0.04979 passes
    "03.7": (lambda: right_nb03.p_outlier, ("exact", "a function", "4 significant digits")),
    "03.8": (lambda: 15, ("exact", "exact: an integer")),
    "03.9": (lambda: sparsemax(nb03.QUIZ_Z), ROUNDED),
    "03.10": (lambda: sparsemax(-nb03.QUIZ_GAMMA / np.sqrt(nb03.QUIZ_D) * nb03.QUIZ_SQ), ROUNDED),
    "03.11": (lambda: "a", ("exact", "a choice")),
    "04.1": (lambda: _nb04_gaps, ("exact", "a function", "to 1e-9")),
    "04.2": (lambda: _nb04_gap_pair(), ROUNDED),
    "04.3": (lambda: _nb04_soft_ends, ("exact", "a function", "to 1e-5")),
    "04.4": (lambda: _nb04_loss, ("exact", "a function", "relative 1e-5")),
    "04.5": (lambda: _nb04_split, ("exact", "a function", "to 1e-5")),
    "04.6": (lambda: _nb04_gammas, ("exact", "a function", "relative 1e-6")),
    "04.8": (lambda: lambda X, C0, s: float(_nb04_gain(X, C0, s).mean()), ("exact", "a function", "to 1e-5")),
    "04.7": (lambda: "b", ("exact", "a choice")),
    "04.9": (nb04.quiz_n_params, ("exact", "exact: an integer")),
    "04.10": (nb04.quiz_loss, ROUNDED),
    "04.11": (lambda: "d", ("exact", "a choice")),
    "05.1": (lambda: _codes, ("exact", "a function", "exact: 0/1 entries")),
    "05.2": (lambda: (nb05.nearest_code_pairs(binary_codes(10)), nb05.nearest_code_pairs(np.eye(10))),
             ("exact", "exact: integers")),
    "05.3": (lambda: _scalar_layer, ("exact", "a function", "to 1e-12")),
    "05.4": (lambda: _leak, ("exact", "a function", "relative tolerance 1e-6")),
    "05.5": (lambda: ("c", -((1 - 0.25) ** 2 + 2 * 0.25 ** 2)), ("exact", "a choice", "4 significant digits")),
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
    assert len(CHECKED) == 52
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
