"""Plausible wrong answers to the checked exercises of notebook 03 (each a real student mistake).

The code exercises ask for functions: their wrong answers are functions that make the mistake (written in
NumPy here), return the notebook's numbers whatever the data, or call what the exercise forbids."""
import importlib.util
from pathlib import Path

import numpy as np

from kmt_ref.algorithms.kmedoids import randomized_kmedoids
from kmt_ref.algorithms.sparse_update import separating_penalties
from kmt_ref.core.normalizers import normmax, softmax, sparsemax
from kmt_ref.exercises import nb03

_spec = importlib.util.spec_from_file_location("right_nb03", Path(__file__).with_name("right_nb03.py"))
_right = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_right)

_X, _C0, _OUT = nb03._data()


def _pad(head, fill):
    return lambda m: np.concatenate([head, np.full(m - len(head), fill)])


def _search(m):
    """A search through sparsemax and normmax (forbidden) instead of a construction."""
    for top in range(1, m + 1):
        z = np.concatenate([np.ones(top), np.full(m - top, (top - 1) / top)])
        if not np.array_equal(sparsemax(z) > 0, normmax(z, alpha=np.inf) > 0):
            return z
    return np.zeros(m)


def _gamma1_factor(factor, layers=None):
    """gamma1* times ``factor``, or read on the first ``layers`` layers only."""
    return lambda X, C0, gamma2, T: factor * _right.gamma1_star(X, C0, gamma2, T if layers is None else layers)


def _windows_keep_all_but_farthest(X, C0, q):
    labels, D = _right._assign(X, C0)
    rows = []
    for j in range(C0.shape[1]):
        d = np.sort(D[labels == j, j])
        f = lambda s: s * d[s - 1] - d[:s].sum()  # noqa: E731
        rows.append([1 / f(d.size), 1 / f(d.size - 1)])
    return np.array(rows)


def _first_outlier_gamma(X, C0, is_out):
    """The gamma that drops the first outlier to go, not the last."""
    labels, D = _right._assign(X, C0)
    return min(np.sqrt(X.shape[0]) / np.sum(np.maximum(D[o, labels[o]] - D[labels == labels[o], labels[o]], 0))
               for o in np.flatnonzero(is_out))


def _medoid(how):
    def p_outlier(X, C0, is_out, gamma):
        labels, D = _right._assign(X, C0)
        p = []
        for j in range(C0.shape[1]):
            members = labels == j
            if not members.any():
                continue
            ref = X[:, members].mean(axis=1, keepdims=True) if how != "around c" else C0[:, [j]]
            w = softmax(-gamma * np.sum((X[:, members] - ref) ** 2, axis=0))
            p.append(w[is_out[members]].sum())
        p = np.array(p)
        if how == "sum":
            return float(p.sum())
        if how == "first":
            return float(p[0])
        return float(1 - np.prod(1 - p))
    return p_outlier


def _kmedoids_estimate(X, C0, is_out, gamma):
    """An estimate from the library's sampler (forbidden), caught if it raises."""
    try:
        hits = [np.isin(randomized_kmedoids(X, C0, 1, gamma, np.random.default_rng(s)).info["medoids"][0],
                        np.flatnonzero(is_out)).any() for s in range(100)]
        return float(np.mean(hits))
    except Exception:  # noqa: BLE001
        return 0.0


WRONG = {
    "03.1": [
        lambda m: np.array([1.0, 1.0, 0.5]),  # the notebook's vector, whatever m
        _pad([1.0, 0.0, -1.0], -2.0),         # a score at tau, but tau = max - 1: normmax is one-hot, as sparsemax
        lambda m: np.linspace(0.0, 1.0, m),   # evenly spaced, as §1's golden vector: no score sits at tau
        _pad([1.0, 1.0], 0.0),                # a tie at the maximum: tau = 1/2, both keep the two maxima
        _pad([0.3, 0.3, 0.1], -3.0),          # tau = 0.1 in real numbers, but 0.3 + 0.3 + 0.1 rounds: nobody sits at tau
        _search,                              # searches with sparsemax and normmax (forbidden)
        np.array([1.0, 1.0, 0.5]),            # a vector, not a function
    ],
    "03.2": [
        lambda X, C0, gamma2, T: 0.01593517,  # the notebook's gamma1*, whatever the data
        _gamma1_factor(1.0, layers=1),        # layer 1 only: a later layer sets the threshold
        _gamma1_factor(2.0),                  # forgot that ||e_j - y_i||^2 = 2 for a non-member
        _gamma1_factor(0.5),                  # something leaks there, but also above
        lambda X, C0, gamma2, T: separating_penalties(X, C0, gamma2)[0],  # a sufficient value, not the threshold
        lambda X, C0, gamma2, T: float(nb03._leak_thresholds(X, C0, T, gamma2).max()),  # the checker's own function
        0.01593517,                           # a number, not a function
    ],
    "03.4": [
        _windows_keep_all_but_farthest,       # "the quantile rule drops the farthest member" (true only for n_j <= 20)
        lambda X, C0, q: _right.quantile_windows(X, C0, q)[:, ::-1],  # (hi, lo) instead of (lo, hi)
        lambda X, C0, q: _right.quantile_windows(X, C0, 0.95),        # the authors' q whatever q is
        lambda X, C0, q: nb03._quantile_windows(_X, _C0, 0.95),       # the notebook's windows
        lambda X, C0, q: _right.quantile_windows(X, C0, q)[:1],       # one cluster's window, not k
    ],
    "03.5": [
        lambda X, C0, is_out: 0.01,           # the authors' default: the outliers keep weights
        lambda X, C0, is_out: 0.03863783,     # the notebook's gamma, whatever the data
        lambda X, C0, is_out: _right.outlier_gamma(X, C0, is_out) / np.sqrt(X.shape[0]),  # left out the sqrt(d)
        lambda X, C0, is_out: _right.outlier_gamma(X, C0, is_out) * np.sqrt(2 / X.shape[0]),  # sqrt(2) for any d
        _first_outlier_gamma,                 # the first outlier to go, not the last
        lambda X, C0, is_out: 4.0,            # §4's gamma: enough, but not the smallest
    ],
    "03.7": [
        _medoid("sum"),                       # summed the per-center probabilities instead of 1 - prod(1 - p)
        _medoid("around c"),                  # scores around c_j, not mu_j
        _medoid("first"),                     # center 0 alone
        lambda X, C0, is_out, gamma: 0.00534,  # the notebook's probability, whatever the data
        lambda X, C0, is_out, gamma: 1.03 * _medoid("exact")(X, C0, is_out, gamma),  # an estimate, 3 % off
        _kmedoids_estimate,                   # draws through randomized_kmedoids (forbidden), even caught
        0.00534,                              # a number, not a function
    ],
    # the checked parts of the proofs and the explore
    "03.3": [1.0,                             # max z - 1: sufficient, not necessary
             (4.7 - 1) / 3,                   # the term s = 3 only
             1.5,                             # the second score
             1.2],                            # the third score
    "03.6": [(np.exp(-1.5), "b"),             # the CDF's sign wrong
             (2 / 3, "b"),                    # P[argmax = 2], not P[max <= 0]
             (np.exp(-3.0), "c"),             # "Gumbel noise is bounded"
             (np.exp(-3.0), "d"),             # "block 3 sees the members only"
             np.exp(-3.0)],                   # the probability alone, not the pair
    "03.8": [0,                               # "it trims the outliers"
             20,                              # "it trims none of them"
             5,                               # the trimmed count, not the kept outliers
             14],                             # off by one
    # self-checks
    "03.9": [[0.5, 0.5, 0.0],                  # alpha = inf normmax
             [0.6285, 0.3812, 0.0],            # softmax-like: not sparse
             [1.0, 0.0, 0.0],                  # "only the maximum"
             [0.625, 0.375, 0.0],              # tau = 3/8, a mistaken threshold
             [0.75, 0.25]],                    # the zero left out
    "03.10": [[0.7, 0.3, 0.0],                 # the sqrt(d) left out
              [0.5, 0.5, 0.0],                 # uniform on the kept members: the trimmed rule
              [1 / 3, 1 / 3, 1 / 3],           # Lloyd's mean
              [0.6414, 0.3586]],               # the zero left out
    "03.11": ["b", "c", "d", "member"],
}
