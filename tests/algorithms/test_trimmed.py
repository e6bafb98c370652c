"""Trimmed k-means (kmt_ref/algorithms/trimmed.py): the normmax circuit equals its rule bit for bit; Cuesta-Albertos et al. (1997); the authors' per-cluster quantile rule.
"""
import warnings

import numpy as np
import pytest
from cases import all_cases

from kmt_ref.algorithms import (
    linear_quantile,
    trimmed_kmeans,
    trimmed_kmeans_attention,
    trimmed_kmeans_quantile,
    trimmed_kmeans_transformer,
    trimmed_size,
)
from kmt_ref.algorithms.lloyd import lloyd
from kmt_ref.algorithms.sparse_update import member_distance_bound  # the D^2 of separating_penalties
from kmt_ref.data import blobs_with_outliers
from kmt_ref.trace import nearest_center

T = 4



SHARED_CASES = all_cases()



# --------------------------------------------------------------------------
# hand-computed toys
# --------------------------------------------------------------------------
X_TOY = np.array([[0.0, 0.1, 0.2, 5.0]])



C_TOY = np.array([[0.0]])



# --------------------------------------------------------------------------
# invalid parameters
# --------------------------------------------------------------------------
X_OK = np.array([[0.0, 1.0, 2.0]])



C_OK = np.array([[0.0]])



def test_trimmed_whole_trajectory_bitwise_on_shared_cases():
    """Block 3's normmax(alpha=inf) is a uniform mean over disjoint supports: the attention code
    sums it in key order like the reference, so whole trajectories agree bit for bit."""
    for name, X, C0 in SHARED_CASES:
        tr = trimmed_kmeans_transformer(X, C0, T, 30.0)
        ref = trimmed_kmeans_attention(X, C0, T, 30.0)
        np.testing.assert_array_equal(tr.labels, ref.labels, err_msg=name)
        np.testing.assert_array_equal(tr.centers, ref.centers, err_msg=name)



@pytest.mark.parametrize("gamma2", [0.0, 3.0, 30.0])
def test_trimmed_equals_rule_with_penalties_just_above_the_stated_bound(gamma2):
    """The three conditions of trimmed_kmeans_transformer's Notes with a margin of 1e-3 each (far below the
    default's one unit): the circuit equals the rule on every case. At exact equality an empty cluster whose
    center sits on another cluster's point (random14_dups) puts that point exactly 1 below its own token, a
    tie the rounding of the scores decides: the conditions hold in exact arithmetic, rounding needs a margin."""
    margin = 1e-3
    for name, X, C0 in SHARED_CASES:
        flag = gamma2 * member_distance_bound(np.asarray(X, float), np.asarray(C0, float)) + 1.0 + margin
        tr = trimmed_kmeans_transformer(X, C0, T, gamma2, gamma1=(flag + 1.0 + margin) / 2, gamma_flag=flag)
        ref = trimmed_kmeans_attention(X, C0, T, gamma2)
        np.testing.assert_array_equal(tr.labels, ref.labels, err_msg=name)
        np.testing.assert_array_equal(tr.centers, ref.centers, err_msg=name)


def test_trimmed_penalty_condition_is_on_gamma2_D2_not_on_gamma2():
    """The condition 2 gamma1 >= gamma2 D^2 + 1 depends on the data's scale: on tiny data gamma1 far below
    gamma2 is exact; on the same data times 1000 (gamma2 scaled to match) gamma1 = 100 gamma2 breaks it,
    and a non-member (the point at 60, nearer to center 0 than its member at -90) captures center 0."""
    X, C0 = np.array([[-0.09, 0.06, 0.2]]), np.array([[0.0, 0.1]])  # D = 0.29
    flag = 1000.0 * 0.29**2 + 1.0  # 85.1
    tiny = trimmed_kmeans_transformer(X, C0, 3, 1000.0, gamma1=(flag + 1.0) / 2, gamma_flag=flag)  # gamma1 = 43.05
    np.testing.assert_array_equal(tiny.centers, trimmed_kmeans_attention(X, C0, 3, 1000.0).centers)
    Xb, Cb = 1000.0 * X, 1000.0 * C0
    ref = trimmed_kmeans_attention(Xb, Cb, 1, 1e-3)
    np.testing.assert_array_equal(ref.centers[-1], [[-90.0, 60.0]])
    ok = trimmed_kmeans_transformer(Xb, Cb, 1, 1e-3, gamma1=(flag + 1.0) / 2, gamma_flag=flag)
    np.testing.assert_array_equal(ok.centers, ref.centers)
    bad = trimmed_kmeans_transformer(Xb, Cb, 1, 1e-3, gamma1=0.1)  # 2 gamma1 = 0.2 < gamma2 D^2 + 1 = 85.1
    np.testing.assert_array_equal(bad.centers[-1], [[60.0, 60.0]])


def test_trimmed_toy():
    # gamma2 = 1: z = -[0, .01, .04, 25]; (sum of the s largest z - 1)/s = -1, -.505, -.35, -6.5 -> s* = 3:
    # the outlier is trimmed
    for fn in (trimmed_kmeans_attention, trimmed_kmeans_transformer):
        tr = fn(X_TOY, C_TOY, 1, 1.0)
        np.testing.assert_allclose(tr.centers[1], [[0.1]], atol=1e-15)
        tr0 = fn(X_TOY, C_TOY, 1, 0.0)  # gamma2 = 0: no trimming, the mean
        np.testing.assert_allclose(tr0.centers[1], [[1.325]], atol=1e-15)
    assert trimmed_kmeans_attention(X_TOY, C_TOY, 1, 1.0).info["kept"].tolist() == [[True, True, True, False]]



def test_trimming_grows_with_gamma2():
    X, C0, is_out = blobs_with_outliers(rng=np.random.default_rng(1))
    kept = [trimmed_kmeans_attention(X, C0, 3, g).info["kept"][-1].sum() for g in (0.0, 1.0, 10.0, 100.0, 1e8)]
    assert kept[0] == X.shape[1]
    assert all(b <= a for a, b in zip(kept, kept[1:])) and kept[-1] == C0.shape[1]
    # at a moderate gamma2 the far outliers are the ones trimmed
    tr = trimmed_kmeans_attention(X, C0, 3, 10.0)
    assert not tr.info["kept"][-1][is_out].any()



# --------------------------------------------------------------------------
# Cuesta-Albertos, Gordaliza & Matran (1997)
# --------------------------------------------------------------------------
def test_trimmed_size():
    assert trimmed_size(10, 0.0) == 10
    assert trimmed_size(10, 0.7) == 3  # (1 - .7) * 10 = 3.0000000000000004 in floating point
    assert trimmed_size(10, 0.25) == 8
    assert trimmed_size(3, 0.99) == 1



def test_trimmed_kmeans_toy_and_lloyd_limit():
    X = np.array([[0.0, 1.0, 2.0, 100.0]])
    tr = trimmed_kmeans(X, C_TOY, 2, 0.25)  # h = 3: the point at 100 is trimmed
    np.testing.assert_allclose(tr.centers[1], [[1.0]])
    np.testing.assert_array_equal(tr.labels[0], [0, 0, 0, -1])
    np.testing.assert_allclose(tr.info["trimmed_objective"], [5.0, 2.0, 2.0])
    Xb, C0, _ = blobs_with_outliers(rng=np.random.default_rng(2))
    a, b = trimmed_kmeans(Xb, C0, 4, 0.0), lloyd(Xb, C0, 4)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.centers, b.centers)  # alpha = 0 is Lloyd, bit for bit



@pytest.mark.parametrize("seed", range(5))
def test_trimmed_objective_never_increases(seed):
    X, C0, _ = blobs_with_outliers(rng=np.random.default_rng(seed))
    obj = trimmed_kmeans(X, C0, 8, 0.1).info["trimmed_objective"]
    assert np.all(np.diff(obj) <= 1e-12 * obj[0])



@pytest.mark.parametrize("rho", [-0.1, 1.0, 1.5, np.nan])
def test_trimming_proportion_outside_unit_interval(rho):
    with pytest.raises(ValueError, match="rho"):
        trimmed_kmeans(X_OK, C_OK, 1, rho)
    with pytest.raises(ValueError, match="rho"):
        trimmed_kmeans(X_OK, C_OK, 1, rho=rho)


def test_trimming_proportion_is_rho_and_alpha_is_deprecated():
    """rho= is the name; alpha= still works for one release, with a DeprecationWarning naming rho."""
    X, C0, _ = blobs_with_outliers(rng=np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # rho= (and the positional form) warns about nothing
        new = trimmed_kmeans(X, C0, 3, rho=0.1)
        np.testing.assert_array_equal(trimmed_kmeans(X, C0, 3, 0.1).centers, new.centers)
    assert new.info["rho"] == 0.1 and "alpha" not in new.info
    with pytest.warns(DeprecationWarning, match="rho"):
        old = trimmed_kmeans(X, C0, 3, alpha=0.1)
    np.testing.assert_array_equal(old.centers, new.centers)
    np.testing.assert_array_equal(old.labels, new.labels)
    with pytest.raises(TypeError, match="rho"):
        trimmed_kmeans(X, C0, 3, rho=0.1, alpha=0.1)
    with pytest.raises(TypeError, match="rho"):
        trimmed_kmeans(X, C0, 3)



# --------------------------------------------------------------------------
# The authors' rule (utils.trimmed_iters): per cluster, the members strictly below the q-quantile
# --------------------------------------------------------------------------
@pytest.mark.parametrize("q", [0.95, 0.5, 0.9, 1.0, 0.01, 0.3333])
def test_linear_quantile_is_numpys_bit_for_bit(q):
    rng = np.random.default_rng(int(q * 1e4))
    for m in list(range(1, 45)) + [100, 101, 999]:
        v = np.sort(rng.exponential(size=m) * 10.0 ** rng.integers(-5, 6))
        assert linear_quantile(v, q) == np.quantile(v, q, method="linear"), m


def test_quantile_rule_toy():
    # D = [0, 1, 4, 100]: h = 3 * .95 = 2.85, tau = 100 - 96 * .15 = 85.6 -> keep 0, 1, 2: c = 1;
    # then D = [1, 0, 1, 81]: tau = 81 - 80 * .15 = 69 -> the same three, c = 1
    tr = trimmed_kmeans_quantile(np.array([[0.0, 1.0, 2.0, 10.0]]), C_TOY, 2)
    np.testing.assert_array_equal(tr.centers.ravel(), [0.0, 1.0, 1.0])
    assert tr.info["kept"].tolist() == [[True, True, True, False]] * 2
    assert not tr.info["stalled"].any()
    # two clusters: {0, 1, 3} around 0 drops 3 (D = 0, 1, 9: tau = 8.2), {10, 12} around 10.5 keeps 10
    # (m = 2: the closer one)
    X = np.array([[0.0, 1.0, 3.0, 10.0, 12.0]])
    tr = trimmed_kmeans_quantile(X, np.array([[0.0, 10.5]]), 1)
    np.testing.assert_array_equal(tr.centers[1], [[0.5, 10.0]])


def test_quantile_rule_keeps_ceil_q_m_minus_1_of_distinct_distances():
    rng = np.random.default_rng(0)
    for m in range(2, 64):
        for q in (0.95, 0.5):
            X = rng.permutation(np.arange(1.0, m + 1.0))[None, :] * rng.choice([-1.0, 1.0], m)  # distinct |x|
            kept = trimmed_kmeans_quantile(X, C_OK, 1, q).info["kept"][0]
            assert kept.sum() == np.ceil(round(q * (m - 1), 9)), (m, q)
            assert np.abs(X[0, kept]).max() < np.abs(X[0, ~kept]).min()  # the closest ones
    # q = .95: up to 20 members only the farthest goes, 21 lose two
    assert [int(np.ceil(round(0.95 * (m - 1), 9))) for m in (2, 20, 21, 41)] == [1, 19, 19, 38]


@pytest.mark.parametrize(
    "X,C0,center,stalled",
    [
        (np.array([[0.0, 2.0]]), np.array([[1.0, 50.0]]), [[1.0, 50.0]], [[True, False]]),  # both at 1: none below
        (np.array([[-1.0, 1.0, 9.0]]), np.array([[0.0, 9.5]]), [[0.0, 9.5]], [[True, True]]),  # tie pair; singleton
        (np.array([[0.0, 2.0, -2.0]]), C_OK, [[0.0]], [[False]]),  # tau = 4: the tied pair at the cut is dropped
        (np.array([[0.0, 1.0, 2.0]]), np.array([[1.0, -50.0]]), [[1.0, -50.0]], [[False, False]]),  # empty: kept
    ],
)
def test_quantile_rule_degenerate_clusters_keep_their_center(X, C0, center, stalled):
    tr = trimmed_kmeans_quantile(X, C0, 1)
    np.testing.assert_array_equal(tr.centers[1], center)
    np.testing.assert_array_equal(tr.info["stalled"], stalled)  # empty clusters are not "stalled"
    assert not np.isnan(tr.centers).any()


def _quantile_rule_independently(X, C0, T, q):
    """The authors' loop transcribed with NumPy's own quantile and masks (no frame). The assignment is
    Lloyd's (kmt_ref.trace.nearest_center, tested against Lloyd elsewhere): rounding of non-dyadic
    centers decides near-ties, and the two must decide them alike."""
    C = C0.astype(float).copy()
    out = [C.copy()]
    for _ in range(T):
        lab, _ = nearest_center(X, C)
        sqd = ((X - C[:, lab]) ** 2).sum(axis=0)  # (n,)
        C_new = C.copy()
        for j in range(C.shape[1]):
            mem = lab == j
            if mem.any():
                keep = mem & (sqd < np.quantile(sqd[mem], q))
                if keep.any():
                    C_new[:, j] = X[:, keep].mean(axis=1)
        C = C_new
        out.append(C.copy())
    return np.stack(out)


def test_quantile_rule_equals_an_independent_transcription_on_shared_cases():
    checked = 0
    for name, X, C0 in SHARED_CASES:
        if np.abs(X).max() > 1e3 or np.abs(X).max() < 1e-3:
            continue  # far-off or tiny data: the frame moves them and rounding may decide a tie differently
        ref = _quantile_rule_independently(X, C0, T, 0.95)
        tr = trimmed_kmeans_quantile(X, C0, T, 0.95)
        np.testing.assert_allclose(tr.centers, ref, rtol=0, atol=1e-12 * max(1.0, np.abs(X).max()), err_msg=name)
        checked += 1
    assert checked >= 150


def test_quantile_rule_compared_with_the_other_two():
    X = np.array([[0.0, 1.0, 2.0, 100.0]])
    # one cluster of 4: the quantile keeps ceil(.95 * 3) = 3 -- as Cuesta-Albertos with h = 3 and as
    # normmax where it trims the one outlier (gamma2 = .1: (sum of the s largest z - 1)/s = -1, -.55, -.5, -250.4 -> s* = 3)
    q = trimmed_kmeans_quantile(X, C_TOY, 1)
    np.testing.assert_array_equal(q.centers[1], trimmed_kmeans(X, C_TOY, 1, 0.25).centers[1])
    np.testing.assert_array_equal(q.centers[1], trimmed_kmeans_attention(X, C_TOY, 1, 0.1).centers[1])
    # no outlier: the quantile still drops the farthest member, normmax at small gamma2 keeps all (Lloyd)
    Y = np.array([[0.0, 1.0, 2.0, 3.0]])
    assert trimmed_kmeans_quantile(Y, C_TOY, 1).info["kept"].sum() == 3
    assert trimmed_kmeans_attention(Y, C_TOY, 1, 0.01).info["kept"].sum() == 4


@pytest.mark.parametrize("q,exc,match", [(0.0, ValueError, r"q=0.0 should be in \(0.0, 1.0\]"),
                                         (1.5, ValueError, "q=1.5"), ("0.9", TypeError, "q must be a real"),
                                         (float("nan"), ValueError, "q=nan")])
def test_quantile_rule_bad_q(q, exc, match):
    with pytest.raises(exc, match=match):
        trimmed_kmeans_quantile(X_OK, C_OK, 1, q)
    with pytest.raises(ValueError, match="empty='reseed'"):
        trimmed_kmeans_quantile(X_OK, C_OK, 1, empty="reseed")


def test_trimmed_far_empty_center_does_not_swamp_the_members():
    """A far initial center that stays empty does not enter the penalties: the circuit trims as the rule does."""
    X, C0 = np.array([[0.0, 0.1, 0.7, 1.0]]), np.array([[0.5, 1e8]])
    ref = trimmed_kmeans_attention(X, C0, 2, 4.0)
    tr = trimmed_kmeans_transformer(X, C0, 2, 4.0)
    np.testing.assert_array_equal(ref.centers[1], [[(0.1 + 0.7) / 2, 1e8]])  # the two closest kept
    np.testing.assert_array_equal(tr.centers, ref.centers)
    np.testing.assert_array_equal(tr.labels, ref.labels)


def test_trimmed_exact_criterion_tie_is_decided_alike():
    """Scores [0, 0, -1/2]: (z_{1:s} - 1)/s is -1/2 at s = 2 and at s = 3, an exact tie the rule gives to the
    largest s. Both sides compute the same shifted scores, so both keep all three points (mean 4/3)."""
    X, C0 = np.array([[1.0, 1.0, 2.0]]), np.array([[1.0, 1.0]])
    ref = trimmed_kmeans_attention(X, C0, 3, 0.5)
    tr = trimmed_kmeans_transformer(X, C0, 3, 0.5)
    assert ref.centers[1, 0, 0] == 4.0 / 3.0
    np.testing.assert_array_equal(tr.centers, ref.centers)
    np.testing.assert_array_equal(tr.labels, ref.labels)


def test_trimmed_default_penalties_on_the_integer_case():
    """The shared integer case at gamma2 = 0.5, with the default penalties: bit for bit at every layer."""
    cases = {name: (X, C0) for name, X, C0 in all_cases()}
    X, C0 = cases["random131_ints_d4_n45_k6"]
    ref = trimmed_kmeans_attention(X, C0, 6, 0.5)
    tr = trimmed_kmeans_transformer(X, C0, 6, 0.5)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_array_equal(tr.centers, ref.centers)


def test_trimmed_far_singleton_moves_onto_its_point():
    """A singleton 1e9 from its center: scores of size 1e17 do not swallow the criterion's -1."""
    for fn in (trimmed_kmeans_attention, trimmed_kmeans_transformer):
        np.testing.assert_array_equal(fn([[0.0]], [[1e9]], 1, 0.25).centers[1], [[0.0]], err_msg=fn.__name__)


def test_deprecated_alpha_is_named_in_the_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ValueError, match=r"alpha=1 should be in \[0, 1\)"):
            trimmed_kmeans([[0.0, 1.0, 2.0]], [[1.0]], 1, alpha=1)
    with pytest.raises(ValueError, match=r"rho=1 should be"):
        trimmed_kmeans([[0.0, 1.0, 2.0]], [[1.0]], 1, rho=1)
