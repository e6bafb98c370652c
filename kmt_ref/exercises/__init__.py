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
``nb05``, one module per notebook (notebook 02's self-checks in ``nb02_quizzes``, notebook 04's
tasks and reference values in ``nb04_tasks``); the model answers are in
``notebooks/solutions/``.
"""
from __future__ import annotations

import sys

from . import nb01, nb02, nb03, nb04, nb05  # noqa: F401  (each registers its notebook's exercises)
from ._registry import _RUNNING, KINDS, NOTEBOOKS, REGISTRY, Exercise, Wrong

__all__ = ["EXERCISES", "Exercise", "KINDS", "NOTEBOOKS", "check", "report", "table", "Wrong"]

#: id ("01.1") -> Exercise, in notebook order
EXERCISES = REGISTRY

#: id -> result of the latest check in this session (what report() counts)
_RESULTS: dict = {}
#: id -> whether the cell run before the exercise's latest check (its answer cell) raised an error; the cells
#: that grade parts 2, 3, ... follow the check cell, so they read it here
_FAILED_CELL: dict = {}


def _get(id):
    if not isinstance(id, str) or id not in EXERCISES:
        raise ValueError(f"id={id!r} is not an exercise; the ids are {', '.join(EXERCISES)}")
    return EXERCISES[id]


def _last_cell_failed():
    """True when this runs in IPython and the cell run before this one raised an error."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return shell is not None and getattr(shell, "last_execution_succeeded", True) is False


def _run(ex, answer, part):
    """(ok, message) of one part (or of the whole answer, part None) of a checked exercise."""
    _RUNNING["exercise"] = ex
    try:
        message = ex.checker(answer) if part is None else ex.checker(answer, part)
        return True, message or "correct"
    except Wrong as wrong:
        return False, f"not yet: {wrong}"
    finally:
        _RUNNING["exercise"] = None


def check(id, answer, *, part=None, quiet=False):
    """Check a student's answer to exercise ``id``.

    Parameters
    ----------
    id : str
        The exercise, e.g. ``"01.1"``.
    answer : object
        What the exercise asks for; None means "not attempted yet". When this
        runs in IPython right after a cell that raised an error (the answer
        cell), the answer does not count, and the check says so.
    part : int, optional
        For an exercise of several parts (``EXERCISES[id].parts``), check part
        ``part`` (1, 2, ...) alone; nbgrader grades each part in a cell of its own.
        By default every part is checked, and each prints its line.
    quiet : bool, default False
        If True, print nothing.

    Returns
    -------
    bool
        True if the answer (or the part asked for) is right. False if it is wrong
        or None (with a hint printed), and for an exercise graded by reading (its
        model answer is in the solutions).

    Raises
    ------
    ValueError
        If ``id`` is not an exercise, or ``part`` not one of its parts.
    """
    ex = _get(id)
    if part is not None and (isinstance(part, bool) or part not in range(1, len(ex.parts) + 1)):
        raise ValueError(f"part={part!r}: exercise {id} has "
                         + (f"parts 1 to {len(ex.parts)}" if ex.parts else "no parts"))
    lines = []
    if part is None or part == 1:  # the cell run before an exercise's check cell is its answer cell
        _FAILED_CELL[id] = _last_cell_failed()
    if not ex.checked:
        ok, message = False, "this exercise is graded by reading: compare with the model answer in the solutions"
    elif _FAILED_CELL.get(id):
        ok, message = False, ("the cell above raised an error, so its answer does not count: fix it and run it "
                              "again, then this cell")
    elif answer is None:
        ok, message = False, "not attempted yet: set `answer` in the cell above and run this cell again"
    elif not ex.parts:
        ok, message = _run(ex, answer, None)
    else:
        numbers = [part] if part is not None else range(1, len(ex.parts) + 1)
        results = [(i, *_run(ex, answer, i)) for i in numbers]
        ok = all(r[1] for r in results)
        right = sum(r[1] for r in results)
        message = (f"part {part} of {len(ex.parts)}" if part is not None
                   else f"{right} of {len(ex.parts)} parts right")
        lines = [f"  ({i}) {ex.parts[i - 1]}: {'✓' if good else '✗'} {text}" for i, good, text in results]
    if ex.checked and part is None:
        _RESULTS[id] = ok
    if not quiet:
        print("\n".join([f"[{id}] {'✓' if ok else '✗'} {message}", *lines]))
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
        if ex.parts:
            what += f"; graded in {len(ex.parts)} parts: " + "; ".join(f"({i}) {p}" for i, p in enumerate(ex.parts, 1))
        if ex.forbidden:
            what += "; the student's function may not call " + ", ".join(f"`{f.__name__}`" for f in ex.forbidden)
        rows.append(f"| {ex.id} | {ex.title} | {ex.kind} | {ex.stars} | {ex.minutes} | {what} | {ex.objective} |")
    return "\n".join(rows)
