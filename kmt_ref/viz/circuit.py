"""The circuit diagram of a k-means transformer, drawn from its weights, token layout and layer description.

:func:`plot_circuit` draws one layer: the point and center tokens as columns of their row groups
(``emb.layout``, ``emb.rows``), each sublayer as a row of its blocks in the order the code runs
them (the reset block first), each block with what its queries and keys are, what Q and K read
and what V writes (read from the matrices), its score, normalizer and γ, and each sublayer's
residual sum. Every word comes from :func:`kmt_ref.viz.circuit_text.describe_circuit`, so the
picture changes when the construction does. :func:`plot_variant_circuits` draws a compact form of
it for every variant in the library beside Lloyd's, with what each changes highlighted
(:func:`~kmt_ref.viz.circuit_text.circuit_differences`). ``fig0_circuit`` and
``fig0_circuit_variants`` write the two files of ``figures/``.
"""
from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ..algorithms.binary import binary_layer, binary_weights
from ..algorithms.dot_product import dot_product_layer, dot_product_weights
from ..algorithms.kmedoids import kmedoids_layer, kmedoids_weights
from ..algorithms.lloyd import lloyd_layer, lloyd_weights
from ..algorithms.spherical import spherical_kmeans_layer
from ..algorithms.sparse_update import direct_weights, sparse_update_layer, sparse_update_weights
from ..validation import check_count
from .canvas import save_png
from .circuit_text import MINUS, check_circuit, circuit_differences, describe_circuit

__all__ = ["plot_circuit", "variant_circuits", "plot_variant_circuits", "fig0_circuit", "fig0_circuit_variants",
           "HIGHLIGHT"]

#: the colour of what a variant changes
HIGHLIGHT = "#d95f02"
FONT = 9.0  # points: the smallest text drawn
LINE = FONT * 1.45 / 72  # inches per line of text
CHAR = FONT * 0.64 / 72  # inches per character (DejaVu Sans, bold included: a generous average)
STREAM_COLORS = {"X": "#deebf7", "C": "#fde0dd"}
#: what each row group holds at embedding: name -> (in a point token, in a center token)
ROW_WORDS = {"x": ("x_i", "c_j"), "y": ("y_i\n(0 before layer 1)", "e_j"), "flag": ("0", "1"), "norm": ("\u2016x_i\u2016\u00b2",
             "\u2016c_j\u2016\u00b2"), "one": ("1", "1"), "code": ("0", "b_j (bits of j)"), "mu": ("0", "0")}


def _check_ax(ax):
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")


def _check_title(title):
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a string or None, got {type(title).__name__}")


def _canvas(ax, width, height):
    """An axes whose data units are inches of a (width, height) figure."""
    if ax is None:
        fig = plt.figure(figsize=(width, height))
        ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return ax.figure, ax


def _wrap(text, width_in):
    return textwrap.wrap(text, max(8, int(width_in / CHAR))) or [""]


def _box(ax, x, y, w, h, lines, *, face="white", edge="0.35", changed=False, gid=None):
    """A rounded box at (x, y) (lower left), its lines of (text, bold, highlighted) from the top."""
    patch = FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.06", facecolor=face,
                           edgecolor=HIGHLIGHT if changed else edge, linewidth=2.4 if changed else 1.0,
                           gid=gid)
    ax.add_patch(patch)
    ty = y + h - 0.08
    for text, bold, hot in lines:
        ax.text(x + 0.08, ty, text, fontsize=FONT, va="top", ha="left", fontweight="bold" if bold else "normal",
                color=HIGHLIGHT if hot else "black", gid=gid and f"{gid}:text")
        ty -= LINE
    return patch


def _lines(fields, changed, width_in):
    """(text, bold, highlighted) lines, each of (text, [fields it shows], bold), wrapped to the box."""
    out = []
    for text, names, bold in fields:
        if not text:
            continue
        hot = any(n in changed for n in names)
        out += [(part, bold, hot) for part in _wrap(text, width_in)]
    return out


def _block_fields(r, compact):
    """The lines of one component's box: (text, the record fields it shows, bold)."""
    if r["name"] == "FFN":
        return [(f"FFN \u00b7 {r['kind']}", ["kind"], True), (f"W1 {r['W1']}", ["W1"], False),
                (f"W2 {r['W2']}", ["W2"], False), (f"activation {r['activation']}", ["activation"], False)]
    head = f"{r['name']} \u00b7 {r['short']}" if compact else f"Block {r['name']} \u00b7 {r['kind']}"
    qk = f"Q {r['Q']} \u00b7 K {r['K']}" if compact else f"Q reads {r['Q']} \u00b7 K reads {r['K']}"
    return [(head, ["kind"], True), (qk, ["Q", "K"], False), (f"V {r['V']}", ["V"], False),
            (r["bias"], ["bias"], False), (f"score {r['score']}", ["score"], False),
            (f"{r['normalizer']} \u00b7 {r['gamma']}", ["normalizer", "gamma"], False), (r["post"], ["post"], False)]


def _token_column(ax, emb, x, y_top, w, point, added=()):
    """The row groups of a point (or center) token, top to bottom; returns the column's bottom."""
    sym = "x\u0304_i" if point else "c\u0304_j"
    ax.text(x + w / 2, y_top, f"{'point' if point else 'center'} token {sym}", fontsize=FONT + 1,
            fontweight="bold", ha="center", va="bottom")
    ax.text(x + w / 2, y_top - 0.04, f"d_emb = {emb.d_emb} rows", fontsize=FONT, ha="center", va="top")
    y = y_top - 0.04 - LINE
    for name in emb.layout:
        rows = emb.rows(name)
        h = max(1, rows.stop - rows.start) * 0.14 + LINE
        what = ROW_WORDS.get(name, ("?", "?"))[0 if point else 1]
        span = f"row {rows.start}" if rows.stop - rows.start == 1 else f"rows {rows.start}\u2013{rows.stop - 1}"
        hot = name in added
        face = "#fdd0a2" if hot else STREAM_COLORS["X" if point else "C"]
        ax.add_patch(FancyBboxPatch((x, y - h), w, h, boxstyle="square,pad=0", facecolor=face,
                                    edgecolor=HIGHLIGHT if hot else "0.3", linewidth=1.6 if hot else 0.8,
                                    gid=f"rows:{'X' if point else 'C'}:{name}"))
        ax.text(x + 0.06, y - h / 2, f"{name}: {what}", fontsize=FONT, va="center", ha="left",
                color=HIGHLIGHT if hot else "black")
        ax.text(x + w - 0.06, y - h / 2, span, fontsize=FONT, va="center", ha="right", color="0.25")
        y -= h
    return y


def _rows_of(records):
    rows = {}
    for r in records:
        rows.setdefault(r["sublayer"], []).append(r)
    return [rows[i] for i in sorted(rows)]


def _arrow(ax, a, b, text=None, rad=0.0, color="0.3"):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=12, color=color, linewidth=1.2,
                                 connectionstyle=f"arc3,rad={rad}", shrinkA=2, shrinkB=2))
    if text:
        ax.text((a[0] + b[0]) / 2 + 0.05, (a[1] + b[1]) / 2, text, fontsize=FONT, color=color, ha="left",
                va="center", style="italic")


def plot_circuit(params, emb, layer, *, ax=None, title=None, changed=None):
    """Draw one layer of a k-means transformer from its weights, token layout and layer description.

    Parameters
    ----------
    params : dict
        The weights, e.g. from :func:`kmt_ref.lloyd_weights` ``(d, k)``.
    emb : Embedding
        The token layout that goes with them.
    layer : tuple of Sublayer / FeedForward
        E.g. :func:`kmt_ref.algorithms.lloyd.lloyd_layer` ``()``.
    ax : matplotlib Axes, optional
        Drawn into in inch units of an 11-inch-wide figure (a new figure if None).
    title : str, optional
    changed : dict, optional
        :func:`~kmt_ref.viz.circuit_text.circuit_differences`' result: the fields, blocks and row
        groups it names are highlighted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    check_circuit(params, emb, layer)
    _check_ax(ax)
    _check_title(title)
    if changed is not None and not isinstance(changed, dict):
        raise TypeError(f"changed must be a dict from circuit_differences or None, got {type(changed).__name__}")
    changed = changed or {"changed": {}, "rows_added": []}
    records = describe_circuit(params, emb, layer)
    rows = _rows_of(records)
    width, left, right = 11.0, 2.25, 2.05
    mid_w = width - left - right - 0.3
    heights = []
    for row in rows:
        box_w = mid_w / len(row) - 0.15
        heights.append(max(len(_lines(_block_fields(r, False), (), box_w)) for r in row) * LINE + 0.22)
    column_h = sum(0.14 * emb.size(n) + LINE for n in emb.layout) + 2 * LINE
    firsts = {next((i for i, row in enumerate(rows) if row[0]["stream"] == s), None) for s in ("X", "C")}
    slots = [max(h + 0.55, column_h + 0.35) if i in firsts else h + 0.55 for i, h in enumerate(heights)]
    height = 0.75 + sum(slots) + 0.75
    fig, ax = _canvas(ax, width, height)
    ax.text(width / 2, height - 0.12, title or "One layer of the k-means transformer", fontsize=FONT + 3,
            fontweight="bold", ha="center", va="top")
    # the two token columns: points beside the first point-stream row, centers beside the first center row
    y = height - 0.75
    tops = []
    for slot in slots:
        tops.append(y)
        y -= slot
    first = {s: next((i for i, row in enumerate(rows) if row[0]["stream"] == s), None) for s in ("X", "C")}
    bottom_x = _token_column(ax, emb, 0.1, tops[first["X"]] - 0.1, left - 0.3, True, changed["rows_added"])
    c_top = tops[first["C"]] - 0.1 if first["C"] is not None else bottom_x - 0.3
    _token_column(ax, emb, 0.1, c_top, left - 0.3, False, changed["rows_added"])
    outputs = {}
    for i, (row, h, top) in enumerate(zip(rows, heights, tops)):
        stream = row[0]["stream"]
        label = {"X": "encoder: the point stream", "C": "decoder: the center stream"}.get(stream, stream)
        if row[0]["name"] == "FFN":
            label = "feed-forward on the center stream" if stream == "C" else "feed-forward on the point stream"
        ax.add_patch(FancyBboxPatch((left, top - h - 0.05), mid_w, h + 0.3, boxstyle="round,pad=0.02",
                                    facecolor=STREAM_COLORS.get(stream, "0.95"), edgecolor="none", alpha=0.6))
        ax.text(left + 0.08, top + 0.2, f"sublayer {i + 1} \u00b7 {label} \u00b7 run left to right", fontsize=FONT,
                va="center", ha="left", color="0.2", fontweight="bold")
        box_w = mid_w / len(row) - 0.15
        for j, r in enumerate(row):
            hot = changed["changed"].get(r["name"], ())
            x = left + 0.075 + j * (box_w + 0.15)
            _box(ax, x, top - h, box_w, h - 0.05, _lines(_block_fields(r, False), hot, box_w),
                 changed=bool(hot), gid=f"block:{r['name']}")
            r["_box"] = (x, top - h, box_w, h - 0.05)
        # its residual sum, as the code adds it
        ox = left + mid_w + 0.2
        hot_res = any("residual" in changed["changed"].get(r["name"], ()) for r in row)
        res = [(part, True, hot_res) for part in _wrap(row[0]["residual"], right - 0.35)]
        res_h = len(res) * LINE + 0.14
        _box(ax, ox, top - h / 2 - res_h / 2, right - 0.25, res_h, res, gid=f"residual:{i}")
        _arrow(ax, (left + mid_w, top - h / 2), (ox, top - h / 2))
        outputs[stream] = (ox, top - h / 2 - res_h / 2, right - 0.25)
        src_y = top - h / 2
        _arrow(ax, (left - 0.2, src_y), (left, src_y))
        # a block reading the point stream after the encoder reads its output x̄′
        for r in row:
            if r["name"] != "FFN" and stream != "X" and "X" in r["keys"].split("+") and "X" in outputs and i:
                ox0, oy0, ow = outputs["X"]
                bx, by, bw, bh = r["_box"]
                _arrow(ax, (ox0 + ow / 2, oy0), (bx + bw * 0.6, by + bh), rad=-0.15, color="0.15")
                mx, my = (ox0 + ow / 2 + bx + bw * 0.6) / 2, (oy0 + by + bh) / 2
                ax.text(mx - 0.3, my, f"block {r['name']}'s keys: x\u0304\u2032, the encoder's output",
                        fontsize=FONT, ha="right", va="center", style="italic", color="0.15")
    marked = changed["changed"] or changed["rows_added"]
    foot = ("one layer = one Lloyd iteration; T layers with shared weights" if _is_lloyd(params, emb, layer)
            else "T layers with shared weights" + ("; in orange: what differs from Lloyd's circuit" if marked else ""))
    ax.text(width / 2, 0.5, foot, fontsize=FONT + 1, ha="center", va="center", fontweight="bold")
    ax.text(width / 2, 0.2, "z: a query token, z\u2032: a key token; block b adds A_b = V Z\u2032 \u03c3(S) to its "
            "stream (\u03c3 normalizes over the keys; S includes \u03b3)", fontsize=FONT, ha="center", va="center", color="0.25")
    return fig


def _is_lloyd(params, emb, layer):
    base = lloyd_weights(emb.d, emb.k)
    diff = circuit_differences((params, emb, layer), base + (lloyd_layer(),))
    return not diff["changed"] and not diff["rows_added"] and not diff["rows_removed"] and not diff["removed"]


def variant_circuits(d=2, k=3):
    """Lloyd's circuit and every variant's: a list of ``(name, caption, (params, emb, layer))``.

    The weights and layers are the library's own functions with fixed example parameters:
    soft k-means at β = 2; trimmed and robust k-means with block 3's distance weight 1 and the
    penalties γ₁ = γ_flag = 10; k-medoids with γ = 1 and the same penalties.
    """
    d = check_count(d, "d", minimum=1)
    k = check_count(k, "k", minimum=1)
    lloyd = lloyd_weights(d, k)
    g_w, g1, gf, scale = direct_weights(1.0, 10.0, 10.0)
    sparse = sparse_update_weights(d, k, g_w, g1, gf)
    return [
        ("Lloyd (Theorem 2.1)", "the reference circuit", lloyd + (lloyd_layer(),)),
        ("soft k-means", "finite-\u03b2 softmax assignment, the authors' linear update",
         lloyd_weights(d, k, "linear") + (lloyd_layer(gamma=2.0, center_update="linear"),)),
        ("spherical k-means", "unit-norm tokens, cosine assignment, RMSNorm on the update",
         lloyd + (spherical_kmeans_layer(lloyd[1].d_emb),)),
        ("trimmed k-means", "normmax keeps the closest members", sparse + (
            sparse_update_layer("normmax", (("alpha", float("inf")),), scale=scale),)),
        ("robust k-means", "sparsemax weights the members", sparse + (sparse_update_layer("sparsemax", scale=scale),)),
        ("randomized k-medoids", "a mean block, then a Gumbel draw of a member",
         kmedoids_weights(d, k, g_w, g1, gf) + (kmedoids_layer(scale),)),
        ("Theorem 2.2 (dot product)", "dot-product scores, the norm trick, a ReQU FFN",
         dot_product_weights(d, k) + (dot_product_layer(),)),
        ("binary codes (follow-up)", "\u2308log\u2082k\u2309 code rows instead of k one-hot rows",
         binary_weights(d, k) + (binary_layer(),)),
    ]


def plot_variant_circuits(variants=None, *, base=None, title=None):
    """Small multiples: each circuit's layer in compact form, what differs from ``base``'s highlighted.

    Parameters
    ----------
    variants : list of (name, caption, (params, emb, layer)), optional
        Default :func:`variant_circuits` ``()``.
    base : (params, emb, layer), optional
        What the differences are computed against; default the first variant's circuit.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Each box's patch has the gid ``'<variant>|<component>'``; a highlighted one ends in ``'|changed'``.
    """
    variants = variant_circuits() if variants is None else variants
    if not isinstance(variants, (list, tuple)) or not variants or not all(
            isinstance(v, (list, tuple)) and len(v) == 3 for v in variants):
        raise TypeError("variants must be a non-empty list of (name, caption, (params, emb, layer))")
    _check_title(title)
    base = variants[0][2] if base is None else base
    width, left = 11.0, 2.55
    panels = []
    for name, caption, circuit in variants:
        diff = circuit_differences(circuit, base)
        records = describe_circuit(*circuit)
        box_w = (width - left - 0.1) / len(records) - 0.08
        lines = [_lines(_block_fields(r, True), diff["changed"].get(r["name"], ()), box_w) for r in records]
        panels.append((name, caption, circuit, diff, records, box_w, lines,
                       max(map(len, lines)) * LINE + 0.2))
    height = 1.0 + sum(p[-1] + 0.25 for p in panels) + 0.3
    fig, ax = _canvas(None, width, height)
    ax.text(width / 2, height - 0.1, title or "What each variant changes in Lloyd's circuit (in orange)",
            fontsize=FONT + 3, fontweight="bold", ha="center", va="top")
    ax.text(width / 2, height - 0.42, "each box one block in the order the code runs it; keys, Q, K, V, score, "
            "normalizer and \u03b3 compared with Lloyd's", fontsize=FONT, ha="center", va="top", color="0.25")
    ax.text(width / 2, height - 0.68, "rows: \u2212name = a row Lloyd's tokens have and this variant's lack;  "
            "a\u2192b = read from rows a, written to rows b;  numbers: the example parameters of variant_circuits",
            fontsize=FONT, ha="center", va="top", color="0.25")
    y = height - 1.0
    for name, caption, (params, emb, layer), diff, records, box_w, lines, h in panels:
        y -= h
        ax.text(0.1, y + h - 0.05, name, fontsize=FONT + 1, fontweight="bold", va="top")
        cap = _wrap(caption, left - 0.2)
        for n, part in enumerate(cap):
            ax.text(0.1, y + h - 0.3 - n * LINE, part, fontsize=FONT, va="top", color="0.25")
        ry = y + h - 0.3 - len(cap) * LINE - 0.05
        rows = [(g, g in diff["rows_added"]) for g in emb.layout]
        rows += [(f"{MINUS}{g}", True) for g in diff["rows_removed"]]
        x = 0.1
        ax.text(x, ry, "rows:", fontsize=FONT, va="top")
        x += 0.42
        for g, hot in rows:
            ax.text(x, ry, g, fontsize=FONT, va="top", color=HIGHLIGHT if hot else "black",
                    fontweight="bold" if hot else "normal",
                    bbox={"boxstyle": "round,pad=0.15", "facecolor": "#fdd0a2" if hot else "white",
                          "edgecolor": HIGHLIGHT if hot else "0.6"})
            x += CHAR * len(g) + 0.2
        for j, (r, ls) in enumerate(zip(records, lines)):
            hot = r["name"] in diff["changed"]
            face = STREAM_COLORS.get(r["stream"], "white")
            _box(ax, left + j * (box_w + 0.08), y, box_w, h - 0.05, ls, face=face, changed=hot,
                 gid=f"{name}|{r['name']}" + ("|changed" if hot else ""))
        y -= 0.25
    return fig


def fig0_circuit(path, d=2, k=3):
    """Write ``fig0_circuit.png``: Lloyd's circuit (Theorem 2.1) at the notebooks' example sizes d = 2, k = 3."""
    params, emb = lloyd_weights(d, k)
    fig = plot_circuit(params, emb, lloyd_layer(),
                       title=f"One layer of the k-means transformer (Theorem 2.1, d = {d}, k = {k})")
    return save_png(fig, path)


def fig0_circuit_variants(path, d=2, k=3):
    """Write ``fig0_circuit_variants.png``: every variant's circuit beside Lloyd's, the changes highlighted."""
    return save_png(plot_variant_circuits(variant_circuits(d, k)), path)
