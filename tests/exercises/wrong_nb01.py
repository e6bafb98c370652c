"""Plausible wrong answers to the checked exercises of notebook 01 (each a real student mistake)."""
import numpy as np

from kmt_ref import assign, kmeans_transformer, lloyd
from kmt_ref.algorithms.lloyd import lloyd_step


def _onehot(labels, k):
    return np.eye(k)[:, labels]  # (k, n)


def _tokens_without_flag(X, C):  # the paper's layout [X; Y], [C; I_k]: forgets the project's flag row
    C1, labels = lloyd_step(X, C)
    return np.vstack([X, _onehot(labels, C.shape[1])]), np.vstack([C1, np.eye(C.shape[1])])


def _tokens_not_updated(X, C):  # the input tokens: forgets what the layer does
    k, n = C.shape[1], X.shape[1]
    return (np.vstack([X, np.zeros((k, n)), np.zeros((1, n))]),
            np.vstack([C, np.eye(k), np.ones((1, k))]))


def _tokens_flag_everywhere(X, C):  # flags the points too
    C1, labels = lloyd_step(X, C)
    k, n = C.shape[1], X.shape[1]
    return (np.vstack([X, _onehot(labels, k), np.ones((1, n))]),
            np.vstack([C1, np.eye(k), np.ones((1, k))]))


def _lloyd_means(X, C, *gamma):  # the false premise of the old 01.2 and 01.5: "still Lloyd's means"
    return lloyd_step(X, C)[0]


def _flagless_without_plus_one(X, C):  # counts the own token in the sum but not in the count
    C1, labels = lloyd_step(X, C)
    counts = np.bincount(labels, minlength=C.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        return (C1 * counts + C) / counts


def _flagless_half_half(X, C):  # averages the member mean and the old center
    return (lloyd_step(X, C)[0] + C) / 2


def _soft_y(X, C, gamma, axis=0):
    _, D = assign(X, C)  # (k, n)
    W = np.exp(-gamma * (D - D.min(axis=axis, keepdims=True)))
    return W / W.sum(axis=axis, keepdims=True)


def _soft_means_wrong_axis(X, C, gamma):  # normalizes each center's weights over the points
    Y = _soft_y(X, C, gamma, axis=1)
    return (X @ Y.T) / Y.sum(axis=1)


def _soft_means_unnormalized(X, C, gamma):  # forgets block 3's normalization by sum_i y_ij
    return (X @ _soft_y(X, C, gamma).T) / X.shape[1]


def _differ(X, C0, T, g):
    return not np.array_equal(kmeans_transformer(X, C0, T, gamma=g).labels, lloyd(X, C0, T).labels)


def _bound_bisection(X, C0, T, lo, hi):  # the sufficient bound for exactness, not the boundary
    gaps = [np.diff(np.sort(assign(X, C)[1], axis=0)[:2], axis=0).min() for C in lloyd(X, C0, T).centers[:T]]
    return 1075 * np.log(2) / min(gaps)


def _decade_bisection(X, C0, T, lo, hi):
    return max(g for g in 10.0 ** np.arange(np.log10(lo), np.log10(hi) + 1) if _differ(X, C0, T, g))


def _coarse_bisection(X, C0, T, lo, hi):
    while hi / lo > 2:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if _differ(X, C0, T, mid) else (lo, mid)
    return lo


def _block2_weights(X, gamma, axis=0):
    _, D = assign(X, X)  # (n, n): keys down the rows, queries along the columns
    W = np.exp(-gamma * (D - D.min(axis=axis, keepdims=True)))
    return W / W.sum(axis=axis, keepdims=True)


WRONG = {
    "01.1": [_tokens_without_flag, _tokens_not_updated, _tokens_flag_everywhere, lambda X, C: X],
    "01.2": [([0.5, 0.5], [-0.5, -0.5], [[0.0, 2.0]])[:2],       # the centers left out
             ([1.0, 0.0], [0.0, -2.0], [[0.5, 2.0]]),               # Lloyd's tie rule throughout
             ([0.5, 0.5], [0.0, 0.0], [[0.0, 2.0]]),                # the tied point scored like a member
             ([0.5, 0.5], [-0.5, -0.5], [[0.5, 2.0]]),              # right y and scores, Lloyd's centers
             ([0.5, 0.5], [-0.5, -0.5], [[1 / 3, 5 / 3]]),          # the middle point half in each mean
             ([0.5, 0.5], [-0.5, -0.5], [0.0, 2.0]),                # centers of shape (k,) instead of (d, k)
             ([0.5, 0.5], [-0.25, -0.25], [[0.0, 2.0]]),            # -||e_j - y|| / 2 instead of -||e_j - y||^2
             [[0.0, 2.0]],                                          # "nothing happens": only the centers
             "[[0, 2]]"],
    "01.3": [((0.5, 0.25), "b"),         # an exact sum: (c + mu) - c == mu
             ((0.1, 0.2), "a"),           # duplicates with different codes
             ((0.1, 0.2), "c"),           # the averaging hardmax in block 2
             ((0.1, 0.2), "d"),           # W != I taken for a wrong output
             (0.1, 0.2),                  # the pair without the letter
             ((0.1, 0.2), "b", "c"),
             "b"],
    "01.4": [_lloyd_means, _flagless_without_plus_one, _flagless_half_half],
    "01.5": [_lloyd_means, _soft_means_wrong_axis, _soft_means_unnormalized],
    "01.6": [lambda X, Y, g: -Y,                                  # block 2 at gamma = inf
             lambda X, Y, g: Y @ _block2_weights(X, g),          # the sign of V2 forgotten
             lambda X, Y, g: -Y @ _block2_weights(X, g, axis=1),  # normalized over the queries
             lambda X, Y, g: -_block2_weights(X, g)],            # the weights, not what they carry
    "01.7": [_bound_bisection,            # 1075 ln 2 / (smallest gap over Lloyd's steps)
             _decade_bisection,           # a decade grid: the last power of 10 where the labels differ
             _coarse_bisection,           # a bracket only a factor 2 wide
             lambda X, C0, T, lo, hi: (lo, hi),  # the bracket instead of one number
             lambda X, C0, T, lo, hi: 599.7,     # the toy example's gamma*
             lambda X, C0, T, lo, hi: hi],
    "01.8": [lambda X, C, g: X.shape[1],  # every column, as at gamma = inf
             lambda X, C, g: int(np.sum(np.sort(assign(X, C)[1], axis=0)[1] - assign(X, C)[1].min(axis=0)
                                        > 745.0 / g)),  # 745 for 1075 ln 2: exp(-745.07) is not 0
             lambda X, C, g: int(np.sum(np.sort(assign(X, C)[1], axis=0)[1] - assign(X, C)[1].min(axis=0)
                                        > 36.7 / g)),  # the nearest weight rounds to 1: not the others to 0
             lambda X, C, g: int(np.sum(np.sort(assign(X, C)[1], axis=0)[1] - assign(X, C)[1].min(axis=0)
                                        > 1 / g)),     # "gap above the temperature"
             lambda X, C, g: int(np.sum(np.diff(np.sort(np.sqrt(assign(X, C)[1]), axis=0)[:2], axis=0)[0]
                                        > 745.13 / g)),  # distances instead of squared distances
             lambda X, C, g: int(lloyd(X, C, 1).labels.size)],
    # self-checks
    "01.9": [9,        # d + k (the authors' tokens), without the flag row
             11, 10.5, "10 rows"],
    "01.10": ["a", "c", "d", "e", 2, "b and c"],
    "01.11": ["a", "b", "d", "", ["c"]],
}
