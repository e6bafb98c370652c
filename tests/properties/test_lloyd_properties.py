"""Theorem 2.1 and Lloyd's loop, over every input: the README's first row and the frame's claims."""
from fractions import Fraction

import numpy as np
from hypothesis import assume, example, given, strategies as st
from properties.hard_inputs import EPS, exact_sq_dist, fr, instances

from kmt_ref import kmeans_transformer, lloyd
from kmt_ref.algorithms.binary import binary_transformer
from kmt_ref.frame import data_frame


def assert_same_trace(tr, ref):
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_array_equal(tr.centers, ref.centers)
    np.testing.assert_array_equal(np.signbit(tr.centers), np.signbit(ref.centers))  # the sign of zero too
    np.testing.assert_array_equal(tr.objective, ref.objective)


@given(instances(), st.integers(0, 4))
@example((np.array([[0.0, 0.0]]), np.array([[1e-162, 0.0]])), 2)  # zero extent: the centers set the scale
@example((np.ldexp(np.array([[1.0]]), 401), np.array([[0.0]])), 1)  # zero extent, a center 2^401 away
@example((np.array([[1.0, 2.0]]), np.array([[1.5, -0.0]])), 2)  # a kept -0.0
@example((np.array([[1e8, 1e8 + 1]]), np.array([[0.1, 1e8]])), 2)  # a kept center in a shifted frame
@example((np.array([[1.0, -5e-324, 0.0]]), np.array([[1.0, 5e-324]])), 1)  # a mean that rounds to -0.0
def test_theorem_2_1_is_lloyd_bit_for_bit(inst, T):
    """kmeans_transformer at gamma = inf: Lloyd's labels and centers, bit for bit (sign of zero included)."""
    X, C0 = inst
    ref = lloyd(X, C0, T)
    assert_same_trace(kmeans_transformer(X, C0, T), ref)
    np.testing.assert_array_equal(ref.centers[0], C0)  # the initial centers as given
    np.testing.assert_array_equal(np.signbit(ref.centers[0]), np.signbit(C0))


@given(instances(), st.integers(0, 3))
@example((np.array([[1.0, 2.0]]), np.array([[1.5, -0.0]])), 2)
@example((np.array([[1.0, -5e-324, 0.0]]), np.array([[1.0, 5e-324]])), 1)  # a mean that rounds to -0.0
def test_binary_circuit_is_lloyd_bit_for_bit(inst, T):
    """The binary-code circuit (empty="keep", gamma = inf): Lloyd's trace, bit for bit."""
    X, C0 = inst
    assert_same_trace(binary_transformer(X, C0, T), lloyd(X, C0, T))


@given(instances(scales=False, far=False), st.integers(1, 3))
@example((np.array([[0.0, 1.0]]), np.array([[0.5, 1.5]])), 2)  # the point 1 ties: the lowest index
def test_lloyd_is_exact_lloyd_up_to_its_rounding(inst, T):
    """Against exact rational Lloyd on Lloyd's own centers (data of ordinary position and scale, where the frame
    is the identity): every label is an exact nearest center, or the exact gap to one lies within the
    expansion's error bound (kmt_ref.frame: ((d + 1/2)(||x||^2 + ||c||^2) + D/2) eps per distance); an exact tie
    goes to the lowest index whenever the tied distances are computed exactly (integer data); every center is
    its members' exact mean to (n_j + 1) ulps of their largest coordinate, or kept bit for bit when empty."""
    X, C0 = np.asarray(inst[0], float), np.asarray(inst[1], float)
    assume(data_frame(X, C0).is_identity)  # the domain: data of ordinary position and scale
    tr = lloyd(X, C0, T)
    d, n = X.shape
    integer = np.all(X == np.round(X)) and np.all(np.abs(X) < 2**20)
    for t in range(T):
        C = tr.centers[t]
        for i in range(n):
            D = [exact_sq_dist(X[:, i], C[:, j]) for j in range(C.shape[1])]
            best, got = min(D), D[tr.labels[t, i]]
            if got != best:
                bound = sum(Fraction(((d + 0.5) * (X[:, i] @ X[:, i] + C[:, j] @ C[:, j]) + float(D[j]) / 2) * EPS * 1.01)
                            for j in (tr.labels[t, i], D.index(best)))
                assert got - best <= bound, (t, i)
            elif integer and np.all(C == np.round(C)):
                assert tr.labels[t, i] == D.index(best)  # exact distances: the lowest tied index
        for j in range(C.shape[1]):
            members = np.flatnonzero(tr.labels[t] == j)
            new = tr.centers[t + 1][:, j]
            if members.size == 0:
                np.testing.assert_array_equal(new, C[:, j])
                continue
            mean = np.sum(fr(X[:, members]), axis=1) / members.size
            big = float(np.max(np.abs(X[:, members])))
            for a, b in zip(new, mean):
                assert abs(Fraction(a) - b) <= Fraction((members.size + 1) * EPS * big)


@given(instances(scales=False), st.integers(0, 3), st.integers(-1000, 1000))
@example((np.array([[0.0, 1.0, 3.0]]), np.array([[0.0, 3.0]])), 2, -1074 + 3)
def test_power_of_two_scaling_changes_no_bit(inst, T, s):
    """Scaling data and centers by 2^s: labels unchanged, centers scaled bit for bit (while representable)."""
    X, C0 = np.asarray(inst[0], float), np.asarray(inst[1], float)
    big = max(float(np.max(np.abs(X))), float(np.max(np.abs(C0))))
    small = min([float(np.min(np.abs(A[A != 0]))) for A in (X, C0) if np.any(A != 0)] or [1.0])
    if big * 2.0**s > 2.0**1000 or small * 2.0**s < 2.0**-1000:  # keep every scaled number normal and finite
        s = 0
    base, scaled = lloyd(X, C0, T), lloyd(np.ldexp(X, s), np.ldexp(C0, s), T)
    np.testing.assert_array_equal(scaled.labels, base.labels)
    np.testing.assert_array_equal(scaled.centers, np.ldexp(base.centers, s))
