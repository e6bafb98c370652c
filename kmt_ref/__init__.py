"""kmt_ref: a reference implementation of "Transformer Circuits Can Realize
Clustering Algorithms" (Park, Clarkson, Horesh, Ram, Ito; arXiv 2506.19125,
ICML 2026) in explicit NumPy.

Tokens are columns, as in the paper: data ``X`` has shape (d, n), centers
``C`` have shape (d, k).

Layers of the package (STYLE §1): classical references
(:mod:`~kmt_ref.reference`, :mod:`~kmt_ref.reference_standard`,
:mod:`~kmt_ref.reference_sparse`); normalizers and the generic transformer
(:mod:`~kmt_ref.normalizers`, :mod:`~kmt_ref.attention`); hand-set
constructions (:mod:`~kmt_ref.constructions`, :mod:`~kmt_ref.standard_variants`,
:mod:`~kmt_ref.sparse_variants`); the training experiment
(:mod:`~kmt_ref.tasks`, :mod:`~kmt_ref.training`, imported on demand).
"""
# normalizers and the generic layer
from .normalizers import softmax, hardmax, hardmax_average, linear, sparsemax, normmax, gumbel, NORMALIZERS
from .attention import attention, attention_scores, layer_forward, Block, Sublayer, FeedForward, LayerRecord
from .trace import ClusteringTrace, kmeans_objective, assign
from .validation import rows_to_columns

# classical references
from .reference import lloyd
from .reference_standard import soft_kmeans, spherical_kmeans
from .reference_sparse import trimmed_kmeans_attention, trimmed_kmeans, robust_kmeans, randomized_kmedoids

# hand-set constructions
from .constructions import (Embedding, projector, lloyd_weights, lloyd_layer, kmeans_transformer, run_layers,
                            EmptyClusterError)
from .standard_variants import dot_product_transformer, soft_kmeans_transformer, spherical_kmeans_transformer
from .sparse_variants import trimmed_kmeans_transformer, robust_kmeans_transformer, randomized_kmedoids_transformer

# data and the estimator
from .data import validation_data, toy_data, gaussian_blobs
from .estimator import KMeansTransformer

__version__ = "0.1.0"
