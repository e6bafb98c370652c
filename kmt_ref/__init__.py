"""kmt_ref: a reference implementation of "Transformer Circuits Can Realize
Clustering Algorithms" (Park, Clarkson, Horesh, Ram, Ito; arXiv 2506.19125,
ICML 2026) in explicit NumPy.

Tokens are columns, as in the paper: data ``X`` has shape (d, n), centers
``C`` have shape (d, k).
"""
from .normalizers import softmax, hardmax, hardmax_average, linear, NORMALIZERS
from .attention import attention, attention_scores, layer_forward, Block, Sublayer, FeedForward, LayerRecord
from .trace import ClusteringTrace, kmeans_objective, assign
from .reference import lloyd
from .constructions import Embedding, projector, lloyd_weights, lloyd_layer, kmeans_transformer, run_layers, EmptyClusterError
from .validation import rows_to_columns

__version__ = "0.1.0"
from .reference_standard import soft_kmeans, spherical_kmeans
from .standard_variants import dot_product_transformer, soft_kmeans_transformer, spherical_kmeans_transformer
from .sparse_variants import trimmed_kmeans_transformer, robust_kmeans_transformer, randomized_kmedoids_transformer
from .data import validation_data, toy_data, gaussian_blobs
