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
  region becomes ``# your code: it sets `answer``` and a markdown region
  ``*Your answer here.*``. The first code cell with a solution region of each
  exercise starts, outside the region, with ``answer = None``, so that a cell that
  fails before it sets ``answer`` leaves None, never the previous exercise's answer
  (``check`` run after a cell that raised reports that cell as failed).

In the solutions every cell holding a solution region carries nbgrader's cell
metadata (schema 3): a code region is an "autograded answer", a markdown region a
"manually graded answer". The cell ``check("NN.M", answer)`` of every exercise that
``check`` can grade becomes an "autograded tests" cell: in the solutions it ends with
a hidden test, ::

    ### BEGIN HIDDEN TESTS
    from kmt_ref.exercises import check as kmt_ref_check
    assert kmt_ref_check("NN.M", answer, quiet=True)
    ### END HIDDEN TESTS

which nbgrader strips on release and restores when it autogrades. An exercise of
several parts (``EXERCISES[id].parts``) is graded part by part: its check cell tests
part 1 (``kmt_ref_check("NN.M", answer, part=1, quiet=True)``) and a cell of its own follows
for each further part, ``# NN.M, part i of P: <what> (graded in this cell)`` with its
hidden test, so a half-right answer gets the points of its right parts. An exercise is
worth its minutes in points, split equally over its graded units (its tests, and each
manually graded answer), the tests' share split equally over its parts (open). So
``nbgrader generate_assignment``, with the configuration ``python -m kmt_ref course``
writes (kmt_ref/course.py), accepts the solutions notebook (as ``course`` copies it: its links rewritten,
its ungraded cells' markdown and outputs those of the student notebook), and its release is
the student notebook, cell for cell (the same sources and nbgrader metadata, checksums
included; execution timestamps and widget ids may differ), which therefore can be
collected and autograded too.
"""
from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CODE_STUB, TEXT_STUB = "# your code: it sets `answer`", "*Your answer here.*"
#: the first line of an exercise's first code cell with a solution region, outside the region: a cell that
#: fails before it sets `answer` leaves None, never the previous exercise's answer
RESET = "answer = None  # this exercise's answer, set below"
EXERCISE_HEADING = re.compile(r"^(#{2,4}) Exercise (\d\d\.\d+)\s*$", re.M)
#: the line of a code cell that checks an exercise: the cell becomes the exercise's autograded tests cell
CHECK_LINE = re.compile(r'^check\("([^"]+)", answer\)\s*$', re.M)
#: the hidden test imports `check` itself, so that a submission that rebinds the name `check` does not grade itself
HIDDEN_TEST = ('### BEGIN HIDDEN TESTS\nfrom kmt_ref.exercises import check as kmt_ref_check\n'
               'assert kmt_ref_check("{id}", answer{part}, quiet=True)\n### END HIDDEN TESTS')
#: the visible line of the cell that grades part i (i >= 2) of an exercise of several parts; part 1 is graded
#: in the exercise's check cell
PART_LINE = re.compile(r"^# (\d\d\.\d+), part (\d+) of (\d+): .* \(graded in this cell\)$")


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


def nbgrader_metadata(kind, grade_id, points=None):
    """nbgrader's cell metadata (schema version 3) for a cell with a solution region
    (``kind`` "code" or "markdown") or for an autograded tests cell (``kind`` "tests")."""
    if kind == "tests":
        return {"nbgrader": {"grade": True, "grade_id": grade_id, "locked": True, "points": points,
                             "schema_version": 3, "solution": False, "task": False}}
    meta = {"grade": kind == "markdown", "grade_id": grade_id, "locked": False,
            "schema_version": 3, "solution": True, "task": False}
    if kind == "markdown":
        meta["points"] = points
    return {"nbgrader": meta}


def released_metadata(cell_type, source, meta):
    """The metadata nbgrader's ``generate_assignment`` gives a released cell: the cell locked against
    deletion (a tests cell also against editing) and its checksum (nbgrader.utils.compute_checksum)."""
    if not meta:
        return {}
    nbg = dict(meta["nbgrader"], cell_type=cell_type)
    digest = hashlib.md5()
    for part in (source, cell_type, str(nbg["grade"]), str(nbg["solution"]), str(nbg["locked"]), nbg["grade_id"]):
        digest.update(part.encode("utf-8"))
    if nbg["grade"]:
        digest.update(str(float(nbg["points"])).encode("utf-8"))
    nbg["checksum"] = digest.hexdigest()
    locked = {"deletable": False, "editable": False} if nbg["grade"] and not nbg["solution"] else {"deletable": False}
    return {**locked, "nbgrader": nbg}


def checked_id(kind, body, exercises):
    """The id of the checked exercise whose check cell this is, or None."""
    m = CHECK_LINE.search(body) if kind == "code" else None
    if m is None:
        return None
    if m.group(1) not in exercises or not exercises[m.group(1)].checked:
        raise ValueError(f"a cell checks {m.group(1)!r}, which is not a checked exercise")
    return m.group(1)


def expand_parts(cells, exercises):
    """``cells`` with, after the check cell of each exercise of several parts, one cell per further part."""
    out = []
    for kind, body in cells:
        out.append((kind, body))
        tested = checked_id(kind, body, exercises)
        if tested is not None:
            parts = exercises[tested].parts
            out += [("code", f"# {tested}, part {i} of {len(parts)}: {parts[i - 1]} (graded in this cell)")
                    for i in range(2, len(parts) + 1)]
    return out


def grades(cells, exercises):
    """Per cell, ``(kind, id, grade_id)`` of nbgrader's graded cells, or None.

    ``kind`` is "tests" for the cell ``check(id, answer)`` of a checked exercise
    (grade_id ``exNN_M_test``; ``exNN_M_test1``, ``exNN_M_test2``, ... for the cells of
    an exercise of several parts, see :func:`expand_parts`), else "code" or
    "markdown" for the i-th cell holding a solution region of the exercise whose
    heading came last (``exNN_M_<kind><i>``).
    """
    out, current, count = [], None, {}
    for kind, body in cells:
        m = EXERCISE_HEADING.search(body) if kind == "markdown" else None
        current = m.group(2) if m else current
        tested = checked_id(kind, body, exercises)
        part = PART_LINE.match(body) if kind == "code" else None
        if tested is not None:
            if ("tests", tested) in [g[:2] for g in out if g]:
                raise ValueError(f"exercise {tested!r} has two cells `check({tested!r}, answer)`")
            suffix = "1" if exercises[tested].parts else ""
            out.append(("tests", tested, f"ex{tested.replace('.', '_')}_test{suffix}"))
        elif part is not None:
            out.append(("tests", part.group(1), f"ex{part.group(1).replace('.', '_')}_test{part.group(2)}"))
        elif BEGIN in body and current is not None:
            count[current] = count.get(current, 0) + 1
            out.append((kind, current, f"ex{current.replace('.', '_')}_{kind}{count[current]}"))
        else:
            out.append(None)
    return out


def part_of(grade_id):
    """The part a tests cell grades (1, 2, ...), or None for a tests cell of a one-part exercise."""
    m = re.search(r"_test(\d+)$", grade_id)
    return int(m.group(1)) if m else None


def exercise_points(cells, exercises):
    """{grade_id: points}: each exercise's minutes split equally over its graded units (its tests, and each
    manually graded answer), the tests' share split equally over the parts' cells, each rounded to 0.01,
    the last cell of a unit (and of the exercise) given the rest (01.2's parts: 1.67, 1.67, 1.66)."""
    units = {}
    for kind, id, grade_id in filter(None, grades(cells, exercises)):
        if kind == "tests":
            units.setdefault(id, {}).setdefault("tests", []).append(grade_id)
        elif kind == "markdown":  # an autograded answer carries no points: its exercise's tests cell does
            units.setdefault(id, {})[grade_id] = [grade_id]
    points = {}
    for id, unit in units.items():
        minutes, cells = exercises[id].minutes, []
        for gids in unit.values():  # each unit's last cell takes what rounding its share left
            share = round(minutes / len(unit), 2)
            for gid in gids[:-1]:
                points[gid] = round(share / len(gids), 2)
            points[gids[-1]] = round(share - sum(points[g] for g in gids[:-1]), 2)
            cells += gids
        # and the exercise's last cell what rounding the units' shares left, so it is worth its minutes exactly
        points[cells[-1]] = round(minutes - sum(points[g] for g in cells[:-1]), 2)
    return points


#: the opening of a relative link target in markdown: ``](`` not followed by a scheme, ``/`` or ``#``
RELATIVE_LINK = re.compile(r"\]\((?![A-Za-z][A-Za-z0-9+.-]*:|/|#)")


def relocate_links(body, up=1):
    """``body`` with its relative markdown links moved for a notebook stored ``up`` folders deeper.

    The source's links are written for ``notebooks/<name>.ipynb``; the solutions notebook is stored in
    ``notebooks/solutions/``, so its ``](../docs/SPEC.md)`` must read ``](../../docs/SPEC.md)``.
    """
    return RELATIVE_LINK.sub("](" + "../" * up, body)


def notebooks_from_source(src):
    """(student, solutions) notebooks, not executed, for a source file."""
    from kmt_ref.exercises import EXERCISES

    cells = expand_parts(parse_percent(Path(src).read_text()), EXERCISES)
    graded, points = grades(cells, EXERCISES), exercise_points(cells, EXERCISES)
    stem = Path(src).stem
    tested = {grade[1] for grade in graded if grade and grade[0] == "tests"}
    untested = [i for i, ex in EXERCISES.items() if ex.notebook == stem and ex.checked and i not in tested]
    if untested:
        raise ValueError(f"{src}: checked exercises without a cell `check(id, answer)`: {untested}")
    books = []
    for version in ("student", "solutions"):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        reset = set()
        for (kind, body), grade in zip(cells, graded):
            if kind == "markdown":
                body = expand_exercise_headings(body, EXERCISES)
            meta = {} if grade is None else nbgrader_metadata(grade[0], grade[2], points.get(grade[2]))
            if version == "solutions" and grade is not None and grade[0] == "tests":
                part = part_of(grade[2])
                body = body + "\n" + HIDDEN_TEST.format(id=grade[1], part="" if part is None else f", part={part}")
            if kind == "code" and BEGIN in body and grade is not None and grade[1] not in reset:
                reset.add(grade[1])  # the exercise's first code cell with a solution region (01.3's comes after
                body = RESET + "\n" + body  # its written proof); outside the solution region: released as it is
            if version == "solutions" and kind == "markdown" and not meta:  # stored one folder deeper
                body = relocate_links(body)
            if version == "student":
                if BEGIN in body:
                    body = strip_solutions(body, TEXT_STUB if kind == "markdown" else CODE_STUB)
                meta = released_metadata(kind, body, meta)
            make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
            nb.cells.append(make(body, metadata=meta))
        books.append(nb)
    return tuple(books)


def targets(src):
    src = Path(src)
    root = src.parent.parent
    return root / (src.stem + ".ipynb"), root / "solutions" / (src.stem + ".ipynb")


def kernel_env():
    """The kernel's environment: this one without MPLBACKEND (with it set, e.g. to Agg, the kernel draws the
    figures without showing them, and the stored notebook would hold none)."""
    return {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}


def build(src, timeout=600):
    out = []
    for nb, path in zip(notebooks_from_source(src), targets(src)):
        path.parent.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute(env=kernel_env())
        nbformat.write(nb, path)
        print(f"wrote {path} ({time.perf_counter() - t0:.1f} s)")
        out.append(path)
    return out


def cell_key(cell):
    """What a stored cell must share with the built one: type, source and nbgrader's metadata."""
    return (cell.cell_type, cell.source, cell.metadata.get("nbgrader"),
            cell.metadata.get("deletable"), cell.metadata.get("editable"))


def stale(src):
    """The stored notebooks whose cells differ from what ``src`` builds (see :func:`cell_key`)."""
    bad = []
    for nb, path in zip(notebooks_from_source(src), targets(src)):
        stored = nbformat.read(path, as_version=4) if path.exists() else None
        if stored is None or [cell_key(c) for c in stored.cells] != [cell_key(c) for c in nb.cells]:
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
