"""The house rules of the layout (docs/ARCHITECTURE.md), checked on the source.

- no import cycles (an import inside a function counts, and a name imported from a
  package counts as its submodule), and no module imports a higher layer: the leaves (checks, the
  data frame, the trace, built-in data) <- core <- algorithms <- learning and the
  estimator <- viz <- the command line;
- matplotlib is imported only under kmt_ref/viz;
- no module is over ~500 lines (checked at 550), and each opens with a docstring;
- the public API of kmt_ref is what it was before the redesign, and old module
  paths still work (with a DeprecationWarning naming the new home).
"""
import ast
import importlib
import warnings
from pathlib import Path

import pytest

import kmt_ref

PACKAGE = Path(kmt_ref.__file__).parent
MAX_LINES = 550

#: layer of each module (by dotted prefix, longest match wins); a module may import its own layer or lower ones
LAYERS = {
    "kmt_ref.validation": 0, "kmt_ref.output_paths": 0, "kmt_ref.score_checks": 0, "kmt_ref.frame": 0, "kmt_ref.columns": 0,
    "kmt_ref.trace": 0, "kmt_ref.data": 0, "kmt_ref._compat": 0, "kmt_ref.progress": 0, "kmt_ref.blas": 0,
    "kmt_ref.core": 1,
    "kmt_ref.algorithms": 2,
    "kmt_ref": 3,  # the package's facade (__init__) and the estimator
    "kmt_ref.estimator": 3,
    "kmt_ref.learning": 3,
    "kmt_ref.viz": 4,
    "kmt_ref.demo": 4,  # the main job: numbers here, its figure drawn by viz (imported on demand)
    "kmt_ref.exercises": 4,  # the notebooks' exercises: checkers compute right answers with any layer below
    "kmt_ref.sweep": 4,  # the authors' gamma sweep: numbers here, figure 2 drawn by viz from its CSV
    "kmt_ref.reports": 4,
    "kmt_ref.bench_reports": 4,  # the benchmarks' tables, from their committed results  # the documentation's tables, from the committed results (learning, sweep)
    "kmt_ref.book": 4,  # the course site: stored notebooks and docs rendered by nbconvert (imports only book_html)
    "kmt_ref.book_html": 4,  # what the site adds to nbconvert's pages (imports no kmt_ref module)
    "kmt_ref.course": 4,  # the nbgrader course: imports book (MathJax, link checks) and exercises, its own layer
    "kmt_ref.cli": 5, "kmt_ref.__main__": 5,
}


def modules():
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = modules()


def layer(name):
    best = max((p for p in LAYERS if name == p or name.startswith(p + ".")), key=len)
    return LAYERS[best]


def imports_of(name, path, top_level_only=False):
    """kmt_ref modules imported by a module (resolving relative imports), with the line of each."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if top_level_only else ast.walk(tree)
    found = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("kmt_ref"):
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
                found += [(t, node.lineno) for t in (subs or [target])]
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.startswith("kmt_ref")]
    return found


def test_every_module_opens_with_a_docstring_and_fits_in_one_sitting():
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        assert ast.get_docstring(tree), f"{name} has no module docstring"
        n = len(path.read_text().splitlines())
        assert n <= MAX_LINES, f"{name} has {n} lines (> {MAX_LINES}): split it"


def test_no_module_imports_a_higher_layer():
    for name, path in MODULES.items():
        for target, line in imports_of(name, path):
            assert target in MODULES, f"{name} imports {target} (line {line}), an old path kept only for users"
            if target == "kmt_ref" and name != "kmt_ref":
                rank = LAYERS["kmt_ref"]  # `from .. import X`: the facade
            else:
                rank = layer(target)
            assert rank <= layer(name), f"{name} (layer {layer(name)}) imports {target} (layer {rank}), line {line}"


def reexported_from(package):
    """``{name: submodule}`` for the names a package's ``__init__`` imports from its own submodules."""
    path = MODULES[package]
    if path.name != "__init__.py":
        return {}
    tree = ast.parse(path.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for a in node.names:
                out[a.asname or a.name] = f"{package}.{node.module}"
    return out


def dependencies(name, path):
    """Every kmt_ref module ``name`` needs, at import or inside a function (a lazy import is a dependency too).

    A name imported from a package resolves to the submodule its ``__init__`` re-exports it from: importing
    ``fast_layer_forward`` from ``kmt_ref.core.exact`` depends on ``kmt_ref.core.exact.layer``.
    """
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for target, _ in imports_of(name, path):
        found.add(target)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            table = reexported_from(target) if target in MODULES else {}
            found |= {table[a.name] for a in node.names if a.name in table}
    return {t for t in found if t in MODULES and t != name}


def find_cycle(graph):
    """One import cycle of ``graph`` (module -> modules it needs) as a list of names, or None."""
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, stack + [nxt])
                if cycle:
                    return cycle
        state[node] = "done"
        return None

    for name in sorted(graph):
        if name not in state:
            cycle = visit(name, [name])
            if cycle:
                return cycle
    return None


def import_graph():
    graph = {name: dependencies(name, path) for name, path in MODULES.items()}
    # a package's __init__ importing its own submodules is how packages work, not a cycle (a name imported
    # from a package is resolved to its submodule above, so a cycle through a package is still seen)
    for name in graph:
        graph[name] = {t for t in graph[name] if not (t.startswith(name + ".") and MODULES[name].name == "__init__.py")}
    return graph


def test_no_import_cycles():
    """No module needs, even lazily (an import inside a function), a module that needs it back."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_check_sees_a_lazy_import_through_a_package():
    """The check itself: ``a`` imports a name from package ``p`` at the top, ``p.b`` defines it and imports
    ``a`` inside a function. That is a cycle, though no top-level import closes it."""
    graph = {"a": {"p.b"}, "p": set(), "p.b": {"a"}}
    assert find_cycle(graph) == ["a", "p.b", "a"]
    assert find_cycle({"a": {"p.b"}, "p": set(), "p.b": set()}) is None


def test_matplotlib_only_under_viz():
    for name, path in MODULES.items():
        if name.startswith("kmt_ref.viz"):
            continue
        text = path.read_text()
        tree = ast.parse(text)
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(m.split(".")[0] == "matplotlib" for m in mods), f"{name} imports matplotlib"


#: every name importable from kmt_ref before the redesign (0.1.0)
PUBLIC = """softmax hardmax hardmax_average linear sparsemax normmax gumbel NORMALIZERS attention attention_scores
layer_forward Block Sublayer FeedForward LayerRecord ClusteringTrace kmeans_objective assign rows_to_columns lloyd
soft_kmeans spherical_kmeans trimmed_kmeans_attention trimmed_kmeans robust_kmeans randomized_kmedoids Embedding
projector lloyd_weights lloyd_layer kmeans_transformer run_layers EmptyClusterError dot_product_transformer
soft_kmeans_transformer spherical_kmeans_transformer trimmed_kmeans_transformer robust_kmeans_transformer
randomized_kmedoids_transformer validation_data toy_data gaussian_blobs KMeansTransformer""".split()


@pytest.mark.parametrize("name", PUBLIC)
def test_public_api_unchanged(name):
    assert hasattr(kmt_ref, name)


@pytest.mark.parametrize("old,name,new", [
    ("kmt_ref.constructions", "lloyd_weights", "kmt_ref.algorithms.lloyd"),
    ("kmt_ref.constructions", "Embedding", "kmt_ref.core.tokens"),
    ("kmt_ref.reference", "cluster_means", "kmt_ref.algorithms.lloyd"),
    ("kmt_ref.reference_sparse", "check_rng", "kmt_ref.validation"),
    ("kmt_ref.standard_variants", "with_block", "kmt_ref.core.tokens"),
    ("kmt_ref.sparse_variants", "separating_penalties", "kmt_ref.algorithms.sparse_update"),
    ("kmt_ref.attention", "layer_forward", "kmt_ref.core.attention"),
    ("kmt_ref.normalizers", "sparsemax", "kmt_ref.core.normalizers"),
])
def test_old_module_paths_still_work_and_say_where_the_name_lives(old, name, new):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} has moved to {new}\.{name}"):
        obj = getattr(module, name)
    assert obj is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module.nope  # noqa: B018


def test_no_text_cites_the_teams_style_notes():
    """Docstrings and comments say a convention in place; they never cite the team's own notes (not in the repository)."""
    root = Path(__file__).resolve().parents[1]
    hits = [f"{p.relative_to(root)}:{i}" for folder in ("kmt_ref", "tests", "tools", "benchmarks", "docs", "notebooks/src")
            for p in [root / "README.md"] + sorted((root / folder).rglob("*"))
            if p.suffix in (".py", ".md") and p.resolve() != Path(__file__).resolve()
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "STYLE §" in line]
    assert hits == []
