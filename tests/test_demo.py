"""The demo: the paper's numerical validation of Theorem 2.1 (kmt_ref/demo.py).

Pinned numbers come from ``python -m kmt_ref demo`` (seed 0, float64). The
one-hot counts depend on float64 ``exp`` underflow and on the order of the
residual sum in :func:`kmt_ref.lloyd_layer` (reset block first, so the new
weights are stored exactly); if that order changes, re-measure them (the demo
prints them) and explain the change rather than loosening the check.
"""
import io

import numpy as np
import pytest

from kmt_ref import softmax
from kmt_ref.cli import main
from kmt_ref.demo import float32_one_hot, one_hot_count, run_demo
from kmt_ref.trace import assign

INF = np.inf

# --- measured on validation_data(seed=0), 10 layers, gamma = 1e4 -------------
#: Lloyd's log objective per step (t = 0..10)
LLOYD_LOG_J = [5.0012, 4.8357, 4.7758, 4.7427, 4.7259, 4.7171, 4.7115, 4.7074, 4.7049, 4.7036, 4.7029]
#: exactly one-hot columns of Y after layers 1..10 (of 10,000), float64
ONE_HOT_1E4 = [3900, 3766, 3676, 3591, 3515, 3477, 3471, 3472, 3484, 3497]
#: points whose label differs from Lloyd's in steps 1..10
LABELS_DIFFER_1E4 = [0, 39, 30, 19, 24, 22, 11, 18, 15, 17]
#: max_t |log J_transformer(t) - log J_Lloyd(t)|
MAX_LOG_J_GAP_1E4 = 9.41e-4
#: block 1's weights at the last layer, exactly one-hot if computed in float32: the same on every
#: machine (test_float32_one_hot_count_is_machine_independent shows why)
FLOAT32_ONE_HOT_1E4 = 7891
#: float32 ``exp(a)`` is exactly 0.0 for a <= -103.972084 and positive for a >= -103.97208 (a result
#: below 2**-150 rounds to 0). Measured with numpy 2.4 on its AVX512F, AVX2 and baseline code paths
#: (NPY_DISABLE_CPU_FEATURES) and with numpy 1.26: the same float32 boundary on all four.
FLOAT32_EXP_UNDERFLOW = -103.97208


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = io.StringIO()
    res = run_demo(outdir=tmp_path_factory.mktemp("demo"), out=out)
    res.text = out.getvalue()
    return res


# --------------------------------------------------------------------------
# the demo: the paper's numerical validation
# --------------------------------------------------------------------------
def test_demo_table_matches_traces(demo):
    assert demo.seed == 0
    assert set(demo.transformers) == {1e4, INF}
    assert len(demo.rows) == 11
    for t, row in enumerate(demo.rows):
        assert row["layer"] == t
        assert row["lloyd"] == demo.lloyd.log_objective[t]
        for g, tr in demo.transformers.items():
            assert row[("log_objective", g)] == tr.log_objective[t]
            assert row[("max_center_diff", g)] == np.max(np.abs(tr.centers[t] - demo.lloyd.centers[t]))
            if t:
                assert row[("one_hot", g)] == tr.one_hot[t - 1]
                assert row[("labels_differ", g)] == np.sum(tr.labels[t - 1] != demo.lloyd.labels[t - 1])
            else:
                assert row[("one_hot", g)] is None
    # the printed table carries the same numbers
    assert "seed=0" in demo.text
    for t, row in enumerate(demo.rows):
        assert f"{row['lloyd']:.4f}" in demo.text
    assert "3900/10000" in demo.text and "10000/10000" in demo.text
    assert demo.figure.name == "fig1_validation.png" and demo.figure.stat().st_size > 10_000
    assert demo.seconds < 30


def test_demo_gamma_inf_equals_lloyd_at_every_layer(demo):
    ref, tr = demo.lloyd, demo.transformers[INF]
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_allclose(tr.centers, ref.centers, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(tr.one_hot, [10_000] * 10)
    np.testing.assert_allclose(tr.objective, ref.objective, rtol=1e-12)


def test_demo_gamma_1e4_matches_lloyd_as_the_paper_reports(demo):
    ref, tr = demo.lloyd, demo.transformers[1e4]
    np.testing.assert_allclose(ref.log_objective, LLOYD_LOG_J, atol=5e-5)
    gap = np.max(np.abs(tr.log_objective - ref.log_objective))
    assert gap == pytest.approx(MAX_LOG_J_GAP_1E4, rel=1e-3)
    assert gap < 1e-3  # identical curves at the paper's plotting resolution
    np.testing.assert_array_equal(tr.one_hot, ONE_HOT_1E4)
    np.testing.assert_array_equal(np.sum(tr.labels != ref.labels, axis=1), LABELS_DIFFER_1E4)
    assert demo.float32_one_hot == {1e4: FLOAT32_ONE_HOT_1E4}
    # centers stay within a few thousandths of Lloyd's at every layer
    assert np.max(np.abs(tr.centers - ref.centers)) < 3e-3


def test_demo_one_hot_is_float64_underflow(demo):
    """After layer t: one-hot <=> gamma * (second-nearest - nearest squared distance) > 745.13.

    The reset block is summed first, so the residual stream stores block 1's
    softmax weights exactly and the count is decided by ``exp`` underflow alone.
    """
    tr = demo.transformers[1e4]
    for t in range(10):
        _, D = assign(demo.X, tr.centers[t])
        Ds = np.sort(D, axis=0)
        gap = Ds[1] - Ds[0]
        assert tr.one_hot[t] == np.sum(1e4 * gap > 745.14) == np.sum(1e4 * gap > 745.12)


def test_cli_demo(tmp_path, capsys):
    assert main(["demo", "--outdir", str(tmp_path), "--n-layers", "2", "--seed", "3"]) == 0
    text = capsys.readouterr().out
    assert "seed=3" in text and "gamma=inf" in text
    assert (tmp_path / "fig1_validation.png").exists()


def test_cli_demo_no_figure(tmp_path, capsys):
    assert main(["demo", "--outdir", str(tmp_path / "f"), "--n-layers", "1", "--no-figure"]) == 0
    assert not (tmp_path / "f").exists()
    assert "layer" in capsys.readouterr().out


@pytest.mark.parametrize(
    "kwargs, exc, fragment",
    [
        ({"n_layers": -1}, ValueError, "n_layers=-1"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"gammas": ()}, ValueError, "gammas"),
        ({"gammas": (-1.0,)}, ValueError, "gamma=-1.0"),
        ({"gammas": (float("nan"),)}, ValueError, "gamma=nan"),
    ],
)
def test_run_demo_bad_input(kwargs, exc, fragment):
    with pytest.raises(exc, match=fragment):
        run_demo(figure=False, out=io.StringIO(), **kwargs)


# --------------------------------------------------------------------------
# one-hot counting, float64 vs float32
# --------------------------------------------------------------------------
def test_one_hot_count_hand_computed():
    W = np.array([[1.0, 0.5, 0.0, 1.0, 1.0],
                  [0.0, 0.5, 1.0, 1e-300, 1.0],
                  [0.0, 0.0, 0.0, 0.0, 0.0]])
    assert one_hot_count(W) == 2  # columns 0 and 2; a subnormal-sized weight is not 0
    assert one_hot_count(W.T, axis=1) == 2


@pytest.mark.parametrize("gamma, n64, n32", [(1e3, 1, 1), (2e3, 1, 2), (1e5, 2, 3), (1e6, 3, 3)])
def test_float32_one_hot_thresholds(gamma, n64, n32):
    # 1-D, centers at 0 and 1; squared-distance gaps 1, 0.1, 0.002 (hand-computed)
    X = np.array([[0.0, 0.45, 0.499]])
    C = np.array([[0.0, 1.0]])
    _, D = assign(X, C)
    np.testing.assert_allclose(np.abs(D[1] - D[0]), [1.0, 0.1, 0.002], atol=1e-12)
    # float64 underflow at gamma * gap > 745.13; float32 at > 103.97
    assert one_hot_count(softmax(-D, gamma=gamma, axis=0)) == n64
    assert float32_one_hot(X, C, gamma) == n32


def test_float32_one_hot_count_is_machine_independent(demo):
    """FLOAT32_ONE_HOT_1E4 holds on any CPU, not only on the one that measured it.

    A point's float32 block-1 weights are exactly one-hot iff ``exp`` underflows to 0.0 at every
    center but the nearest, i.e. iff its second-largest softmax argument
    ``a = float32(gamma * (S_j - max S))``, ``S = float32(-D)``, lies below the underflow point
    of float32 ``exp``. Two things vary between machines: which float32 ``exp`` numpy runs (AVX512F,
    AVX2 or the C library's, by CPU) and the last bits of D (a BLAS product; the kernel depends on
    the CPU). Neither moves the count unless some ``a`` lies near the threshold: the implementations
    measured agree on the float32 boundary (FLOAT32_EXP_UNDERFLOW; one float32 ulp there is 7.6e-6),
    and a last-bit change of D can at most flip the float32 rounding of D (<= 2 here, so by 1.2e-7),
    which moves ``a`` by at most gamma * 1.2e-7 = 1.2e-3. Measured: the nearest ``a`` is 0.018 from
    the threshold (2,400 float32 ulps). So the count is pinned exactly, and this test checks that
    it does not change when the threshold moves by 0.01 either way (8x the largest possible shift).
    """
    X, C, gamma = demo.X, demo.transformers[1e4].centers[-2], np.float32(1e4)
    _, D = assign(X, C)  # (k, n) float64
    S = (-D).astype(np.float32)
    a = np.sort(gamma * (S - S.max(axis=0)), axis=0)[-2]  # (n,) the largest argument below the maximum
    lo, hi = FLOAT32_EXP_UNDERFLOW - 0.01, FLOAT32_EXP_UNDERFLOW + 0.01
    assert np.exp(np.float32(lo)) == 0.0 < np.exp(np.float32(hi)), "this machine's float32 exp underflows elsewhere"
    assert np.sum(a < lo) == np.sum(a < hi) == FLOAT32_ONE_HOT_1E4
    assert float32_one_hot(X, C, 1e4) == FLOAT32_ONE_HOT_1E4
    # and the window is not vacuous: moving the threshold by 0.1 would change the count
    assert np.sum(a < FLOAT32_EXP_UNDERFLOW - 0.1) < FLOAT32_ONE_HOT_1E4 < np.sum(a < FLOAT32_EXP_UNDERFLOW + 0.1)
