"""The words of the circuit diagram, read from the weights, the token layout and the layer description.

:func:`describe_circuit` turns ``(params, emb, layer)`` into one record per component of the
layer (an attention block or a feed-forward block), in the order the code runs them: what its
queries and keys are, what Q and K read and what V writes (from the matrices, block by block of
the token layout: ``P_X`` reads ``x``, ``-P_Y`` writes ``-y``; a block of a matrix that is no
multiple of the identity or of a matrix of ones is called ``dense``), its score, normalizer and
γ, and the residual sum of its sublayer. :func:`circuit_differences` compares two such records
field by field, so what a variant changes in Lloyd's circuit is computed, never written by hand.
:mod:`kmt_ref.viz.circuit` draws them.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.attention import FeedForward, Sublayer
from ..core.tokens import Embedding

__all__ = ["MINUS", "describe_matrix", "describe_circuit", "circuit_differences", "check_circuit"]

#: the minus sign drawn (U+2212)
MINUS = "\u2212"

#: how a normalizer name is drawn
NORMALIZER_WORDS = {"hardmax": "hardmax (lowest index)", "hardmax_average": "hardmax_average"}

#: how a score is drawn (z a query token, z' a key token)
SCORE_WORDS = {
    "euclidean": f"{MINUS}\u2016Kz\u2032 {MINUS} Qz\u2016\u00b2",
    "euclidean_direct": f"{MINUS}\u2016Kz\u2032 {MINUS} Qz\u2016\u00b2 (from differences)",
    "dot": "(Kz\u2032)\u00b7(Qz)",
}

#: the streams' words: stream name -> (plural noun, token symbol)
STREAMS = {"X": ("points", "x\u0304"), "C": ("centers", "c\u0304")}


def _number(c):
    """A coefficient as drawn: '' for 1, '−' for -1, else 3 significant digits."""
    if c == 1:
        return ""
    if c == -1:
        return MINUS
    text = f"{c:.3g}"
    return text.replace("-", MINUS).replace("inf", "\u221e")


def _term(sub, src, dst):
    """The words for one nonzero block ``sub`` of a matrix (rows ``dst``, columns ``src``), or 'dense'."""
    where = src if src == dst else f"{src}\u2192{dst}"
    if sub.shape[0] == sub.shape[1] and np.array_equal(sub, sub[0, 0] * np.eye(sub.shape[0])):
        return _number(sub[0, 0]) + where
    if np.all(sub == sub.flat[0]):
        return f"{_number(sub.flat[0]) or '1'}\u00b7ones {where}"
    return f"dense {where}"


def _signed_join(terms):
    """'x + y', 'x − one→norm': the terms joined with their own signs."""
    out = ""
    for t in terms:
        if not out:
            out = t
        elif t.startswith(MINUS):
            out += f" {MINUS} {t[1:]}"
        else:
            out += f" + {t}"
    return out


def describe_matrix(M, emb, role="Q"):
    """What a weight matrix reads (Q, K) or writes (V), block by block of the token layout.

    Parameters
    ----------
    M : ndarray, shape (d_emb, d_emb)
    emb : Embedding
    role : {"Q", "K", "V"}
        ``"V"`` adds the signs of what is written: ``-P_Y`` is ``'writes −y'``; Q and K are
        ``'x'``, ``'y + flag'``.

    Returns
    -------
    str
        ``'0'`` for a zero matrix; ``'dense'`` when more than four blocks are nonzero (a learned
        matrix).
    """
    terms = []
    for dst in emb.layout:
        for src in emb.layout:
            sub = M[emb.rows(dst), emb.rows(src)]
            if np.any(sub != 0):
                terms.append(_term(sub, src, dst))
    if not terms:
        return "0"
    text = "dense" if len(terms) > 4 else _signed_join(terms)
    if role == "V":
        return "writes " + (text if text.startswith(MINUS) or text == "dense" else "+" + text)
    return text


def _groups_used(M, emb, axis):
    """The row groups of the tokens a non-square map reads (axis 0: columns) or writes (axis 1: rows)."""
    names = []
    for name in emb.layout:
        part = M[:, emb.rows(name)] if axis == 0 else M[emb.rows(name), :]
        if np.any(part != 0):
            names.append(name)
    return " + ".join(names) or "0"


def _callable_name(f):
    while isinstance(f, functools.partial):
        f = f.func
    return getattr(f, "__name__", repr(f))


def _option_words(options):
    words = []
    for key, value in options:
        value = "\u221e" if value == np.inf else value
        label = "\u03b1" if key == "alpha" else key
        words.append(key if value is True else f"{label}={value}")
    return words


#: normalizers that take no temperature (their blocks are drawn "no γ")
NO_GAMMA = ("linear",)


def _gamma_words(g, normalizer=None):
    if normalizer in NO_GAMMA:
        return "no \u03b3"
    return "\u03b3 = \u221e" if g == np.inf else f"\u03b3 = {_number(g) or '1'}"


def check_circuit(params, emb, layer):
    """Check the arguments of a circuit picture: a weight dict, an Embedding and a layer description.

    Raises
    ------
    TypeError
        ``params`` is no dict, ``emb`` no :class:`~kmt_ref.core.tokens.Embedding`, ``layer`` no
        tuple or list of Sublayer / FeedForward.
    ValueError
        ``layer`` is empty, or a weight the layer reads is missing or of the wrong shape.
    """
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of weight matrices, got {type(params).__name__}")
    if not isinstance(emb, Embedding):
        raise TypeError(f"emb must be a kmt_ref Embedding, got {type(emb).__name__}")
    if not isinstance(layer, (tuple, list)) or not all(isinstance(s, (Sublayer, FeedForward)) for s in layer):
        raise TypeError(f"layer must be a tuple of Sublayer and FeedForward, got {layer!r:.120}")
    if not layer:
        raise ValueError("layer=() has no sublayer to draw")
    for sub in layer:
        if isinstance(sub, Sublayer):
            for b in sub.blocks:
                for m in "QKV":
                    _matrix(params, m + b.name, (emb.d_emb, emb.d_emb))
        else:
            W1 = _matrix(params, sub.prefix + "W1", None)
            _matrix(params, sub.prefix + "W2", (emb.d_emb, W1.shape[0]))
            if W1.shape[1] != emb.d_emb:
                raise ValueError(f"params[{sub.prefix + 'W1'!r}] has shape {W1.shape}, expected (h, {emb.d_emb})")


def _matrix(params, key, shape):
    if key not in params:
        raise ValueError(f"params has no {key!r}: the layer reads it (keys: {sorted(params)})")
    M = np.asarray(params[key])
    if M.ndim != 2 or (shape is not None and M.shape != shape):
        raise ValueError(f"params[{key!r}] has shape {M.shape}, expected {shape or '2-D'}")
    return M


def _bias_words(params, emb, name):
    words = []
    for m in "QKV":
        b = params.get(f"b{m}{name}")
        if b is not None and np.any(np.asarray(b) != 0):
            b = np.asarray(b).reshape(-1)
            parts = []
            for g in emb.layout:
                part = b[emb.rows(g)]
                if np.any(part != 0):
                    parts.append(f"{_number(part[0]) or '1'} on {g}" if np.all(part == part[0]) else f"dense on {g}")
            words.append(f"b{m}: " + ", ".join(parts))
    return "; ".join(words)


def _keys_words(stream, keys, updated, short=False):
    """'centers c̄', 'updated points x̄′ and centers c̄' (short: 'c̄', 'x̄′, c̄'): the keys side by side."""
    out = []
    for s in ("X", "C"):
        if s in keys.split("+"):
            noun, sym = STREAMS[s]
            new = s in updated and s != stream
            sym = sym + "\u2032" * new
            out.append(sym if short else f"updated {noun} {sym}" if new else f"{noun} {sym}")
    return (", " if short else " and ").join(out)


def describe_circuit(params, emb, layer):
    """One record per component of ``layer``, in the order the code runs them.

    Returns
    -------
    list of dict
        Every record has ``name`` (``'1'`` ... for a block, ``'FFN'`` for a feed-forward block),
        ``sublayer`` (its index in ``layer``), ``stream`` (``'X'`` or ``'C'``), ``kind``,
        ``residual`` (its sublayer's sum as run, e.g. ``'c̄′ = c̄ + A4 + A3'``) and the fields drawn:
        for a block ``keys``, ``queries_keys``, ``Q``, ``K``, ``V``, ``bias``, ``score``,
        ``normalizer``, ``gamma``, ``post``; for a feed-forward block ``W1``, ``W2``, ``activation``.
    """
    check_circuit(params, emb, layer)
    records, updated = [], set()
    for i, sub in enumerate(layer):
        noun, sym = STREAMS.get(sub.stream, (sub.stream, sub.stream))
        if isinstance(sub, FeedForward):
            records.append({
                "name": "FFN", "sublayer": i, "stream": sub.stream, "kind": f"feed-forward on the {noun}",
                "short": f"FFN on the {noun}",
                "W1": "reads " + _groups_used(np.asarray(params[sub.prefix + "W1"]), emb, 0),
                "W2": "writes " + _groups_used(np.asarray(params[sub.prefix + "W2"]), emb, 1),
                "activation": sub.activation,
                "residual": f"{sym}\u2032 = {sym} + W2 {sub.activation}(W1 {sym})",
            })
            updated.add(sub.stream)
            continue
        residual = f"{sym}\u2032 = {sym} + " + " + ".join(f"A{b.name}" for b in sub.blocks)
        for b in sub.blocks:
            records.append(_block_record(params, emb, b, i, sub.stream, updated, residual))
        updated.add(sub.stream)
    return records


def _block_record(params, emb, b, i, stream, updated, residual):
    noun, _ = STREAMS.get(stream, (stream, stream))
    keys = _keys_words(stream, b.keys, updated)
    kind = f"self: {noun}" if b.keys == stream else f"cross: {noun} query {keys}"
    short = f"self: {noun}" if b.keys == stream else f"{noun} query {_keys_words(stream, b.keys, updated, True)}"
    normalizer = b.normalizer if isinstance(b.normalizer, str) else _callable_name(b.normalizer)
    score = SCORE_WORDS.get(b.score, b.score)
    if b.scale != 1:
        score += f" / {_number(b.scale) or '1'}"
    return {
        "name": b.name, "sublayer": i, "stream": stream, "kind": kind, "keys": b.keys, "short": short,
        "queries_keys": f"queries: {noun} \u00b7 keys: {keys}",
        "Q": describe_matrix(np.asarray(params["Q" + b.name]), emb, "Q"),
        "K": describe_matrix(np.asarray(params["K" + b.name]), emb, "K"),
        "V": describe_matrix(np.asarray(params["V" + b.name]), emb, "V"),
        "bias": _bias_words(params, emb, b.name),
        "score": score,
        "normalizer": " ".join([NORMALIZER_WORDS.get(normalizer, normalizer)] + _option_words(b.options)),
        "gamma": _gamma_words(b.gamma, normalizer),
        "post": "" if b.post is None else f"post: {_callable_name(b.post)}",
        "residual": residual,
    }


#: the fields of a record that differences are looked for in
COMPARED = ("kind", "Q", "K", "V", "bias", "score", "normalizer", "gamma", "post", "W1", "W2", "activation",
            "residual")


def circuit_differences(circuit, base):
    """What ``circuit`` changes in ``base`` (two ``(params, emb, layer)`` triples), field by field.

    Returns
    -------
    dict
        ``rows_added``, ``rows_removed``: the token's row groups only one of them has;
        ``changed``: component name -> the fields of :func:`describe_circuit`'s record that
        differ (a component ``base`` lacks has every field it draws); ``removed``: the names of
        ``base``'s components that ``circuit`` lacks.
    """
    for name, triple in (("circuit", circuit), ("base", base)):
        if not isinstance(triple, (tuple, list)) or len(triple) != 3:
            raise TypeError(f"{name} must be a (params, emb, layer) triple, got {type(triple).__name__}")
    mine, theirs = describe_circuit(*circuit), describe_circuit(*base)
    by_name = {r["name"]: r for r in theirs}
    changed = {}
    for r in mine:
        other = by_name.get(r["name"])
        fields = [f for f in COMPARED if f in r and (other is None or r[f] != other.get(f))]
        if fields:
            changed[r["name"]] = fields
    names = {r["name"] for r in mine}
    emb, base_emb = circuit[1], base[1]
    return {
        "rows_added": [g for g in emb.layout if g not in base_emb.layout],
        "rows_removed": [g for g in base_emb.layout if g not in emb.layout],
        "changed": changed,
        "removed": [r["name"] for r in theirs if r["name"] not in names],
    }
