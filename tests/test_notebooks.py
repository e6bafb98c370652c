"""Every notebook runs top to bottom in a fresh kernel (STYLE §10).

Each notebook's cells carry their own asserts and shape checks, so executing it
tests it. The stored copy must also be the executed one (counts 1..N, outputs).
"""
import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_executed(path):
    nb = json.loads(path.read_text())
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1)), "run it top to bottom before committing"
    assert any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    last = "".join([c for c in nb["cells"] if c["cell_type"] == "markdown"][-1]["source"])  # str or list of lines
    assert "xercise" in last, "every notebook ends with exercises"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
