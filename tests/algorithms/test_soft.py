"""Soft k-means (kmt_ref/algorithms/soft.py): the transformer equals the reference over eight orders of magnitude of beta.
"""
import numpy as np
import pytest
from cases import degenerate_cases

from kmt_ref import lloyd
from kmt_ref.algorithms import (
    soft_kmeans_transformer,
    spherical_kmeans_transformer,
)
from kmt_ref.algorithms.soft import soft_kmeans
from kmt_ref.algorithms.spherical import spherical_kmeans
from kmt_ref.core.tokens import EmptyClusterError
from kmt_ref.trace import assign

# ======================================================================
# Soft k-means
# ======================================================================
BETAS = [1e-4, 1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3]  # eight orders of magnitude



def blobs(seed, d=None, n=None, k=None):
    rng = np.random.default_rng(seed)
    d = d or int(rng.integers(1, 5))
    n = n or int(rng.integers(6, 60))
    k = k or int(rng.integers(1, min(n, 6) + 1))
    means = rng.uniform(0, 1, (d, k))
    X = means[:, rng.integers(0, k, n)] + 0.1 * rng.normal(size=(d, n))
    return X, X[:, rng.choice(n, k, replace=False)]






@pytest.mark.parametrize("beta", BETAS)
@pytest.mark.parametrize("seed", range(8))
def test_soft_transformer_equals_soft_kmeans(beta, seed):
    X, C0 = blobs(seed)
    ref = soft_kmeans(X, C0, 8, beta)
    trf = soft_kmeans_transformer(X, C0, 8, beta)
    np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-10)
    np.testing.assert_allclose(trf.assignments, ref.assignments, rtol=0, atol=1e-10)
    np.testing.assert_allclose(trf.objective, ref.objective, rtol=1e-10)
    # labels are the argmax of r: equal wherever the top two responsibilities are not equal to
    # rounding (at small beta all centers collapse onto the mean and r_ij = 1/k to 1e-16)
    R = ref.assignments
    top2 = np.sort(R, axis=0)[-2:] if R.shape[0] > 1 else np.vstack([np.zeros_like(R), R])
    clear = top2[1] - top2[0] > 1e-9
    np.testing.assert_array_equal(trf.labels[-1][clear], ref.labels[-1][clear])



DUPLICATED = [c for c in degenerate_cases() if c[0].startswith("duplicated_centers")]


@pytest.mark.parametrize("name,X,C0", DUPLICATED, ids=[c[0] for c in DUPLICATED])
@pytest.mark.parametrize("beta", [5.0, 50.0])
def test_soft_duplicated_centers_stay_equal_as_in_exact_arithmetic(name, X, C0, beta):
    """Copies of a center get equal responsibilities, so they stay copies: in exact arithmetic they never
    part. A last-bit difference between them would grow step by step (soft k-means amplifies it), and the
    reference and the circuit would part too; both keep the copies bit for bit equal, and agree."""
    ref, trf = soft_kmeans(X, C0, 8, beta), soft_kmeans_transformer(X, C0, 8, beta)
    for tr in (ref, trf):
        for a in range(C0.shape[1]):
            for b in range(a + 1, C0.shape[1]):
                if np.array_equal(C0[:, a], C0[:, b]):
                    np.testing.assert_array_equal(tr.centers[:, :, a], tr.centers[:, :, b])
    np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(trf.labels, ref.labels)


def test_soft_attention_matrix_is_the_responsibility_matrix():
    X, C0 = blobs(1, d=2, n=20, k=3)
    tr = soft_kmeans_transformer(X, C0, 3, 5.0, record=True)
    ref = soft_kmeans(X, C0, 3, 5.0)
    np.testing.assert_allclose(tr.layers[-1].weights["1"], ref.assignments, atol=1e-14)
    np.testing.assert_allclose(tr.layers[-1].weights["1"].sum(axis=0), 1.0, atol=1e-15)



def test_soft_hand_computed_toy():
    # points 0 and 2, centers 0 and 2, beta = ln(3)/4: r = softmax(-beta [0, 4]) = [3/4, 1/4]
    X = np.array([[0.0, 2.0]])
    C0 = np.array([[0.0, 2.0]])
    beta = np.log(3.0) / 4.0
    for tr in (soft_kmeans(X, C0, 1, beta), soft_kmeans_transformer(X, C0, 1, beta)):
        np.testing.assert_allclose(tr.assignments, [[0.75, 0.25], [0.25, 0.75]], atol=1e-15)
        # c_0 = (3/4 * 0 + 1/4 * 2) / 1 = 0.5, c_1 = 1.5
        np.testing.assert_allclose(tr.centers[1], [[0.5, 1.5]], atol=1e-15)



def test_soft_ties_share_and_label_lowest_index():
    X = np.array([[0.0, -3.0, 3.0]])
    C0 = np.array([[-1.0, 1.0]])
    for tr in (soft_kmeans(X, C0, 1, 2.0), soft_kmeans_transformer(X, C0, 1, 2.0)):
        assert tr.assignments[0, 0] == tr.assignments[1, 0] == 0.5
        assert tr.labels[0, 0] == 0



def test_soft_approaches_lloyd_as_beta_grows():
    X, C0 = blobs(3, d=2, n=60, k=3)
    ref = lloyd(X, C0, 6)
    errors = []
    for beta in (1e1, 1e2, 1e3, 1e4, 1e6):
        tr = soft_kmeans_transformer(X, C0, 6, beta)
        errors.append(np.abs(tr.centers - ref.centers).max())
    # the error falls with beta; at beta = 1e6 every other responsibility underflows: Lloyd to rounding
    assert errors == sorted(errors, reverse=True) and errors[-1] < 1e-15, errors
    np.testing.assert_array_equal(tr.labels, ref.labels)
    assert tr.one_hot[-1] == X.shape[1]  # responsibilities underflow to exact one-hot



def test_soft_tiny_beta_sends_every_center_to_the_mean():
    X, C0 = blobs(4, d=3, n=40, k=5)
    mean = X.mean(axis=1)
    for tr in (soft_kmeans(X, C0, 2, 1e-12), soft_kmeans_transformer(X, C0, 2, 1e-12)):
        np.testing.assert_allclose(tr.centers[1], np.tile(mean[:, None], (1, 5)), atol=1e-10)
        np.testing.assert_allclose(tr.assignments, 0.2, atol=1e-10)



def test_soft_underflowed_cluster_reference_keeps_transformer_raises():
    X = np.array([[0.0, 1.0, 2.0]])
    C0 = np.array([[1.0, 50.0]])  # beta * (50 - 2)^2 ~ 2e4: exp underflows to 0 for cluster 1
    ref = soft_kmeans(X, C0, 2, 10.0)
    np.testing.assert_array_equal(ref.centers[:, 0, 1], [50.0, 50.0, 50.0])
    assert not np.any(np.isnan(ref.centers))
    with pytest.raises(EmptyClusterError, match=r"beta=10\.0.*cluster 1 is empty at layer 1"):
        soft_kmeans_transformer(X, C0, 2, 10.0)
    # a beta small enough that nothing underflows: both agree
    np.testing.assert_allclose(soft_kmeans_transformer(X, C0, 2, 0.1).centers,
                               soft_kmeans(X, C0, 2, 0.1).centers, atol=1e-12)



@pytest.mark.parametrize("beta,exc", [(0.0, ValueError), (-1.0, ValueError), (float("nan"), ValueError),
                                      (float("inf"), ValueError), ("1", TypeError), (True, TypeError)])
def test_soft_bad_beta(beta, exc):
    X = np.array([[0.0, 1.0, 2.0]])
    for f in (soft_kmeans, soft_kmeans_transformer):
        with pytest.raises(exc, match="beta"):
            f(X, X[:, :2], 2, beta)



@pytest.mark.parametrize("name,X,C0", degenerate_cases(), ids=[c[0] for c in degenerate_cases()])
def test_variants_on_the_degenerate_table(name, X, C0):
    """Soft and spherical on the shared degenerate instances: equal to their references, never NaN."""
    nonzero = np.all(np.any(X != 0, axis=0)) and np.all(np.any(C0 != 0, axis=0))
    if nonzero:
        ref, trf = spherical_kmeans(X, C0, 4), spherical_kmeans_transformer(X, C0, 4)
        np.testing.assert_array_equal(trf.labels, ref.labels)
        np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-10)
    scale = np.max(np.abs(X)) ** 2
    beta = 1.0 / scale  # beta in units of the data: no underflow on these instances
    ref = soft_kmeans(X, C0, 4, beta)
    assert not np.any(np.isnan(ref.centers))
    try:
        trf = soft_kmeans_transformer(X, C0, 4, beta)
    except EmptyClusterError as exc:  # only where a cluster's responsibilities all underflow (far center)
        t, j = int(str(exc).split("layer ")[1].split(":")[0]) - 1, int(str(exc).split("cluster ")[1].split()[0])
        _, D = assign(X, ref.centers[t])
        assert np.sum(np.exp(-beta * (D - D.min(axis=0)))[j]) == 0.0
        np.testing.assert_array_equal(ref.centers[t + 1][:, j], ref.centers[t][:, j])  # the reference keeps
        return
    np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-10 * np.sqrt(scale))
