"""kmt_ref: a reference implementation of "Transformer Circuits Can Realize
Clustering Algorithms" (K. L. Clarkson, L. Horesh, T. Ito, C. Park, P. Ram;
ICML 2026; preliminary version "Finding Clustering Algorithms in the
Transformer Architecture", arXiv 2506.19125) in explicit NumPy, with the
binary-code circuit of the authors' follow-up "Leaner Transformers Can Easily
Learn to Cluster" (arXiv 2610.09760) beside it.

Tokens are columns (kmt_ref's convention): data ``X`` has shape (d, n),
centers ``C`` have shape (d, k).

The house (docs/ARCHITECTURE.md): :mod:`kmt_ref.core` is the transformer,
knowing nothing of k-means; :mod:`kmt_ref.algorithms` holds one file per
clustering algorithm, its classical loop beside its circuit;
:mod:`kmt_ref.learning` is the training experiment (the authors' ``train.py``; imported on demand);
:mod:`kmt_ref.viz` draws every picture. The leaves :mod:`kmt_ref.validation`
(argument checks), :mod:`kmt_ref.frame` (the data frame) and
:mod:`kmt_ref.trace` (the result object) serve them all.
"""
from . import _compat

_compat.install()  # old module paths (kmt_ref.constructions, ...) keep working until 0.2

# the transformer
from .core.normalizers import softmax, hardmax, hardmax_average, linear, sparsemax, normmax, gumbel, NORMALIZERS
from .core.attention import attention, attention_scores, layer_forward, Block, Sublayer, FeedForward, LayerRecord
from .core.tokens import Embedding, projector, run_layers, EmptyClusterError
from .trace import ClusteringTrace, kmeans_objective, assign
from .validation import rows_to_columns

# the algorithms: classical loops and their circuits (every name of kmt_ref.algorithms.__all__)
from .algorithms import *  # noqa: F401,F403
from .algorithms import (lloyd, soft_kmeans, spherical_kmeans, trimmed_kmeans_attention, trimmed_kmeans,
                         robust_kmeans, randomized_kmedoids, lloyd_weights, lloyd_layer, kmeans_transformer,
                         dot_product_transformer, soft_kmeans_transformer, spherical_kmeans_transformer,
                         trimmed_kmeans_transformer, robust_kmeans_transformer, randomized_kmedoids_transformer)

# data and the estimator
from .data import paper_validation_data, validation_data, toy_data, gaussian_blobs
from .estimator import KMeansTransformer

__version__ = "0.1.0"
