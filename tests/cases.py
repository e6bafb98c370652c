"""One shared table of clustering instances (after tracr's test cases).

Every equivalence test (transformer = its classical reference) draws from
:func:`all_cases`. Each case is ``(name, X, C0)`` with tokens as columns:
X (d, n), C0 (d, k). Random instances vary n, d, k and the data scale; the
degenerate ones pin the policies (ties, duplicates, empty clusters, k = 1,
k = n). Degenerate data use small integers or dyadic numbers, so that ties are
exact in floating point and no rounding decides them; the duplicated-centers
cases add copies of a number that is not dyadic, where the tie is exact
because the centers are copies.
"""
import numpy as np


def random_cases(count=200, seed=0):
    cases = []
    for s in range(count):
        rng = np.random.default_rng([seed, s])
        d = int(rng.integers(1, 6))
        n = int(rng.integers(1, 60))
        k = int(rng.integers(1, min(n, 8) + 1))
        kind = s % 4
        if kind == 0:  # Gaussian blobs, initial centers = random data points
            means = rng.uniform(0, 1, (d, k))
            X = means[:, rng.integers(0, k, n)] + 0.1 * rng.normal(size=(d, n))
            C0 = X[:, rng.choice(n, k, replace=False)]
        elif kind == 1:  # uniform data, random initial centers (often far: empty clusters)
            X = rng.uniform(-1, 1, (d, n))
            C0 = rng.uniform(-3, 3, (d, k))
        elif kind == 2:  # duplicated points
            base = rng.normal(size=(d, max(1, n // 3)))
            X = base[:, rng.integers(0, base.shape[1], n)]
            C0 = X[:, rng.choice(n, k, replace=False)]
        else:  # small integers: many exact ties and duplicates
            X = rng.integers(-3, 4, (d, n)).astype(float)
            C0 = rng.integers(-3, 4, (d, k)).astype(float)
        cases.append((f"random{s}_{['blobs', 'far', 'dups', 'ints'][kind]}_d{d}_n{n}_k{k}", X, C0))
    return cases


def degenerate_cases():
    c = []
    # a point exactly midway between two centers joins the lower index (as np.argmin)
    c.append(("tie_midpoint", np.array([[0.0, -2.0, 2.0]]), np.array([[-1.0, 1.0]])))
    c.append(("tie_midpoint_reversed", np.array([[0.0, -2.0, 2.0]]), np.array([[1.0, -1.0]])))
    # identical initial centers: all points tie between them, the second cluster empties
    c.append(("identical_centers", np.array([[0.0, 1.0, 4.0, 5.0]]), np.array([[2.0, 2.0]])))
    # k = 1: the center goes to the mean
    c.append(("k1", np.array([[0.0, 1.0, 2.0, 5.0], [1.0, 1.0, 0.0, 2.0]]), np.array([[0.0], [0.0]])))
    # k = n: every point its own cluster
    X = np.array([[0.0, 1.0, 3.0, 7.0], [0.0, 2.0, 1.0, 0.5]])
    c.append(("k_equals_n", X, X.copy()))
    c.append(("k_equals_n_shuffled", X, X[:, [2, 0, 3, 1]].copy()))
    # k = n = 1
    c.append(("single_point", np.array([[3.0], [4.0]]), np.array([[0.0], [0.0]])))
    # an initial center far from everything: its cluster is empty and must stay put
    c.append(("empty_far_center", np.array([[0.0, 0.5, 1.0, 1.5]]), np.array([[0.25, 100.0]])))
    # all points identical
    c.append(("all_duplicates", np.ones((2, 6)), np.array([[1.0, 0.0], [1.0, 0.0]])))
    # duplicated points with k = n (duplicate centers: one cluster takes both copies)
    Xd = np.array([[0.0, 0.0, 2.0], [1.0, 1.0, 2.0]])
    c.append(("duplicates_k_equals_n", Xd, Xd.copy()))
    # a square: four-way tie for the central point
    Xs = np.array([[0.0, 1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, -1.0]])
    c.append(("four_way_tie", Xs, Xs[:, 1:].copy()))
    # sklearn-style toy: two obvious clusters
    Xt = np.array([[1.0, 1.0, 1.0, 10.0, 10.0, 10.0], [2.0, 4.0, 0.0, 2.0, 4.0, 0.0]])
    c.append(("two_groups", Xt, Xt[:, [0, 1]].copy()))
    # large and tiny scales
    rng = np.random.default_rng(7)
    Xl = 1e6 * rng.normal(size=(3, 40))
    c.append(("large_scale", Xl, Xl[:, :4].copy()))
    Xm = 1e-6 * rng.normal(size=(3, 40))
    c.append(("tiny_scale", Xm, Xm[:, :4].copy()))
    # duplicated initial centers: the first copy takes every point and is pulled back to where its copies
    # stay (a sparse update keeps only the points there), so the copies must still tie with it bit for bit
    c.append(("duplicated_centers", np.array([[-1.0] * 6 + [1.0] * 3]), np.array([[-1.0, -1.0, -1.0]])))
    # the same on copies of a number that is not dyadic: the tie is exact because the centers are copies
    # (a mean of copies of 0.1 must be exactly 0.1, which a plain sum does not give:
    # sum([0.1] * 7) / 7 is 0.09999999999999999)
    c.append(("duplicated_centers_tenth", np.array([[0.1] * 7 + [2.1] * 3]), np.array([[0.1, 0.1, 0.1]])))
    # two pairs of duplicated centers in the plane, on small integers with repeated points
    Xp = np.array([[0.0, 0.0, 0.0, 1.0, 4.0, 4.0, 5.0, 9.0], [0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 9.0]])
    c.append(("duplicated_centers_pairs", Xp, Xp[:, [0, 4, 0, 4]].copy()))
    return c


def all_cases():
    return random_cases() + degenerate_cases()
