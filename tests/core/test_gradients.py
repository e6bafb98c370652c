"""The softmax attention primitive and its hand-derived VJP (kmt_ref/core/gradients.py).

Against the plain path, which autograd differentiates operation by operation
(``HAND_VJP = False``): the same values and the same gradients in float64, on
tokens built from the shared case table; the same dropout masks; and a short
float32 training run with the same loss curve.
"""
import dataclasses

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

import kmt_ref.core.blocks as blocks_module
from kmt_ref.core.attention import attention, scores_from_projections
from kmt_ref.core.gradients import CHUNK_ENTRIES, dropped_entries, softmax_attention
from kmt_ref.core.normalizers import softmax

from cases import all_cases

NAMES = ("Z", "Zk", "Q", "K", "V", "bQ", "bK", "bV")


def plain_block(Z, Zk, Q, K, V, bQ, bK, bV, score, scale, gamma, p, drop):
    """The block as the plain path computes it (project, scores, softmax, keep / (1 - p), product)."""
    QZ, KZ, VZ = (anp.matmul(W, T) + b[:, None] for W, b, T in ((Q, bQ, Z), (K, bK, Zk), (V, bV, Zk)))
    W = softmax(scores_from_projections(KZ, QZ, score, scale), gamma=gamma, axis=-2)
    if drop is not None:
        keep = np.ones(np.shape(W), bool)
        keep.reshape(-1)[drop] = False
        W = W * keep / (1.0 - p)
    return anp.matmul(VZ, W)


def block_args(X, C, seed, batch=None):
    """Tokens (X as queries, C as keys, or a batch of noisy copies) and random weights with biases."""
    rng = np.random.default_rng(seed)
    d = X.shape[0]
    if batch:
        X = X + 0.1 * rng.normal(size=(batch,) + X.shape)
        C = C + 0.1 * rng.normal(size=(batch,) + C.shape)
    Q, K, V = (rng.uniform(-1, 1, (d, d)) for _ in range(3))
    bQ, bK, bV = (rng.uniform(-1, 1, d) for _ in range(3))
    return [X, C, Q, K, V, bQ, bK, bV]


SETTINGS = [("euclidean", 2.0, 1.0, 0.0), ("euclidean", 1.0, 3.0, 0.3), ("dot", 2.0, 1.0, 0.3), ("dot", 1.5, 0.5, 0.0)]


def _check(args, score, scale, gamma, p, seed):
    shape = np.broadcast_shapes(args[0].shape[:-2], args[1].shape[:-2]) + (args[1].shape[-1], args[0].shape[-1])
    drop = dropped_entries(np.random.default_rng(seed), shape, p)
    fixed = (score, scale, gamma, p, drop)
    new = softmax_attention(*args, *fixed, {})
    old = plain_block(*args, *fixed)
    size = np.abs(old).max() + 1.0
    # float64, the same function in another order of operations: measured at most 5.3e-15 on the table
    np.testing.assert_allclose(new, old, rtol=0, atol=1e-13 * size)
    G = np.random.default_rng(seed + 1).normal(size=old.shape)
    for i, name in enumerate(NAMES):
        g_new = grad(lambda *a: anp.sum(G * softmax_attention(*a, *fixed, {})), i)(*args)
        g_old = grad(lambda *a: anp.sum(G * plain_block(*a, *fixed)), i)(*args)
        scale_g = np.abs(g_old).max() + np.abs(g_new).max() + 1.0
        # measured at most 7.2e-13 of the largest entry on the table (dK, Euclidean); b_K with dot
        # scores is 0 in exact arithmetic (rounding noise on the plain path)
        np.testing.assert_allclose(g_new, g_old, rtol=0, atol=1e-11 * scale_g, err_msg=name)


@pytest.mark.parametrize("case", all_cases()[::7], ids=lambda c: c[0])
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0]}-g{s[2]}-p{s[3]}")
def test_values_and_gradients_equal_the_plain_path_on_the_case_table(case, setting):
    name, X, C0 = case
    _check(block_args(X, C0, 0), *setting, seed=3)  # points attend to centers (a single task)
    _check(block_args(X, X, 1), *setting, seed=4)  # self-attention over the points


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0]}-g{s[2]}-p{s[3]}")
def test_batches_and_several_chunks(setting, monkeypatch):
    """A batch of tasks, handled in several chunks (a chunk smaller than one task's weights too)."""
    X, C0 = all_cases()[0][1:]
    for entries in (CHUNK_ENTRIES, 3 * X.shape[1] * C0.shape[1], 1):
        monkeypatch.setattr("kmt_ref.core.gradients.CHUNK_ENTRIES", entries)
        _check(block_args(X, C0, 2, batch=5), *setting, seed=5)
        _check(block_args(C0, X, 3, batch=4), *setting, seed=6)


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0]}-g{s[2]}-p{s[3]}")
def test_token_rows_that_are_zero_in_every_task(setting):
    """The paper's point tokens [X; 0]: their zero rows are left out of the (r, q) products."""
    X, C0 = all_cases()[4][1:]
    Xbar = np.concatenate([X, np.zeros((3, X.shape[1]))])
    Cbar = np.concatenate([C0, np.eye(3, C0.shape[1])])
    _check(block_args(Xbar, Xbar, 7), *setting, seed=8)  # block 2
    _check(block_args(Cbar, Xbar, 8), *setting, seed=9)  # block 3 reads the points
    args = block_args(Xbar, Xbar, 9, batch=3)
    args[1][:, -2:] = 0.0  # the batch's noise filled them: zero again, in the keys only
    _check(args, *setting, seed=10)


def test_dropout_draws_the_plain_paths_mask_and_stream():
    shape = (3, 70, 1000)  # more entries than one buffer of draws
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    keep = a.random(shape) >= 0.2
    drop = dropped_entries(b, shape, 0.2, chunk=4096)
    np.testing.assert_array_equal(drop, np.flatnonzero(~keep))
    assert a.random() == b.random()  # the generators are in the same state afterwards
    assert dropped_entries(b, shape, 0.0) is None


def test_attention_takes_the_primitive_only_while_tracing(monkeypatch):
    rng = np.random.default_rng(0)
    Z, Zk = rng.normal(size=(2, 3, 6)), rng.normal(size=(2, 3, 4))
    Q, K, V = (rng.normal(size=(3, 3)) for _ in range(3))
    calls = []
    monkeypatch.setattr(blocks_module, "softmax_attention", lambda *a: calls.append(a) or softmax_attention(*a))
    f = lambda Q: anp.sum(attention(Z, Zk, Q, K, V, scale=2.0, dropout=0.25, rng=np.random.default_rng(1)))
    g_hand = grad(f)(Q)
    assert len(calls) == 1
    attention(Z, Zk, Q, K, V, scale=2.0)  # not traced: the plain path
    assert len(calls) == 1
    monkeypatch.setattr(blocks_module, "HAND_VJP", False)
    np.testing.assert_allclose(g_hand, grad(f)(Q), rtol=1e-12)
    assert len(calls) == 1


def test_short_training_run_has_the_same_loss_curve(monkeypatch):
    """float32 training with the hand VJP against autograd's own differentiation of the plain path.

    Same tasks, same dropout masks; the two differ in rounding only. Measured (60 steps, seed 3):
    largest relative difference 6e-8 in the validation scores and 9e-8 in the mean losses; at the
    authors' d, k (their expts.md) with batch 8, n = 128 over 40 steps, 2.4e-7 in the per-step losses.
    """
    from kmt_ref.learning import train
    from learning_cases import TINY

    cfg = dataclasses.replace(TINY, steps=60)
    hand = train(cfg, seed=3, log=lambda s: None).history
    monkeypatch.setattr(blocks_module, "HAND_VJP", False)
    plain = train(cfg, seed=3, log=lambda s: None).history
    np.testing.assert_allclose(hand["val"], plain["val"], rtol=1e-6)
    np.testing.assert_allclose(hand["loss"][1:], plain["loss"][1:], rtol=1e-6)
