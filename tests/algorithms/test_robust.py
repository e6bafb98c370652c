"""Robust k-means (kmt_ref/algorithms/robust.py): the sparsemax circuit equals the authors' rule.
"""
import numpy as np

from kmt_ref.algorithms import (
    robust_kmeans,
    robust_kmeans_transformer,
)

C_TOY = np.array([[0.0]])



def test_robust_toy():
    X = np.array([[0.0, 1.0]])
    # gamma = .5: z = [0, -.5], tau = -.75, p = [.75, .25]
    for fn in (robust_kmeans, robust_kmeans_transformer):
        np.testing.assert_allclose(fn(X, C_TOY, 1, 0.5).centers[1], [[0.25]], atol=1e-15)
        # gamma = 1: z = [0, -1], tau = -1: the far point gets weight exactly 0
        np.testing.assert_allclose(fn(X, C_TOY, 1, 1.0).centers[1], [[0.0]], atol=0)
