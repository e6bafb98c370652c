"""The grading layer: every checked exercise has its nbgrader "autograded tests" cells, and nbgrader itself
releases the student notebooks, scores them and writes feedback, with the commands docs/TEACHING.md gives.

The first tests read the notebooks that tools/make_notebook.py builds from notebooks/src (not executed;
tests/exercises/test_registry.py keeps the stored notebooks equal to them). The nbgrader tests need
nbgrader (the extra ``grading``) and skip without it; all are slow (``--run-slow``).

- A course written by ``kmt_ref.course.write_course`` from a checkout holding the notebooks the sources build:
  ``nbgrader generate_assignment`` for all five units, each release compared with its student notebook
  cell for cell (type, source, metadata; the links rewritten for the assignment's folder), every relative
  link of each release resolving inside its folder (file and anchor); ``nbgrader autograde`` of notebooks
  01 and 05, each submitted as the solutions (full marks on every tests cell) and as the untouched student
  notebook (zero on every tests cell, and on every written answer, an unchanged stub).
- docs/TEACHING.md's shell blocks (all but the course archive's, test_course_archive.py) run as written, one
  after the other, on the stored notebooks: the course, the release (its non-answer cells keep their outputs,
  figures included; answer and tests cells have none), the autograde of a made-up submission of notebook 01
  (a half-right 01.2 gets exactly its right parts' points, a shortcut through a forbidden function gets 0 on
  01.1, a cell of 01.4 that raises is reported as such), the feedback, made offline and opened in headless
  Chromium with every request off the machine refused.

Autograde executes each notebook: measured on 2 shared cores, a release takes 2-5 s, an autograde 30-45 s.
The last test keeps the rubrics of docs/RUBRICS.md worth the notebooks' points.
"""
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

import kmt_ref.course as course_module
from kmt_ref.course import UNITS, dead_links, rewrite_links, write_course
from kmt_ref.exercises import EXERCISES, NOTEBOOKS

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.py"))
sys.path.insert(0, str(ROOT / "tools"))
import make_notebook  # noqa: E402

HIDDEN = re.compile(r"\n### BEGIN HIDDEN TESTS\n(.*)\n### END HIDDEN TESTS$", re.S)


def _tests_cells(nb):
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"]["solution"]}


def _test_ids(id):
    """{grade id: (part or None, the hidden test)} of the tests cells of exercise ``id``."""
    ex, stem = EXERCISES[id], f"ex{id.replace('.', '_')}_test"
    fresh = "from kmt_ref.exercises import check as kmt_ref_check\n"  # not the submission's `check`
    if not ex.parts:
        return {stem: (None, fresh + f'assert kmt_ref_check("{id}", answer, quiet=True)')}
    return {f"{stem}{i}": (i, fresh + f'assert kmt_ref_check("{id}", answer, part={i}, quiet=True)')
            for i in range(1, len(ex.parts) + 1)}


@pytest.mark.parametrize("src", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_checked_exercise_has_its_autograded_tests_cells(src):
    """One tests cell per checked exercise, or one per part (``exNN_M_test1``, ``_test2``, ...), each worth an
    equal share of the exercise's tests points, to the 0.01 that rounding leaves."""
    student, solutions = make_notebook.notebooks_from_source(src)
    ids = [i for i, ex in EXERCISES.items() if ex.notebook == src.stem and ex.checked]
    tests = _tests_cells(solutions)
    expected = {gid: test for id in ids for gid, test in _test_ids(id).items()}
    assert sorted(tests) == sorted(expected)
    released = _tests_cells(student)
    for id in ids:
        points = []
        for gid, (part, test) in _test_ids(id).items():
            cell = tests[gid]
            meta = cell.metadata["nbgrader"]
            assert cell.cell_type == "code" and meta["locked"] and meta["points"] > 0
            points.append(meta["points"])
            hidden = HIDDEN.search(cell.source)
            assert hidden and hidden.group(1) == test, gid
            assert released[gid].source == cell.source[: hidden.start()]  # what nbgrader releases
            if part in (None, 1):
                assert f'check("{id}", answer)' in released[gid].source
            else:
                assert released[gid].source.startswith(f"# {id}, part {part} of {len(EXERCISES[id].parts)}: ")
        assert max(points) - min(points) <= 0.01 + 1e-9, f"{id}: its parts' cells are worth {points}"
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
        assert points == pytest.approx(mine[id].minutes, abs=1e-9), id  # the last cell takes what rounding left


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
    for unchecked in [i for i, ex in EXERCISES.items() if not ex.checked][:1] + ["01.99"]:  # 01.99: no exercise
        bad.write_text(text + f'\n# %%\ncheck("{unchecked}", answer)\n')
        with pytest.raises(ValueError, match="not a checked exercise"):
            make_notebook.notebooks_from_source(bad)


# ----------------------------------------------------------------------------- a real nbgrader run
def _env(home=None):
    # the kernels import this checkout's kmt_ref; nbgrader runs the alembic command of its own environment,
    # found on PATH: put this interpreter's folder first, as an activated environment does
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    if home is not None:
        env["HOME"] = str(home)
    return env


def _nbgrader(course, *args):
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=_env(),
                         capture_output=True, text=True, timeout=900)
    _no_error(run)
    return run


def _no_error(run):
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    assert "[ERROR]" not in run.stderr and "| ERROR]" not in run.stderr, run.stderr[-4000:]


def _cells(nb):
    return [(c.cell_type, c.source, c.metadata) for c in nb.cells]


@pytest.fixture(scope="module")
def source_root(tmp_path_factory):
    """A checkout whose notebooks are those the sources build (not executed): the course is made of them."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copyfile(ROOT / "README.md", root / "README.md")
    for folder in ("docs", "figures"):
        (root / folder).symlink_to(ROOT / folder)
    (root / "notebooks" / "solutions").mkdir(parents=True)
    books = {}
    for src in SOURCES:
        books[src.stem] = make_notebook.notebooks_from_source(src)
        nbformat.write(books[src.stem][0], root / "notebooks" / f"{src.stem}.ipynb")
        nbformat.write(books[src.stem][1], root / "notebooks" / "solutions" / f"{src.stem}.ipynb")
    return root, books


@pytest.fixture(scope="module")
def course(source_root, tmp_path_factory):
    pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install -e '.[grading]' (Python 3.11 or newer)")
    root, books = source_root
    course = tmp_path_factory.mktemp("course") / "c"
    assert write_course(course, root=root) == list(UNITS)
    for unit in UNITS:
        _nbgrader(course, "generate_assignment", unit)
    return course, books


def _unit(stem):
    return next(u for u, n in UNITS.items() if NOTEBOOKS[n] == stem)


def test_the_course_stubs_are_the_notebooks():
    assert (course_module.CODE_STUB, course_module.TEXT_STUB) == (make_notebook.CODE_STUB, make_notebook.TEXT_STUB)


@pytest.mark.slow
def test_nbgrader_releases_the_student_notebooks(course):
    course, books = course
    for stem, (student, _) in books.items():
        release = nbformat.read(course / "release" / _unit(stem) / f"{stem}.ipynb", as_version=4)
        # the same cells; only the relative links differ, pointing inside the assignment's folder
        expected = [(kind, rewrite_links(source, f"notebooks/{stem}.ipynb") if kind == "markdown"
                     else source, meta) for kind, source, meta in _cells(student)]
        assert _cells(release) == expected, stem
        assert release.metadata["kernelspec"] == student.metadata["kernelspec"]


@pytest.mark.slow
def test_every_link_of_the_release_resolves_in_its_folder(course):
    course, books = course
    for stem in books:
        folder = course / "release" / _unit(stem)
        notebook = folder / f"{stem}.ipynb"
        assert dead_links(folder, [notebook]) == [], stem
        assert not list(folder.rglob("TEACHING.md")) and not list(folder.rglob("RUBRICS.md"))
    assert (course / "release" / "unit1" / "docs" / "SPEC.md").is_file()


@pytest.mark.slow
def test_nbgrader_autogrades_solutions_full_and_student_zero(course):
    from nbgrader.api import Gradebook

    course, books = course
    graded = [NOTEBOOKS["01"], NOTEBOOKS["05"]]
    for stem in graded:
        for who, version in (("solutions", 1), ("untouched", 0)):
            folder = course / "submitted" / who / _unit(stem)
            folder.mkdir(parents=True)
            nbformat.write(books[stem][version], folder / f"{stem}.ipynb")
        _nbgrader(course, "autograde", _unit(stem), "--create")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for stem in graded:
            tests = _tests_cells(books[stem][1])
            assert tests
            for who, full in (("solutions", True), ("untouched", False)):
                nb = gb.find_submission_notebook(stem, _unit(stem), who)
                scores = {g.name: (g.auto_score, g.max_score) for g in nb.grades}
                for gid, cell in tests.items():
                    auto, top = scores[gid]
                    assert top == cell.metadata["nbgrader"]["points"]
                    assert auto == (top if full else 0.0), (stem, who, gid, auto)
                if not full:
                    assert nb.score == 0.0 and nb.max_score > 0


# ----------------------------------------------------------------------------- TEACHING.md's commands, as written
def teaching_commands():
    """The shell blocks of docs/TEACHING.md, in order, but for the course archive's (test_course_archive.py)."""
    text = (ROOT / "docs" / "TEACHING.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert sum("git archive" in b for b in blocks) == 1
    return [b for b in blocks if "git archive" not in b]


NB01 = NOTEBOOKS["01"]

#: what the made-up submission of notebook 01 puts in its answer cells (grade id -> the cell's code; the other
#: exercises keep their stubs): a shortcut through layer_forward for 01.1, 01.2 right but for its scores (part
#: 2), a cell that raises before it sets `answer` for 01.4, and one that raises after it set a right answer
#: for 01.6; the shortcut's cell also imports importlib, which the screening lists
SHORTCUT_01_1 = """answer = None  # this exercise's answer, set below
import importlib  # harmless here, but a line python -m kmt_ref screen lists
def tokens_after_one_layer(X, C):
    p, e = lloyd_weights(*C.shape)
    return layer_forward(p, e.embed_points(X), e.embed_centers(C), lloyd_layer())
answer = tokens_after_one_layer
"""
WRONG_SCORES_01_2 = "\nanswer = (answer[0], [float(s) + 1.0 for s in answer[1]], answer[2])  # part 2 wrong\n"
RAISES_01_4 = 'answer = None  # this exercise\'s answer, set below\nraise RuntimeError("a bug before answer is set")\n'
RAISES_AFTER = '\nraise RuntimeError("a bug after answer is set")\n'


def made_up_submission(release, solutions):
    """The release of notebook 01 with the answers above."""
    nb = nbformat.read(release, as_version=4)
    solved = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solutions.cells if "nbgrader" in c.metadata}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "ex01_1_code1":
            cell.source = SHORTCUT_01_1
        elif gid == "ex01_2_code1":
            cell.source = solved[gid].replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION", "") \
                + WRONG_SCORES_01_2
        elif gid == "ex01_4_code1":
            cell.source = RAISES_01_4
        elif gid == "ex01_6_code1":
            cell.source = solved[gid].replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION", "") \
                + RAISES_AFTER
    return nb


@pytest.fixture(scope="module")
def teaching_run(tmp_path_factory):
    """docs/TEACHING.md's commands run one block after the other in a folder of their own, with a HOME of
    their own where ~/collected/alice/ holds the made-up submission when the block that collects it runs."""
    pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install -e '.[grading]' (Python 3.11 or newer)")
    work = tmp_path_factory.mktemp("teaching")
    home, cwd = work / "home", work / "work"
    home.mkdir()
    cwd.mkdir()
    times = []
    for block in teaching_commands():
        if "collected/alice" in block:
            course = cwd
            release = course / "release" / "unit1" / f"{NB01}.ipynb"
            (home / "collected" / "alice").mkdir(parents=True)
            solutions = nbformat.read(ROOT / "notebooks" / "solutions" / f"{NB01}.ipynb", as_version=4)
            nbformat.write(made_up_submission(release, solutions), home / "collected" / "alice" / f"{NB01}.ipynb")
        start = time.perf_counter()
        run = subprocess.run(["bash", "-e", "-c", f"{block}\npwd > {work / 'cwd'}"], cwd=cwd, env=_env(home),
                             capture_output=True, text=True, timeout=900)
        _no_error(run)
        times.append(time.perf_counter() - start)
        with open(work / "outputs.txt", "a") as log:
            log.write(run.stdout)
        cwd = Path((work / "cwd").read_text().strip())
    print("TEACHING's blocks ran in " + ", ".join(f"{t:.0f} s" for t in times))
    return cwd


@pytest.mark.slow
def test_the_release_keeps_the_outputs_of_the_cells_that_are_not_answers(teaching_run):
    course = teaching_run
    assert (course / "unit1.zip").is_file() and (course / "nbgrader_config.py").is_file()
    release = nbformat.read(course / "release" / "unit1" / f"{NB01}.ipynb", as_version=4)
    student = nbformat.read(ROOT / "notebooks" / f"{NB01}.ipynb", as_version=4)
    images = 0
    for mine, theirs in zip(release.cells, student.cells):
        if mine.cell_type != "code":
            continue
        if "nbgrader" in mine.metadata:
            assert mine.outputs == [] and mine.execution_count is None, mine.metadata["nbgrader"]["grade_id"]
        else:
            assert mine.outputs == theirs.outputs, mine.source[:80]
            images += sum("image/png" in out.get("data", {}) for out in mine.outputs)
    assert images >= 3
    assert dead_links(course / "release" / "unit1", [course / "release" / "unit1" / f"{NB01}.ipynb"]) == []


@pytest.mark.slow
def test_a_made_up_submission_scores_its_right_parts(teaching_run):
    """01.2 right but for part 2 gets parts 1 and 3; the shortcut through layer_forward gets 0 on 01.1; the cells
    of 01.4 and 01.6 that raise (before and after setting `answer`) are reported as failed cells and get 0; the
    stubs get 0."""
    from nbgrader.api import Gradebook

    course = teaching_run
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(NB01, "unit1", "alice")
        scores = {g.name: (g.auto_score, g.max_score) for g in nb.grades if g.auto_score is not None}
    assert scores["ex01_2_test1"][0] == scores["ex01_2_test1"][1] > 0
    assert scores["ex01_2_test3"][0] == scores["ex01_2_test3"][1] > 0
    assert scores["ex01_2_test2"][0] == 0
    right = {"ex01_2_test1", "ex01_2_test3"}
    assert all(auto == 0 for gid, (auto, _) in scores.items() if gid not in right), scores
    graded = nbformat.read(course / "autograded" / "alice" / "unit1" / f"{NB01}.ipynb", as_version=4)
    out = {c.metadata["nbgrader"]["grade_id"]: "".join(o.get("text", "") for o in c.outputs)
           for c in graded.cells if "nbgrader" in c.metadata and c.cell_type == "code"}
    for gid in ("ex01_4_test", "ex01_6_test"):
        assert "the cell above raised an error" in out[gid], out[gid]
    assert "layer_forward" in out["ex01_1_test"], out["ex01_1_test"]
    assert "1 of 3 parts right" in out["ex01_2_test1"] or "2 of 3 parts right" in out["ex01_2_test1"]


@pytest.mark.slow
def test_the_feedback_reads_offline(teaching_run):
    course = teaching_run
    page = course / "feedback" / "alice" / "unit1" / f"{NB01}.html"
    text = page.read_text(encoding="utf-8")
    assert not re.search(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="(?:https?:)?//', text)
    assert (page.parent / "_static" / "mathjax" / "MathJax.js").is_file()
    assert "white-space: pre-wrap" in text
    with zipfile.ZipFile(course / "alice_unit1_feedback.zip") as z:
        assert f"unit1/{NB01}.html" in z.namelist() and "unit1/_static/mathjax/MathJax.js" in z.namelist()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium on this machine (apt-get install -y chromium): the page is not opened")
    # every request off the machine goes to a closed port: the page must typeset its math without a network
    run = subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--proxy-server=127.0.0.1:9",
                          "--virtual-time-budget=20000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    dom = run.stdout
    typeset = dom.count('class="MathJax"')  # the spans MathJax writes: none in the page as nbgrader wrote it
    assert typeset > 20 and 'class="MathJax_Error"' not in dom and "<merror" not in dom, (typeset, dom[-2000:])


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


def test_the_weights_example_of_teaching_is_what_make_notebook_gives():
    src = ROOT / "notebooks" / "src" / f"{NOTEBOOKS['01']}.py"
    cells = make_notebook.expand_parts(make_notebook.parse_percent(src.read_text()), EXERCISES)
    points = make_notebook.exercise_points(cells, EXERCISES)
    assert [points[f"ex01_2_test{i}"] for i in (1, 2, 3)] == [1.67, 1.67, 1.66]
    assert (points["ex01_3_test1"], points["ex01_3_test2"], points["ex01_3_markdown1"]) == (5.0, 5.0, 10.0)
    assert (points["ex01_4_test"], points["ex01_4_markdown2"]) == (7.5, 7.5)
    text = " ".join((ROOT / "docs" / "TEACHING.md").read_text().split())
    assert ("gives 7.5 points to its tests cell and 7.5 to its written answer; the proof 01.3 (20 minutes: two "
            "checked parts and a written proof) gives 5 points to each part's tests cell and 10 to the written "
            "proof") in text
    assert "(01.2's three parts: 1.67, 1.67 and 1.66 points)" in text


@pytest.mark.slow
def test_the_screening_lists_the_line_to_read(teaching_run):
    printed = next(p / "outputs.txt" for p in teaching_run.parents if (p / "outputs.txt").is_file()).read_text()
    assert f"alice unit1/{NB01}.ipynb cell " in printed and ": import importlib" in printed, printed[-2000:]
    assert "1 line to read" in printed
