"""Tests for kmt_ref.learning.loss: the smoothed k-means loss of paper §4 and its gradient (SPEC §6 "Loss")."""
import dataclasses
import math

import numpy as np
import pytest
from autograd.test_util import check_grads

from kmt_ref.learning.loss import batch_loss, batch_objective, soft_kmeans_loss
from kmt_ref.learning.model import init_params
from kmt_ref.learning.tasks import sample_tasks
from learning_cases import TINY


def test_soft_loss_hand_computed_toy():
    # d = 1, points 0 and 2, centers 0 and 1: D = [[0, 4], [1, 1]] (k, n)
    X = np.array([[[0.0, 2.0]]])
    C = np.array([[[0.0, 1.0]]])
    lam = 0.7
    e = math.exp
    L0 = e(-lam) / (1 + e(-lam))
    L1 = (4 * e(-4 * lam) + e(-lam)) / (e(-4 * lam) + e(-lam))
    np.testing.assert_allclose(soft_kmeans_loss(X, C, lam), [L0 + L1], rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_soft_loss_upper_bounds_the_kmeans_objective(seed):
    rng = np.random.default_rng(seed)
    X, C = rng.random((4, 3, 30)), rng.random((4, 3, 5))
    hard = batch_objective(X, C)
    for lam in (0.1, 1.0, 10.0):
        assert np.all(soft_kmeans_loss(X, C, lam) >= hard - 1e-12)
    np.testing.assert_allclose(soft_kmeans_loss(X, C, 1e5), hard, rtol=1e-6)  # tends to it as lambda grows


@pytest.mark.parametrize("embedding", ["onehot", "none"])
def test_gradient_of_the_full_loss(embedding):
    cfg = dataclasses.replace(TINY, n=6, d=2, k=2, batch=2, dropout=0.0, embedding=embedding, dtype="float64")
    rng = np.random.default_rng(0)
    params = init_params(cfg.d_emb, rng, "float64")
    X, C0 = sample_tasks(rng, cfg.batch, cfg.n, cfg.d, cfg.k)
    check_grads(lambda p: batch_loss(p, X, C0, cfg), modes=["rev"], order=1)(params)


def test_gradient_with_dropout_for_a_fixed_mask():
    cfg = dataclasses.replace(TINY, n=6, d=2, k=2, batch=2, dropout=0.3, dtype="float64")
    rng = np.random.default_rng(1)
    params = init_params(cfg.d_emb, rng, "float64")
    X, C0 = sample_tasks(rng, cfg.batch, cfg.n, cfg.d, cfg.k)
    f = lambda p: batch_loss(p, X, C0, cfg, np.random.default_rng(7))  # same mask at every call
    assert f(params) != batch_loss(params, X, C0, dataclasses.replace(cfg, dropout=0.0))
    check_grads(f, modes=["rev"], order=1)(params)
