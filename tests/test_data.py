"""The built-in data (kmt_ref.data): shapes, seeding, and clear errors on bad arguments."""
import numpy as np
import pytest

from kmt_ref import lloyd
from kmt_ref.data import gaussian_blobs, toy_data, validation_data


def test_shapes_and_seeding():
    X, C0, truth = gaussian_blobs(3, 2, 4, std=0.2, rng=5)
    assert X.shape == (2, 12) and C0.shape == (2, 3) and truth.shape == (12,)
    np.testing.assert_array_equal(C0, X[:, :3])
    assert X.min() == 0.0 and X.max() == 1.0
    np.testing.assert_array_equal(X, gaussian_blobs(3, 2, 4, std=0.2, rng=np.random.default_rng(5))[0])
    X, C0 = validation_data()
    assert X.shape == (2, 10_000) and C0.shape == (2, 5)
    assert toy_data()[0].shape == (2, 24)


@pytest.mark.parametrize("std", [np.float32(0.25), np.float64(0.25), np.float16(0.25), 0.25])
def test_std_of_any_real_type(std):
    """np.float32(0.1) used to be refused; a NumPy scalar gives the draws of the same Python float."""
    expected = gaussian_blobs(3, 2, 5, std=float(std), rng=1)
    for got, want in zip(gaussian_blobs(3, 2, 5, std=std, rng=1), expected):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(gaussian_blobs(3, 2, 5, std=np.int64(2), rng=1)[0],
                                  gaussian_blobs(3, 2, 5, std=2, rng=1)[0])


@pytest.mark.parametrize("std, error, message", [
    (True, TypeError, "std must be a real number, got True"),
    ("0.1", TypeError, "std must be a real number, got '0.1'"),
    (None, TypeError, "std must be a real number, got None"),
    (np.nan, ValueError, "std=nan should be a finite number > 0"),
    (np.float32(np.nan), ValueError, "std=nan"),
    (-0.1, ValueError, "std=-0.1 should be"),
    (0, ValueError, "std=0.0 should be"),
    (np.inf, ValueError, "std=inf should be"),
])
def test_bad_std(std, error, message):
    with pytest.raises(error, match=message):
        gaussian_blobs(3, 2, 4, std=std)


def test_numpy_integer_seeds_and_counts():
    a = toy_data(np.int64(19), k=np.int32(3), n_per_cluster=np.uint8(8))
    for got, want in zip(a, toy_data(19, 3, 8)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(validation_data(np.int64(0))[0], validation_data(0)[0])


@pytest.mark.parametrize("seed, error, message", [
    ("a", TypeError, "{} must be a non-negative integer seed or a numpy.random.Generator, got 'a'"),
    (1.5, TypeError, "{} must be .* got 1.5"),
    (True, TypeError, "{} must be .* got True"),
    (None, TypeError, "{} must be .* got None"),
    (-1, ValueError, "{}=-1 should be >= 0"),
])
def test_bad_seed_names_the_argument(seed, error, message):
    """The seed is named seed in the messages (gaussian_blobs' argument is rng, but
    test_gaussian_blobs_bad_input below pins "seed=-1" for it)."""
    with pytest.raises(error, match="^" + message.format("seed")):
        gaussian_blobs(3, 2, 4, rng=seed)
    for f in (toy_data, validation_data):
        with pytest.raises(error, match="^" + message.format("seed")):
            f(seed)


@pytest.mark.parametrize("kwargs, message", [
    (dict(k=0), "k=0 should be >= 1"),
    (dict(d=2.0), "d must be an integer"),
    (dict(n_per_cluster=0), "n_per_cluster=0 should be >= 1"),
])
def test_bad_counts(kwargs, message):
    args = dict(k=3, d=2, n_per_cluster=4) | kwargs
    with pytest.raises((ValueError, TypeError), match=message):
        gaussian_blobs(**args)


# --------------------------------------------------------------------------
# the recipes of the validation data, the blobs and the toy example
# --------------------------------------------------------------------------
def test_validation_data_recipe():
    X, C0 = validation_data()
    assert X.shape == (2, 10_000) and C0.shape == (2, 5)
    assert X.dtype == np.float64
    np.testing.assert_array_equal(X.min(axis=1), [0.0, 0.0])
    np.testing.assert_array_equal(X.max(axis=1), [1.0, 1.0])
    np.testing.assert_array_equal(C0, X[:, :5])  # the first 5 (shuffled) points
    X2, C02 = validation_data(0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(C0, C02)
    assert not np.array_equal(X, validation_data(1)[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gaussian_blobs_equal_sizes_and_shuffled(seed):
    X, C0, truth = gaussian_blobs(5, 3, 40, std=0.1, rng=seed)
    assert X.shape == (3, 200) and C0.shape == (3, 5) and truth.shape == (200,)
    np.testing.assert_array_equal(np.bincount(truth), [40] * 5)
    assert not np.all(np.diff(truth) >= 0)  # shuffled, not in cluster order
    np.testing.assert_array_equal(C0, X[:, :5])
    assert np.all((X >= 0) & (X <= 1))


def test_gaussian_blobs_single_point_has_zero_range():
    X, C0, truth = gaussian_blobs(1, 2, 1, rng=0)
    np.testing.assert_array_equal(X, [[0.0], [0.0]])
    np.testing.assert_array_equal(C0, X)


@pytest.mark.parametrize(
    "kwargs, exc, fragment",
    [
        ({"k": 0, "d": 2, "n_per_cluster": 3}, ValueError, "k=0"),
        ({"k": 2, "d": 0, "n_per_cluster": 3}, ValueError, "d=0"),
        ({"k": 2, "d": 2, "n_per_cluster": 2.5}, TypeError, "n_per_cluster"),
        ({"k": 2, "d": 2, "n_per_cluster": 3, "std": 0.0}, ValueError, "std=0.0"),
        ({"k": 2, "d": 2, "n_per_cluster": 3, "std": float("nan")}, ValueError, "std=nan"),
        ({"k": 2, "d": 2, "n_per_cluster": 3, "rng": -1}, ValueError, "seed=-1"),
    ],
)
def test_gaussian_blobs_bad_input(kwargs, exc, fragment):
    with pytest.raises(exc, match=fragment):
        gaussian_blobs(**kwargs)


def test_toy_data():
    X, C0 = toy_data()
    assert X.shape == (2, 24) and C0.shape == (2, 3)
    # the default example: Lloyd needs two steps, then three clusters of 8
    tr = lloyd(X, C0, 4)
    np.testing.assert_array_equal(np.bincount(tr.labels[-1], minlength=3), [8, 8, 8])
    assert np.any(tr.labels[1] != tr.labels[0]) and np.array_equal(tr.labels[3], tr.labels[2])


# --------------------------------------------------------------------------
# the authors' validation draw (package data, tools/make_paper_validation_data.py)
# --------------------------------------------------------------------------
#: float32 sum of the entries of the authors' draw (the script checks it too)
PAPER_SUM = 9847.1943359375


def test_paper_validation_data_fingerprint():
    """The file is the authors' draw: their notebook's sum, min-max scaling and Lloyd curve."""
    from kmt_ref.data import PAPER_VALIDATION_FILE, paper_validation_data

    rows = np.load(PAPER_VALIDATION_FILE, allow_pickle=False)
    assert rows.dtype == np.float32 and rows.shape == (10_000, 2)
    assert float(rows.sum(dtype=np.float32)) == PAPER_SUM
    X, C0 = paper_validation_data()
    assert X.dtype == np.float64 and X.shape == (2, 10_000) and C0.shape == (2, 5)
    np.testing.assert_array_equal(X, rows.T)  # float32 -> float64 is exact
    np.testing.assert_array_equal(C0, X[:, :5])
    # min-max scaled per dimension: 0 and 1 are attained exactly (x - min, then / max)
    np.testing.assert_array_equal(X.min(axis=1), [0.0, 0.0])
    np.testing.assert_array_equal(X.max(axis=1), [1.0, 1.0])
    # Lloyd's log objective, 6.4422 -> 4.5929 over 10 iterations (the authors' curve)
    log_j = lloyd(X, C0, 10).log_objective
    assert round(log_j[0], 4) == 6.4422 and round(log_j[-1], 4) == 4.5929
    # a fresh copy each call: changing one does not change the next
    X[0, 0] = 7.0
    assert paper_validation_data()[0][0, 0] == rows[0, 0]
