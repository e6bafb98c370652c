"""What an install brings: kmt_ref's declared dependencies cover what its modules import, and agree with
requirements.txt.

``pip install .`` installs kmt_ref with the ``dependencies`` of pyproject.toml only, so every module that
imports a third-party package, at import time or inside a function, needs it there (tests/test_install.py
runs the installed wheel beside this environment's packages, so it cannot see one missing), unless it is
one of :data:`NOT_DEPENDENCIES`, each with its reason; the book's packages are the extra ``book``. requirements.txt repeats the bounds for a checkout; the
two must say the same.
"""
import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kmt_ref"
tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")


def _name(requirement):
    """The distribution name of a requirement string, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement).group()).lower()


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _requirements_txt():
    """requirement name -> its specifier line (comments and the package itself left out)."""
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    return {_name(line): line.replace(" ", "") for line in lines if line and not line.startswith("-e")}


def _imports(path):
    """The top-level names a module imports, at import time or inside its functions."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


#: packages kmt_ref imports that are not its dependencies, and why
NOT_DEPENDENCIES = {
    "sklearn": "the estimator uses scikit-learn's classes only when the caller has scikit-learn",
    "ipywidgets": "the sliders run in a notebook, whose Jupyter brings it",
    "IPython": "the sliders run in a notebook, whose Jupyter brings it",
    "nbformat": "the book: the extra 'book'",
    "nbconvert": "the book: the extra 'book'",
    "jupyter_server_mathjax": "the book: the extra 'book'",
    "jinja2": "the book, through nbconvert",
    "bs4": "the book, through nbconvert",
    "nbgrader": "the nbgrader course (kmt_ref.course, imported by its nbgrader_config.py): the extra 'grading'",
}


def test_every_third_party_import_is_a_declared_dependency():
    declared = {_name(r) for r in _project()["dependencies"]}
    dists = packages_distributions()  # import name -> distributions, in this environment
    imported = set().union(*(_imports(p) for p in PACKAGE.rglob("*.py")))
    third_party = sorted(m for m in imported if m not in sys.stdlib_module_names and m not in ("kmt_ref", "__future__"))
    assert {"numpy", "threadpoolctl"} <= set(third_party), third_party
    undeclared = {m: dists.get(m) for m in third_party if m not in NOT_DEPENDENCIES
                  and not {_name(d) for d in dists.get(m, [m])} & declared}
    assert undeclared == {}, f"imported but not in pyproject's dependencies: {undeclared}"
    assert set(NOT_DEPENDENCIES) <= set(third_party), "a package listed as not a dependency is no longer imported"


def test_the_book_extra_holds_what_the_book_imports():
    from kmt_ref.book import BOOK_PACKAGES

    extra = {_name(r) for r in _project()["optional-dependencies"]["book"]}
    assert extra == {_name(p) for p in BOOK_PACKAGES.values()}


def test_requirements_txt_repeats_the_declared_bounds():
    project, txt = _project(), _requirements_txt()
    declared = project["dependencies"] + project["optional-dependencies"]["book"]
    for requirement in declared:
        assert txt.get(_name(requirement), "").startswith(requirement.replace(" ", "")), (requirement, txt.get(
            _name(requirement)))
    assert "nbgrader" not in txt  # the extra "grading": its server extension would load into a student's jupyter lab
