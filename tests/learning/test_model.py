"""Tests for kmt_ref.learning.model: the trainable layer of paper §4 (SPEC §6 "Model")."""
import dataclasses

import numpy as np

from kmt_ref import layer_forward
from kmt_ref.learning import train
from kmt_ref.learning.model import attention_maps, d_emb_of, embed_batch, init_params, model_layer, model_step
from kmt_ref.learning.tasks import sample_task, sample_tasks
from learning_cases import TINY


def test_parameter_counts_match_the_paper():
    rng = np.random.default_rng(0)
    p = init_params(d_emb_of(32, 10, "onehot"), rng)
    assert sum(v.size for v in p.values()) == 12 * (42 ** 2 + 42) == 21_672
    q = init_params(d_emb_of(32, 10, "none"), rng)
    assert sum(v.size for v in q.values()) == 12 * (32 ** 2 + 32)


def test_embedding_is_x_zero_and_c_identity():
    X = np.arange(12.0).reshape(2, 2, 3)
    C = np.ones((2, 2, 2))
    Xbar, Cbar = embed_batch(X, C)
    np.testing.assert_array_equal(Xbar[:, :2], X)
    np.testing.assert_array_equal(Xbar[:, 2:], 0.0)
    np.testing.assert_array_equal(Cbar[1, 2:], np.eye(2))
    assert embed_batch(X, C, "none")[0] is X


def test_model_step_is_layer_forward_on_the_paper_tokens():
    rng = np.random.default_rng(3)
    X, C0 = sample_tasks(rng, 2, 10, 2, 3)
    params = init_params(5, rng, "float64")
    Xbar, Cbar = embed_batch(X, C0)
    _, Cbar_out = layer_forward(params, Xbar, Cbar, model_layer(5))
    np.testing.assert_array_equal(model_step(params, X, C0), Cbar_out[:, :2])


def test_attention_maps_of_a_trained_layer():
    """The four attention matrices on one task: keys x queries, each query's weights sum to one."""
    params = train(dataclasses.replace(TINY, steps=10), seed=0, log=lambda s: None).params
    W = attention_maps(params, *sample_task(np.random.default_rng(0), 24, 2, 3))
    assert W["1"].shape == (3, 24) and W["2"].shape == (24, 24) and W["3"].shape == (24, 3) and W["4"].shape == (3, 3)
    for b in "1234":
        np.testing.assert_allclose(W[b].sum(axis=0), 1.0)
