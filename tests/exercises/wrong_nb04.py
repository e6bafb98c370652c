"""Plausible wrong answers to the checked exercises of notebook 04 (each a real student mistake).

The code exercises ask for functions; each wrong function below makes one mistake and is otherwise the
notebook's recipe. A number typed in place of the function (the notebook's values) is wrong too.
"""
import numpy as np

from kmt_ref import lloyd_weights
from kmt_ref.learning import batch_objective, lloyd_batch, run_model


def _ends(X, C0, log=True):  # (B, 8): Lloyd after 20 iterations from the 8 starts of 3 r .. 3 r + k - 1
    k = C0.shape[2]
    J = np.stack([lloyd_batch(X, X[:, :, k * r:k * (r + 1)], 20)[:, -1] for r in range(8)], axis=1)
    return np.log(J) if log else J


def _gaps_of_J(X, C0):  # the gap of the objective, not of its log
    J = _ends(X, C0, log=False)
    return J[:, 0] - J.min(axis=1)


def _gaps_self(X, C0):  # each start compared with itself
    ends = _ends(X, C0)
    return ends[:, 0] - ends[:, 0]


def _gaps_k3(X, C0):  # k = 3 hard-coded: the notebook's k
    ends = np.stack([np.log(lloyd_batch(X, X[:, :, 3 * r:3 * r + 3], 20)[:, -1]) for r in range(8)], axis=1)
    return ends[:, 0] - ends.min(axis=1)


def _share_stuck(X, C0):  # one number, the share of stuck tasks, in place of the gaps
    ends = _ends(X, C0)
    return float(np.mean(ends[:, 0] - ends.min(axis=1) > 1e-6))


def _soft(d, k, s, qk_power=1, v=1.0, bias=0.0):
    W, _ = lloyd_weights(d, k, "linear")
    p = {n: (s ** qk_power) * M if n[0] in "QK" else (v * M if n[0] == "V" else M) for n, M in W.items()}
    p.update({"b" + n: np.full(d + k, bias) for n in W})
    return p


def _soft_V_too(X, C0, s):  # V scaled by s too: the residual algebra breaks
    return np.log(run_model(_soft(X.shape[1], C0.shape[2], s, v=s), X, C0, 20)[0][:, -1])


def _soft_s_squared(X, C0, s):  # Q and K scaled by s^2
    return np.log(run_model(_soft(X.shape[1], C0.shape[2], s, qk_power=2), X, C0, 20)[0][:, -1])


def _soft_not_scaled(X, C0, s):  # s forgotten: Lloyd's result
    return np.log(lloyd_batch(X, C0, 20)[:, -1])


def _soft_J(X, C0, s):  # J, not log J
    return run_model(_soft(X.shape[1], C0.shape[2], s), X, C0, 20)[0][:, -1]


def _soft_biased(X, C0, s):  # biases of 0.1 left in place of zeros
    return np.log(run_model(_soft(X.shape[1], C0.shape[2], s, bias=0.1), X, C0, 20)[0][:, -1])


def _loss(X, C, lam, axis=1, per_point=False):
    D = ((X[:, :, None, :] - C[:, :, :, None]) ** 2).sum(axis=1)  # (B, k, n)
    E = np.exp(-lam * (D - D.min(axis=axis, keepdims=True)))
    L = (E / E.sum(axis=axis, keepdims=True) * D).sum(axis=(1, 2))
    return L / X.shape[2] if per_point else L


def _C1(X, C0, s):
    return run_model(_soft(X.shape[1], C0.shape[2], s), X, C0, 1)[1][1]


WRONG = {
    "04.1": [
        _gaps_of_J,
        _gaps_self,
        _gaps_k3,
        _share_stuck,
        [0.1381, 0.2030],                    # the notebook's mean gaps typed in, not a function
    ],
    # the bounds log(k)/lambda and n log(k)/lambda; the point's share of L_lambda and one point's largest
    # gap; the uniform mean and lambda times the largest gap; the soft minimum and u* in place of the gap; one number
    "04.2": [(0.2197, 6.931), (1.054, 0.02785), (0.7333, 27.85), (-0.06266, 12.78), 0.05385],
    "04.3": [
        _soft_V_too,
        _soft_s_squared,
        _soft_not_scaled,
        _soft_J,
        _soft_biased,
        [3.5356, 3.4956, 2.2053, 2.2805, 2.2792, 2.3077],   # the notebook's six means typed in
    ],
    "04.4": [
        lambda X, C0, s, lam: _loss(X, C0, lam),                                  # the layer never applied
        lambda X, C0, s, lam: batch_objective(X, _C1(X, C0, s)),                  # the hard objective J
        lambda X, C0, s, lam: _loss(X, _C1(X, C0, s), lam, axis=2),               # softmax over the points
        lambda X, C0, s, lam: _loss(X, _C1(X, C0, s), lam, per_point=True),       # mean over the points
        lambda X, C0, s, lam: _loss(X, _C1(X, C0, s), 10.0),                      # lam = 10 whatever lam is
        lambda X, C0, s, lam: np.log(_loss(X, _C1(X, C0, s), lam)),               # the log of the loss
        lambda X, C0, s, lam: _loss(X, run_model(_soft(X.shape[1], C0.shape[2], s), X, C0, 20)[1][-1], lam),
    ],
    "04.5": [],  # filled below: they reuse a right gain
    "04.6": [
        lambda p, d: np.sqrt([np.mean(np.diag(p["Q" + b].T @ p["K" + b])[:d]) for b in "12"]),  # s, not gamma
        lambda p, d: [np.mean(np.diag(p["Q" + b].T @ p["K" + b])[:d]) for b in "12"],           # s^2, undivided
        lambda p, d: [np.mean(np.diag(p["Q" + b].T @ p["K" + b])[:d]) / p["Q1"].shape[0] for b in "12"],  # / d_emb
        lambda p, d: [np.mean(np.diag(p["Q" + b].T @ p["K" + b])) / np.sqrt(p["Q1"].shape[0]) for b in "12"],
        lambda p, d: [np.mean(np.diag(p["Q" + b] @ p["K" + b].T)[:d]) / np.sqrt(p["Q1"].shape[0]) for b in "12"],
        lambda p, d: [np.mean(np.diag(p["Q" + b].T @ p["K" + b])[:d]) / np.sqrt(42) for b in "12"],  # d_emb = 42
        lambda p, d: [3.822, 2.057],                                              # the paper model's values
    ],
    # Lloyd's update from the softmax over the points; Lloyd's update after moving the points; constant scores
    "04.7": ["a", "c", "d", "B)"],
    "04.8": [],  # filled below
    # self-checks
    "04.9": [1452,     # 12 d_emb^2: the biases forgotten
             864,      # d_emb = d: the one-hot rows forgotten
             132, 1584.5],
    "04.10": [0.0,     # the k-means objective
              0.125,   # lambda = 0: the plain mean
              0.02052,  # unnormalized weights
              0.003346],  # distances instead of squared distances
    "04.11": ["a", "b", "c", "D)"],
}


def _gain(X, C0, s):  # per task: log J(s layer) - log J(Lloyd), 20 steps each
    soft = np.log(run_model(_soft(X.shape[1], C0.shape[2], s), X, C0, 20)[0][:, -1])
    return soft - np.log(lloyd_batch(X, C0, 20)[:, -1])


def _stuck(X, C0):
    ends = _ends(X, C0)
    return ends[:, 0] - ends.min(axis=1) > 1e-6


WRONG["04.5"] = [
    lambda X, C0, s: (-_gain(X, C0, s)[_stuck(X, C0)].mean(), -_gain(X, C0, s)[~_stuck(X, C0)].mean()),  # sign
    lambda X, C0, s: (_gain(X, C0, s)[~_stuck(X, C0)].mean(), _gain(X, C0, s)[_stuck(X, C0)].mean()),    # order
    lambda X, C0, s: (_gain(X, C0, s).mean(), _gain(X, C0, s).mean()),                                    # unsplit
    [-0.3695, 0.0021],                                     # the notebook's pair typed in
]
WRONG["04.8"] = [
    lambda X, C0, s: -_gain(X, C0, s).mean(),                                                # Lloyd minus soft
    lambda X, C0, s: -float(np.mean(_ends(X, C0)[:, 0] - _ends(X, C0).min(axis=1))),         # the prize of 04.1
    lambda X, C0, s: float(np.mean(np.log(run_model(_soft(X.shape[1], C0.shape[2], s), X, C0, 20)[0][:, -1])
                                   - np.log(lloyd_batch(X, C0, 0)[:, 0]))),                   # against the start
    _gain,                                                 # per task, not the mean
    [-0.0517, -0.1024],                                    # the notebook's pair typed in
]
