"""Figures regenerate byte for byte (kmt_ref/viz/registry.py, canvas.drawn_values).

Three checks: each figure drawn twice gives the same bytes; the leak figure
does not move when its numbers change at rounding level (as they do with the
BLAS kernel: OpenBLAS picks one per CPU); and, where the drawing stack is the
one ``figures/`` was drawn with (:data:`kmt_ref.viz.registry.DRAWN_WITH`),
each figure equals the committed file. PNG bytes depend on matplotlib's and
FreeType's versions (text rasterisation, PNG encoder), so the last check is
skipped under other versions.
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import kmt_ref.viz.binary_figures as B  # noqa: E402
from kmt_ref.viz import registry  # noqa: E402
from kmt_ref.viz.canvas import drawn_values  # noqa: E402

FIGURES_DIR = Path(__file__).resolve().parents[2] / "figures"
#: the figures drawn in a few seconds (fig_binary_finite_gamma takes about 10 s; it is checked below on a small grid)
CHEAP = [f for f, _ in registry.FIGURES if f != "fig_binary_finite_gamma.png"]


def _draw(fname, path):
    import importlib

    module, func = dict(registry.FIGURES)[fname].split(":")
    getattr(importlib.import_module(module), func)(path)
    return path


@pytest.mark.parametrize("fname", CHEAP)
def test_figure_twice_gives_the_same_bytes_and_the_committed_file(tmp_path, fname):
    a = _draw(fname, tmp_path / f"a_{fname}").read_bytes()
    b = _draw(fname, tmp_path / f"b_{fname}").read_bytes()
    assert a == b
    if registry.drawing_stack() != registry.DRAWN_WITH:
        pytest.skip(f"drawing stack {registry.drawing_stack()} is not {registry.DRAWN_WITH}: PNG bytes differ")
    assert a == (FIGURES_DIR / fname).read_bytes(), f"figures/{fname} is stale: python -m kmt_ref figures"


def test_drawn_values_rounds_floors_and_keeps_non_finite():
    v = drawn_values([0.0, 3e-16, -2e-13, 7.49167e-12, 2.76203, -0.0123456, np.inf], 1e-12, sig=3)
    np.testing.assert_array_equal(v, [0.0, 0.0, 0.0, 7.49e-12, 2.76, -0.0123, np.inf])
    np.testing.assert_array_equal(drawn_values([0.0, 3e-16, 0.5], 1e-12, log=True), [1e-12, 1e-12, 0.5])


def test_leak_figure_ignores_rounding_noise(tmp_path):
    gammas, seeds = (1.0, 10.0, 30.0, 1e3), range(2)
    res = B.finite_gamma_leak(gammas, seeds, n_per_cluster=20)
    rng = np.random.default_rng(0)
    # what another BLAS kernel does (measured: up to 6e-15 absolute between OpenBLAS's Haswell and Prescott kernels)
    noisy = {key: v * (1 + 1e-13 * rng.standard_normal(v.shape)) + 5e-16 * rng.standard_normal(v.shape)
             for key, v in res.items()}
    a = B.fig_binary_finite_gamma(tmp_path / "a.png", gammas, seeds, res=res).read_bytes()
    b = B.fig_binary_finite_gamma(tmp_path / "b.png", gammas, seeds, res=noisy).read_bytes()
    assert a == b


def test_leak_figure_is_the_committed_file(tmp_path):
    if registry.drawing_stack() != registry.DRAWN_WITH:
        pytest.skip(f"drawing stack {registry.drawing_stack()} is not {registry.DRAWN_WITH}: PNG bytes differ")
    fname = "fig_binary_finite_gamma.png"
    assert _draw(fname, tmp_path / fname).read_bytes() == (FIGURES_DIR / fname).read_bytes()
