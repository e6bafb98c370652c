r"""What makes the gamma = inf limits exact and fast: each shortcut of :func:`kmt_ref.core.attention.attention`, with its proof.

Two modules: :mod:`.limits` holds the shortcuts of one attention block (each
with its proof), :mod:`.layer` runs a whole hand-set layer with them
(:func:`fast_layer_forward`) and keeps what a layer learned about the tokens it
wrote for the next block, the read-out and the next layer (:class:`Memo`).

:mod:`kmt_ref.core.attention` states the equation, ``A(Z, Z'; Q, K, V, sigma) =
V Z' sigma(S)``, and computes it plainly for finite gamma. When the normalizer
is a hard one (``hardmax``, ``hardmax_average``: the gamma = inf limit) or the
weights are hand-set projectors, the same numbers can be had exactly and
without the (r, q) matrices; the functions here do that, and nothing else:

=============================  =================================================================
:func:`project`                ``W Z + b`` computing only the nonzero sub-block of a hand-set W
                               (the same sum without its exact-zero terms)
:func:`used_rows`              the rows of Q, K (and V) that can change a score (an output)
:func:`same_map`               Q = K with equal biases: self-attention has its maximum on the diagonal
:func:`self_attention_limit`   gamma = inf Euclidean self-attention with Q = K by grouping
                               identical keys: O(n log n), no n x n matrix, no rounding
:func:`hard_cross`             gamma = inf cross-attention: a column selection (lowest-index
                               hardmax) or a mean over the tied maxima (averaging hardmax)
:func:`segment_mean`           a uniform mean over disjoint key sets, summed key by key: the
                               very arithmetic of :func:`kmt_ref.algorithms.lloyd.cluster_means`
:func:`is_disjoint_uniform`    recognises such a mean among computed weights (normmax, alpha = inf)
:func:`selection`              W as a signed row selection: ``W Z`` is a view of rows of Z
:func:`one_hot_columns`        the labels of exactly one-hot (or zero) columns, in one pass
:func:`fast_layer_forward`     a whole hand-set layer with selection weights on plain NumPy: at
                               gamma = inf no (r, q) matrix, block 3 by one-hot lookup in O(n);
                               finite-gamma blocks on views; residual sums in place
:class:`Memo`                  facts about token rows (exactly one-hot, pairwise distinct columns,
                               squared norms), each kept until a block writes those rows
=============================  =================================================================

Every shortcut is tested against the plain path on the shared case table (tests/core/test_exact.py,
tests/core/test_exact_layer.py). They work on plain NumPy arrays; the autograd path (training) never
takes them, except :func:`project`, which on that path is plainly ``W Z + b``.
"""
from .layer import Memo, fast_layer_forward
from .limits import (duplicate_groups, hard_cross, is_disjoint_uniform, one_hot_columns, project, same_map,
                     segment_mean, selection, self_attention_limit, support, used_rows)

__all__ = ["support", "project", "used_rows", "same_map", "duplicate_groups", "self_attention_limit", "segment_mean",
           "is_disjoint_uniform", "hard_cross", "selection", "one_hot_columns", "fast_layer_forward", "Memo"]
