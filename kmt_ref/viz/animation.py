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

The page needs no network and fits a narrow screen (:func:`offline_player`):
matplotlib's player draws its buttons with Font Awesome, a web font linked from
a CDN, which is blank offline; here each button is labelled in plain Unicode
(its title and ``onclick`` kept), the frame scales down to the width it is
given and the controls wrap. A frame is :data:`FIGSIZE` at :data:`DPI`, its
smallest text :data:`FONT_PT` points: as large on screen as the tick labels of
the notebooks' inline figures.

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

import re

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

__all__ = ["animate_trace", "animation_html", "offline_player", "trace_animation_html", "trace_frame", "frame_steps",
           "fig_animation_still"]

#: the smallest text of a frame, in points: matplotlib's default font size (its tick labels), which the
#: notebooks' inline figures are drawn with
FONT_PT = 10.0
#: the frames' resolution: matplotlib's default ``figure.dpi``, at which the notebooks' inline figures are drawn
DPI = 100
#: the frames' size in inches: 1050 x 470 pixels at :data:`DPI`
FIGSIZE = (10.5, 4.7)

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
            # w_pad and wspace keep the objective's y label clear of the attention's colorbar
            self.fig.get_layout_engine().set(w_pad=0.08, wspace=0.06)
            ax_plane, ax_attn, ax_obj = self.fig.subplots(1, 3, width_ratios=[1.2, 1.0, 1.0])
        else:
            ax_plane, ax_attn, ax_obj = axes
            self.fig = ax_plane.figure
        self.axes = (ax_plane, ax_attn, ax_obj)
        small, big = FONT_PT, FONT_PT + 1
        # the plane
        m = self.shown.size
        self.points = ax_plane.scatter(self.X[0], self.X[1], s=22, c=[(0.75, 0.75, 0.75, 1.0)] * m, linewidths=0,
                                       zorder=1)
        self.rings = ax_plane.scatter([], [], s=80, facecolors="none", edgecolors="k", linewidths=1.0, zorder=2,
                                      label="label differs")
        self.paths, self.ref_paths = [], []
        for j in range(k):
            self.paths.append(ax_plane.plot([], [], "-", color=_color(j), lw=1.6, zorder=3)[0])
            self.ref_paths.append(ax_plane.plot([], [], ":", color="k", lw=0.9, zorder=3)[0])
        C = trace.centers[0]
        self.centers = ax_plane.scatter(C[0], C[1], s=80, marker="o", c=self.palette, edgecolors="k",
                                        linewidths=0.8, zorder=4, label=f"{trace_label} (filled)")
        self.centers.set_gid("trace centers")
        R = reference.centers[0]
        self.ref_centers = ax_plane.scatter(R[0], R[1], s=260, marker="o", facecolors="none",
                                            edgecolors=self.palette, linewidths=2.0, zorder=5,
                                            label=f"{reference_label} (hollow)")
        self.ref_centers.set_gid("reference centers")
        allx = np.concatenate([X, trace.centers.transpose(1, 0, 2).reshape(2, -1),
                               reference.centers.transpose(1, 0, 2).reshape(2, -1)], axis=1)
        lo, hi = allx.min(axis=1), allx.max(axis=1)
        pad = 0.06 * np.maximum(hi - lo, 1e-12)
        ax_plane.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
        ax_plane.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
        ax_plane.set_aspect("equal", adjustable="box")
        ax_plane.tick_params(labelsize=small)
        handles = [Line2D([], [], ls="", marker="o", ms=8, mfc="0.5", mec="k", label=f"{trace_label} (filled)"),
                   Line2D([], [], ls="", marker="o", ms=13, mfc="none", mec="0.3", mew=2.0,
                          label=f"{reference_label} (hollow)"),
                   Line2D([], [], ls="", marker="o", ms=8, mfc="none", mec="k", label="label differs")]
        ax_plane.legend(handles=handles, fontsize=small, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=1,
                        frameon=False, handletextpad=0.3)
        # block 1's attention: keys (centers) x shown points
        self.image = ax_attn.imshow(np.zeros((k, m)), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto",
                                    interpolation="nearest")
        ax_attn.set_xlabel(f"query: point ({m} shown,\nby {reference_label}'s last cluster)", fontsize=small)
        ax_attn.set_ylabel("key: center j", fontsize=small)
        ax_attn.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax_attn.tick_params(labelsize=small)
        self.colorbar = self.fig.colorbar(self.image, ax=ax_attn, fraction=0.06, pad=0.03)
        self.colorbar.ax.tick_params(labelsize=small)
        # the objectives
        steps = np.arange(trace.n_steps + 1)
        ax_obj.plot(steps, reference.log_objective, "-", color="0.3", lw=2.4, label=reference_label)
        ax_obj.plot(steps, trace.log_objective, "--o", color="C1", ms=4, lw=1.4, label=trace_label)
        self.marker = ax_obj.axvline(0, color="C3", lw=1.2)
        self.gap = ax_obj.text(0.04, 0.05, "", transform=ax_obj.transAxes, ha="left", va="bottom", fontsize=small,
                               bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "0.7"})
        ax_obj.set_xlabel("step t (layer / iteration)", fontsize=small)
        ax_obj.set_ylabel("log k-means objective", fontsize=small)
        ax_obj.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax_obj.tick_params(labelsize=small)
        ax_obj.grid(alpha=0.3)
        # below the axes, out of the curves' way (constrained layout makes room for it)
        ax_obj.legend(fontsize=small, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, frameon=False)
        ax_obj.set_title(f"log objective\ngap = log J − log J({reference_label})", fontsize=big)
        if axes is None:
            # the layout of the frame with the longest plane title, then kept for every frame (no jitter)
            self.draw(max(range(len(self.steps)), key=lambda i: len(self._what(i))))
            self.fig.draw_without_rendering()
            self.fig.set_layout_engine("none")

    def _what(self, i):
        """The first line of frame ``i``'s plane title: which layer, which blocks."""
        t, stage = self.steps[i]
        return {"start": "initial centers (before layer 1)", "layer": f"layer {t}",
                "assign": f"layer {t}: blocks 1 + 2 assign", "update": f"layer {t}: blocks 3 + 4 move the centers"}[stage]

    def draw(self, i):
        """Set every artist to frame ``i``; return them (FuncAnimation's callback)."""
        t, stage = self.steps[i]
        tr, ref, sel = self.trace, self.reference, self.shown
        c_step = t - 1 if stage == "assign" else t  # centers[c_step]: not yet moved in an "assign" frame
        ax_plane, ax_attn, ax_obj = self.axes
        what = self._what(i)
        if t == 0:
            colors = np.tile([0.75, 0.75, 0.75, 1.0], (sel.size, 1))
            W = np.zeros((tr.centers.shape[2], sel.size))
            differ = np.zeros(sel.size, dtype=bool)
        else:
            W = np.asarray(tr.layers[t - 1].weights["1"])[:, sel]  # (k, m): y_i that block 1 wrote
            colors = np.column_stack([blend_colors(W), np.ones(sel.size)])  # (m, 4) blend of the clusters' colours
            differ = tr.labels[t - 1][sel] != ref.labels[t - 1][sel]
        self.points.set_facecolors(colors)
        self.rings.set_offsets(self.X[:, differ].T if differ.any() else np.empty((0, 2)))
        for j, (line, ref_line) in enumerate(zip(self.paths, self.ref_paths)):
            line.set_data(tr.centers[:c_step + 1, 0, j], tr.centers[:c_step + 1, 1, j])
            ref_line.set_data(ref.centers[:c_step + 1, 0, j], ref.centers[:c_step + 1, 1, j])
        self.centers.set_offsets(tr.centers[c_step].T)
        self.ref_centers.set_offsets(ref.centers[c_step].T)
        n_differ = 0 if t == 0 else int(np.sum(tr.labels[t - 1] != ref.labels[t - 1]))
        ax_plane.set_title(f"{what}\nlabels differing from {self.reference_label}: {n_differ}",
                           fontsize=FONT_PT + 1)
        self.image.set_data(W)
        ax_attn.set_title("block 1 attention\n(the y_i written)" if t else "block 1 attention\n(not yet run)",
                          fontsize=FONT_PT + 1)
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
                  reference_label="Lloyd", interval=900, figsize=FIGSIZE, dpi=DPI, axes=None):
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
        The figure (default :data:`FIGSIZE` at :data:`DPI`); its size in pixels
        is what every frame costs in the page. Its layout is set once, on the
        frame with the longest title, and kept for every frame.
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


#: the player's buttons: matplotlib's Font Awesome icon (a web font from a CDN) -> a label in plain Unicode
#: that DejaVu Sans and the systems' own fonts draw (each button keeps its title and aria-label)
BUTTON_LABELS = {"fa-minus": "\u2212", "fa-fast-backward": "|\u25c0\u25c0", "fa-step-backward": "|\u25c0",
                 "fa-play fa-flip-horizontal": "\u25c0", "fa-pause": "\u275a\u275a", "fa-play": "\u25b6",
                 "fa-step-forward": "\u25b6|", "fa-fast-forward": "\u25b6\u25b6|", "fa-plus": "+"}

#: the player's style: the frame scales down to the width it is given, the controls wrap (a phone's 390 px)
PLAYER_CSS = """<style>
.kmt-animation .animation { display: block; max-width: 100%; }
.kmt-animation .animation img { max-width: 100%; height: auto; }
.kmt-animation input[type=range].anim-slider { width: 100%; max-width: 480px; box-sizing: border-box; }
.kmt-animation .anim-buttons { display: flex; flex-wrap: wrap; justify-content: center; gap: 4px; }
.kmt-animation .anim-buttons button { width: auto; min-width: 40px; padding: 2px 6px;
  font: 16px/1.3 "DejaVu Sans", "Segoe UI Symbol", system-ui, sans-serif; }
.kmt-animation .anim-state { display: flex; flex-wrap: wrap; justify-content: center; gap: 2px 8px; }
</style>"""

_ICON = re.compile(r'<i class="fa ([a-z -]+)"></i>')


def offline_player(html):
    """matplotlib's ``to_jshtml`` page made to work offline and on a narrow screen.

    The Font Awesome stylesheet it links from a CDN is dropped and each
    button's icon is replaced by its label in :data:`BUTTON_LABELS` (the
    buttons and their ``onclick`` handlers are untouched); the page is wrapped
    in ``<div class="kmt-animation">`` with :data:`PLAYER_CSS`.

    Parameters
    ----------
    html : str
        What ``Animation.to_jshtml`` returned.

    Returns
    -------
    str
        The page, with no ``http`` link and no ``fa fa-`` icon.
    """
    if not isinstance(html, str):
        raise TypeError(f"html must be the str of Animation.to_jshtml, got {type(html).__name__}")
    html = re.sub(r'<link[^>]*font-awesome[^>]*>\s*', "", html)

    def label(match):
        icon = match.group(1).strip()
        if icon not in BUTTON_LABELS:
            raise ValueError(f"html has the icon 'fa {icon}', which BUTTON_LABELS does not name "
                             f"(matplotlib {matplotlib.__version__}'s to_jshtml player)")
        return BUTTON_LABELS[icon]

    html = _ICON.sub(label, html)
    if "fa fa-" in html or re.search(r"https?://", html):
        raise ValueError("html still links the network or a Font Awesome icon after offline_player "
                         f"(matplotlib {matplotlib.__version__}'s to_jshtml player): not a page it knows")
    return f'<div class="kmt-animation">\n{PLAYER_CSS}\n{html}\n</div>'


def animation_html(anim, embed_limit_mb=EMBED_LIMIT_MB, default_mode="once"):
    """``anim.to_jshtml()`` made offline: the animation as self-contained HTML and JavaScript (PNG frames).

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
        The page, through :func:`offline_player` (it needs no network and fits
        a phone's width); show it in a notebook with ``IPython.display.HTML(html)``.
    """
    with matplotlib.rc_context({"animation.embed_limit": float(embed_limit_mb)}):
        return offline_player(anim.to_jshtml(default_mode=default_mode))


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
                    figsize=FIGSIZE, dpi=DPI, axes=None)
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
    fig = trace_frame(X, tr, ref, frame=frame, trace_label=f"transformer, γ = {gamma:g}")
    return save_png(fig, path, dpi=DPI)
