"""The transformer, knowing nothing of k-means.

- :mod:`~kmt_ref.core.normalizers`: sigma, each mapping a column of scores to the simplex;
- :mod:`~kmt_ref.core.blocks`: one block computed, ``A(Z, Z'; Q, K, V, sigma) = V Z' sigma(S)`` and its scores, below both the layer and the exact layer;
- :mod:`~kmt_ref.core.attention`: the layer of Theorem 2.1 (the authors' ``cnst_model.py``; the follow-up's Definition 2.3);
- :mod:`~kmt_ref.core.exact`: what makes the gamma = inf limits exact and fast, with proofs;
- :mod:`~kmt_ref.core.gradients`: the softmax block as one autograd primitive, its backward pass derived by hand (training);
- :mod:`~kmt_ref.core.tokens`: token layouts, projectors, the loop that runs T layers and its trace.

Imports only the leaves :mod:`kmt_ref.validation`, :mod:`kmt_ref.frame` and
:mod:`kmt_ref.trace`; nothing in it imports :mod:`kmt_ref.algorithms`,
:mod:`kmt_ref.learning` or :mod:`kmt_ref.viz`.
"""
