"""Build the student notebook and its solutions from one readable source, executed.

Usage::

    python tools/make_notebook.py notebooks/src/01_lloyd_as_a_transformer.py [...]
    python tools/make_notebook.py --check notebooks/src/*.py   # stored notebooks match their sources?

The source is a plain Python file in "percent" format: cells start with a line
``# %%`` (code) or ``# %% [markdown]`` (markdown; every line of the cell starts
with ``# ``). Two notebooks are written, each executed top to bottom in a fresh
kernel (execution counts 1..N, outputs stored):

- ``notebooks/<name>.ipynb``, the student notebook;
- ``notebooks/solutions/<name>.ipynb``, the solutions.

Exercises are marked as nbgrader marks them, so that an instructor who uses
nbgrader can take the solutions notebook as its source version:

- a markdown line ``### Exercise NN.M`` becomes the exercise's heading, title and
  tag line (kind, stars, minutes), read from ``kmt_ref.exercises.EXERCISES``;
- the lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (in a code or
  a markdown cell) are kept in the solutions. In the student notebook a code
  region becomes ``answer = None  # your code`` and a markdown region
  ``*Your answer here.*``.

In the solutions every cell holding a solution region carries nbgrader's cell
metadata (schema 3): a code region is an "autograded answer", a markdown region a
"manually graded answer" worth the exercise's minutes in points. So
``nbgrader generate_assignment`` accepts the solutions notebook as it is.
"""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CODE_STUB, TEXT_STUB = "answer = None  # your code", "*Your answer here.*"
EXERCISE_HEADING = re.compile(r"^(#{2,4}) Exercise (\d\d\.\d+)\s*$")


def parse_percent(text):
    """[(kind, body)] for the cells of a percent-format source."""
    cells, kind, lines = [], None, []

    def flush():
        if kind is None:
            return
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            body = "\n".join(l[2:] if l.startswith("# ") else l.lstrip("#") for l in body.splitlines())
        if body.strip():
            cells.append((kind, body))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            kind = "markdown" if "[markdown]" in line else "code"
            lines = []
        else:
            lines.append(line)
    flush()
    return cells


def strip_solutions(body, stub):
    """The body with every solution region replaced by ``stub`` (indented as its BEGIN line)."""
    out, inside = [], False
    for line in body.splitlines():
        if line.strip() == BEGIN:
            if inside:
                raise ValueError("nested BEGIN SOLUTION")
            inside = True
            out.append(line[: len(line) - len(line.lstrip())] + stub)
        elif line.strip() == END:
            if not inside:
                raise ValueError("END SOLUTION without BEGIN SOLUTION")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError("BEGIN SOLUTION without END SOLUTION")
    return "\n".join(out)


def expand_exercise_headings(body, exercises):
    out = []
    for line in body.splitlines():
        m = EXERCISE_HEADING.match(line)
        if m:
            ex = exercises[m.group(2)]
            out += [f"{m.group(1)} Exercise {ex.id}: {ex.title}", "", ex.tag, "",
                    f"*Objective:* {ex.objective}"]
        else:
            out.append(line)
    return "\n".join(out)


def nbgrader_metadata(kind, grade_id, points):
    """nbgrader's cell metadata for a cell with a solution region (schema version 3)."""
    meta = {"grade": kind == "markdown", "grade_id": grade_id, "locked": False,
            "schema_version": 3, "solution": True, "task": False}
    if kind == "markdown":
        meta["points"] = points
    return {"nbgrader": meta}


def notebooks_from_source(src):
    """(student, solutions) notebooks, not executed, for a source file."""
    from kmt_ref.exercises import EXERCISES

    cells = parse_percent(Path(src).read_text())
    books = []
    for version in ("student", "solutions"):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        current, count = None, {}  # the exercise whose cells follow, and solution cells seen per exercise
        for kind, body in cells:
            m = re.search(r"^#{2,4} Exercise (\d\d\.\d+)\s*$", body, re.M) if kind == "markdown" else None
            current = m.group(1) if m else current
            if kind == "markdown":
                body = expand_exercise_headings(body, EXERCISES)
            meta = {}
            if BEGIN in body:
                if version == "student":
                    body = strip_solutions(body, TEXT_STUB if kind == "markdown" else CODE_STUB)
                elif current is not None:
                    count[current] = count.get(current, 0) + 1
                    grade_id = f"ex{current.replace('.', '_')}_{kind}{count[current]}"
                    meta = nbgrader_metadata(kind, grade_id, EXERCISES[current].minutes)
            make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
            nb.cells.append(make(body, metadata=meta))
        books.append(nb)
    return tuple(books)


def targets(src):
    src = Path(src)
    root = src.parent.parent
    return root / (src.stem + ".ipynb"), root / "solutions" / (src.stem + ".ipynb")


def build(src, timeout=600):
    out = []
    for nb, path in zip(notebooks_from_source(src), targets(src)):
        path.parent.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(nb, path)
        print(f"wrote {path} ({time.perf_counter() - t0:.1f} s)")
        out.append(path)
    return out


def stale(src):
    """The stored notebooks whose cell sources differ from what ``src`` builds."""
    bad = []
    for nb, path in zip(notebooks_from_source(src), targets(src)):
        stored = nbformat.read(path, as_version=4) if path.exists() else None
        if stored is None or [(c.cell_type, c.source, c.metadata.get("nbgrader")) for c in stored.cells] != \
                [(c.cell_type, c.source, c.metadata.get("nbgrader")) for c in nb.cells]:
            bad.append(path)
    return bad


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--check":
        bad = [p for src in args[1:] for p in stale(src)]
        print("\n".join(f"stale: {p}" for p in bad) or "every notebook matches its source")
        sys.exit(1 if bad else 0)
    for path in args:
        build(path)
