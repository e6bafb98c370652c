"""The ``binary`` embedding of the trainable model (the follow-up, arXiv 2610.09760, its Definition 2.1).

Its tokens are the hand-set circuit's (kmt_ref/algorithms/binary.py), its parameter count is
12 (d_emb^2 + d_emb) with d_emb = d + ceil(log2 k), and train / evaluate / the command line take it.
"""
import dataclasses

import numpy as np
import pytest

from kmt_ref.algorithms.binary import CodeEmbedding, binary_weights
from kmt_ref.core.attention import layer_forward
from kmt_ref.learning import train
from kmt_ref.learning.config import TrainConfig
from kmt_ref.learning.evaluation import evaluate
from kmt_ref.learning.model import d_emb_of, embed_batch, init_params
from kmt_ref.learning.tasks import sample_tasks
from learning_cases import TINY


def test_binary_parameter_count_and_width():
    assert d_emb_of(32, 10, "binary") == 36  # 32 + ceil(log2 10)
    p = init_params(d_emb_of(32, 10, "binary"), np.random.default_rng(0))
    assert sum(v.size for v in p.values()) == 12 * (36 ** 2 + 36) == 15_984
    # the follow-up's "up to 75% reduction in the number of transformer parameters when k ~ d" (its Section 1): at d = 32, k = 25 (d_emb 37
    # against 57) it is 57.5%; 66.2% at k = d = 32; 75% is the large-d limit of k = d, ((d + log2 d) / 2d)^2 -> 1/4
    assert (d_emb_of(32, 25, "binary"), d_emb_of(32, 25, "onehot")) == (37, 57)
    assert 1 - (37 ** 2 + 37) / (57 ** 2 + 57) == pytest.approx(0.5747, abs=1e-4)
    assert 1 - (37 ** 2 + 37) / (64 ** 2 + 64) == pytest.approx(0.6620, abs=1e-4)


def test_binary_tokens_are_the_hand_set_circuits():
    rng = np.random.default_rng(1)
    X, C = sample_tasks(rng, 2, 12, 3, 6)  # (B, d, n), (B, d, k)
    Xbar, Cbar = embed_batch(X, C, "binary")
    emb = CodeEmbedding(3, 6)
    assert Xbar.shape == (2, 6, 12) and Cbar.shape == (2, 6, 6)
    for b in range(2):
        np.testing.assert_array_equal(Xbar[b], emb.embed_points(X[b]))
        np.testing.assert_array_equal(Cbar[b], emb.embed_centers(C[b]))


def test_the_model_layer_with_hand_set_weights_is_one_lloyd_step_on_binary_tokens():
    """The trainable layer's tokens and the hand-set weights (follow-up's, no biases) give the member means."""
    from kmt_ref import lloyd
    from kmt_ref.algorithms.binary import binary_layer
    rng = np.random.default_rng(2)
    X, C = sample_tasks(rng, 1, 40, 2, 5)
    params, _ = binary_weights(2, 5, "nearest_code")
    Xbar, Cbar = embed_batch(X.astype(np.float64), C.astype(np.float64), "binary")
    _, Cbar_out = layer_forward(params, Xbar[0], Cbar[0], binary_layer(empty="nearest_code"))
    ref = lloyd(X[0], C[0], 1)
    assert np.all(np.bincount(ref.labels[0], minlength=5) > 0)  # the follow-up's assumption holds here
    np.testing.assert_array_equal(Cbar_out[:2], ref.centers[1])


def test_train_and_evaluate_take_the_binary_embedding():
    config = dataclasses.replace(TINY, embedding="binary", steps=10)
    ck = train(config, seed=0, log=lambda s: None)
    assert ck.params["Q1"].shape == (2 + 2, 2 + 2)  # d = 2, k = 3: m = 2
    res = evaluate(ck.params, "binary", n_tasks=4, n=24, d=2, k=3, n_steps=3)
    assert np.all(np.isfinite(res["model_mean"])) and res["model_mean"].shape == (4,)
    with pytest.raises(ValueError, match="d_emb"):
        evaluate(ck.params, "onehot", n_tasks=4, n=24, d=2, k=3, n_steps=3)


def test_config_accepts_binary_and_names_a_wrong_embedding():
    assert TrainConfig(embedding="binary").validate().d_emb == 36
    with pytest.raises(ValueError, match="embedding"):
        TrainConfig(embedding="binry").validate()
