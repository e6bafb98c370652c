"""Plausible wrong answers to the checked exercises of notebook 03 (each a real student mistake)."""
import numpy as np

from kmt_ref.algorithms.sparse_update import separating_penalties
from kmt_ref.exercises import nb03

_X, _C0, _ = nb03._data()
_GAMMA1_CHOSEN = separating_penalties(_X, _C0, nb03.GAMMA2_LEAK)[0]
_D2 = (_GAMMA1_CHOSEN - 2.0) / nb03.GAMMA2_LEAK / (1 + 2.0**-20)  # separating_penalties: gamma1 = gamma2 D^2 (1 + 2^-20) + 2
_G1 = nb03.leak_threshold()
_G1_LAYERS = nb03.leak_thresholds()
_WIN = nb03.quantile_windows()
_GR = nb03.robust_outlier_gamma()
_P = nb03._outlier_probabilities()

WRONG = {
    "03.1": [
        [1.0, 0.0, -1.0, -2.0],           # a score at tau, but tau = max - 1: normmax is one-hot, as sparsemax
        [0.0, 0.25, 0.5, 0.75, 1.0],      # the golden vector of §1: both keep the top three
        [1.0, 1.0, 0.0, 0.0],             # a tie at the maximum: both keep the two maxima
        [0.3, 0.3, 0.1],                  # tau = 0.1 in real numbers, but 0.3 + 0.3 + 0.1 rounds: nobody sits at tau
        0.5,                              # a number, not a vector
    ],
    "03.2": [
        0.2,                              # far above: nothing leaks at 0.2
        0.007108,                         # the threshold at the notebook's gamma2 = 3, not the exercise's 0.5
        _G1_LAYERS[0],                    # layer 1 only: a later layer sets the threshold
        _G1_LAYERS[:2].max(),             # the first two layers only
        _G1_LAYERS[-1],                   # the last layer only
        _GAMMA1_CHOSEN,                   # separating_penalties' choice, a sufficient value
        (nb03.GAMMA2_LEAK * _D2 + 1) / 2,  # the inequality's bound, also only sufficient
        2 * _G1,                          # forgot that ||e_j - y_i||^2 = 2 for a non-member
        0.5 * _G1,                        # something leaks there, but also above
    ],
    "03.4": [
        nb03._drop_farthest_windows(),    # "the quantile rule drops the farthest member" (true only for m <= 20)
        _WIN[:, ::-1],                    # (hi, lo) instead of (lo, hi)
        np.array([[0.0130, 0.1495]] * 3),  # the window of §8b's toy cluster u, not of the data
        _WIN[0],                          # one cluster's window, not three
        np.vstack([_WIN[:2], _WIN[2] * 1.5]),  # one row off
    ],
    "03.5": [
        0.01,                             # the authors' default: the outliers keep weights 0.015-0.023
        _GR / np.sqrt(2),                 # left out the sqrt(d) of the robust score
        0.01925178219958282,              # the farthest outlier's gamma: the nearest one is the last to go
        4.0,                              # §4's gamma: enough, but not the smallest
    ],
    "03.7": [
        float(np.sum(_P)),                # summed the per-center probabilities instead of 1 - prod(1 - p)
        float(1 - np.prod(1 - nb03._outlier_probabilities(use_mean=False))),  # scores around c_j, not mu_j
        0.00517,                          # a Monte Carlo estimate (200,000 draws, seed 4), not the exact value
        float(_P[0]),                     # center 0 alone
        3.127942349578916e-12,            # gamma = 20 instead of 2
        list(_P),                         # the three per-center probabilities, not one number
    ],
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
