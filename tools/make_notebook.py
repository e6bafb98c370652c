"""Build an executed notebook from its readable source.

Usage::

    python tools/make_notebook.py notebooks/src/01_lloyd_as_a_transformer.py

The source is a plain Python file in "percent" format: cells start with a line
``# %%`` (code) or ``# %% [markdown]`` (markdown; every line of the cell starts
with ``# ``). The notebook ``notebooks/<same name>.ipynb`` is written executed,
top to bottom, in a fresh kernel whose working directory is ``notebooks/``, so
execution counts run 1..N and outputs are stored. Run it again after changing
the source or the library.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def parse_percent(text):
    cells = []
    kind, lines = None, []

    def flush():
        if kind is None:
            return
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            body = "\n".join(l[2:] if l.startswith("# ") else l.lstrip("#") for l in body.splitlines())
            cells.append(nbformat.v4.new_markdown_cell(body))
        elif body.strip():
            cells.append(nbformat.v4.new_code_cell(body))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            kind = "markdown" if "[markdown]" in line else "code"
            lines = []
        else:
            lines.append(line)
    flush()
    return cells


def build(src, timeout=600):
    src = Path(src)
    out = src.parent.parent / (src.stem + ".ipynb")
    nb = nbformat.v4.new_notebook()
    nb.cells = parse_percent(src.read_text())
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(out.parent)}}).execute()
    nbformat.write(nb, out)
    print(f"wrote {out} ({time.perf_counter() - t0:.1f} s)")
    return out


if __name__ == "__main__":
    for path in sys.argv[1:]:
        build(path)
