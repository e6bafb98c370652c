"""Exercises for the five notebooks, as data, with checkers that can fail.

In a notebook::

    from kmt_ref.exercises import check
    answer = ...                 # the student's answer
    check("01.1", answer)        # True or False, and one line of feedback

``answer = None`` means "not attempted yet": ``check`` returns False and raises
nothing. The feedback helps without giving the answer away. Each notebook ends
with :func:`report`, which prints ``exercises: P/N passed`` over its checked
exercises. :data:`EXERCISES` maps every id to its :class:`Exercise` record (kind,
difficulty, minutes, learning objective, whether it is checked); the table in
``docs/TEACHING.md`` is :func:`table`'s output. The checkers live in ``nb01`` to
``nb05``, one module per notebook; the model answers are in
``notebooks/solutions/``.
"""
from __future__ import annotations

from . import nb01, nb02, nb03, nb04, nb05  # noqa: F401  (each registers its notebook's exercises)
from ._registry import KINDS, NOTEBOOKS, REGISTRY, Exercise, Wrong

__all__ = ["EXERCISES", "Exercise", "KINDS", "NOTEBOOKS", "check", "report", "table", "Wrong"]

#: id ("01.1") -> Exercise, in notebook order
EXERCISES = REGISTRY

#: id -> result of the latest check in this session (what report() counts)
_RESULTS: dict = {}


def _get(id):
    if not isinstance(id, str) or id not in EXERCISES:
        raise ValueError(f"id={id!r} is not an exercise; the ids are {', '.join(EXERCISES)}")
    return EXERCISES[id]


def check(id, answer, *, quiet=False):
    """Check a student's answer to exercise ``id``.

    Parameters
    ----------
    id : str
        The exercise, e.g. ``"01.1"``.
    answer : object
        What the exercise asks for; None means "not attempted yet".
    quiet : bool, default False
        If True, print nothing.

    Returns
    -------
    bool
        True if the answer is right. False if it is wrong or None (with a hint
        printed), and for an exercise graded by reading (its model answer is in
        the solutions).

    Raises
    ------
    ValueError
        If ``id`` is not an exercise.
    """
    ex = _get(id)
    if not ex.checked:
        ok, message = False, "this exercise is graded by reading: compare with the model answer in the solutions"
    elif answer is None:
        ok, message = False, "not attempted yet: set `answer` in the cell above and run this cell again"
    else:
        try:
            ok, message = True, ex.checker(answer) or "correct"
        except Wrong as wrong:
            ok, message = False, f"not yet: {wrong}"
    if ex.checked:
        _RESULTS[id] = ok
    if not quiet:
        print(f"[{id}] {'✓' if ok else '✗'} {message}")
    return ok


def report(notebook):
    """Print and return ``(passed, total)`` over the checked exercises of a notebook ("01" ... "05")."""
    if notebook not in NOTEBOOKS:
        raise ValueError(f"notebook={notebook!r} is not one of {list(NOTEBOOKS)}")
    ids = [i for i, ex in EXERCISES.items() if i.startswith(notebook + ".") and ex.checked]
    passed = sum(bool(_RESULTS.get(i)) for i in ids)
    print(f"exercises: {passed}/{len(ids)} passed")
    return passed, len(ids)


def table():
    """The exercise table of docs/TEACHING.md, as Markdown."""
    rows = ["| id | title | kind | difficulty | minutes | checked: what `check` verifies | objective |",
            "|---|---|---|---|---|---|---|"]
    for ex in EXERCISES.values():
        what = ex.checks if ex.checked else "no: model answer in the solutions"
        rows.append(f"| {ex.id} | {ex.title} | {ex.kind} | {ex.stars} | {ex.minutes} | {what} | {ex.objective} |")
    return "\n".join(rows)
