"""A clustering trace animated against a reference, layer by layer (trajectory matching with Lloyd's, moving).

Arrays in, an animation out: :func:`animate_trace` returns a
matplotlib ``FuncAnimation`` of a transformer's :class:`~kmt_ref.trace.ClusteringTrace`
(``kmeans_transformer(..., record=True)``, or any circuit run with
``record=True``) on top of a reference trace (``lloyd(...)``), one frame per
layer (or two, ``per_block=True``); :func:`animation_html` and
:func:`trace_animation_html` turn it into the self-contained HTML and JavaScript
of ``FuncAnimation.to_jshtml`` (the frames are PNG images inside the page: no
ffmpeg), which a notebook shows with ``IPython.display.HTML``;
:func:`trace_frame` draws one frame as a still figure. None calls ``show()``.

Each frame has three panels:

- the plane: the points (a sample of at most ``max_points``), coloured by the
  transformer's assignment ``y_i`` (block 1's weights: a soft assignment is a
  blend of its clusters' colours), a black ring round each point whose label
  differs from the reference's; the transformer's centers as filled markers,
  the reference's as hollow circles on top of them (identical centers: each
  filled marker sits inside its ring) and the path of every center so far;
- block 1's attention ``sigma(S)`` of that layer, keys (centers) down the rows,
  the shown points along the columns, ordered by the reference's last labels;
- both log objectives, the current step marked, with the transformer's gap.

Frames (``T`` layers): frame 0 shows the initial centers; with
``per_block=False`` frame t (1..T) shows layer t whole (block 1's assignment,
then the centers that blocks 3 + 4 wrote); with ``per_block=True`` layer t has
two frames, "blocks 1 + 2 assign" (centers not yet moved) then "blocks 3 + 4
move the centers". The data must be 2-D: the plane is drawn as it is, not a
projection (the functions refuse ``d != 2`` rather than draw a projection whose
distances are not the ones the attention scored).
"""
from __future__ import annotations

import numpy as np
import matplotlib
import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from .. import kmeans_transformer, lloyd
from ..data import toy_data
from ..trace import ClusteringTrace
from ..validation import check_2d, check_count
from .canvas import _color, blend_colors, save_png

__all__ = ["animate_trace", "animation_html", "trace_animation_html", "trace_frame", "frame_steps",
           "fig_animation_still"]

#: the largest to_jshtml page :func:`animation_html` writes, in MB (matplotlib's ``animation.embed_limit``)
EMBED_LIMIT_MB = 2.0


def _check_trace(trace, name):
    if not isinstance(trace, ClusteringTrace):
        raise TypeError(f"{name} must be a kmt_ref ClusteringTrace (from lloyd or a transformer), "
                        f"got {type(trace).__name__}")
    return trace


def _check_inputs(X, trace, reference):
    """``X`` (2, n) and the two traces, checked against each other; ``ValueError`` naming the argument."""
    X = check_2d(X, "X")
    d, n = X.shape
    if d != 2:
        raise ValueError(f"X must be 2-D data (shape (2, n)) to be drawn in the plane, got d={d} "
                         f"(shape={X.shape}); run the algorithms on 2-D data to animate them")
    trace = _check_trace(trace, "trace")
    reference = _check_trace(reference, "reference")
    if trace.centers.shape[1] != d:
        raise ValueError(f"trace.centers must have shape (T+1, {d}, k) for X of shape {X.shape}, "
                         f"got shape={trace.centers.shape}")
    if trace.labels.shape[1] != n:
        raise ValueError(f"trace.labels must have shape (T, n)=(T, {n}) for X of shape {X.shape}, "
                         f"got shape={trace.labels.shape}")
    if reference.centers.shape != trace.centers.shape or reference.labels.shape != trace.labels.shape:
        raise ValueError(f"reference must be a run of the same length on the same data as trace: reference "
                         f"centers {reference.centers.shape}, labels {reference.labels.shape}; trace centers "
                         f"{trace.centers.shape}, labels {trace.labels.shape}")
    if trace.n_steps == 0:
        raise ValueError("trace has no layer (T=0): nothing to animate")
    if not trace.layers or len(trace.layers) != trace.n_steps or any("1" not in r.weights for r in trace.layers):
        raise ValueError("trace must carry block 1's attention of every layer: run the transformer with "
                         "record=True (e.g. kmeans_transformer(X, C0, n_layers, record=True))")
    return X, trace, reference


def frame_steps(n_layers, per_block=False):
    """The frames of an animation of ``n_layers`` layers, as ``(layer, stage)`` pairs.

    ``(0, "start")`` first; then per layer t = 1..T either ``(t, "layer")``
    (``per_block=False``) or ``(t, "assign")``, ``(t, "update")``.

    Returns
    -------
    list of (int, str)
        ``T + 1`` frames, or ``2 T + 1`` with ``per_block=True``.
    """
    steps = [(0, "start")]
    for t in range(1, check_count(n_layers, "n_layers") + 1):
        steps += [(t, "assign"), (t, "update")] if per_block else [(t, "layer")]
    return steps


class _Frames:
    """The artists of the three panels and :meth:`draw`, which sets them to one frame."""

    def __init__(self, X, trace, reference, per_block, max_points, seed, trace_label, reference_label,
                 figsize, dpi, axes):
        n = X.shape[1]
        self.trace, self.reference = trace, reference
        self.trace_label, self.reference_label = trace_label, reference_label
        self.steps = frame_steps(trace.n_steps, per_block)
        k = trace.centers.shape[2]
        # the points drawn: all of them, or a fixed sample (the traces themselves are of all n points)
        if n > max_points:
            shown = np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))
        else:
            shown = np.arange(n)
        self.shown = shown[np.argsort(reference.labels[-1][shown], kind="stable")]  # grouped by final cluster
        self.X = X[:, self.shown]  # (2, m)
        self.palette = np.array([to_rgba(_color(j)) for j in range(k)])  # (k, 4)
        if axes is None:
            self.fig = plt.figure(figsize=figsize, dpi=dpi, layout="constrained")
            ax_plane, ax_attn, ax_obj = self.fig.subplots(1, 3, width_ratios=[1.15, 1.0, 1.0])
        else:
            ax_plane, ax_attn, ax_obj = axes
            self.fig = ax_plane.figure
        self.axes = (ax_plane, ax_attn, ax_obj)
        # the plane
        m = self.shown.size
        self.points = ax_plane.scatter(self.X[0], self.X[1], s=10, c=[(0.75, 0.75, 0.75, 1.0)] * m, linewidths=0,
                                       zorder=1)
        self.rings = ax_plane.scatter([], [], s=46, facecolors="none", edgecolors="k", linewidths=0.9, zorder=2,
                                      label="label differs")
        self.paths, self.ref_paths = [], []
        for j in range(k):
            self.paths.append(ax_plane.plot([], [], "-", color=_color(j), lw=1.4, zorder=3)[0])
            self.ref_paths.append(ax_plane.plot([], [], ":", color="k", lw=0.8, zorder=3)[0])
        C = trace.centers[0]
        self.centers = ax_plane.scatter(C[0], C[1], s=60, marker="o", c=self.palette, edgecolors="k",
                                        linewidths=0.8, zorder=4, label=f"{trace_label} (filled)")
        self.centers.set_gid("trace centers")
        R = reference.centers[0]
        self.ref_centers = ax_plane.scatter(R[0], R[1], s=190, marker="o", facecolors="none",
                                            edgecolors=self.palette, linewidths=1.8, zorder=5,
                                            label=f"{reference_label} (hollow)")
        self.ref_centers.set_gid("reference centers")
        allx = np.concatenate([X, trace.centers.transpose(1, 0, 2).reshape(2, -1),
                               reference.centers.transpose(1, 0, 2).reshape(2, -1)], axis=1)
        lo, hi = allx.min(axis=1), allx.max(axis=1)
        pad = 0.06 * np.maximum(hi - lo, 1e-12)
        ax_plane.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
        ax_plane.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
        ax_plane.set_aspect("equal", adjustable="box")
        ax_plane.tick_params(labelsize=7)
        handles = [Line2D([], [], ls="", marker="o", ms=7, mfc="0.5", mec="k", label=f"{trace_label} (filled)"),
                   Line2D([], [], ls="", marker="o", ms=11, mfc="none", mec="0.3", mew=1.8,
                          label=f"{reference_label} (hollow)"),
                   Line2D([], [], ls="", marker="o", ms=6, mfc="none", mec="k", label="label differs")]
        ax_plane.legend(handles=handles, fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.07), ncol=3,
                        frameon=False, handletextpad=0.2, columnspacing=0.8)
        # block 1's attention: keys (centers) x shown points
        self.image = ax_attn.imshow(np.zeros((k, m)), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto",
                                    interpolation="nearest")
        ax_attn.set_xlabel(f"query: point ({m} shown, by {reference_label}'s last cluster)", fontsize=7)
        ax_attn.set_ylabel("key: center j", fontsize=7)
        ax_attn.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax_attn.tick_params(labelsize=7)
        self.fig.colorbar(self.image, ax=ax_attn, fraction=0.05, pad=0.02).ax.tick_params(labelsize=7)
        # the objectives
        steps = np.arange(trace.n_steps + 1)
        ax_obj.plot(steps, reference.log_objective, "-", color="0.3", lw=2.2, label=reference_label)
        ax_obj.plot(steps, trace.log_objective, "--o", color="C1", ms=3, lw=1.2, label=trace_label)
        self.marker = ax_obj.axvline(0, color="C3", lw=1.0)
        self.gap = ax_obj.text(0.04, 0.05, "", transform=ax_obj.transAxes, ha="left", va="bottom", fontsize=7,
                               bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "0.7"})
        ax_obj.set_xlabel("step t (layer / iteration)", fontsize=7)
        ax_obj.set_ylabel("log k-means objective", fontsize=7)
        ax_obj.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax_obj.tick_params(labelsize=7)
        ax_obj.grid(alpha=0.3)
        ax_obj.legend(fontsize=6.5, loc="center right")
        ax_obj.set_title(f"log objective\ngap = log J - log J({reference_label})", fontsize=8)

    def draw(self, i):
        """Set every artist to frame ``i``; return them (FuncAnimation's callback)."""
        t, stage = self.steps[i]
        tr, ref, sel = self.trace, self.reference, self.shown
        c_step = t - 1 if stage == "assign" else t  # centers[c_step]: not yet moved in an "assign" frame
        ax_plane, ax_attn, ax_obj = self.axes
        if t == 0:
            colors = np.tile([0.75, 0.75, 0.75, 1.0], (sel.size, 1))
            W = np.zeros((tr.centers.shape[2], sel.size))
            differ = np.zeros(sel.size, dtype=bool)
            what = "initial centers (before layer 1)"
        else:
            W = np.asarray(tr.layers[t - 1].weights["1"])[:, sel]  # (k, m): y_i that block 1 wrote
            colors = np.column_stack([blend_colors(W), np.ones(sel.size)])  # (m, 4) blend of the clusters' colours
            differ = tr.labels[t - 1][sel] != ref.labels[t - 1][sel]
            what = {"layer": f"layer {t}", "assign": f"layer {t}: blocks 1 + 2 assign",
                    "update": f"layer {t}: blocks 3 + 4 move the centers"}[stage]
        self.points.set_facecolors(colors)
        self.rings.set_offsets(self.X[:, differ].T if differ.any() else np.empty((0, 2)))
        for j, (line, ref_line) in enumerate(zip(self.paths, self.ref_paths)):
            line.set_data(tr.centers[:c_step + 1, 0, j], tr.centers[:c_step + 1, 1, j])
            ref_line.set_data(ref.centers[:c_step + 1, 0, j], ref.centers[:c_step + 1, 1, j])
        self.centers.set_offsets(tr.centers[c_step].T)
        self.ref_centers.set_offsets(ref.centers[c_step].T)
        n_differ = 0 if t == 0 else int(np.sum(tr.labels[t - 1] != ref.labels[t - 1]))
        ax_plane.set_title(f"{what}\nlabels differing from {self.reference_label}: {n_differ}", fontsize=8)
        self.image.set_data(W)
        ax_attn.set_title("block 1 attention (the y_i written)" if t else "block 1 attention (not yet run)",
                          fontsize=8)
        self.marker.set_xdata([c_step, c_step])
        gap = tr.log_objective[c_step] - ref.log_objective[c_step]
        self.gap.set_text(f"gap at t = {c_step}:\n{gap:+.2e}")
        return [self.points, self.rings, self.centers, self.ref_centers, self.image, self.marker, self.gap,
                *self.paths, *self.ref_paths]


def _frames(X, trace, reference, per_block, max_points, seed, trace_label, reference_label, figsize, dpi,
            axes=None):
    X, trace, reference = _check_inputs(X, trace, reference)
    max_points = check_count(max_points, "max_points", minimum=1)
    seed = check_count(seed, "seed")
    if axes is not None:
        axes = list(np.ravel(axes))
        if len(axes) != 3:
            raise ValueError(f"axes must hold 3 matplotlib Axes (plane, attention, objective), got {len(axes)}")
    return _Frames(X, trace, reference, bool(per_block), max_points, seed, trace_label, reference_label,
                   figsize, dpi, axes)


def animate_trace(X, trace, reference, *, per_block=False, max_points=300, seed=0, trace_label="transformer",
                  reference_label="Lloyd", interval=900, figsize=(8.4, 2.8), dpi=72, axes=None):
    """Animate ``trace`` against ``reference``: a frame per layer (or per block), three panels each.

    Parameters
    ----------
    X : array_like, shape (2, n)
        The data both traces ran on, one point per column (2-D only: ``d != 2``
        raises ``ValueError``).
    trace : ClusteringTrace
        A transformer run with ``record=True`` (``trace.layers[t].weights["1"]``,
        shape (k, n), is drawn), ``T >= 1`` layers.
    reference : ClusteringTrace
        A run of the same length on the same data, e.g. ``lloyd(X, C0, T)``.
    per_block : bool
        Two frames per layer (blocks 1 + 2, then blocks 3 + 4) instead of one.
    max_points : int
        At most this many points are drawn (a fixed sample, ``seed``), so that
        the page stays small; the traces and objectives are of all points.
    seed : int
        The sample's seed (:func:`numpy.random.default_rng`).
    trace_label, reference_label : str
    interval : int
        Milliseconds between frames.
    figsize : (float, float); dpi : float
        The figure; its size in pixels is what every frame costs in the page.
    axes : three matplotlib Axes, optional
        Plane, attention, objective, on one figure (then ``figsize`` and
        ``dpi`` are that figure's own); default a new figure.

    Returns
    -------
    matplotlib.animation.FuncAnimation
        Its figure is ``anim.frames.fig`` (``anim.frames`` holds the artists);
        ``len(frame_steps(T, per_block))`` frames.
    """
    frames = _frames(X, trace, reference, per_block, max_points, seed, trace_label, reference_label, figsize, dpi,
                     axes)
    anim = FuncAnimation(frames.fig, frames.draw, frames=len(frames.steps), init_func=lambda: frames.draw(0),
                         interval=interval, blit=False, repeat=False)
    anim.frames = frames  # the artists, for inspection
    return anim


def animation_html(anim, embed_limit_mb=EMBED_LIMIT_MB, default_mode="once"):
    """``anim.to_jshtml()``: the animation as self-contained HTML and JavaScript (PNG frames, no ffmpeg).

    Parameters
    ----------
    anim : matplotlib.animation.Animation
    embed_limit_mb : float
        matplotlib's ``animation.embed_limit`` for this call: a larger page
        stops with matplotlib's warning and is cut off.
    default_mode : {"once", "loop", "reflect"}

    Returns
    -------
    str
        The page; show it in a notebook with ``IPython.display.HTML(html)``.
    """
    with matplotlib.rc_context({"animation.embed_limit": float(embed_limit_mb)}):
        return anim.to_jshtml(default_mode=default_mode)


def trace_animation_html(X, trace, reference, *, embed_limit_mb=EMBED_LIMIT_MB, **kwargs):
    """:func:`animate_trace`, rendered by :func:`animation_html`, its figure closed (no still left behind).

    Parameters
    ----------
    X, trace, reference, **kwargs
        As in :func:`animate_trace`.
    embed_limit_mb : float

    Returns
    -------
    str
        Self-contained HTML (``<script>`` and the frames as base64 PNG).
    """
    anim = animate_trace(X, trace, reference, **kwargs)
    try:
        return animation_html(anim, embed_limit_mb)
    finally:
        plt.close(anim.frames.fig)


def trace_frame(X, trace, reference, frame=-1, **kwargs):
    """One frame of :func:`animate_trace` as a still figure (the last by default).

    Parameters
    ----------
    X, trace, reference, **kwargs
        As in :func:`animate_trace` (``interval`` excluded).
    frame : int
        Index into :func:`frame_steps` (negative counts from the end).

    Returns
    -------
    matplotlib.figure.Figure
    """
    defaults = dict(per_block=False, max_points=300, seed=0, trace_label="transformer", reference_label="Lloyd",
                    figsize=(8.4, 2.8), dpi=72, axes=None)
    defaults.update(kwargs)
    frames = _frames(X, trace, reference, **defaults)
    count = len(frames.steps)
    if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)) or not -count <= frame < count:
        plt.close(frames.fig)
        raise ValueError(f"frame must be an integer in [{-count}, {count}) for {count} frames, got frame={frame!r}")
    frames.draw(int(frame) % count)
    return frames.fig


def fig_animation_still(path, seed=19, gamma=10.0, n_layers=4, frame=2):
    """Write ``fig_animation_still.png``: frame ``frame`` of the toy example's gamma = 10 animation (notebook 01).

    :func:`trace_frame` of ``kmeans_transformer(X, C0, n_layers, gamma, record=True)``
    against ``lloyd(X, C0, n_layers)`` on :func:`kmt_ref.data.toy_data` ``(seed)``;
    the default frame is layer 2, where two labels differ from Lloyd's.
    """
    X, C0 = toy_data(seed)
    ref, tr = lloyd(X, C0, n_layers), kmeans_transformer(X, C0, n_layers, gamma, record=True)
    fig = trace_frame(X, tr, ref, frame=frame, trace_label=f"transformer, γ = {gamma:g}", dpi=110)
    return save_png(fig, path, dpi=110)
