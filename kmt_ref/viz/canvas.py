"""What every picture shares: one colour per cluster, a given or new axes, and a PNG written reproducibly.

The floor of :mod:`kmt_ref.viz`: :mod:`kmt_ref.viz.plotting` (points, center
paths, objective curves) and :mod:`kmt_ref.viz.matrices` (heatmaps of weights
and attention) both draw with these; both are re-exported by
:mod:`kmt_ref.viz.plotting`.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

__all__ = ["CLUSTER_COLORS", "save_png"]


#: one colour per cluster index (cycled for k > 10)
CLUSTER_COLORS = plt.get_cmap("tab10").colors


def _color(j):
    return CLUSTER_COLORS[j % len(CLUSTER_COLORS)]


def _new_ax(ax, figsize=(4.0, 3.5)):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


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
