"""The variants' equalities, over every input: one property per row of the README's exactness table."""
import warnings

import numpy as np
import pytest
from hypothesis import assume, example, given, strategies as st
from properties.hard_inputs import assert_near_tie_partings, extent, instances

import kmt_ref
from kmt_ref.algorithms import (dot_product_transformer, randomized_kmedoids, randomized_kmedoids_transformer,
                                robust_kmeans, robust_kmeans_transformer, soft_kmeans, soft_kmeans_transformer,
                                spherical_kmeans, spherical_kmeans_transformer, trimmed_kmeans_attention,
                                trimmed_kmeans_transformer)
from kmt_ref import lloyd
from kmt_ref.validation import ColumnsWarning

GAMMAS = st.sampled_from([0.0, 0.25, 0.5, 1.0, 4.0, 30.0, 1e3])
FAR = np.array([[0.0, 0.1, 0.7, 1.0]])


def both(reference, circuit):
    """``(circuit(), reference())``, or None when the reference refuses the input with a ValueError (an inverse
    temperature that overflows in the data's frame, a documented limit): then the circuit must refuse it too."""
    try:
        ref = reference()
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc).split(" ")[0]):
            circuit()
        assume(False)
    return circuit(), ref


def same(tr, ref):
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_array_equal(tr.centers, ref.centers)
    np.testing.assert_array_equal(np.signbit(tr.centers), np.signbit(ref.centers))


@given(instances(), st.integers(0, 4), GAMMAS)
@example((FAR, np.array([[0.5, 1e8]])), 2, 4.0)  # a far empty center
@example((np.array([[1.0, 1.0, 2.0]]), np.array([[1.0, 1.0]])), 3, 0.5)  # an exact tie of the criterion
@example((np.array([[0.0]]), np.array([[1e9]])), 1, 0.25)  # a far singleton
@example((np.ldexp(np.array([[1.0, 5.0]]), 460), np.ldexp(np.array([[3.0]]), 460)), 1, 3.0)  # gamma2 2^920 in the frame
@example((np.array([[1.0, -3.0, 3.0, 0.0]]), np.array([[2.0, -3.0]])), 2, 7e300)  # sqrt(gamma2) in the weights
@example((np.array([[1.0, -5e-324, 0.0]]), np.array([[1.0, 5e-324]])), 1, 0.0)  # a mean that rounds to -0.0
def test_trimmed_circuit_is_its_rule_bit_for_bit(inst, T, gamma2):
    X, C0 = inst
    same(*both(lambda: trimmed_kmeans_attention(X, C0, T, gamma2), lambda: trimmed_kmeans_transformer(X, C0, T, gamma2)))


@given(instances(), st.integers(0, 3), GAMMAS, st.integers(0, 2**32 - 1))
@example((FAR, np.array([[0.5, 1e8]])), 2, 1.0, 1)  # a far empty center
@example((np.array([[0.0] * 12, [0.0, 0.0, 2.0**40] + [0.0] * 8 + [2.0**41]]),
          np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 2.0**40]])), 1, 0.25, 1)  # tied medoids at logits of size 1e23
@example((np.ldexp(np.array([[3.0, -1.0, 3.0, -1.0]]), 487), np.ldexp(np.array([[4.0]]), 487)), 1, 3.0, 5)  # 2^974
def test_kmedoids_circuit_is_its_rule_draw_for_draw(inst, T, gamma, seed):
    X, C0 = inst
    tr, ref = both(lambda: randomized_kmedoids(X, C0, T, gamma, np.random.default_rng(seed)),
                   lambda: randomized_kmedoids_transformer(X, C0, T, gamma, np.random.default_rng(seed)))
    same(tr, ref)
    np.testing.assert_array_equal(tr.centers[0], C0)


def nonzero_columns(inst):
    X, C0 = inst
    return bool(np.all(np.any(X != 0, axis=0)) and np.all(np.any(C0 != 0, axis=0)))


@given(instances().filter(nonzero_columns), st.integers(0, 4), st.sampled_from([1, 2, 3, 1024]))
@example((np.array([[1e8 + 1] * 2, [1e8] * 2, [1e8] * 2]), np.array([[1e8 + 1, 1e8], [1e8, 1e8], [1e8, 1e8 + 1]])),
         2, 1)  # center 0 is the points' direction, chunks of one query
def test_spherical_circuit_is_its_rule_bit_for_bit(inst, T, chunk_size):
    """Nonzero points and centers (a zero vector has no direction: ValueError on both sides), at every scale and offset."""
    X, C0 = inst
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ColumnsWarning)
        same(spherical_kmeans_transformer(X, C0, T, chunk_size=chunk_size), spherical_kmeans(X, C0, T))


@given(instances(), st.integers(1, 4), st.sampled_from([0.0, 0.7, 1.0, 5.0]))
@example((FAR, np.array([[0.5, 1e4]])), 2, 5.0)  # a far empty center
@example((FAR, np.array([[0.5, 1e5]])), 2, 0.01)
@example((np.array([[0.0, 1.0]]), np.array([[1e8]])), 1, 1.0)  # a far center with members
@example((np.array([[0.12573022, -0.13210486]]), np.array([[1e4]])), 2, 0.7)  # ... whose penalties enter layer 2
@example((np.ldexp(np.array([[-3.0, -3.0, -1.0]]), 460), np.ldexp(np.array([[-2.0]]), 460)), 1, 3.0)  # g 2^920
def test_robust_circuit_is_its_rule_to_rounding(inst, T, gamma):
    """Centers to 1e-10 of the extent (plus the read-out's rounding in a shifted frame); labels part only where
    the exact distances tie to 1e-10 of its square."""
    X, C0 = inst
    tr, ref = both(lambda: robust_kmeans(X, C0, T, gamma), lambda: robust_kmeans_transformer(X, C0, T, gamma))
    assert_near_tie_partings(tr, ref, X, 1e-10)


@given(instances(), st.integers(1, 4), st.sampled_from([0.5, 1.0, 3.0]))
@example((np.array([[1000000001.6597818, 1000000000.6528019, 999999999.82603, 999999993.0431917,
                     1000000001.2944825, 999999993.6211606]]), np.array([[1000000001.6597818] * 2])), 1, 0.5)
def test_soft_circuit_is_its_rule_to_rounding(inst, T, beta):
    """Centers to 1e-12 of the extent, partings only at exact near-ties (where the circuit runs: its linear
    block 3 refuses a cluster whose responsibilities all underflow)."""
    X, C0 = inst
    try:
        tr, ref = both(lambda: soft_kmeans(X, C0, T, beta), lambda: soft_kmeans_transformer(X, C0, T, beta))
    except kmt_ref.EmptyClusterError:
        assume(False)
    assert_near_tie_partings(tr, ref, X, 1e-12)


@given(instances(grid_only=True, scales=False), st.integers(1, 4))
def test_theorem_2_2_is_lloyd_to_rounding(inst, T):
    """Integer grids (points 1 apart or identical: far above the 1e-8 resolution of block 2's offset scores, a
    known limit): centers to 1e-15 of the extent (in the extent's own ulps), partings only at exact near-ties."""
    X, C0 = inst
    assert_near_tie_partings(dot_product_transformer(X, C0, T), lloyd(X, C0, T), X, 1e-15 * 8)


# --------------------------------------------------------------------------------------------------------------
# the same three, with the inverse temperature in the data's units: gamma D^2 stays of order 1 at every scale, so
# the trimming, the sparsemax support and the medoid draw do something there (an absolute gamma is 0 or huge in
# the frame of data at 2^+-40 and beyond)
# --------------------------------------------------------------------------------------------------------------
UNIT_GAMMAS = st.sampled_from([0.25, 0.5, 1.0, 3.0, 30.0])


def in_data_units(X, gamma):
    """``gamma / 2^(2e)`` for data of extent about ``2^e``; skips the example where that is not a normal number."""
    with np.errstate(over="ignore", under="ignore"):
        g = float(np.ldexp(gamma, -2 * int(np.frexp(extent(X))[1])))
    assume(np.isfinite(g) and g >= np.finfo(float).tiny)
    return g


@given(instances(), st.integers(1, 3), UNIT_GAMMAS)
def test_trimmed_in_the_data_units_is_its_rule_bit_for_bit(inst, T, gamma2):
    X, C0 = inst
    g = in_data_units(X, gamma2)
    same(*both(lambda: trimmed_kmeans_attention(X, C0, T, g), lambda: trimmed_kmeans_transformer(X, C0, T, g)))


@given(instances(), st.integers(1, 3), UNIT_GAMMAS, st.integers(0, 2**32 - 1))
def test_kmedoids_in_the_data_units_is_its_rule_draw_for_draw(inst, T, gamma, seed):
    X, C0 = inst
    g = in_data_units(X, gamma)
    same(*both(lambda: randomized_kmedoids(X, C0, T, g, np.random.default_rng(seed)),
               lambda: randomized_kmedoids_transformer(X, C0, T, g, np.random.default_rng(seed))))


@given(instances(), st.integers(1, 3), UNIT_GAMMAS)
def test_robust_in_the_data_units_is_its_rule_to_rounding(inst, T, gamma):
    X, C0 = inst
    g = in_data_units(X, gamma)
    tr, ref = both(lambda: robust_kmeans(X, C0, T, g), lambda: robust_kmeans_transformer(X, C0, T, g))
    assert_near_tie_partings(tr, ref, X, 1e-10)
