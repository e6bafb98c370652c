"""Plausible wrong answers for notebook 02's checked exercises (each a real student mistake), and in
RIGHT a right answer to each function exercise, written in NumPy without the functions the
exercise forbids (test_nb02.py and test_precision.py check that each passes)."""
import numpy as np

from kmt_ref.data import toy_data
from kmt_ref.exercises.nb02 import EMPTY_CENTER, _offset_centers

_X, _C0 = toy_data()
_n = _X.shape[1]


# ----------------------------------------------------------------------------- right answers, in NumPy
def _sq_dist(X, C):
    return ((X[:, None, :] - C[:, :, None]) ** 2).sum(axis=0)  # (k, n)


def moved_points(X, C):  # 02.1: argmax of 2 x.c - ||c||^2 (the nearest center) against argmax of 2 x.c
    return np.flatnonzero(np.argmin(_sq_dist(X, C), axis=0) != np.argmax(2 * C.T @ X, axis=0))


def small_ffn(emb):  # 02.3: one ReQU unit per coordinate, summed into the norm row
    W1 = np.zeros((emb.d, emb.d_emb))
    W1[np.arange(emb.d), np.arange(emb.d_emb)[emb.rows("x")]] = 1.0
    W2 = np.zeros((emb.d_emb, emb.d))
    W2[np.arange(emb.d_emb)[emb.rows("norm")][0]] = 1.0
    return W1, W2


def offset_centers(X, C, a, *, own_tie=True):  # 02.4: block 3's averaging hardmax over its scores
    n, k = X.shape[1], C.shape[1]
    labels = np.argmin(_sq_dist(X, C), axis=0)
    out = np.empty_like(C)
    for j in range(k):
        keys = [X[:, i] for i in range(n) if labels[i] == j]  # members score 1, other points 0
        top = 1.0 if keys else 0.0
        if not keys:
            keys = [X[:, i] for i in range(n)]
        own = 1.0 - a
        if own > top or (own == top and own_tie):
            keys = [C[:, j]] + (keys if own == top else [])
        out[:, j] = np.mean(keys, axis=0)
    return out


def _separation(X, C0, beta, n_steps=10):
    """The smallest center distance after n_steps soft k-means steps, written out."""
    C = C0.copy()
    for _ in range(n_steps):
        D = _sq_dist(X, C)
        R = np.exp(-beta * (D - D.min(axis=0)))
        R /= R.sum(axis=0)
        C = (X @ R.T) / R.sum(axis=1)
    k = C.shape[1]
    return min(np.linalg.norm(C[:, a] - C[:, b]) for a in range(k) for b in range(a + 1, k))


def beta_star(X, C0, threshold, lo, hi):  # 02.5
    while hi - lo > 1e-3:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _separation(X, C0, mid) >= threshold else (mid, hi)
    return 0.5 * (lo + hi)


def beta_c(X):  # 02.6: the largest singular value of the centered data gives s_max
    Xc = X - X.mean(axis=1, keepdims=True)
    return X.shape[1] / (2 * np.linalg.svd(Xc, compute_uv=False)[0] ** 2)


def _step(X, C, keep_unit=True):  # 02.7
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


RIGHT = {"02.1": moved_points, "02.3": small_ffn, "02.4": offset_centers, "02.5": beta_star, "02.6": beta_c,
         "02.7": _step}


# ----------------------------------------------------------------------------- wrong answers
def _normalized_sums(X, C):
    lab = np.argmax(C.T @ (X / np.linalg.norm(X, axis=0)), axis=0)
    out = C.copy()
    for j in range(C.shape[1]):
        if np.any(lab == j):
            s = X[:, lab == j].sum(axis=1)
            out[:, j] = s / np.linalg.norm(s) if np.linalg.norm(s) > 0 else 0.0
    return out


def _full_ffn(emb):  # Theorem 2.2's 2d units: more than the exercise allows
    W1, W2 = small_ffn(emb)
    return np.vstack([W1, -W1]), np.hstack([W2, W2])


def _square_of_sum(emb):  # one unit ReQU(sum_p c_p): the square of the sum, not the sum of squares
    W1, W2 = small_ffn(emb)
    return W1.sum(axis=0, keepdims=True), W2[:, :1]


def _into_one_row(emb):  # the right units writing into the `one` row
    W1, W2 = small_ffn(emb)
    return W1, np.roll(W2, 1, axis=0)


def _lloyd_keep(X, C, a):  # Lloyd's step with "keep", whatever the offset
    labels = np.argmin(_sq_dist(X, C), axis=0)
    return np.stack([X[:, labels == j].mean(axis=1) if np.any(labels == j) else C[:, j]
                     for j in range(C.shape[1])], axis=1)


def _empty_to_mean(X, C, a):  # an empty cluster always jumps to the data mean
    out = _lloyd_keep(X, C, a)
    labels = np.argmin(_sq_dist(X, C), axis=0)
    for j in range(C.shape[1]):
        if not np.any(labels == j):
            out[:, j] = X.mean(axis=1)
    return out


def _grid_beta(X, C0, threshold, lo, hi):  # a grid of 5 values, not a bisection to 0.01
    for beta in np.linspace(lo, hi, 5):
        if _separation(X, C0, beta) >= threshold:
            return beta
    return hi


def _fitted_ffn(emb):  # the d = 2, k = 3 answer, whatever emb
    W1 = np.zeros((2, 8))
    W1[0, 0] = W1[1, 1] = 1.0
    W2 = np.zeros((8, 2))
    W2[2] = 1.0
    return W1, W2


#: what the notebook's example gives at a = 1.5 (section 5's centers with the empty one moved to the data mean)
_NOTEBOOK_EMPTY = _offset_centers(_X, np.column_stack([_C0, EMPTY_CENTER]), 1.5)

WRONG = {
    "02.1": [
        lambda X, C: [],                                    # "dropping a norm changes nothing"
        lambda X, C: [4, 8, 10, 11, 16, 21, 22, 23],        # the notebook's example, fitted
        lambda X, C: np.setdiff1d(np.arange(X.shape[1]), moved_points(X, C)),  # the points that keep their label
        # the sign of the norm term flipped: 2 x.c + ||c||^2 against the nearest center
        lambda X, C: np.flatnonzero(np.argmin(_sq_dist(X, C), axis=0)
                                    != np.argmax(2 * C.T @ X + np.sum(C * C, axis=0)[:, None], axis=0)),
        [4, 8, 10, 11, 16, 21, 22, 23],                     # the indices, not a function
    ],
    # Theorem 2.2's 2d units; the square of the sum; the right units into the wrong row; fitted to d = 2, k = 3;
    # the weights, not a function
    "02.3": [_full_ffn, _square_of_sum, _into_one_row, _fitted_ffn, _fitted_ffn(None)],
    # the norm row dropped (and ||c||^2 without the residual); twice the score (and one ReQU unit per
    # coordinate); one unit per coordinate (and the square of the sum); the letter alone; the pair reversed
    "02.2": [("a", 7.78), ("b", 10.34), ("d", 6.56), "c", (11.78, "c")],
    # always "keep"; an empty center always jumps to the mean; the own token never ties; fitted; a value
    "02.4": [_lloyd_keep, _empty_to_mean, lambda X, C, a: offset_centers(X, C, a, own_tie=False),
             lambda X, C, a: _NOTEBOOK_EMPTY.copy(), np.array([0.4187, 0.4519])],
    # the notebook's beta*, fitted; beta = 10 (the flawed premise "beta = 10 merges"); a coarse grid; the
    # critical beta of 02.6 in place of the separation; a number instead of a function
    "02.5": [lambda X, C0, t, lo, hi: 7.5042, lambda X, C0, t, lo, hi: 10.0, _grid_beta,
             lambda X, C0, t, lo, hi: 1 / (2 * np.linalg.eigvalsh(np.cov(X, bias=True))[-1]), 7.5042],
    # without the 2; the (n - 1) covariance; the smallest eigenvalue; the trace; not centered; fitted; a value
    "02.6": [lambda X: 2 * beta_c(X), lambda X: beta_c(X) * (X.shape[1] - 1) / X.shape[1],
             lambda X: 1 / (2 * np.linalg.eigvalsh(np.cov(X, bias=True))[0]),
             lambda X: 1 / (2 * np.trace(np.cov(X, bias=True))),
             lambda X: 1 / (2 * np.linalg.eigvalsh(X @ X.T / X.shape[1])[-1]),
             lambda X: 3.460, 3.460],
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
    # the zero-vector policy; the keep policy; a direction that turns with the data; not a letter
    "02.8": ["a", "b", "c", "e"],
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
