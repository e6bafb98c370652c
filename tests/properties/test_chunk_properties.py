"""The equalities at the chunk boundaries: n around 1024, 2048 and 4096 points, k above 1024 centers."""
from pathlib import Path

import numpy as np
from hypothesis import example, given, settings, strategies as st

from kmt_ref import kmeans_transformer, lloyd
from kmt_ref.algorithms import spherical_kmeans, spherical_kmeans_transformer, trimmed_kmeans_attention, \
    trimmed_kmeans_transformer

FEW = max(3, settings.default.max_examples // 8)  # large inputs: a fraction of the profile's budget


@st.composite
def large(draw, ks=(1, 3, 17)):
    n = draw(st.sampled_from([1023, 1024, 1025, 2047, 2048, 2049, 4095, 4097]))
    d = draw(st.integers(1, 3))
    k = min(n, draw(st.sampled_from(ks)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = np.round(rng.normal(size=(d, n)) * 2) + draw(st.sampled_from([0.0, 0.5]))  # a grid: many ties
    C0 = X[:, rng.choice(n, k, replace=False)]
    return X, C0


@settings(max_examples=FEW)
@given(large(ks=(1, 3, 17, 1025)), st.sampled_from([1, 1000, 1024]))
def test_theorem_2_1_at_chunk_boundaries(inst, chunk_size):
    X, C0 = inst
    ref, tr = lloyd(X, C0, 2), kmeans_transformer(X, C0, 2, chunk_size=chunk_size)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_array_equal(tr.centers, ref.centers)


def _sphere_case():
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(3, 4097)) * 2) + 0.5
    return X, X[:, rng.choice(4097, 1025, replace=False)]


def _stored_case(name):
    with np.load(Path(__file__).with_name(name)) as f:
        return f["X"].astype(float), f["C0"].astype(float)


@settings(max_examples=FEW)
@given(large(ks=(1, 3, 17, 1025)), st.sampled_from([1000, 1024, 4097]))
@example(_sphere_case(), 1024)  # the last of 4097 points alone in its chunk of queries
@example(_stored_case("spherical_n4095_k1025.npz"), 1024)  # a near-tie the chunks of 1024 queries decided
def test_spherical_at_chunk_boundaries(inst, chunk_size):
    X, C0 = inst
    if np.any(np.all(X == 0, axis=0)):
        X = X + 0.5
        C0 = C0 + 0.5
    ref, tr = spherical_kmeans(X, C0, 1), spherical_kmeans_transformer(X, C0, 1, chunk_size=chunk_size)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_array_equal(tr.centers, ref.centers)


@settings(max_examples=FEW)
@given(large(), st.sampled_from([0.5, 4.0]))
def test_trimmed_at_chunk_boundaries(inst, gamma2):
    X, C0 = inst
    ref, tr = trimmed_kmeans_attention(X, C0, 2, gamma2), trimmed_kmeans_transformer(X, C0, 2, gamma2)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_array_equal(tr.centers, ref.centers)
