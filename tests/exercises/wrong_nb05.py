"""Plausible wrong answers to the checked exercises of notebook 05 (each a real student mistake)."""
import numpy as np

from kmt_ref import binary_codes, lloyd


def _msb_first(k):  # the bits written most significant first, as one reads a binary number
    return binary_codes(k)[::-1]


def _one_indexed(k):  # column j holds the bits of j + 1 (the follow-up counts centers from 1)
    m = max(1, (k - 1).bit_length())
    return ((np.arange(1, k + 1)[None, :] >> np.arange(m)[:, None]) & 1).astype(float)


def _floor_log2(k):  # floor instead of ceil: too few rows for k that is no power of two
    m = max(1, int(np.floor(np.log2(k))))
    return ((np.arange(k)[None, :] >> np.arange(m)[:, None]) & 1).astype(float)


def _one_hot(k):  # the paper's codes
    return np.eye(k)


WRONG = {
    "05.1": [_msb_first, _one_indexed, _floor_log2, _one_hot, "B_k"],
    "05.2": [(-1, -2),        # the margins themselves (what the notebook prints), not the counts
             (9, 45),         # consecutive numbers taken as one bit apart
             (30, 90),        # ordered pairs (j, l) and (l, j)
             (15, 0), (15,), "15, 45"],
    "05.3": [lloyd(np.array([[0.0, -2.0, 2.0, 10.0, 11.0]]), np.array([[-1.0, 10.0, 1.0]]), 1).centers[1],
             np.array([[-2.0, 10.5, 2.0]]), np.array([[-1.0, 7.0, 2.0]]), [[-2.0, 7.0]]],
    "05.4": [np.exp(10.0), 1e-4, 1.0, "big"],
    # self-checks
    "05.6": [5,        # 2^5 = 32 codes: one short
             33,       # the one-hot length
             5.04, 7],
    "05.7": [-2,       # a one-hot non-member
             3,        # the sign
             -1, -9],
    "05.8": ["a", "c", "d", "e^-10"],
}
