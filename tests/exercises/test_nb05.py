"""The premises of notebook 05's exercises (kmt_ref/exercises/nb05.py), re-measured."""
import numpy as np

from kmt_ref import binary_transformer, lloyd
from kmt_ref.algorithms.binary import binary_codes
from kmt_ref.exercises import check
from kmt_ref.exercises.nb05 import C0_TIE, X_TIE, leak_ratio, scalar_code_centers


def test_05_2_margins_are_one_bit_and_two():
    for k in (3, 6, 10, 100):
        B = binary_codes(k)
        D = ((B[:, :, None] - B[:, None, :]) ** 2).sum(0)  # (k, k) squared code distances
        assert D[~np.eye(k, dtype=bool)].min() == 1
    assert check("05.2", (15, 45), quiet=True) and check("05.2", np.array([15.0, 45.0]), quiet=True)
    assert not check("05.2", (-1, -2), quiet=True)  # the margins, which the notebook states, are not the answer


def test_05_3_scalar_codes_send_the_tied_point_to_the_far_cluster():
    np.testing.assert_array_equal(scalar_code_centers(X_TIE, C0_TIE), [[-2.0, 7.0, 2.0]])
    np.testing.assert_array_equal(scalar_code_centers(X_TIE, C0_TIE, tie="lowest"), lloyd(X_TIE, C0_TIE, 1).centers[1])
    avg = binary_transformer(X_TIE, C0_TIE, 1, tie="average", empty="nearest_code").centers[1]
    np.testing.assert_array_equal(avg, [[-2.0, 10.5, 2.0]])
    assert check("05.3", scalar_code_centers(X_TIE, C0_TIE), quiet=True)


def test_05_4_leak_ratio_is_of_the_order_of_exp_gamma():
    r = leak_ratio(10.0)
    assert 5e3 < r < 2.2e4  # 1.0e4 measured
    assert check("05.4", r, quiet=True)


def test_05_1_accepts_the_library_codes():
    assert check("05.1", binary_codes, quiet=True)


def test_05_3_and_05_4_accept_four_significant_digits(capsys):
    r = leak_ratio(10.0)
    assert check("05.4", float(f"{r:.4g}"), quiet=True) and check("05.4", 10070, quiet=True)
    assert not check("05.4", 10100)
    assert "right method, give more digits" in capsys.readouterr().out
    assert check("05.3", [[-2.0, 7.0, 2.0]], quiet=True)


def test_05_3_and_05_4_are_labelled_as_code():
    from kmt_ref.exercises import EXERCISES
    assert EXERCISES["05.3"].kind == EXERCISES["05.4"].kind == "code"
