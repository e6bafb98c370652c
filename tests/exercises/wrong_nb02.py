"""Plausible wrong answers for notebook 02's checked exercises (each a real student mistake)."""
import numpy as np

from kmt_ref.data import toy_data
from kmt_ref.exercises.nb02 import critical_beta
from kmt_ref.trace import nearest_center

_X, _C0 = toy_data()
_n = _X.shape[1]


def _requ_ffn(units):
    """A d_emb = 8 FFN writing sum of ReQU(c_m) (units=2: right) or ReQU(sum c_m) (units=1: a square of the sum)."""
    W1 = np.zeros((units, 8))
    W2 = np.zeros((8, units))
    if units == 2:
        W1[0, 0] = W1[1, 1] = 1.0
    else:
        W1[0, :2] = 1.0
    W2[2, :] = 1.0
    return W1, W2


def _ffn_writing_to_one():
    W1, W2 = _requ_ffn(2)
    W2 = np.zeros((8, 2))
    W2[3, :] = 1.0  # the `one` row instead of `norm`
    return W1, W2


_W1, _W2 = _requ_ffn(2)
_W1_full = np.zeros((4, 8))
_W1_full[:2, :2], _W1_full[2:, :2] = np.eye(2), -np.eye(2)
_W2_full = np.zeros((8, 4))
_W2_full[2] = 1.0

WRONG = {
    # "dropping a norm changes nothing"; the changes at C0 instead of the converged centers; half of the set
    "02.1": [[], np.flatnonzero(np.argmax(2 * _C0.T @ _X, axis=0) != nearest_center(_X, _C0)[0]),
             [4, 8, 10, 11], list(range(_n))],
    # the notebook's 2d-unit FFN; the square of the sum; the right units writing into the wrong row; W1 alone
    "02.3": [(_W1_full, _W2_full), _requ_ffn(1), _ffn_writing_to_one(), _W1],
    # "keeps its center" (the a = 1/2 answer); the a = 1 tie (points and own token); the zero vector
    "02.4": [np.array([3.0, 3.0]), (_X.sum(axis=1) + 3.0) / (_n + 1), np.zeros(2), [0.5, 0.5]],
    # the flawed old premise (beta = 10 merges); the "merge at beta <= 5"; a factor-of-2 grid answer;
    # the critical beta of exercise 02.6
    "02.5": [10.0, 5.0, 8.0, 7.0, critical_beta()],
    # without the 2; the (n - 1) covariance; the smallest eigenvalue; a reading off the plot
    "02.6": [2 * critical_beta(), critical_beta() * (_n - 1) / _n,
             1 / (2 * np.linalg.eigvalsh(np.cov(_X, bias=True))[0]), 3.5],
    "02.7": [
        # Lloyd's mean without normalizing anything
        lambda X, C: np.stack([X[:, np.argmax(C.T @ X, axis=0) == j].mean(axis=1)
                               if np.any(np.argmax(C.T @ X, axis=0) == j) else C[:, j]
                               for j in range(C.shape[1])], axis=1),
        # forgets to normalize the points first (the lengths weigh the sum)
        lambda X, C: _normalized_sums(X, C / np.linalg.norm(C, axis=0)),
        # NaN-free but keeps an empty cluster's center unnormalized
        lambda X, C: _step(X, C, keep_unit=False),
        # the function is not called: the centers themselves
        np.eye(2),
    ],
    # self-checks
    "02.9": [-0.8,     # -||x - c||^2, the Euclidean score
             1.2,      # 2 x.c, the norm term left out
             -0.4,     # x.c - ||c||^2: the factor 2 left out
             1.0, "zero point two"],
    "02.10": [(12, 10),    # transposed
              (5, 12),     # one ReQU unit per coordinate
              (10, 9),     # d + k columns: the norm, one and flag rows forgotten
              (10, 10), (10,), (10.5, 12)],
    "02.11": [1 / 82,      # the far center's responsibility
              0.9,         # distances instead of squared distances
              1.0,         # hardmax
              0.5],        # beta = 0
}
def _normalized_sums(X, C):
    lab = np.argmax(C.T @ (X / np.linalg.norm(X, axis=0)), axis=0)
    out = C.copy()
    for j in range(C.shape[1]):
        if np.any(lab == j):
            s = X[:, lab == j].sum(axis=1)
            out[:, j] = s / np.linalg.norm(s) if np.linalg.norm(s) > 0 else 0.0
    return out


def _step(X, C, keep_unit=True):
    U = X / np.linalg.norm(X, axis=0)
    Cu = C / np.linalg.norm(C, axis=0)
    lab = np.argmax(Cu.T @ U, axis=0)
    out = (Cu if keep_unit else C).copy()
    for j in range(C.shape[1]):
        if np.any(lab == j):
            m = U[:, lab == j].mean(axis=1)
            nm = np.linalg.norm(m)
            out[:, j] = m / nm if nm > 0 else 0.0
    return out
