"""The generic attention (kmt_ref/core/attention.py, one block computed in kmt_ref/core/blocks.py): its argument checks and import paths.
"""
import numpy as np
import pytest


# --------------------------------------------------------------------------
# attention dropout, applied to the normalizer's weights (kmt_ref.attention)
# --------------------------------------------------------------------------
def _attend(**kw):
    from kmt_ref.core.attention import attention

    rng = np.random.default_rng(0)
    Z, Zk = rng.normal(size=(3, 4)), rng.normal(size=(3, 5))
    Q, K, V = np.eye(3), np.eye(3), np.eye(3)
    return attention(Z, Zk, Q, K, V, **kw)



@pytest.mark.parametrize("dropout, rng, error, message", [
    (0.5, None, ValueError, r"dropout=0.5 needs rng, a numpy.random.Generator .*got rng=None"),  # was AttributeError
    (0.5, 3, TypeError, "got rng=3"),
    (1.0, None, ValueError, r"dropout=1.0 should be in \[0, 1\)"),
    (-0.1, None, ValueError, r"dropout=-0.1 should be in \[0, 1\)"),
    (np.nan, None, ValueError, r"dropout=nan should be in \[0, 1\)"),
    ("0.1", None, TypeError, "dropout must be a real number in"),
    (True, None, TypeError, "dropout must be a real number in"),
])
def test_attention_dropout_is_checked(dropout, rng, error, message):
    with pytest.raises(error, match=message):
        _attend(dropout=dropout, rng=rng)



def test_attention_dropout_valid():
    np.testing.assert_array_equal(_attend(dropout=0.0), _attend())  # no rng needed without dropout
    a = _attend(dropout=np.float32(0.25), rng=np.random.default_rng(4))
    b = _attend(dropout=0.25, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------
# one block lives in kmt_ref.core.blocks, below the exact layer; the old paths still work
# --------------------------------------------------------------------------
def test_block_names_are_still_importable_from_core_attention():
    import kmt_ref.core.attention as attention_module
    import kmt_ref.core.blocks as blocks_module

    for name in attention_module.__all__ + ["scores_from_projections"]:
        assert hasattr(attention_module, name), name
    for name in ["scores_from_projections", "attention_scores", "attention", "FeedForward"]:  # moved
        assert getattr(attention_module, name) is getattr(blocks_module, name), name


def test_hand_vjp_lives_in_blocks_only(monkeypatch):
    """One flag, read by attention() at every call: core.attention has no copy of it (a copy set there would
    be a second flag that nothing reads), and patching blocks' flag is undone like any module attribute."""
    import kmt_ref.core.attention as attention_module
    import kmt_ref.core.blocks as blocks_module

    with pytest.raises(AttributeError, match="kmt_ref.core.blocks.HAND_VJP"):
        attention_module.HAND_VJP
    with pytest.raises(AttributeError, match="kmt_ref.core.blocks.HAND_VJP"):
        attention_module.HAND_VJP = False
    # (not tried through monkeypatch: pytest 7.4 records the undo before it sets, and its undo would fail)
    monkeypatch.setattr(attention_module, "layer_forward", None)  # every other attribute as usual
    monkeypatch.undo()
    assert callable(attention_module.layer_forward) and attention_module.layer_forward is not None
    assert blocks_module.HAND_VJP is True
    monkeypatch.setattr(blocks_module, "HAND_VJP", False)
    assert blocks_module.HAND_VJP is False
    monkeypatch.undo()
    assert blocks_module.HAND_VJP is True


# --------------------------------------------------------------------------
# a sparsemax block's convex combination, anchored at its key of largest weight
# --------------------------------------------------------------------------
def test_anchored_combination_of_copies_is_the_copy_where_the_product_is_not():
    from kmt_ref.core.blocks import anchored_combination
    from kmt_ref.core.normalizers import sparsemax

    S = np.array([[0.0] * 6 + [-2.8] * 3]).T  # (9, 1): six tied keys, three far ones
    W = sparsemax(S, axis=0)  # (9, 1): 1/6 on the six, rounded so that they do not sum to 1
    assert np.all(W[6:] == 0) and W[:6].sum() != 1.0
    for value in (-1.0, 0.1, 1 / 3, 1e6 + 0.3):
        VZk = np.array([[value] * 6 + [5.0] * 3])  # (1, 9)
        assert anchored_combination(W, VZk)[0, 0] == value
    VZk = np.array([[-1.0] * 6 + [5.0] * 3])
    assert (VZk @ W)[0, 0] != -1.0  # what the plain product gives: -1.0000000000000002


def test_anchored_combination_is_the_product_to_rounding_and_attention_uses_it_for_sparsemax():
    from kmt_ref.core.attention import attention
    from kmt_ref.core.blocks import anchored_combination
    from kmt_ref.core.normalizers import sparsemax

    rng = np.random.default_rng(3)
    W = sparsemax(3.0 * rng.normal(size=(40, 7)), axis=0)  # (40, 7)
    VZk = rng.normal(size=(5, 40))
    np.testing.assert_allclose(anchored_combination(W, VZk), VZk @ W, rtol=0, atol=1e-14)
    rows = np.array([0, 3])
    out = anchored_combination(W, VZk, rows)
    np.testing.assert_array_equal(out[[1, 2, 4]], 0.0)
    np.testing.assert_array_equal(out[rows], anchored_combination(W, VZk)[rows])
    # attention's sparsemax block: keys that are copies of the query's point give that point exactly
    Zk = np.array([[0.1] * 6 + [2.1] * 3])  # (1, 9)
    Z = np.array([[0.1]])
    out = attention(Z, Zk, np.eye(1), np.eye(1), np.eye(1), normalizer="sparsemax", gamma=0.7)
    assert out[0, 0] == 0.1
