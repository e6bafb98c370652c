"""``python -m kmt_ref screen DIR``: the submitted cells that touch the grading machinery are listed, and an
honest submission (every solution of the five notebooks, as a student would type it) gives no line."""
import sys
from pathlib import Path

import nbformat
import pytest

from kmt_ref import course
from kmt_ref.exercises import NOTEBOOKS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import make_notebook  # noqa: E402

#: what a student could type to get marks without the work, each caught by one alternative of TAMPERING
CHEATS = [
    "check = lambda *a, **k: True",
    "import kmt_ref.exercises as E\nE.check = lambda *a, **k: True",
    "def check(id, answer, **kw):\n    return True",
    "from kmt_ref.exercises import check as report",
    "setattr(E, 'check', print)",
    "saved = {f: f.__code__ for f in []}",
    "import sys; del sys.modules['kmt_ref']",
    "import importlib",
    "sys.settrace(None)",
    "EXERCISES['01.1'] = None",
    "from kmt_ref.exercises import _registry",
    "answer = nb01._GAMMA_STARS",
    "exercises.__dict__['check'] = print",
    "vars(E).update(check=print)",
    "f = sys._getframe(2).f_locals['want']",
    "import subprocess",
    "from multiprocessing import Pool",
    "from concurrent.futures import ThreadPoolExecutor",
    "import _thread",
    "os.system('python -c 1')",
    "exec(source)",
    "def __array__(self, dtype=None): return 1",
    "import inspect",
]


def _course(tmp_path, stem, cells):
    """A course folder with the solutions of ``stem`` as source and a submission of the given code cells."""
    _, solutions = make_notebook.notebooks_from_source(ROOT / "notebooks" / "src" / f"{stem}.py")
    (tmp_path / "source" / "unit1").mkdir(parents=True)
    nbformat.write(solutions, tmp_path / "source" / "unit1" / f"{stem}.ipynb")
    sub = nbformat.v4.new_notebook()
    sub.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    (tmp_path / "submitted" / "mallory" / "unit1").mkdir(parents=True)
    nbformat.write(sub, tmp_path / "submitted" / "mallory" / "unit1" / f"{stem}.ipynb")
    return solutions


@pytest.mark.parametrize("cheat", CHEATS)
def test_a_cheat_is_listed(tmp_path, cheat):
    _course(tmp_path, NOTEBOOKS["01"], ["answer = None", cheat])
    found = course.screen(tmp_path)
    assert found and all(f[:4] == ("mallory", "unit1", f"{NOTEBOOKS['01']}.ipynb", 1) for f in found), found


@pytest.mark.parametrize("nb", list(NOTEBOOKS))
def test_the_solutions_typed_by_a_student_give_no_line(tmp_path, nb):
    stem = NOTEBOOKS[nb]
    _, solutions = make_notebook.notebooks_from_source(ROOT / "notebooks" / "src" / f"{stem}.py")
    typed = [c.source.replace(make_notebook.BEGIN + "\n", "").replace(make_notebook.END, "")
             for c in solutions.cells if c.cell_type == "code"]
    _course(tmp_path, stem, typed + ["check('01.1', answer)", "x = check == report"])
    assert course.screen(tmp_path) == []


def test_screen_needs_submissions(tmp_path):
    with pytest.raises(ValueError, match="submitted"):
        course.screen(tmp_path)
