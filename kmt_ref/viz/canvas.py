"""What every picture shares: one colour per cluster, a given or new axes, and a PNG written reproducibly.

The floor of :mod:`kmt_ref.viz`: :mod:`kmt_ref.viz.plotting` (points, center
paths, objective curves) and :mod:`kmt_ref.viz.matrices` (heatmaps of weights
and attention) both draw with these; both are re-exported by
:mod:`kmt_ref.viz.plotting`.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

import numpy as np

__all__ = ["CLUSTER_COLORS", "blend_colors", "save_png", "drawn_values"]


#: one colour per cluster index (cycled for k > 10)
CLUSTER_COLORS = plt.get_cmap("tab10").colors


def _color(j):
    return CLUSTER_COLORS[j % len(CLUSTER_COLORS)]


def blend_colors(W):
    """Each point's colour: its clusters' colours mixed with the weights of ``W``, shape (k, n).

    Returns
    -------
    ndarray, shape (n, 3)
        RGB in [0, 1]; a one-hot column gives its cluster's colour.
    """
    palette = np.array([_color(j) for j in range(W.shape[0])])  # (k, 3)
    return np.clip(W.T @ palette, 0.0, 1.0)  # (n, 3)


def _new_ax(ax, figsize=(4.0, 3.5)):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def drawn_values(values, floor, sig=4, log=False):
    """``values`` as a figure draws them: rounding noise removed, so the PNG does not depend on the BLAS kernel.

    A value computed through matrix products changes in its last bits with the
    BLAS kernel (OpenBLAS picks one per CPU): between its Haswell and Prescott
    kernels the finite-gamma gaps of ``fig_binary_finite_gamma`` moved by up
    to 6e-15, which on a log axis reaching 1e-17 moved 3,131 pixels. Values are
    therefore rounded to ``sig`` significant digits and values below
    ``floor`` in absolute value (rounding level) are set to ``floor`` (if
    ``log``, for a log axis) or to 0.

    Parameters
    ----------
    values : array_like
    floor : float
        Positive; below it a value is taken for rounding.
    sig : int
        Significant digits kept.
    log : bool
        Whether the axis is logarithmic (values >= 0).

    Returns
    -------
    ndarray of float, the shape of ``values``
    """
    v = np.asarray(values, dtype=float)
    small = np.abs(v) < floor
    safe = np.where(small | ~np.isfinite(v), 1.0, v)
    digits = sig - 1 - np.floor(np.log10(np.abs(safe)))
    scale = 10.0 ** digits
    out = np.where(np.isfinite(v), np.round(safe * scale) / scale, v)
    return np.where(small, floor if log else 0.0, out)


# --------------------------------------------------------------------------
# Writing figures
# --------------------------------------------------------------------------
def save_png(fig, path, dpi=110):
    """Write ``fig`` to the PNG ``path`` (folder created) without a software stamp, then close it.

    Without the ``Software`` metadata (matplotlib's version) the same figure
    gives the same bytes, so ``figures/`` only changes when a picture does.

    Returns
    -------
    Path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, metadata={"Software": None})
    plt.close(fig)
    return path
