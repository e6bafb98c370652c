"""The exercise system: records, check(), the notebooks built from one source, and
every checker rejecting a plausible wrong answer.

The wrong answers live beside each notebook's checkers' tests, in
tests/exercises/wrong_nbNN.py (a dict WRONG: id -> list of wrong answers); the
right answers are the solutions notebooks, executed by tests/test_notebooks.py.
"""
import importlib.util
import re
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from kmt_ref import exercises
from kmt_ref.exercises import EXERCISES, KINDS, NOTEBOOKS, check, report

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WRONG = {}
for _path in sorted(Path(__file__).parent.glob("wrong_nb*.py")):
    WRONG.update(_load(_path).WRONG)

sys.path.insert(0, str(ROOT / "tools"))
import make_notebook  # noqa: E402


def test_the_course_has_enough_exercises_of_every_kind():
    assert len(EXERCISES) >= 50
    assert sum(ex.checked for ex in EXERCISES.values()) >= 40
    for nb in NOTEBOOKS:
        assert sum(ex.checked for i, ex in EXERCISES.items() if i.startswith(nb + ".")) >= 3, nb
        assert sum(ex.kind == "quiz" for i, ex in EXERCISES.items() if i.startswith(nb + ".")) >= 3, nb
    assert {ex.kind for ex in EXERCISES.values()} == set(KINDS)


@pytest.mark.parametrize("ex", EXERCISES.values(), ids=list(EXERCISES))
def test_record(ex):
    assert re.fullmatch(r"\d\d\.\d+", ex.id) and ex.notebook == NOTEBOOKS[ex.id[:2]]
    assert ex.kind in KINDS and ex.difficulty in (1, 2, 3) and isinstance(ex.minutes, int) and ex.minutes > 0
    assert ex.title and ex.objective and isinstance(ex.checked, bool)
    assert ex.checked or ex.kind != "code", "every code exercise is checked"
    assert ex.tag.startswith(f"*{ex.kind} · ") and ex.stars.count("★") == ex.difficulty


def test_check_none_unknown_and_unchecked(capsys):
    some = next(iter(EXERCISES))
    assert check(some, None) is False
    assert "not attempted" in capsys.readouterr().out
    with pytest.raises(ValueError, match="99.9"):
        check("99.9", 1)
    with pytest.raises(ValueError):
        check(3, 1)
    unchecked = [i for i, ex in EXERCISES.items() if not ex.checked]
    assert unchecked and check(unchecked[0], "anything") is False
    with pytest.raises(ValueError, match="notebook"):
        report("99")


@pytest.mark.parametrize("id", [i for i, ex in EXERCISES.items() if ex.checked])
def test_checker_rejects_plausible_wrong_answers(id, capsys):
    assert WRONG.get(id), f"no plausible wrong answer for {id} in tests/exercises/wrong_nb{id[:2]}.py"
    for answer in WRONG[id]:
        assert check(id, answer) is False, f"{id} accepted the wrong answer {answer!r}"
        out = capsys.readouterr().out
        assert "✗ not yet:" in out and "Traceback" not in out


#: answers of the wrong type or shape: each must get a hint (False), never an exception from inside NumPy
MALFORMED = [np.array(5.0), "x", {"a": 1}, [[1, 2], [3]], np.zeros((2, 2)), [], ["a", "b"], [None, None],
             float("nan"), True]


@pytest.mark.parametrize("id", [i for i, ex in EXERCISES.items() if ex.checked])
def test_malformed_answers_get_a_hint_not_a_traceback(id, capsys):
    for answer in MALFORMED:
        assert check(id, answer) is False, f"{id} accepted the malformed answer {answer!r}"
        assert "✗ not yet:" in capsys.readouterr().out


def test_wrong_answers_name_only_checked_exercises():
    assert set(WRONG) <= {i for i, ex in EXERCISES.items() if ex.checked}


def test_report_counts_the_latest_result_of_each_checked_exercise(capsys):
    saved = dict(exercises._RESULTS)
    try:
        exercises._RESULTS.clear()
        ids = [i for i, ex in EXERCISES.items() if i.startswith("01.") and ex.checked]
        exercises._RESULTS[ids[0]] = True
        assert report("01") == (1, len(ids))
        assert capsys.readouterr().out.strip() == f"exercises: 1/{len(ids)} passed"
    finally:
        exercises._RESULTS.clear()
        exercises._RESULTS.update(saved)


SOURCES = sorted((NB_DIR / "src").glob("*.py"))


@pytest.mark.parametrize("src", SOURCES, ids=[p.stem for p in SOURCES])
def test_stored_notebooks_are_built_from_their_source(src):
    assert make_notebook.stale(src) == [], f"run: python tools/make_notebook.py {src.relative_to(ROOT)}"


@pytest.mark.parametrize("nb", list(NOTEBOOKS))
def test_student_notebook_has_tag_starter_and_check_for_every_exercise(nb):
    student = nbformat.read(NB_DIR / f"{NOTEBOOKS[nb]}.ipynb", as_version=4)
    text = [c.source for c in student.cells]
    joined = "\n".join(text)
    assert "BEGIN SOLUTION" not in joined and "END SOLUTION" not in joined
    for id, ex in EXERCISES.items():
        if not id.startswith(nb + "."):
            continue
        heads = [i for i, s in enumerate(text) if f"Exercise {id}: " in s]
        assert len(heads) == 1, f"exercise {id} appears {len(heads)} times"
        assert ex.tag in text[heads[0]]
        rest = text[heads[0] + 1:]
        end = next((j for j, s in enumerate(rest) if "Exercise " in s and ": " in s and s.lstrip().startswith("#")),
                   len(rest))
        own = rest[:end]
        if ex.checked:
            assert any(make_notebook.CODE_STUB in s for s in own), f"{id}: no starter cell"
            assert any(f'check("{id}", answer)' in s for s in own), f"{id}: no check cell"
        else:
            assert any(make_notebook.TEXT_STUB in s or make_notebook.CODE_STUB in s for s in own), \
                f"{id}: no place for the answer"
    assert "report(" in text[-1] or "report(" in text[-2]


@pytest.mark.parametrize("nb", list(NOTEBOOKS))
def test_solutions_pass_every_checked_exercise(nb):
    """The stored solutions end with 'exercises: N/N passed' (tests/test_notebooks.py re-runs them)."""
    solutions = nbformat.read(NB_DIR / "solutions" / f"{NOTEBOOKS[nb]}.ipynb", as_version=4)
    n = sum(ex.checked for i, ex in EXERCISES.items() if i.startswith(nb + "."))
    last = "".join(o.get("text", "") for o in solutions.cells[-1].get("outputs", []))
    assert f"exercises: {n}/{n} passed" in last
    assert "✗" not in "".join(o.get("text", "") for c in solutions.cells if c.cell_type == "code"
                              for o in c.get("outputs", []))


@pytest.mark.parametrize("nb", list(NOTEBOOKS))
def test_solutions_carry_a_model_answer_for_every_exercise(nb):
    solutions = nbformat.read(NB_DIR / "solutions" / f"{NOTEBOOKS[nb]}.ipynb", as_version=4)
    text = [c.source for c in solutions.cells]
    for id in (i for i in EXERCISES if i.startswith(nb + ".")):
        head = next(i for i, s in enumerate(text) if f"Exercise {id}: " in s)
        after = text[head + 1:]
        end = next((j for j, s in enumerate(after) if re.search(r"^#+ Exercise \d\d\.\d+: ", s, re.M)), len(after))
        assert any(make_notebook.BEGIN in s for s in after[:end]), f"{id}: no solution region"


def test_strip_solutions():
    body = "x = 1\n    ### BEGIN SOLUTION\n    answer = 42\n    ### END SOLUTION\ncheck()"
    assert make_notebook.strip_solutions(body, "answer = None  # your code") == \
        "x = 1\n    answer = None  # your code\ncheck()"
    for bad in ("### BEGIN SOLUTION\nx", "### END SOLUTION", "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION"):
        with pytest.raises(ValueError):
            make_notebook.strip_solutions(bad, "stub")


def _exercise_summary(nb):
    exs = [ex for i, ex in EXERCISES.items() if i.startswith(nb + ".")]
    return f"{len(exs)} exercises ({sum(ex.checked for ex in exs)} checked), {sum(ex.minutes for ex in exs)} min"


def test_teaching_md_holds_the_exercise_table():
    text = (ROOT / "docs" / "TEACHING.md").read_text()
    assert exercises.table() in text, "paste kmt_ref.exercises.table() into docs/TEACHING.md"
    for nb in NOTEBOOKS:
        assert _exercise_summary(nb) in text, f"unit {nb}: {_exercise_summary(nb)}"


def test_readme_start_here_gives_each_notebook_its_exercise_load():
    text = (ROOT / "README.md").read_text()
    start = text[text.index("## Start here"):]
    start = start[: start.index("\n## ", 5)]
    assert "jupyter lab notebooks/" in start
    for nb, stem in NOTEBOOKS.items():
        row = next(line for line in start.splitlines() if f"notebooks/{stem}.ipynb" in line)
        assert _exercise_summary(nb) in row, f"README row for {stem}: {_exercise_summary(nb)}"
