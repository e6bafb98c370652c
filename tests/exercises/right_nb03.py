"""Right answers to notebook 03's code exercises, written here in NumPy, independently of the checkers'
references (kmt_ref/exercises/nb03.py) and of the functions the exercises forbid; used by test_nb03.py and
test_precision.py. Each rebuilds what it needs: Lloyd's assignment, the trimmed rule's trajectory, the
threshold tau."""
import math

import numpy as np


def _assign(X, C):
    D = np.sum((X[:, :, None] - C[:, None, :]) ** 2, axis=0)  # (n, k)
    return np.argmin(D, axis=1), D  # ties: the lowest index


def _tau(z):
    """max_s (z_1:s - 1)/s, the simplex threshold of a 1-D score vector."""
    zs = np.sort(z)[::-1]
    return float(np.max((np.cumsum(zs) - 1.0) / np.arange(1, zs.size + 1)))


# ----------------------------------------------------------------------------- 03.1
def disagreeing_scores(m):
    """Four equal top scores put tau at (4 - 1)/4 below them, where a fifth score sits; the rest far below."""
    if m < 5:
        return np.concatenate([[3.0, 3.0, 2.5], np.full(m - 3, -7.0)])
    return np.concatenate([[2.0, 2.0, 2.0, 2.0, 1.75], np.full(m - 5, -4.0)])


# ----------------------------------------------------------------------------- 03.2
def _normmax_inf_count(z_desc):
    """How many of the sorted scores alpha = inf normmax keeps: the largest s attaining max_s (z_1:s - 1)/s,
    or 1 when the top score is 1 or more above the second."""
    if z_desc.size == 1 or z_desc[0] - z_desc[1] >= 1.0:
        return 1
    terms = (np.cumsum(z_desc) - 1.0) / np.arange(1, z_desc.size + 1)
    return int(np.flatnonzero(terms == terms.max())[-1]) + 1


def gamma1_star(X, C0, gamma2, T):
    """Closed form on the trimmed rule's trajectory, which this function runs itself."""
    C = np.array(C0, dtype=float)
    best = -np.inf
    for _ in range(T):
        labels, D = _assign(X, C)
        C_new = C.copy()
        for j in range(C.shape[1]):
            own = labels == j
            if not own.any():
                continue
            z = -gamma2 * D[:, j]
            if (~own).any():
                best = max(best, (z[~own].max() - _tau(z[own])) / 2.0)
            members = np.flatnonzero(own)
            order = members[np.argsort(-z[members], kind="stable")]
            C_new[:, j] = X[:, order[:_normmax_inf_count(z[order])]].mean(axis=1)
        C = C_new
    return float(best)


# ----------------------------------------------------------------------------- 03.4
def quantile_windows(X, C0, q):
    labels, D = _assign(X, C0)
    rows = []
    for j in range(C0.shape[1]):
        d = np.sort(D[labels == j, j])
        keep = math.ceil(round(q * (d.size - 1), 9))  # the members strictly below the linear q-quantile
        f = lambda s: s * d[s - 1] - d[:s].sum()  # noqa: E731
        rows.append([1.0 / f(keep + 1), 1.0 / f(keep)])
    return np.array(rows)


# ----------------------------------------------------------------------------- 03.5
def outlier_gamma(X, C0, is_out):
    labels, D = _assign(X, C0)
    out = 0.0
    for o in np.flatnonzero(is_out):
        d = D[labels == labels[o], labels[o]]
        out = max(out, np.sqrt(X.shape[0]) / np.sum(np.maximum(D[o, labels[o]] - d, 0.0)))
    return float(out)


# ----------------------------------------------------------------------------- 03.7
def p_outlier(X, C0, is_out, gamma):
    labels, _ = _assign(X, C0)
    p_none = 1.0
    for j in range(C0.shape[1]):
        members = labels == j
        if not members.any():
            continue
        sq = np.sum((X[:, members] - X[:, members].mean(axis=1, keepdims=True)) ** 2, axis=0)
        w = np.exp(-gamma * (sq - sq.min()))
        p_none *= 1.0 - w[is_out[members]].sum() / w.sum()
    return 1.0 - p_none
