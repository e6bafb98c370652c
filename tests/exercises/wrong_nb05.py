"""Plausible wrong answers to the checked exercises of notebook 05 (each a real student mistake)."""
import numpy as np

from kmt_ref import binary_transformer, kmeans_transformer, lloyd


def _bits(k, m, offset=0):  # (m, k): row r holds bit r of j + offset
    return ((np.arange(offset, k + offset)[None, :] >> np.arange(m)[:, None]) & 1).astype(float)


def _msb_first(k):  # the bits written most significant first, as one reads a binary number
    return _bits(k, max(1, (k - 1).bit_length()))[::-1]


def _one_indexed(k):  # column j holds the bits of j + 1 (the follow-up counts centers from 1)
    return _bits(k, max(1, (k - 1).bit_length()), offset=1)


def _floor_log2(k):  # floor instead of ceil: too few rows for k that is no power of two
    return _bits(k, max(1, int(np.floor(np.log2(k)))))


def _floor_log2_plus_one(k):  # floor(log2 k) + 1: one row too many at every power of two
    return _bits(k, int(np.floor(np.log2(k))) + 1)


def _no_row_at_one(k):  # the follow-up's m = 0 at k = 1, where kmt_ref keeps one row
    return _bits(k, (k - 1).bit_length())


def _one_hot(k):  # the paper's codes
    return np.eye(k)


def _transposed(k):  # one row per center
    return _bits(k, max(1, (k - 1).bit_length())).T


def _scalar_lowest(X, C0):  # a tied point takes the lowest tied code (np.argmin), not the mean of the tied codes
    k = C0.shape[1]
    D = ((X[:, :, None] - C0[:, None, :]) ** 2).sum(axis=0)  # (n, k)
    y = np.argmin(D, axis=1).astype(float)
    W = -(np.arange(k)[:, None] - y[None, :]) ** 2  # (k, n)
    W = W == W.max(axis=1, keepdims=True)
    return (X @ W.T) / W.sum(axis=1)


def _scalar_members_only(X, C0):  # block 3 as "the points whose y is exactly j": an empty cluster keeps c_j
    k = C0.shape[1]
    D = ((X[:, :, None] - C0[:, None, :]) ** 2).sum(axis=0)
    tied = D == D.min(axis=1, keepdims=True)
    y = (tied * np.arange(k)).sum(axis=1) / tied.sum(axis=1)
    out = C0.copy()
    for j in range(k):
        if np.any(y == j):
            out[:, j] = X[:, y == j].mean(axis=1)
    return out


def _lloyd_centers(X, C0):  # Lloyd's step: ties to the lowest index, empty clusters kept
    return lloyd(X, C0, 1).centers[1]


def _leak(binary, onehot):
    def ratio(X, C0, gamma):
        ref = lloyd(X, C0, 1).centers[1]
        return np.max(np.abs(binary(X, C0, gamma) - ref)) / np.max(np.abs(onehot(X, C0, gamma) - ref))
    return ratio


def _binary(X, C0, gamma):
    return binary_transformer(X, C0, 1, gamma_update=gamma, empty="nearest_code").centers[1]


def _binary_keep(X, C0, gamma):  # kmt_ref's default, the shifted codes
    return binary_transformer(X, C0, 1, gamma_update=gamma).centers[1]


def _flagged(X, C0, gamma):  # the one-hot circuit with the flag row
    return kmeans_transformer(X, C0, 1, gamma_update=gamma).centers[1]


def _plain(X, C0, gamma):
    from kmt_ref.viz.binary_figures import plain_onehot_transformer
    return plain_onehot_transformer(X, C0, 1, gamma_update=gamma).centers[1]


WRONG = {
    "05.1": [_msb_first, _one_indexed, _floor_log2, _floor_log2_plus_one, _no_row_at_one, _one_hot, _transposed,
             lambda k: np.zeros((3, 6)),   # the notebook's B_6 shape for every k
             "B_k"],
    "05.2": [(-1, -2),        # the margins themselves (what the notebook prints), not the counts
             (9, 45),         # consecutive numbers taken as one bit apart
             (30, 90),        # ordered pairs (j, l) and (l, j)
             (15, 0), (15,), "15, 45"],
    "05.3": [_scalar_lowest, _scalar_members_only, _lloyd_centers,
             lambda X, C0: np.array([[-2.0, 7.0, 2.0]]),   # the notebook's example, for every input
             np.array([[-2.0, 7.0, 2.0]])],                  # a value, not a function
    "05.4": [_leak(_plain, _binary),        # one-hot / binary
             _leak(_binary_keep, _plain),   # the shifted binary codes
             _leak(_binary, _flagged),      # one-hot with the flag
             lambda X, C0, gamma: np.exp(gamma),
             10071.4, "big"],
    "05.5": [("b", -0.6875),   # the own token against the points (a condition on m delta^2)
             ("c", -0.1875),   # the own token's score, -m delta^2
             ("c", -1.0),      # a point's score: the center token carries no shift
             ("c", -0.5625),   # the equal bits' delta^2 forgotten
             ("a", -1.6875), "c"],
    # self-checks
    "05.6": [5,        # 2^5 = 32 codes: one short
             33,       # the one-hot length
             5.04, 7],
    "05.7": [-2,       # a one-hot non-member
             3,        # the sign
             -1, -9],
    "05.8": ["a", "c", "d", "e^-10"],
}
