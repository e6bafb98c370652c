"""Every notebook, student and solutions, runs top to bottom in a fresh kernel (notebooks import from the package; executing one tests it).

Each notebook's cells carry their own asserts and shape checks, so executing it
tests it. The stored copy must also be the executed one (counts 1..N, outputs).
"""
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

_ROOT = Path(__file__).parent.parent / "notebooks"
NOTEBOOKS = sorted(_ROOT.glob("*.ipynb")) + sorted((_ROOT / "solutions").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(_ROOT)) for p in NOTEBOOKS])
def test_notebook_is_stored_executed(path):
    nb = json.loads(path.read_text())
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1)), "run it top to bottom before committing"
    assert any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    # its figures stored (a kernel started with MPLBACKEND=Agg draws them without showing any)
    assert any("image/png" in o.get("data", {}) for c in nb["cells"] if c["cell_type"] == "code"
               for o in c.get("outputs", [])), "no figure stored: build it without MPLBACKEND set"
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]  # str or list of lines
    assert any(m.startswith("## Exercises") for m in markdown), "every notebook ends with exercises"
    assert "## Summary" in "\n".join(markdown[: [m.startswith("## Exercises") for m in markdown].index(True)]), \
        "a summary comes before the exercises"
    assert "Learning objectives" in markdown[0] or "learning objectives" in markdown[0].lower(), \
        "the first cell states the learning objectives"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(_ROOT)) for p in NOTEBOOKS])
def test_notebook_executes(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()


_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(_ROOT)) for p in NOTEBOOKS])
def test_relative_links_resolve_from_where_the_notebook_is_stored(path):
    """A student notebook lives in notebooks/, its solutions in notebooks/solutions/, built from one source:
    each markdown link to a file of the repository must reach it from the notebook's own folder."""
    nb = json.loads(path.read_text())
    broken = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for target in _LINK.findall("".join(cell["source"])):
            if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:|#|/", target):
                continue  # a URL, an anchor in this notebook, or an absolute path
            if not (path.parent / target.split("#")[0]).exists():
                broken.append(target)
    assert not broken, f"links that reach no file from {path.parent.name}/: {broken}"


_NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0\.0*(?![0-9])")  # "-0.", "-0.0", "-0.00e+00": a zero printed with a sign


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(_ROOT)) for p in NOTEBOOKS])
def test_no_stored_output_prints_a_negative_zero(path):
    """A student reads "-0." as a sign that went wrong: a cell that can print -0.0 adds 0.0 first."""
    nb = json.loads(path.read_text())
    shown = []
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):  # printed text, and the plain-text value of a cell's last line
            text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
            shown += [f"{m.group(0)} in cell {i}" for m in _NEGATIVE_ZERO.finditer(text)]
    assert not shown, shown


def test_the_negative_zero_pattern():
    assert _NEGATIVE_ZERO.findall("[-0. -0.     -0.2828] -0.0e+00 (-0.000)") == ["-0.", "-0.", "-0.0", "-0.000"]
    assert not _NEGATIVE_ZERO.findall("-0.9185 -0.5 x-0. 10-0. 0. -10.")
