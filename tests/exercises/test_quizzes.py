"""The self-checks (kind "quiz"): their records, their place in the notebooks, their answers re-derived
independently, their hints, and that no student notebook prints a quiz's answer before the quiz.

The wrong answers every checker must reject are in tests/exercises/wrong_nbNN.py, with the other exercises'.
"""
import re
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from kmt_ref import binary_transformer, lloyd, randomized_kmedoids_transformer, soft_kmeans
from kmt_ref.algorithms.binary import binary_codes
from kmt_ref.data import blobs_with_outliers
from kmt_ref.exercises import EXERCISES, NOTEBOOKS, check, nb01

ROOT = Path(__file__).resolve().parents[2]
QUIZZES = {i: ex for i, ex in EXERCISES.items() if ex.kind == "quiz"}

#: the right answers, worked out by hand (the arithmetic in the comments), not with the checkers' helpers
RIGHT = {
    "01.9": 5 + 4 + 1,                                   # d + k + flag
    "01.10": "b",
    "01.11": "c",
    "02.9": 2 * 0.6 - 1.0,                               # 2 x.c - ||c||^2
    "02.10": (10, 12),                                   # (2d, d + k + 3)
    "02.11": 81 / 82,                                    # 1 / (1 + 3^-4)
    "03.9": [0.75, 0.25, 0.0],                           # tau = 1/4
    "03.10": [0.5 + 0.1 * np.sqrt(2) + 0.0, 0.5 - 0.1 * np.sqrt(2), 0.0],  # g = 2 sqrt(2): tau = (-0.2 sqrt(2) - 1)/2
    "03.11": "a",
    "04.9": 12 * (11 ** 2 + 11),
    "04.10": 0.25 / (1 + np.exp(2.5)),                   # 0.25 e^-2.5 / (1 + e^-2.5)
    "04.11": "d",
    "05.6": 6,                                           # 2^5 = 32 < 33 <= 64
    "05.7": -3.0,                                        # 3 = 110, 4 = 001 (least significant bit first)
    "05.8": "b",
}
#: the numbers a student could read off a printed output, as the notebook prints them
PRINTED = {"01.9": ["d_emb = 10"], "02.10": ["(10, 12)"], "02.11": ["0.9878"], "03.9": ["[0.75 0.25 0.  ]"],
           "03.10": ["0.6414", "0.3586"], "04.9": ["1584", "1,584"], "04.10": ["0.01896"], "05.6": ["m = 6"]}


def test_every_notebook_has_at_least_three_quizzes_that_are_short_and_checked():
    assert set(RIGHT) == set(QUIZZES)
    for nb in NOTEBOOKS:
        assert sum(i.startswith(nb + ".") for i in QUIZZES) >= 3, nb
    for ex in QUIZZES.values():
        assert ex.checked and ex.difficulty == 1 and ex.minutes <= 2 and ex.title.startswith("Self-check: ")


def test_a_quiz_must_be_checked_easy_and_short():
    from kmt_ref.exercises._registry import exercise
    for kwargs in (dict(difficulty=2, minutes=1), dict(difficulty=1, minutes=5)):
        with pytest.raises(ValueError, match="a quiz is checked, of difficulty 1"):
            exercise("01.99", "t", kind="quiz", objective="o", checks="c", **kwargs)(lambda a: "ok")
    with pytest.raises(ValueError, match="a quiz is checked"):
        exercise("01.98", "t", kind="quiz", difficulty=1, minutes=1, objective="o")(None)
    assert "01.99" not in EXERCISES and "01.98" not in EXERCISES


@pytest.mark.parametrize("id", sorted(RIGHT))
def test_right_answers_pass(id):
    assert check(id, RIGHT[id], quiet=True)


@pytest.mark.parametrize("id", sorted(i for i, a in RIGHT.items() if isinstance(a, str)))
def test_choices_reject_every_other_letter_with_a_hint_that_does_not_name_the_answer(id, capsys):
    right = RIGHT[id]
    for letter in "abcd":
        if letter == right:
            continue
        assert check(id, letter) is False
        out = capsys.readouterr().out
        assert "not yet:" in out
        assert not re.search(rf"\({right}\)|[\"']{right}[\"']", out.split("not yet:")[1]), out
    assert check(id, right.upper() + " ", quiet=True)  # case and spaces do not matter


def test_the_premises_of_the_choices_hold():
    # 01.11: with the flag entry sqrt(3), the empty center of section 7 moves to the mean of all points
    np.testing.assert_allclose(nb01.flag_scaled_centers()[:, 2], nb01.X_EMPTY.mean(axis=1), atol=1e-12)
    np.testing.assert_array_equal(nb01.flag_scaled_centers(1.0)[:, 2], [5.0, 5.0])   # the real flag keeps it
    # 03.11: every new center of the k-medoids circuit is one of its members (notebook 03's data and gamma)
    X, C0, _ = blobs_with_outliers(rng=np.random.default_rng(4))
    tr = randomized_kmedoids_transformer(X, C0, 3, 20.0, np.random.default_rng(4))
    for t in range(3):
        for j in range(C0.shape[1]):
            members = np.flatnonzero(tr.labels[t] == j)
            assert any(np.array_equal(tr.centers[t + 1][:, j], X[:, i]) for i in members), (t, j)
    # 05.8: in block 3 of the binary circuit a member scores 0 and a non-member one bit away -1
    Xb, Cb = np.array([[0.0, 1.0, 10.0, 11.0]]), np.array([[0.5, 10.5]])               # k = 2: codes 0 and 1
    S3 = binary_transformer(Xb, Cb, 1, record=True).layers[0].scores["3"][:4]         # (n, k)
    labels = lloyd(Xb, Cb, 1).labels[0]
    np.testing.assert_array_equal(S3[np.arange(4), labels], 0.0)
    np.testing.assert_array_equal(S3[np.arange(4), 1 - labels], -1.0)
    # 02.11: a point's responsibilities do not depend on the other points
    C = np.array([[0.0, 2.0], [0.0, 0.0]])
    r = soft_kmeans(np.array([[0.0, 2.0, 5.0], [0.0, 0.0, 1.0]]), C, 1, np.log(3.0)).assignments[0, 0]
    assert np.isclose(r, 81 / 82, rtol=1e-12)
    assert np.array_equal(binary_codes(8)[:, 3], [1, 1, 0]) and np.array_equal(binary_codes(8)[:, 4], [0, 0, 1])


def _sections(src):
    """(cell index, kind, body) of a notebook source, and the quiz ids with the section they follow."""
    sys.path.insert(0, str(ROOT / "tools"))
    import make_notebook
    cells = make_notebook.parse_percent(src.read_text())
    placed, section = {}, None
    for kind, body in cells:
        if kind != "markdown":
            continue
        if re.search(r"^## Exercises", body, re.M):
            break
        m = re.search(r"^## (\d+)\. ", body, re.M)
        section = m.group(1) if m else section
        q = re.search(r"^### Exercise (\d\d\.\d+)\s*$", body, re.M)
        if q:
            placed[q.group(1)] = (section, body)
    return placed


@pytest.mark.parametrize("nb", list(NOTEBOOKS))
def test_each_quiz_follows_the_section_it_checks(nb):
    placed = _sections(ROOT / "notebooks" / "src" / f"{NOTEBOOKS[nb]}.py")
    mine = [i for i in QUIZZES if i.startswith(nb + ".")]
    assert set(mine) <= set(placed), f"quizzes not placed before the Exercises section: {set(mine) - set(placed)}"
    for id in mine:
        section, body = placed[id]
        m = re.search(r"A self-check on §(\d+)", body)
        assert m and m.group(1) == section, (id, section, body[:80])


@pytest.mark.parametrize("nb", list(NOTEBOOKS))
def test_the_student_notebook_does_not_print_a_quiz_answer_before_the_quiz(nb):
    sys.path.insert(0, str(ROOT / "tools"))
    import make_notebook
    src = ROOT / "notebooks" / "src" / f"{NOTEBOOKS[nb]}.py"
    if make_notebook.stale(src):
        pytest.skip(f"the stored notebooks are older than {src.name}: rebuild them with tools/make_notebook.py")
    student = nbformat.read(ROOT / "notebooks" / f"{NOTEBOOKS[nb]}.ipynb", as_version=4)
    printed = ""
    for cell in student.cells:
        q = re.search(r"Exercise (\d\d\.\d+): ", cell.source) if cell.cell_type == "markdown" else None
        if q and q.group(1) in PRINTED:
            for text in PRINTED[q.group(1)]:
                assert text not in printed, f"{q.group(1)}: the notebook prints {text!r} before the quiz"
        for out in cell.get("outputs", []):
            printed += out.get("text", "") + out.get("data", {}).get("text/plain", "")
