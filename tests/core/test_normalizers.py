"""Every attention normalizer (SPEC §2): golden values, the simplex, extremes, limits, sampling.

Golden values are SPEC §2's (sparsemax: Martins & Astudillo 2016; normmax: the
``entmax`` package's own test). The Gumbel sampler is checked with a chi-square
test against the softmax probabilities, and the same test is shown to reject
when the noise is removed.
"""
import numpy as np
import pytest
from scipy.stats import chisquare

from kmt_ref.core.normalizers import (
    GUMBEL_RANGE,
    NORMALIZERS,
    SHIFT_INVARIANT,
    get_normalizer,
    gumbel,
    gumbel_noise,
    hardmax,
    hardmax_average,
    linear,
    normmax,
    simplex_threshold,
    softmax,
    sparsemax,
)

Z5 = np.array([0.0, 0.25, 0.5, 0.75, 1.0])

# normalizers that map any real scores to the simplex (linear needs s >= 0)
SIMPLEX = ["softmax", "hardmax", "hardmax_average", "sparsemax", "normmax", "normmax_inf", "gumbel", "gumbel_hard"]


def call(name, S, gamma=1.0, axis=0, seed=0):
    rng = np.random.default_rng(seed)
    if name == "normmax_inf":
        return normmax(S, gamma, axis=axis, alpha=np.inf)
    if name == "gumbel_hard":
        return gumbel(S, gamma, axis=axis, rng=rng, hard=True)
    return get_normalizer(name)(S, gamma=gamma, axis=axis, rng=rng)


def assert_simplex(W, axis=0):
    assert np.all(np.isfinite(W))
    assert np.all(W >= 0)
    np.testing.assert_allclose(np.sum(W, axis=axis), 1.0, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------
# golden values
# --------------------------------------------------------------------------
@pytest.mark.parametrize("z, expected", [
    (Z5, [0, 0, 1 / 12, 1 / 3, 7 / 12]),
    ([1.0, 1.0, 0.0], [0.5, 0.5, 0.0]),
    ([3.0, 1.0, 0.0], [1.0, 0.0, 0.0]),
])
def test_sparsemax_golden(z, expected):
    np.testing.assert_allclose(sparsemax(np.array(z)), expected, atol=1e-15)


@pytest.mark.parametrize("alpha, expected, atol", [
    (2.0, [0, 0.0239, 0.1746, 0.3254, 0.4761], 6e-5),
    (1000.0, [0, 0, 0.3330, 0.3334, 0.3336], 6e-5),
    (np.inf, [0, 0, 1 / 3, 1 / 3, 1 / 3], 1e-15),
])
def test_normmax_golden(alpha, expected, atol):
    np.testing.assert_allclose(normmax(Z5, alpha=alpha), expected, rtol=0, atol=atol)


def test_normmax_solves_its_optimisation_problem():
    """p maximises <p, z> - ||p||_alpha: no random simplex point does better."""
    rng = np.random.default_rng(3)
    for alpha in (1.5, 2.0, 4.0):
        z = rng.normal(size=6)
        p = normmax(z, alpha=alpha)
        best = p @ z - np.linalg.norm(p, alpha)
        Q = rng.dirichlet(np.ones(6) * 0.3, size=4000)  # (4000, 6)
        others = Q @ z - np.linalg.norm(Q, alpha, axis=1)
        assert best >= others.max() - 1e-12


def test_softmax_hardmax_linear_golden():
    np.testing.assert_allclose(softmax(np.array([0.0, np.log(3.0)])), [0.25, 0.75], atol=1e-15)
    np.testing.assert_array_equal(hardmax(np.array([1.0, 3.0, 3.0])), [0, 1, 0])  # ties: lowest index
    np.testing.assert_allclose(hardmax_average(np.array([1.0, 3.0, 3.0])), [0, 0.5, 0.5])
    np.testing.assert_allclose(linear(np.array([1.0, 3.0, 0.0])), [0.25, 0.75, 0.0])
    np.testing.assert_array_equal(linear(np.zeros(3)), np.zeros(3))  # documented: no member -> zeros


def test_simplex_threshold_is_the_max_formula():
    z = np.array([[0.3, -1.0], [0.2, 5.0], [-4.0, 5.0]])
    tau = simplex_threshold(z, axis=0)
    assert tau.shape == (1, 2)
    np.testing.assert_allclose(tau[0], [max(0.3 - 1, (0.5 - 1) / 2, (-3.5 - 1) / 3), 4.5])


# --------------------------------------------------------------------------
# the simplex, on random inputs with ties, large values, length 1
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", SIMPLEX)
@pytest.mark.parametrize("seed", range(5))
def test_simplex_random_with_ties(name, seed):
    rng = np.random.default_rng(seed)
    S = rng.integers(-3, 4, size=(7, 5)).astype(float)  # many exact ties per column
    S[:, 0] = 2.0  # a column of equal scores
    W = call(name, S, gamma=rng.uniform(0.1, 5))
    assert W.shape == S.shape
    assert_simplex(W)


@pytest.mark.parametrize("name", SIMPLEX)
@pytest.mark.parametrize("magnitude", [1e-300, 1e6, 1e15, 1e300])
def test_simplex_large_and_tiny_values(name, magnitude):
    S = magnitude * np.array([[1.0, -1.0], [-1.0, -1.0], [0.5, 1.0]])
    for gamma in (1.0, 1e12):
        W = call(name, S, gamma=gamma)
        assert_simplex(W)
        if name != "gumbel" and magnitude >= 1e6:
            assert W[0, 0] == pytest.approx(1.0) and W[2, 1] == pytest.approx(1.0)


@pytest.mark.parametrize("name", SIMPLEX + ["linear"])
def test_length_one(name):
    S = np.array([[7.5, 2.0]]) if name == "linear" else np.array([[-7.5, 2.0]])  # linear needs s >= 0
    W = call(name, S)
    np.testing.assert_array_equal(W, [[1.0, 1.0]])


@pytest.mark.parametrize("name", SIMPLEX)
def test_axis_and_batch(name):
    """Normalizing along axis=-2 of a batch (B, r, q) equals column-by-column calls (same noise order aside)."""
    rng = np.random.default_rng(1)
    S = rng.normal(size=(3, 6, 4))
    W = call(name, S, gamma=2.0, axis=-2)
    assert_simplex(W, axis=-2)
    if not name.startswith("gumbel"):
        for b in range(3):
            for q in range(4):
                np.testing.assert_allclose(W[b, :, q], call(name, S[b, :, q], gamma=2.0), atol=1e-12)


@pytest.mark.parametrize("name", sorted(SHIFT_INVARIANT))
def test_shift_invariance(name):
    rng = np.random.default_rng(2)
    S = rng.normal(size=(5, 3))
    shift = np.array([[3.0, -100.0, 0.5]])
    np.testing.assert_allclose(call(name, S + shift, 1.5), call(name, S, 1.5), atol=1e-12)


def test_registry():
    for name in ("softmax", "hardmax", "hardmax_average", "linear", "sparsemax", "normmax", "gumbel"):
        assert NORMALIZERS[name] is get_normalizer(name)
    with pytest.raises(ValueError, match="normalizer='nope'"):
        get_normalizer("nope")


# --------------------------------------------------------------------------
# softmax for gamma up to 1e12; gamma limits of the sparse maps
# --------------------------------------------------------------------------
@pytest.mark.parametrize("gamma", [1.0, 1e3, 1e6, 1e9, 1e12])
def test_softmax_huge_gamma(gamma):
    S = np.array([[0.0, 1e6], [-1e-3, 1e6], [-5.0, -1e6]])
    W = softmax(S, gamma)
    assert_simplex(W)
    if gamma >= 1e6:
        np.testing.assert_allclose(W[:, 0], [1, 0, 0], atol=1e-300)
        np.testing.assert_allclose(W[:, 1], [0.5, 0.5, 0])  # tie -> averaging limit


@pytest.mark.parametrize("name", ["softmax", "sparsemax", "normmax", "normmax_inf"])
def test_gamma_limits(name):
    S = np.array([2.0, 2.0, 1.0, -3.0])
    np.testing.assert_allclose(call(name, S, gamma=np.inf), [0.5, 0.5, 0, 0])
    np.testing.assert_allclose(call(name, S, gamma=0.0), [0.25] * 4, atol=1e-15)
    np.testing.assert_allclose(call(name, S, gamma=1e8), [0.5, 0.5, 0, 0], atol=1e-7)


def test_sparse_maps_have_exact_zeros_and_equal_ties():
    z = np.array([1.0, 1.0, 0.9, -2.0])
    for W in (sparsemax(z), normmax(z, alpha=np.inf), normmax(z, alpha=3.0)):
        assert W[3] == 0.0
        assert W[0] == W[1]


# --------------------------------------------------------------------------
# finite-alpha normmax -> the alpha = inf closed form
# --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_normmax_tends_to_closed_form(seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=8) * 0.6
    limit = normmax(z, alpha=np.inf)
    errors = [np.abs(normmax(z, alpha=a) - limit).max() for a in (10.0, 1e2, 1e3, 1e4, 1e6)]
    assert all(b <= a + 1e-12 for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 1e-4
    np.testing.assert_array_equal(limit > 0, normmax(z, alpha=1e6) > 1e-3)


def test_normmax_inf_tie_at_the_top_gap_one_is_one_hot():
    """z = [1, 0] and [1, 0, 0]: every s ties (the top is exactly 1 above the rest); the finite
    solution is the one-hot at every alpha (Proof 2, case |A| = 1), and so is the limit."""
    for z in (np.array([1.0, 0.0]), np.array([1.0, 0.0, 0.0])):
        one_hot = np.eye(z.size)[0]
        np.testing.assert_array_equal(normmax(z, alpha=np.inf), one_hot)
        for a in (2.0, 50.0, 1e7):
            np.testing.assert_allclose(normmax(z, alpha=a), one_hot, atol=1e-12)


# (scores, the alpha -> inf limit): ties between several maximisers s of (z_{1:s} - 1)/s with |A| >= 2
TIES = [
    ([1.0, 0.8, 0.4], [1 / 3, 1 / 3, 1 / 3]),            # s = 2, 3 tie: (1.8 - 1)/2 = (2.2 - 1)/3 = 0.4
    ([1.0, 0.8, 0.4, 0.4, -3.0], [0.25, 0.25, 0.25, 0.25, 0.0]),  # s = 2, 3, 4 tie
    ([0.5, 0.5, 0.0, -1.0], [1 / 3, 1 / 3, 1 / 3, 0.0]),  # s = 2, 3 tie, tied maximum
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0, 0, 1 / 3, 1 / 3, 1 / 3]),  # no tie (the golden value)
]


@pytest.mark.parametrize("z,limit", TIES)
def test_normmax_inf_at_ties_is_the_limit_of_large_finite_alpha(z, limit):
    """The closed form is the largest maximiser s* (Proof 2, case |A| >= 2), and the bisection
    approaches it: the error shrinks with alpha and is below 1e-6 at alpha = 1e7. The smallest
    maximiser (e.g. [1/2, 1/2, 0] for the first case) is not the limit."""
    z, limit = np.array(z), np.array(limit)
    np.testing.assert_array_equal(normmax(z, alpha=np.inf), limit)
    errors = [np.abs(normmax(z, alpha=a) - limit).max() for a in (1e3, 1e5, 1e7)]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-6, errors
    np.testing.assert_array_equal(normmax(z, alpha=np.inf) > 0, normmax(z, alpha=1e7) > 1e-3)
    # a reordering changes nothing; the support is {z >= tau}, decided on z - max z
    perm = np.random.default_rng(0).permutation(z.size)
    np.testing.assert_array_equal(normmax(z[perm], alpha=np.inf), limit[perm])
    shifted = z - z.max()
    np.testing.assert_array_equal(normmax(z, alpha=np.inf) > 0, shifted >= simplex_threshold(shifted)[0])


def test_sparsemax_threshold_solves_the_kkt_equation():
    """Proof in simplex_threshold: tau = max_s (z_{1:s} - 1)/s is the root of sum [z - t]_+ = 1."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        z = rng.normal(size=7) * rng.choice([0.1, 1.0, 10.0])
        tau = simplex_threshold(z)[0]
        np.testing.assert_allclose(np.sum(np.maximum(z - tau, 0.0)), 1.0, rtol=1e-12)
        assert z.max() - 1 <= tau < z.max()


def test_normmax_alpha2_differs_from_sparsemax():
    """normmax_2 penalises the 2-norm, not its square: it is not sparsemax (entmax_2)."""
    assert not np.allclose(normmax(Z5, alpha=2.0), sparsemax(Z5))


# --------------------------------------------------------------------------
# Gumbel
# --------------------------------------------------------------------------
def test_gumbel_noise_is_finite_and_seeded():
    G = gumbel_noise(np.random.default_rng(5), (1000, 30))
    assert np.all(np.isfinite(G))
    assert GUMBEL_RANGE[0] <= G.min() and G.max() <= GUMBEL_RANGE[1]
    np.testing.assert_array_equal(G, gumbel_noise(np.random.default_rng(5), (1000, 30)))
    assert abs(G.mean() - np.euler_gamma) < 0.02  # E[Gumbel] = Euler's constant
    assert GUMBEL_RANGE[0] == pytest.approx(-np.log(-np.log(2.0**-53)))


def test_gumbel_noise_extremes_stay_finite():
    """The smallest and largest uniforms the sampler can produce give finite noise (no log(0))."""

    class Extremes(np.random.Generator):  # returns the two extreme integers the sampler can draw
        def integers(self, low, high, size=None):
            return np.array([low, high - 1])

    G = gumbel_noise(Extremes(np.random.PCG64(0)), (2,))
    assert np.all(np.isfinite(G))
    np.testing.assert_allclose(G, GUMBEL_RANGE)


def _gumbel_frequencies(logits, draws, noise_off=False):
    rng = np.random.default_rng(2024)
    S = np.repeat(logits[:, None], draws, axis=1)  # (r, draws): one sample per column
    noise = np.zeros(S.shape) if noise_off else None
    W = gumbel(S, 1.0, axis=0, rng=rng, hard=True, noise=noise)
    return W.sum(axis=1)


def test_gumbel_hard_chi_square_matches_softmax():
    logits = np.array([0.3, -0.5, 1.2, 0.0, -2.0, 0.9])
    p = softmax(logits)
    counts = _gumbel_frequencies(logits, 20_000)
    assert counts.sum() == 20_000
    stat, pvalue = chisquare(counts, 20_000 * p)
    assert pvalue > 1e-3, (counts, 20_000 * p, pvalue)


def test_gumbel_chi_square_fails_without_noise():
    """The same test rejects a sampler whose noise was removed (it always returns the argmax)."""
    logits = np.array([0.3, -0.5, 1.2, 0.0, -2.0, 0.9])
    counts = _gumbel_frequencies(logits, 20_000, noise_off=True)
    np.testing.assert_array_equal(counts, [0, 0, 20_000, 0, 0, 0])
    stat, pvalue = chisquare(counts, 20_000 * softmax(logits))
    assert pvalue < 1e-10


def test_gumbel_soft_and_inf():
    rng = np.random.default_rng(0)
    S = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 5.0]])
    W = gumbel(S, 1.0, rng=rng, tau=0.5)
    assert_simplex(W) and np.all(W > 0)
    # gamma = inf: only the maxima can be picked; a tie is broken uniformly by the noise
    picks = np.array([gumbel(S, np.inf, rng=rng, hard=True)[:, 0] for _ in range(2000)])
    assert picks[:, 2].sum() == 0
    assert 900 < picks[:, 0].sum() < 1100
    # same seed -> same sample; noise=0 -> the argmax (lowest index on ties)
    a = gumbel(S, 2.0, rng=np.random.default_rng(9), hard=True)
    b = gumbel(S, 2.0, rng=np.random.default_rng(9), hard=True)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(gumbel(S, 2.0, noise=np.zeros(S.shape), hard=True), hardmax(S))


def test_gumbel_relaxed_at_inf_is_random_weights_on_the_maxima_not_a_pick():
    """gamma = inf with hard=False: softmax(g / tau) over the maxima's noise (tau the temperature), so the
    weights sit on the maximum set, are neither one-hot nor uniform, and change with the draw; only hard=True
    is a uniform pick."""
    rng = np.random.default_rng(0)
    S = np.array([[1.0], [1.0], [0.0]])
    W = np.stack([gumbel(S, np.inf, rng=rng)[:, 0] for _ in range(200)])  # (200, 3)
    assert np.all(W[:, 2] == 0) and np.allclose(W.sum(axis=1), 1.0)
    assert np.all((W[:, 0] > 0) & (W[:, 0] < 1))  # never a pick
    assert np.ptp(W[:, 0]) > 0.5  # nor a fixed (uniform) weight: it moves with the noise
    g = np.array([[0.3], [-0.2], [1.0]])
    np.testing.assert_allclose(gumbel(S, np.inf, noise=g, tau=0.5)[:2, 0], softmax(np.array([0.3, -0.2]) / 0.5))


# --------------------------------------------------------------------------
# invalid parameters
# --------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [1.0, 0.5, -2.0, np.nan])
def test_normmax_rejects_alpha_at_most_one(alpha):
    with pytest.raises(ValueError, match="alpha"):
        normmax(Z5, alpha=alpha)


@pytest.mark.parametrize("name", ["sparsemax", "normmax", "gumbel"])
@pytest.mark.parametrize("gamma", [-1.0, np.nan])
def test_rejects_bad_gamma(name, gamma):
    with pytest.raises(ValueError, match="gamma"):
        call(name, Z5, gamma=gamma)


def test_rejects_bad_types_and_inputs():
    with pytest.raises(TypeError, match="alpha"):
        normmax(Z5, alpha="2")
    with pytest.raises(ValueError, match="rng"):
        gumbel(Z5)
    with pytest.raises(TypeError, match="Generator"):
        gumbel(Z5, rng=3)
    with pytest.raises(ValueError, match="tau"):
        gumbel(Z5, rng=np.random.default_rng(0), tau=0.0)
    with pytest.raises(ValueError, match="finite"):
        sparsemax(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="noise"):
        gumbel(Z5, noise=np.zeros(3))


# --------------------------------------------------------------------------
# bad input gets a clear error; -inf is a mask; valid input unchanged
# --------------------------------------------------------------------------
ALL = SIMPLEX + ["linear"]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("gamma, error, message", [
    (np.nan, ValueError, "gamma=nan"),
    (-1.0, ValueError, "gamma=-1.0"),
    ("a", TypeError, "gamma must be a real number, got 'a'"),
    (True, TypeError, "gamma must be a real number, got True"),
])
def test_every_normalizer_rejects_bad_gamma(name, gamma, error, message):
    """hardmax, hardmax_average and linear ignore gamma but refuse a value that is no gamma at all."""
    with pytest.raises(error, match=message):
        call(name, np.array([1.0, 2.0, 0.5]), gamma=gamma)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_every_normalizer_rejects_nan_and_plus_inf_scores(name, bad):
    S = np.array([[1.0, 2.0], [0.5, bad], [0.0, 1.0]])
    with pytest.raises(ValueError, match=rf"\bS\[1, 1\]={bad!r}"):
        call(name, S)


@pytest.mark.parametrize("name", SIMPLEX)
def test_all_minus_inf_slice_is_refused(name):
    S = np.array([[1.0, -np.inf], [0.5, -np.inf]])
    with pytest.raises(ValueError, match=r"S\[:, 1\] is -inf \(all keys masked\)"):
        call(name, S)


def test_hardmax_no_longer_picks_nan():
    """np.argmax treats NaN as the maximum: hardmax used to put its one on the NaN."""
    with pytest.raises(ValueError, match=r"S\[1\]=nan"):
        hardmax(np.array([1.0, np.nan, 3.0]))


@pytest.mark.parametrize("name", SIMPLEX)
@pytest.mark.parametrize("gamma", [0.0, 0.7, 3.0, np.inf])
def test_minus_inf_is_a_mask(name, gamma):
    """A -inf score gets weight exactly 0 and the rest is the normalizer of the unmasked scores."""
    S = np.array([[-np.inf, 1.0], [0.0, -np.inf], [2.0, 0.25], [0.5, 1.0]])
    W = call(name, S, gamma=gamma)
    assert_simplex(W)
    assert W[0, 0] == 0.0 and W[1, 1] == 0.0
    if not name.startswith("gumbel"):  # (the noise is drawn for all entries, masked ones too)
        np.testing.assert_allclose(W[1:, 0], call(name, S[1:, 0], gamma=gamma), rtol=0, atol=1e-15)
        np.testing.assert_allclose(W[[0, 2, 3], 1], call(name, S[[0, 2, 3], 1], gamma=gamma), rtol=0, atol=1e-15)
    if gamma == 0.0 and name in ("softmax", "sparsemax", "normmax", "normmax_inf"):
        np.testing.assert_array_equal(W[:, 0], [0, 1 / 3, 1 / 3, 1 / 3])  # uniform over the unmasked keys


@pytest.mark.parametrize("S, message", [
    ([1.0, -1.0, 2.0], r"S\[1\]=-1.0"),  # used to give weights -0.5, 1, ... off the simplex
    ([1.0, -np.inf], r"S\[1\]=-inf"),  # no mask in linear attention
    ([1.0, np.nan], r"S\[1\]=nan"),
    ([1.0, np.inf], r"S\[1\]=inf"),
])
def test_linear_needs_finite_nonnegative_scores(S, message):
    with pytest.raises(ValueError, match=r"linear: scores must be finite and >= 0, got " + message):
        linear(np.array(S))


def test_linear_refuses_an_overflowing_sum():
    with pytest.raises(ValueError, match="overflows"):
        linear(np.array([1e308, 1e308]))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("S, axis, error, message", [
    (np.array([]), 0, ValueError, r"no scores along axis=0 \(shape=\(0,\)\)"),
    (np.zeros((0, 3)), -2, ValueError, "no distribution over zero keys"),
    (np.float64(2.0), 0, ValueError, "at least one axis"),
    (np.zeros(3), 1, ValueError, r"axis=1 is out of range for S with shape=\(3,\)"),
    (np.zeros(3), 0.0, TypeError, "axis must be an integer, got 0.0"),
    (np.array(["a", "b"]), 0, TypeError, "real numeric array"),
    ("ab", 0, TypeError, "numeric array, got str"),
    (np.array([True, False]), 0, TypeError, "dtype=bool"),
    (np.array([1 + 1j, 0]), 0, TypeError, "dtype=complex128"),
    ([[1.0, 2.0], [3.0]], 0, TypeError, "np.asarray failed"),
])
def test_bad_score_arrays_get_a_clear_error(name, S, axis, error, message):
    with pytest.raises(error, match=message):
        call(name, S, axis=axis)


@pytest.mark.parametrize("name", ALL)
def test_no_queries_is_fine(name):
    """Zero keys has no distribution (refused above); zero queries is just an empty result."""
    assert call(name, np.zeros((3, 0))).shape == (3, 0)


def test_gumbel_refuses_non_finite_noise():
    with pytest.raises(ValueError, match=r"noise must be finite, got noise\[2\]=nan"):
        gumbel(Z5, noise=np.array([0.0, 0.0, np.nan, 0.0, 0.0]))


def test_valid_input_keeps_its_dtype_and_values():
    """The checks only look: float32 stays float32, ints and lists work as before."""
    S32 = np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32)
    assert softmax(S32).dtype == np.float32
    np.testing.assert_array_equal(softmax([1.0, 2.0]), softmax(np.array([1.0, 2.0])))
    np.testing.assert_array_equal(hardmax_average(np.array([3, 1, 3])), [0.5, 0, 0.5])
    np.testing.assert_array_equal(softmax(S32, gamma=0), np.full((2, 2), 0.5, dtype=np.float32))


def test_softmax_validation_keeps_autograd_working():
    """Gradients w.r.t. the scores and w.r.t. gamma pass through the checks (getval, no float())."""
    from autograd import grad
    from autograd.test_util import check_grads

    S = np.array([[0.3, -1.2], [1.1, 0.4], [-0.5, 0.9]])
    check_grads(lambda s: softmax(s, 1.7, axis=0), modes=["rev"], order=2)(S)
    check_grads(lambda g: softmax(S, g, axis=0), modes=["rev"], order=1)(1.3)
    check_grads(lambda s: linear(s, axis=0), modes=["rev"], order=1)(np.abs(S) + 0.1)
    # while autograd traces S the values are not checked: in training a non-finite
    # loss is reported by train() itself (TrainingDiverged, with the step)
    g = grad(lambda s: softmax(s, 1.0)[0])(np.array([1.0, np.nan, 0.0]))
    assert np.isnan(g).all()
    with pytest.raises(ValueError, match="gamma=-1.0"):  # gamma is checked on the tape too
        grad(lambda s: softmax(s, -1.0)[0])(np.array([1.0, 0.0]))
