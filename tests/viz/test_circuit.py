"""The circuit diagram (kmt_ref/viz/circuit.py, circuit_text.py): every word drawn comes from the construction."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from kmt_ref import lloyd_weights  # noqa: E402
from kmt_ref.algorithms.lloyd import lloyd_layer  # noqa: E402
from kmt_ref.core.tokens import with_block  # noqa: E402
from kmt_ref.viz.circuit import HIGHLIGHT, plot_circuit, plot_variant_circuits, variant_circuits  # noqa: E402
from kmt_ref.viz.circuit_text import MINUS, circuit_differences, describe_circuit, describe_matrix  # noqa: E402


def _texts(fig, gid=None):
    """Every text drawn (those of one box's gid if given)."""
    out = [t.get_text() for t in fig.findobj(Text) if gid is None or t.get_gid() == f"{gid}:text"]
    plt.close(fig)
    return out


def _block_text(fig, name):
    return " ".join(_texts(fig, f"block:{name}"))


@pytest.fixture
def lloyd():
    params, emb = lloyd_weights(2, 3)
    return params, emb, lloyd_layer()


def test_lloyd_diagram_states_the_blocks_the_order_and_the_layer(lloyd):
    text = " ".join(_texts(plot_circuit(*lloyd)))
    for words in ("x\u0304\u2032 = x\u0304 + A2 + A1", "c\u0304\u2032 = c\u0304 + A4 + A3",
                  "one layer = one Lloyd iteration; T layers with shared weights", "the encoder's output",
                  "y: y_i\n(0 before layer 1)", "y: e_j", "flag: 0", "flag: 1", "rows 2\u20134", "d_emb = 6 rows"):
        assert words in text, words
    fig = plot_circuit(*lloyd)
    assert "Q reads x \u00b7 K reads x" in _block_text(fig, "1")
    assert "V writes +y" in _block_text(plot_circuit(*lloyd), "1")
    assert f"V writes {MINUS}y" in _block_text(plot_circuit(*lloyd), "2")
    b3 = _block_text(plot_circuit(*lloyd), "3")
    assert "K reads y + flag" in b3 and "hardmax_average" in b3 and "updated points" in b3
    assert "hardmax (lowest index) \u00b7 \u03b3 = \u221e" in _block_text(plot_circuit(*lloyd), "1")


def test_each_blocks_text_is_read_from_its_weights(lloyd):
    params, emb, layer = lloyd
    records = {r["name"]: r for r in describe_circuit(params, emb, layer)}
    expected = {"1": ("x", "x", "writes +y"), "2": ("x", "x", f"writes {MINUS}y"),
                "3": ("y", "y + flag", "writes +x"), "4": ("y", "y", f"writes {MINUS}x")}
    for name, (q, k, v) in expected.items():
        assert (records[name]["Q"], records[name]["K"], records[name]["V"]) == (q, k, v)
    assert [r["name"] for r in describe_circuit(params, emb, layer)] == ["2", "1", "4", "3"]  # as the code runs them


def test_a_changed_normalizer_changes_block_1_only(lloyd):
    params, emb, layer = lloyd
    soft = with_block(layer, "1", normalizer="softmax", gamma=2.0)
    assert "softmax \u00b7 \u03b3 = 2" in _block_text(plot_circuit(params, emb, soft), "1")
    assert "hardmax" not in _block_text(plot_circuit(params, emb, soft), "1")
    for name in "234":
        assert _block_text(plot_circuit(params, emb, soft), name) == _block_text(plot_circuit(*lloyd), name)
    assert "one Lloyd iteration" not in " ".join(_texts(plot_circuit(params, emb, soft)))


def test_a_flipped_sign_in_v2_changes_the_text(lloyd):
    params, emb, layer = lloyd
    flipped = dict(params, V2=-params["V2"])
    assert "V writes +y" in _block_text(plot_circuit(flipped, emb, layer), "2")
    assert f"V writes {MINUS}y" not in _block_text(plot_circuit(flipped, emb, layer), "2")


def test_matrices_that_are_no_projector():
    _, emb = lloyd_weights(2, 3)
    rng = np.random.default_rng(0)
    assert describe_matrix(rng.standard_normal((6, 6)), emb, "Q") == "dense"
    assert describe_matrix(np.zeros((6, 6)), emb, "V") == "0"
    M = np.zeros((6, 6))
    M[0:2, 0:2] = [[1.0, 2.0], [0.0, 1.0]]
    assert describe_matrix(M, emb, "K") == "dense x"
    M = np.zeros((6, 6))
    M[2:5, 0:2] = np.eye(3, 2)
    assert describe_matrix(M, emb, "V") == "writes +dense x\u2192y"
    M = np.zeros((6, 6))
    M[0:2, 0:2] = 2.5 * np.eye(2)
    assert describe_matrix(M, emb, "Q") == "2.5x"


def _marked(fig):
    """variant -> the components whose boxes are highlighted, and the boxes drawn."""
    marked, boxes = {}, {}
    for p in fig.findobj(FancyBboxPatch):
        gid = p.get_gid() or ""
        if "|" in gid:
            parts = gid.split("|")
            boxes.setdefault(parts[0], set()).add(parts[1])
            if parts[-1] == "changed":
                marked.setdefault(parts[0], set()).add(parts[1])
    plt.close(fig)
    return marked, boxes


def test_the_variants_figure_marks_exactly_the_blocks_that_differ():
    variants = variant_circuits(2, 3)
    base = variants[0][2]
    marked, boxes = _marked(plot_variant_circuits(variants))
    assert "Lloyd (Theorem 2.1)" not in marked
    for name, _, circuit in variants:
        mine = {r["name"]: r for r in describe_circuit(*circuit)}
        theirs = {r["name"]: r for r in describe_circuit(*base)}
        differ = {n for n, r in mine.items()
                  if n not in theirs or any(r.get(f) != theirs[n].get(f) for f in ("Q", "K", "V", "bias", "kind",
                                            "score", "normalizer", "gamma", "post", "residual"))}
        assert marked.get(name, set()) == differ, name
        assert boxes[name] == set(mine)
    assert marked["soft k-means"] == {"1", "3"}
    assert marked["trimmed k-means"] == {"3"} and marked["robust k-means"] == {"3"}
    assert marked["Theorem 2.2 (dot product)"] == {"1", "2", "3", "4", "FFN"}
    assert {"mu", "mu_reset", "3"} == marked["randomized k-medoids"]


def test_differences_name_the_rows_and_fields():
    variants = dict((name, circuit) for name, _, circuit in variant_circuits(2, 3))
    base = variants["Lloyd (Theorem 2.1)"]
    dot = circuit_differences(variants["Theorem 2.2 (dot product)"], base)
    assert dot["rows_added"] == ["norm", "one"] and dot["rows_removed"] == []
    assert dot["changed"]["4"] == ["V", "score"]
    soft = circuit_differences(variants["soft k-means"], base)
    assert soft["rows_removed"] == ["flag"] and set(soft["changed"]["1"]) == {"normalizer", "gamma"}
    binary = circuit_differences(variants["binary codes (follow-up)"], base)
    assert binary["rows_added"] == ["code"] and binary["rows_removed"] == ["y", "flag"]
    assert "bias" in binary["changed"]["1"]
    assert circuit_differences(base, base) == {"rows_added": [], "rows_removed": [], "changed": {}, "removed": []}


def test_highlighted_fields_in_the_full_diagram(lloyd):
    variants = dict((name, circuit) for name, _, circuit in variant_circuits(2, 3))
    dot = variants["Theorem 2.2 (dot product)"]
    fig = plot_circuit(*dot, changed=circuit_differences(dot, lloyd))
    hot = {p.get_gid() for p in fig.findobj(FancyBboxPatch) if p.get_edgecolor() == to_rgba(HIGHLIGHT)}
    plt.close(fig)
    assert {"block:1", "block:2", "block:3", "block:4", "block:FFN", "rows:X:norm", "rows:C:one"} <= hot
    assert not any(g.startswith(("rows:X:x", "rows:X:y", "rows:X:flag", "residual")) for g in hot)


def test_bad_arguments(lloyd):
    params, emb, layer = lloyd
    with pytest.raises(TypeError, match="params"):
        plot_circuit([params], emb, layer)
    with pytest.raises(TypeError, match="emb"):
        plot_circuit(params, (2, 3), layer)
    with pytest.raises(TypeError, match="layer"):
        plot_circuit(params, emb, "lloyd")
    with pytest.raises(ValueError, match="layer"):
        plot_circuit(params, emb, ())
    with pytest.raises(ValueError, match="'Q3'"):
        plot_circuit({k: v for k, v in params.items() if k != "Q3"}, emb, layer)
    with pytest.raises(ValueError, match=r"params\['V1'\]"):
        plot_circuit(dict(params, V1=np.eye(3)), emb, layer)
    with pytest.raises(TypeError, match="ax"):
        plot_circuit(params, emb, layer, ax="left")
    with pytest.raises(TypeError, match="title"):
        plot_circuit(params, emb, layer, title=3)
    with pytest.raises(TypeError, match="changed"):
        plot_circuit(params, emb, layer, changed=["1"])
    with pytest.raises(TypeError, match="variants"):
        plot_variant_circuits([("Lloyd", lloyd)])
    with pytest.raises(TypeError, match="circuit"):
        circuit_differences(lloyd[:2], lloyd)
    with pytest.raises(ValueError, match="k"):
        variant_circuits(2, 0)


def test_an_axes_is_drawn_into(lloyd):
    fig, ax = plt.subplots(figsize=(11, 6))
    assert plot_circuit(*lloyd, ax=ax) is fig
    plt.close(fig)
