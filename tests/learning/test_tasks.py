"""Tests for kmt_ref.learning.tasks: the task distribution of paper §4 (SPEC §6)."""
from pathlib import Path

import numpy as np
import pytest

from kmt_ref import lloyd
from kmt_ref.learning.tasks import FAMILIES, kmeans_plus_plus, minmax_scale, sample_task, sample_tasks


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("family", FAMILIES)
def test_tasks_are_scaled_shuffled_and_start_at_the_first_points(seed, family):
    X, C0 = sample_tasks(np.random.default_rng(seed), 3, n=40, d=5, k=4, family=family)
    assert X.shape == (3, 5, 40) and C0.shape == (3, 5, 4)
    np.testing.assert_allclose(X.min(axis=-1), 0.0)
    np.testing.assert_allclose(X.max(axis=-1), 1.0)
    np.testing.assert_array_equal(C0, X[:, :, :4])  # a random k-subset: the first k shuffled points


def test_tasks_are_reproducible_and_seed_dependent():
    a = sample_tasks(np.random.default_rng(5), 2, 30, 3, 2)
    b = sample_tasks(np.random.default_rng(5), 2, 30, 3, 2)
    c = sample_tasks(np.random.default_rng(6), 2, 30, 3, 2)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.allclose(a[0], c[0])
    X, C0 = sample_task(np.random.default_rng(5), 30, 3, 2)
    np.testing.assert_array_equal(X, a[0][0])


def test_minmax_scale_toy_and_constant_row():
    X = np.array([[1.0, 3.0, 2.0], [4.0, 4.0, 4.0]])
    np.testing.assert_allclose(minmax_scale(X), [[0.0, 1.0, 0.5], [0.0, 0.0, 0.0]])


def test_paper_task_distribution_matches_spec_lloyd_numbers():
    """SPEC §6 states the mean log objective of 320 tasks from ``default_rng(0)`` at t = 0 and t = 1.

    The draw is NumPy's PCG64 stream, the same on every machine, and Lloyd runs in float64: the means
    agree with the three decimals SPEC prints (measured 6.34131 and 5.58351), so the test asserts them
    to half a unit of the third decimal, and that SPEC prints exactly these.
    """
    X, C0 = sample_tasks(np.random.default_rng(0), 320, n=512, d=32, k=10)
    L = np.log(np.stack([lloyd(X[b], C0[b], 1).objective for b in range(320)]))
    t0, t1 = L[:, 0].mean(), L[:, 1].mean()
    assert abs(t0 - 6.341) < 5e-4 and abs(t1 - 5.584) < 5e-4, (t0, t1)
    spec = (Path(__file__).resolve().parents[2] / "docs" / "SPEC.md").read_text(encoding="utf-8")
    assert f"{t0:.3f} at t = 0 and {t1:.3f} at t = 1" in " ".join(spec.split())


@pytest.mark.parametrize("seed", [0, 1])
def test_kmeans_plus_plus_picks_distinct_data_points(seed):
    rng = np.random.default_rng(seed)
    X = rng.random((2, 50))
    C = kmeans_plus_plus(X, 5, np.random.default_rng(seed))
    cols = [int(np.flatnonzero(np.all(X == C[:, [j]], axis=0))[0]) for j in range(5)]
    assert len(set(cols)) == 5
    np.testing.assert_array_equal(C, kmeans_plus_plus(X, 5, np.random.default_rng(seed)))


def test_kmeans_plus_plus_duplicates_and_k_equals_n():
    X = np.array([[0.0, 0.0, 1.0]])
    C = kmeans_plus_plus(X, 3, np.random.default_rng(0))  # third pick: all distances 0 -> the unused point
    assert sorted(C[0]) == [0.0, 0.0, 1.0]


def test_tasks_with_kmeans_plus_plus_init():
    X, C0 = sample_tasks(np.random.default_rng(0), 2, 30, 2, 3, init="kmeans++")
    for b in range(2):
        for j in range(3):
            assert np.any(np.all(X[b] == C0[b][:, [j]], axis=0))


def test_task_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="family='uniform'"):
        sample_tasks(rng, 1, 10, 2, 2, family="uniform")
    with pytest.raises(ValueError, match="n=3 points should be >= k=4"):
        sample_tasks(rng, 1, 3, 2, 4)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        sample_tasks(0, 1, 10, 2, 2)
    with pytest.raises(ValueError, match="scale=-1.0"):
        sample_tasks(rng, 1, 10, 2, 2, scale=-1.0)
