"""The grading layer: every checked exercise has an nbgrader "autograded tests" cell, and nbgrader itself
releases the student notebooks and scores them.

The first tests read the notebooks that tools/make_notebook.py builds from notebooks/src (not executed;
tests/exercises/test_registry.py keeps the stored notebooks equal to them). The nbgrader tests need
nbgrader (a test-only dependency, requirements.txt) and skip without it. In a course in tmp_path, set up
with the configuration docs/TEACHING.md gives, they run ``nbgrader generate_assignment`` on all five
solutions notebooks and compare each release with its student notebook, cell for cell (type, source,
metadata); then ``nbgrader autograde`` on notebooks 01 and 05 only, each submitted twice: the solutions
(full marks on every tests cell) and the untouched student notebook (zero on every tests cell, and on
every written answer, which nbgrader scores 0 when it is the unchanged stub). Autograde executes each
notebook, so only two are autograded: measured on 2 shared cores, the five releases took 10-23 s and the
four autogrades 29-45 s. The last test keeps the rubrics of docs/TEACHING.md worth the notebooks' points.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from kmt_ref.exercises import EXERCISES, NOTEBOOKS

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.py"))
sys.path.insert(0, str(ROOT / "tools"))
import make_notebook  # noqa: E402

HIDDEN = re.compile(r"\n### BEGIN HIDDEN TESTS\n(.*)\n### END HIDDEN TESTS$", re.S)


def _tests_cells(nb):
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"]["solution"]}


@pytest.mark.parametrize("src", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_checked_exercise_has_one_autograded_tests_cell(src):
    student, solutions = make_notebook.notebooks_from_source(src)
    ids = [i for i, ex in EXERCISES.items() if ex.notebook == src.stem and ex.checked]
    tests = _tests_cells(solutions)
    assert sorted(tests) == sorted(f"ex{i.replace('.', '_')}_test" for i in ids)
    released = _tests_cells(student)
    for id in ids:
        cell = tests[f"ex{id.replace('.', '_')}_test"]
        meta = cell.metadata["nbgrader"]
        assert cell.cell_type == "code" and meta["locked"] and meta["points"] > 0
        hidden = HIDDEN.search(cell.source)
        assert hidden and hidden.group(1) == f'assert check("{id}", answer, quiet=True)'
        assert released[meta["grade_id"]].source == cell.source[: hidden.start()]  # what nbgrader releases
        assert f'check("{id}", answer)' in released[meta["grade_id"]].source
    assert "HIDDEN TESTS" not in "\n".join(c.source for c in student.cells)


@pytest.mark.parametrize("src", SOURCES, ids=[p.stem for p in SOURCES])
def test_each_exercise_is_worth_its_minutes(src):
    _, solutions = make_notebook.notebooks_from_source(src)
    worth = {}
    for c in solutions.cells:
        meta = c.metadata.get("nbgrader", {})
        if meta.get("grade"):
            id = ".".join(meta["grade_id"][2:].split("_")[:2])
            worth[id] = worth.get(id, 0) + meta["points"]
    mine = {i: ex for i, ex in EXERCISES.items() if ex.notebook == src.stem}
    graded = {i for i, ex in mine.items() if ex.checked or ex.kind != "code"}
    assert graded <= set(worth) <= set(mine)
    for id, points in worth.items():
        assert points == pytest.approx(mine[id].minutes, abs=0.011), id  # each share rounded to 0.01


def test_a_checked_exercise_without_its_check_cell_is_refused(tmp_path):
    src = ROOT / "notebooks" / "src" / f"{NOTEBOOKS['01']}.py"
    text = src.read_text()
    assert text.count('\ncheck("01.4", answer)\n') == 1
    bad = tmp_path / src.name
    bad.write_text(text.replace('\ncheck("01.4", answer)\n', '\nprint("no check")\n'))
    with pytest.raises(ValueError, match=r"01\.4"):
        make_notebook.notebooks_from_source(bad)
    bad.write_text(text.replace('\ncheck("01.4", answer)\n', '\ncheck("01.4", answer)\n\n# %%\ncheck("01.4", answer)\n'))
    with pytest.raises(ValueError, match="two cells"):
        make_notebook.notebooks_from_source(bad)
    unchecked = next(i for i, ex in EXERCISES.items() if i.startswith("01.") and not ex.checked)
    bad.write_text(text + f'\n# %%\ncheck("{unchecked}", answer)\n')
    with pytest.raises(ValueError, match="not a checked exercise"):
        make_notebook.notebooks_from_source(bad)


# ----------------------------------------------------------------------------- a real nbgrader run
def _teaching_config():
    """The nbgrader_config.py that docs/TEACHING.md gives instructors."""
    text = (ROOT / "docs" / "TEACHING.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "get_config()" in b]
    assert len(blocks) == 1, "docs/TEACHING.md gives one nbgrader_config.py"
    return blocks[0]


def _nbgrader(course, *args):
    # the kernels import this checkout's kmt_ref; nbgrader runs the alembic command of its own environment,
    # found on PATH: put this interpreter's folder first, as an activated environment does
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    assert "[ERROR]" not in run.stderr and "| ERROR]" not in run.stderr, run.stderr[-4000:]
    return run


def _cells(nb):
    return [(c.cell_type, c.source, c.metadata) for c in nb.cells]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install -e '.[grading]' (Python 3.11 or newer)")
    course = tmp_path_factory.mktemp("course")
    (course / "nbgrader_config.py").write_text(_teaching_config())
    books = {}
    for src in SOURCES:
        student, solutions = make_notebook.notebooks_from_source(src)
        books[src.stem] = student, solutions
        (course / "source" / "unit").mkdir(parents=True, exist_ok=True)
        nbformat.write(solutions, course / "source" / "unit" / f"{src.stem}.ipynb")
    _nbgrader(course, "generate_assignment", "unit")
    return course, books


def _as_stored_in_solutions(cells):
    """The student notebook's cells with the links of ungraded markdown cells written, as the solutions
    notebook writes them, for a notebook one folder deeper (make_notebook.relocate_links)."""
    return [(kind, make_notebook.relocate_links(source) if kind == "markdown" and "nbgrader" not in meta else source,
             meta) for kind, source, meta in cells]


@pytest.mark.slow
def test_nbgrader_releases_the_student_notebooks(course):
    course, books = course
    for stem, (student, _) in books.items():
        release = nbformat.read(course / "release" / "unit" / f"{stem}.ipynb", as_version=4)
        # the same cells; only the relative links differ, as the solutions are stored one folder deeper
        assert _cells(release) == _as_stored_in_solutions(_cells(student)), stem
        assert release.metadata["kernelspec"] == student.metadata["kernelspec"]


@pytest.mark.slow
def test_nbgrader_autogrades_solutions_full_and_student_zero(course):
    from nbgrader.api import Gradebook

    course, books = course
    graded = [NOTEBOOKS["01"], NOTEBOOKS["05"]]
    for who, version in (("solutions", 1), ("untouched", 0)):
        folder = course / "submitted" / who / "unit"
        folder.mkdir(parents=True)
        for stem in graded:
            nbformat.write(books[stem][version], folder / f"{stem}.ipynb")
    _nbgrader(course, "autograde", "unit", "--create")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for stem in graded:
            tests = _tests_cells(books[stem][1])
            assert tests
            for who, full in (("solutions", True), ("untouched", False)):
                nb = gb.find_submission_notebook(stem, "unit", who)
                scores = {g.name: (g.auto_score, g.max_score) for g in nb.grades}
                for gid, cell in tests.items():
                    auto, top = scores[gid]
                    assert top == cell.metadata["nbgrader"]["points"]
                    assert auto == (top if full else 0.0), (stem, who, gid, auto)
                if not full:
                    assert nb.score == 0.0 and nb.max_score > 0


# ----------------------------------------------------------------------------- the rubrics in docs/TEACHING.md
def _written_points():
    """{id: points of its manually graded cells} over all notebooks."""
    out = {}
    for src in SOURCES:
        for c in make_notebook.notebooks_from_source(src)[1].cells:
            meta = c.metadata.get("nbgrader", {})
            if meta.get("grade") and meta.get("solution"):
                id = ".".join(meta["grade_id"][2:].split("_")[:2])
                out[id] = out.get(id, 0) + meta["points"]
    return out


def test_every_written_answer_has_a_rubric_worth_its_points():
    rubrics = (ROOT / "docs" / "RUBRICS.md").read_text()
    written = _written_points()
    for id, points in written.items():
        if EXERCISES[id].kind == "code":
            continue
        m = re.search(rf"^\*\*{re.escape(id)} · [^\n]*\(\w+; ([\d.]+) points[;)]", rubrics, re.M)
        assert m, f"docs/RUBRICS.md has no rubric for {id}"
        assert float(m.group(1)) == pytest.approx(points), id
        body = rubrics[m.end():].split("\n\n")[0]
        items = [float(x) for x in re.findall(r"^- ([\d.]+): ", body, re.M)]
        assert items and sum(items) == pytest.approx(points), f"{id}: the rubric's items sum to {sum(items)}"
    coded = re.search(r"\*\*Written parts of code exercises\*\* \(([^:]*):", rubrics).group(1)
    listed = set()
    for part in re.findall(r"\d\d\.\d+(?:–\d\d\.\d+)?", coded):
        lo, _, hi = part.partition("–")
        listed |= {f"{lo[:3]}{j}" for j in range(int(lo[3:]), int((hi or lo)[3:]) + 1)}
    assert listed == {id for id in written if EXERCISES[id].kind == "code"}
