"""Plausible wrong answers to the checked exercises of notebook 04 (each a real student mistake).

The numbers were computed with kmt_ref on the exercises' tasks (kmt_ref.exercises.nb04.ex_tasks):
the right answers are, for comparison, 04.1 [0.1381, 0.2030],
04.3 [3.5356, 3.4956, 2.2053, 2.2805, 2.2792, 2.3077], 04.4 [22.327, 19.974, 15.789, 14.523, 14.580, 14.626],
04.5 [-0.3695, +0.0021], 04.6 [3.822, 2.057], 04.8 [-0.0517, -0.1024].
"""

WRONG = {
    "04.1": [
        [0.375, 0.28125],                    # the share of stuck tasks, not the mean gap
        [0.20297041, 0.13810969],            # d = 8 first
        [0.0, 0.0],                          # each start compared with itself
        [0.75089339, 2.39758748],            # gaps of the objective J, not of log J
        0.17,                                # one number for both d
    ],
    "04.3": [
        [3.536, 2.448, 29.701, 58.295, 90.397, 185.474],    # V scaled by s too: the residual algebra breaks
        [3.5356, 2.2796, 2.3092, 2.2780, 2.3077, 2.3077],   # Q and K scaled by s^2 instead of s
        [4.780, 4.250, 3.737, 4.341, 3.220, 3.674],          # random biases left in place of zero biases
        [2.3077] * 6,                                        # s never applied: Lloyd's result every time
    ],
    "04.4": [
        [30.099033] * 6,                                            # the loss at C0: the layer never applied
        [21.377945, 19.001076, 15.197666, 14.127022, 14.152849, 14.158312],  # the hard objective J, not the loss
        [38.300568, 34.740774, 35.342013, 37.029787, 36.675242, 36.261247],  # lambda = 1 instead of 10
        [35.07834, 33.759374, 9.537122, 10.465314, 10.452434, 10.925683],    # the loss after 20 steps, not one
        [3.105812, 2.994436, 2.759297, 2.675708, 2.679664, 2.682808],        # log of the loss
    ],
    "04.5": [
        [0.36948795, -0.00206567],           # Lloyd minus soft
        [0.00206567, -0.36948795],           # the other tasks first
        [-0.10243379, -0.10243379],          # the mean over all 32 tasks, not split
    ],
    "04.6": [
        [4.976770, 3.651308],                # sqrt of the mean diagonal: the scale s of Q and K, not a gamma
        [24.768246, 13.332047],              # s^2: the mean diagonal itself, as section 8 prints it
        [0.589720, 0.317430],                # divided by d_emb = 42 instead of sqrt(42)
        [2.919133, 1.567007],                # the diagonal of the whole 42 x 42 matrix (one-hot rows included)
    ],
    "04.8": [
        [-0.10243379, -0.05169007],          # d = 8 first
        [0.05169007, 0.10243379],            # Lloyd minus soft
        [0.13810969, 0.20297041],            # the gaps of 04.1 (the prize of a better start), not the soft layer's
    ],
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
